"""The factor graph of a paradigm on one page (:func:`plot_factor_graph`, ``strgm plot
graph``): the 12 verbs of the English example fit a landscape page, grouped in a block
per stem, with every node of the graph placed and surface forms in [ ]."""

import struct

import pytest

from strgm.errors import InputError
from tests.robustness.harness import run_cli

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def verbs():
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import build_phonology_model

    return build_phonology_model(read_paradigm("example:english-verbs")).graph


def png_size(path) -> tuple:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_every_node_placed_in_a_block_per_stem(verbs):
    from strgm.plot.factor_graph import paradigm_layout

    pos, blocks, (w, h) = paradigm_layout(verbs)
    assert {v for k, v in pos if k == "var"} == set(verbs.variables)
    assert {f for k, f in pos if k == "factor"} == set(verbs.factors)
    assert len(blocks) == 12 and sum(n for _, _, n in blocks.values()) == 48
    assert 0.5 < w / h < 2.5  # not a strip
    for stem, (x0, y0, n) in blocks.items():  # each word's surface sits in its stem's box
        for f in verbs.factors.values():
            if f.kind == "concat" and f.variables[0] == stem:
                x, y = pos[("var", f.variables[-1])]
                assert x0 <= x < x0 + n and y0 <= y


def test_the_english_verbs_fit_a_page(mpl, verbs, tmp_path):
    from strgm.plot import plot_factor_graph, save_figure

    fig = plot_factor_graph(verbs)
    w, h = fig.get_size_inches()
    assert w <= 10 and h <= 7.5 and fig.axes[0].get_title()
    texts = [t.get_text() for t in fig.axes[0].texts]
    observed = [v for v, x in verbs.variables.items() if x.is_observed]
    assert sum(t.startswith("[") and t.endswith("]") for t in texts) == len(observed)
    width, height = png_size(save_figure(fig, tmp_path / "g.png"))
    assert width <= 1100 and height <= 850 and 0.5 < width / height < 2.5


def test_strgm_plot_graph(tmp_path):
    out = tmp_path / "g.png"
    o = run_cli(["plot", "graph", "example:english-verbs", "--out", out])
    assert o.code == 0, o.stderr
    width, height = png_size(out)
    assert width <= 1100 and height <= 850


def test_a_graph_without_words_is_refused(mpl):
    from strgm.plot import plot_factor_graph

    class Empty:
        variables, factors = {}, {}

    with pytest.raises(InputError, match="no word"):
        plot_factor_graph(Empty())
