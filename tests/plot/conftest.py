"""Shared inputs of the plotting tests: the Agg backend (no display), and one small
inference run, a paradigm of two stems and their plurals, with one word held out."""

import pytest

try:
    import matplotlib

    matplotlib.use("Agg")
except ImportError:  # the tests that need it are skipped
    matplotlib = None

PARADIGM = "kæt\tkæt\nkæt PL\tkætz\ndɔɡ\tdɔɡ\ndɔɡ PL\tdɔɡz\n"


@pytest.fixture(scope="session")
def run(tmp_path_factory):
    """infer_paradigm (pruned BP, a few iterations) with 'dɔɡ PL' held out (predicted
    right: PL is z in the other plural)."""
    from strgm.datasets.paradigm import read_paradigm
    from strgm.workflows import infer_paradigm

    path = tmp_path_factory.mktemp("paradigm") / "words.tsv"
    path.write_text(PARADIGM, encoding="utf-8")
    return infer_paradigm(read_paradigm(str(path)), "pruned", holdout=["dɔɡ PL"],
                          kbest=10, max_iters=5)


@pytest.fixture
def mpl():
    """matplotlib, or skip."""
    return pytest.importorskip("matplotlib")
