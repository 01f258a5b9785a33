"""A paradigm's factor graph fits a page: the dot text of ``strgm graph`` groups it by
morpheme and word (a cluster per stem, its words in columns, the affixes on top, the
stems in rows) and ``strgm plot graph`` draws blocks in a grid. Graphviz used to lay
the 12 English verbs out as a 22,087 x 181 pixel strip."""

import re
import shutil
import struct
import subprocess

import pytest

from strgm.cli.draw import _graph

#: at Graphviz's and the plot's default resolutions: each side, and the longer side over
#: the shorter one
MAX_PIXELS, MAX_RATIO = 2500, 3.0
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not on PATH")


@pytest.fixture(scope="module")
def verbs():
    return _graph("example:english-verbs")  # 12 verbs, 48 words


def _png_size(dot_text: str) -> tuple:
    png = subprocess.run(["dot", "-Tpng"], input=dot_text.encode(), capture_output=True,
                         check=True, timeout=120).stdout
    return struct.unpack(">II", png[16:24])  # the IHDR chunk's width and height


def _fits(w: int, h: int) -> bool:
    return max(w, h) <= MAX_PIXELS and max(w, h) / min(w, h) <= MAX_RATIO


def test_dot_groups_stems_words_and_affixes(verbs):
    text = verbs.to_dot()
    clusters = dict(re.findall(r'subgraph "cluster_([^"]+)" \{ (.*) \}', text))
    assert len(clusters) == 13 and "affixes" in clusters  # 12 stems + the affixes
    for m in ("PAST", "3SG", "PROG"):
        assert f'"v:M:{m}"' in clusters["affixes"]
    ask = clusters["M:ask"]
    for node in ("f:prior:ask", "v:M:ask", "f:phonology:ask", "v:S:ask", "f:concat:ask PAST",
                 "v:U:ask PAST", "f:phonology:ask PAST", "v:S:ask PAST"):
        assert f'"{node}"' in ask
    assert "S:bend" not in ask


def test_a_graph_that_is_not_a_paradigm_is_not_grouped():
    """A chain A -> B -> C: B is an output read by another factor, not a word's surface."""
    from strgm.graph import FactorGraph
    from tests.inference.test_bp import ALPH, EDIT

    g = FactorGraph(ALPH)
    for v in "ABC":
        g.add_variable(v)
    g.add_binary("ab", "A", "B", EDIT)
    g.add_binary("bc", "B", "C", EDIT)
    text = g.to_dot()
    assert "subgraph" not in text and '"f:bc" -- "v:B";' in text


@needs_dot
def test_the_dot_picture_of_12_verbs_fits_a_page(verbs, monkeypatch):
    w, h = _png_size(verbs.to_dot())
    assert _fits(w, h), (w, h)
    # control: without the grouping, Graphviz draws the old strip
    monkeypatch.setattr("strgm.graph._stem_words", lambda graph: {})
    w, h = _png_size(verbs.to_dot())
    assert not _fits(w, h) and w > 10 * h, (w, h)


def test_the_plotted_graph_of_12_verbs_fits_a_page(verbs):
    pytest.importorskip("matplotlib")
    from strgm.plot import plot_factor_graph

    fig = plot_factor_graph(verbs)
    w, h = fig.get_size_inches() * fig.dpi
    assert _fits(w, h), (w, h)
