"""Parse trees: the tidy layout, the matplotlib drawing and the SVG view."""

import sys
import xml.etree.ElementTree as ET

import pytest

from strgm.errors import InputError
from strgm.grammars.ptb import parse_trees
from strgm.plot import TreeView, plot_tree, tree_svg
from strgm.plot.tree_layout import layout_tree

TREE = ("S", ("NP", ("DT", "the"), ("NN", "dog")),
        ("VP", ("VBZ", "barks"), ("ADVP", ("RB", "very"), ("RB", "loudly"))),
        (".", "."))
N_NODES = 16
SVG = "{http://www.w3.org/2000/svg}"


def test_leaves_evenly_spaced_and_parents_centred():
    nodes = layout_tree(TREE)
    assert len(nodes) == N_NODES
    assert [n.label for n in nodes if n.leaf] == ["the", "dog", "barks", "very", "loudly", "."]
    assert [n.x for n in nodes if n.leaf] == [0, 1, 2, 3, 4, 5]
    for i, n in enumerate(nodes):
        kids = [c for c in nodes if c.parent == i]
        if kids:
            assert n.x == (kids[0].x + kids[-1].x) / 2
            assert all(c.depth == n.depth + 1 for c in kids)
    assert nodes[0].label == "S" and nodes[0].parent is None and nodes[0].x == 2.75


def test_a_deep_tree_does_not_recurse():
    t = "w"
    for _ in range(5000):
        t = ("X", t)
    nodes = layout_tree(t)
    assert len(nodes) == 5001 and nodes[-1].depth == 5000 and nodes[0].x == 0


def test_bad_trees_are_named():
    with pytest.raises(InputError, match="child 2 of 'NP' is not a tree"):
        layout_tree(("S", ("NP", "a", 3)))
    with pytest.raises(InputError, match="is not a tree"):
        layout_tree(())
    with pytest.raises(InputError, match="expected one bracketed tree, found 2"):
        layout_tree("(A a) (B b)")


def test_plot_tree_draws_one_text_per_node_and_one_line_per_edge(mpl):
    ax = plot_tree(TREE)
    assert sorted(t.get_text() for t in ax.texts) == sorted(n.label for n in layout_tree(TREE))
    assert len(ax.texts) == N_NODES
    assert len(ax.get_lines()) == N_NODES - 1
    root = next(t for t in ax.texts if t.get_text() == "S")
    assert root.get_position() == (2.75, 0)


def test_tree_view_svg_parses_and_has_one_text_per_node():
    doc = ET.fromstring(TreeView(TREE)._repr_svg_())
    assert doc.tag == SVG + "svg"
    assert len(doc.findall(SVG + "text")) == N_NODES
    assert len(doc.findall(SVG + "line")) == N_NODES - 1


def test_tree_view_escapes_markup_and_reads_bracketed_text():
    text = "(S (NP <b>) (CC &) (NP-SBJ PRP$) ())"  # labels that are markup or math
    (tree,) = parse_trees("(S (NP <b>) (CC &) (NP-SBJ PRP$))")
    doc = ET.fromstring(tree_svg(tree))
    assert [t.text for t in doc.findall(SVG + "text")] == [
        "S", "NP", "<b>", "CC", "&", "NP-SBJ", "PRP$"]
    with pytest.raises(InputError):
        TreeView(text)  # empty brackets: the PTB reader's error, with its line


def test_tree_view_needs_no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    view = TreeView("(S (NP a) (VP b))")
    assert len(ET.fromstring(view.svg()).findall(SVG + "text")) == 5
    assert repr(view) == "TreeView('S', 5 nodes)"
