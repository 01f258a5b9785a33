"""``strgm plot`` reads the ``--json`` files of other commands: mutated files (the same
mutations as the model loaders' fuzz, :mod:`json_mutations`) are drawn or refused with
one line from a :class:`~strgm.errors.StrgmError`, never another exception.

The readers and plot functions run in process on the Agg backend, without writing the
figure. A broken variant — the readers with their checks removed — is shown to crash, so
the fuzz can fail.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from strgm.cli import main
from strgm.errors import StrgmError

from .json_mutations import KINDS, mutate

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

PARADIGM = ("R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\nR3\tsim\nR3 PAST\tsimd\nR4\tta\n"
            "R4 PAST\ttad\n")
PLOTS = ("predictions", "urs", "tradeoff", "convergence")
EXAMPLES = 60


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> bytes:
    d = tmp_path_factory.mktemp("plotjson")
    (d / "p.tsv").write_text(PARADIGM, encoding="utf-8")
    assert main(["infer", str(d / "p.tsv"), "--method", "pruned", "--holdout", "0.3",
                 "--seed", "1", "--json", str(d / "inf.json"), "--quiet"]) == 0
    return (d / "inf.json").read_bytes()


def draw(kind: str, path: str):
    """What ``strgm plot KIND PATH`` draws, without writing it."""
    import matplotlib.pyplot as plt

    from strgm import plot
    from strgm.cli import draw as d

    try:
        if kind == "predictions":
            plot.plot_predictions(d._holdout(d._document(path), path))
        elif kind == "urs":
            label, pairs = d._urs(d._document(path), path, None, 8)
            plot.plot_belief(pairs, k=8, name=label)
        elif kind == "tradeoff":
            p = d._point(d._document(path), path, "nats")
            plot.plot_tradeoff([p], x=d.X_NAME, y=d.Y_NAMES["nats"], label="label",
                               by="method")
        else:
            plot.plot_convergence(d._series(d._document(path), path))
    finally:
        plt.close("all")


def _fuzz(good: bytes, kind: str, tmp_path: Path, seed: int, n: int) -> list:
    """The (mutation kind, exception) of every mutated file that ended otherwise than
    drawn or refused with one StrgmError line."""
    rng = random.Random(seed)
    bad = []
    path = tmp_path / "in.json"
    for _ in range(n):
        how = rng.choice(KINDS)
        path.write_bytes(mutate(good, how, rng.randint, rng.choice))
        try:
            draw(kind, str(path))
        except StrgmError as e:
            if "\n" in str(e):
                bad.append((how, f"two lines: {e}"))
        except Exception as e:  # noqa: BLE001 - the property under test
            bad.append((how, f"{type(e).__name__}: {e}"))
    return bad


def test_the_good_file_draws_every_plot(good, tmp_path):
    path = tmp_path / "in.json"
    path.write_bytes(good)
    for kind in PLOTS:
        draw(kind, str(path))


@pytest.mark.parametrize("kind", PLOTS)
def test_every_mutated_results_file_draws_or_is_one_clean_error(good, tmp_path, kind):
    assert _fuzz(good, kind, tmp_path, seed=PLOTS.index(kind), n=EXAMPLES) == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", PLOTS)
def test_many_mutated_results_files(good, tmp_path, kind):
    assert _fuzz(good, kind, tmp_path, seed=100 + PLOTS.index(kind), n=600) == []


def test_broken_variant_without_the_readers_checks_crashes(good, tmp_path, monkeypatch):
    """Negative control: readers that pass the decoded JSON on unchecked."""
    import json

    from strgm.cli import draw as d

    monkeypatch.setattr(d, "_document", lambda p: json.loads(Path(p).read_text()))
    monkeypatch.setattr(d, "_holdout", lambda doc, p: doc["holdout"])
    monkeypatch.setattr(d, "_urs", lambda doc, p, label, top: ("x", doc["morphemes"]["R1"]))
    found = [b for kind in PLOTS for b in _fuzz(good, kind, tmp_path, 7, EXAMPLES)]
    assert found
