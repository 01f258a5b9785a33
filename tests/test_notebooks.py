"""The notebooks run top to bottom on the data shipped with the package (the textbook
data are hidden from them), have cell ids, show at least one plot, and say loudly that
they used small data: each prints its own marker line, listed in SMALL_DATA_NOTES.

CPU seconds of each notebook's kernel (2 cores): explore_underlying_forms 5,
bayesian_pcfgs 5, pep_speed_accuracy 17, train_phonology 14; the wall time adds a few
seconds of kernel start and grows with whatever else shares the machine."""

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))

#: What each notebook prints to announce that it ran on the small shipped data.
SMALL_DATA_NOTES = {
    "explore_underlying_forms.ipynb": "NOTE: the textbook data",
    "pep_speed_accuracy.ipynb": "NOTE: small data",
    "train_phonology.ipynb": "NOTE: small data",
    "bayesian_pcfgs.ipynb": "NOTE: small data",
}


def test_every_notebook_has_a_small_data_note():
    missing = [p.name for p in NOTEBOOKS if p.name not in SMALL_DATA_NOTES]
    assert not missing, f"add the small-data marker of {missing} to SMALL_DATA_NOTES"


def test_notebooks_are_saved_without_outputs():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert (nb.nbformat, nb.nbformat_minor) >= (4, 5), path.name
        dirty = [c.id for c in nb.cells if c.cell_type == "code"
                 and (c.get("outputs") or c.get("execution_count"))]
        assert not dirty, f"{path.name}: clear the outputs of cells {dirty}"


#: The notebooks that take 40-50 s of wall time each on the 2-core machine run with
#: ``pytest -m slow``; the default suite runs the others.
SLOW_NOTEBOOKS = {"pep_speed_accuracy.ipynb", "train_phonology.ipynb"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow)
                                  if p.name in SLOW_NOTEBOOKS else p for p in NOTEBOOKS],
                         ids=lambda p: p.name)
def test_notebook_runs_and_draws(path, tmp_path):
    # run from a copy two levels below tmp_path, so '../../shared' does not exist
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    shutil.copy(path, work / path.name)
    nb = nbformat.read(work / path.name, as_version=4)
    assert all(c.get("id") for c in nb.cells), "every cell needs an id"
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(work)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})
              or "image/svg+xml" in o.get("data", {})]
    assert images, "the notebook shows no plot"
    text = "".join(o.get("text", "") for o in outputs)
    # it says loudly that it used the small data
    assert SMALL_DATA_NOTES.get(path.name, "NOTE: ") in text
