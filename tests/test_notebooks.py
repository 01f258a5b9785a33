"""The notebooks run top to bottom on the data shipped with the package (the textbook
data are hidden from them), have cell ids, and show at least one plot."""

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
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
    assert "NOTE: the textbook data" in text  # it says loudly that it used the small data
