"""Binarisation with horizontal Markovisation: hand-made examples, arity ≤ 2 and the
round trip debinarize(binarize(t)) == t on random trees and on the WSJ sample."""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from strgm.errors import InputError, OptionError
from strgm.grammars.binarize import binarize, debinarize, is_intermediate

NP = ("NP", ("DT", "the"), ("JJ", "big"), ("JJ", "red"), ("NN", "dog"))
WSJ = Path("/work/shared/data/treebank/wsj")


def test_right_factored_markov_1():
    assert binarize(NP, horizontal=1) == (
        "NP", ("DT", "the"),
        ("NP|<JJ>", ("JJ", "big"), ("NP|<JJ>", ("JJ", "red"), ("NN", "dog"))))


def test_left_factored_markov_1():
    assert binarize(NP, horizontal=1, factor="left") == (
        "NP", ("NP|<JJ>", ("NP|<JJ>", ("DT", "the"), ("JJ", "big")), ("JJ", "red")),
        ("NN", "dog"))


def test_no_markovisation_keeps_every_sibling():
    b = binarize(NP, horizontal=None)
    assert b[2][0] == "NP|<JJ,JJ,NN>" and b[2][2][0] == "NP|<JJ,NN>"
    assert binarize(NP, horizontal=0)[2][0] == "NP|<>"


def test_unary_chains_and_small_nodes_are_kept():
    t = ("S", ("VP", ("VB", "go")))
    assert binarize(t) == t
    t2 = ("S", ("NP", ("NN", "it")), ("VP", ("VB", "go")))
    assert binarize(t2) == t2


def test_refused_inputs():
    with pytest.raises(InputError, match="marker"):
        binarize(("NP|<x>", ("NN", "a")))
    with pytest.raises(InputError, match="siblings"):
        binarize(("NP", "a", ("NN", "b"), ("NN", "c")))
    with pytest.raises(OptionError):
        binarize(NP, horizontal=-1)
    with pytest.raises(OptionError):
        binarize(NP, factor="middle")


def _arity_ok(t) -> bool:
    if isinstance(t, str):
        return True
    kids = t[1:]
    words = [c for c in kids if isinstance(c, str)]
    return 1 <= len(kids) <= 2 and (not words or len(kids) == 1) \
        and all(_arity_ok(c) for c in kids)


LABELS = st.sampled_from(["S", "NP", "VP", "PP", "ADJP", ".", ",", "-LRB-"])
TAGS = st.sampled_from(["DT", "NN", "VB", "IN", ".", ","])
PRETERM = st.tuples(TAGS, st.sampled_from(["a", "b", ".", "NP", "|"]))
TREES = st.recursive(PRETERM, lambda kids: st.builds(
    lambda lab, ks: (lab,) + tuple(ks), LABELS, st.lists(kids, min_size=1, max_size=6)),
    max_leaves=25)


@settings(max_examples=150, deadline=None)
@given(TREES, st.sampled_from([None, 0, 1, 2, 3]), st.sampled_from(["right", "left"]))
def test_round_trip_and_arity(t, h, factor):
    b = binarize(t, horizontal=h, factor=factor)
    assert _arity_ok(b)
    assert debinarize(b) == t


def test_debinarize_leaves_other_trees_alone():
    t = ("S", ("NP", ("NN", "a")), ("VP", ("VB", "b")))
    assert debinarize(t) == t and not is_intermediate("NP") and is_intermediate("NP|<>")


@pytest.mark.slow
@pytest.mark.skipif(not WSJ.exists(), reason="WSJ sample not present")
def test_round_trip_on_the_wsj_sample():
    from strgm.grammars.ptb import clean_tree, read_treebank

    trees = [t for t in map(clean_tree, read_treebank(WSJ)) if t is not None]
    assert len(trees) > 3000
    for h in (None, 0, 1, 2):
        for factor in ("right", "left"):
            for t in trees:
                b = binarize(t, horizontal=h, factor=factor)
                assert _arity_ok(b) and debinarize(b) == t


S = ("S", NP, ("VP", ("VBD", "barked"), ("NP", ("NN", "x"))), (".^", "."))


def test_parent_annotation_of_phrasal_nodes_only():
    b = binarize(S, horizontal=1, parent=True)
    assert b == (
        "S", ("NP^S", ("DT", "the"),
              ("NP^S|<JJ>", ("JJ", "big"), ("NP^S|<JJ>", ("JJ", "red"), ("NN", "dog")))),
        ("S|<VP>", ("VP^S", ("VBD", "barked"), ("NP^VP", ("NN", "x"))), (".^", ".")))
    assert debinarize(b, parent=True) == S
    assert debinarize(b) != S  # the annotation stays unless asked
    left = binarize(S, horizontal=2, factor="left", parent=True)
    assert left[1][1][1][1][0] == "NP^S|<DT,JJ>"  # unannotated siblings in the history


def test_split_parent_keeps_collision_markers():
    from strgm.grammars.binarize import split_parent, strip_parent

    assert split_parent("NP^S") == ("NP", "S")
    assert split_parent(".^") == (".^", None)
    assert split_parent("X^^P^") == ("X^", "P^")
    assert strip_parent("NP^S|<JJ>") == "NP"  # (never applied to intermediates)
    with pytest.raises(InputError, match="parent annotation"):
        binarize(("A^B", ("NN", "a")), parent=True)
    assert binarize(("A^B", ("NN", "a"))) == ("A^B", ("NN", "a"))


@settings(max_examples=100, deadline=None)
@given(TREES, st.sampled_from([None, 0, 1, 2]), st.sampled_from(["right", "left"]))
def test_parent_round_trip(t, h, factor):
    t = _caret(t)
    b = binarize(t, horizontal=h, factor=factor, parent=True)
    assert _arity_ok(b)
    assert debinarize(b, parent=True) == t


def _caret(t):
    """Collision-renamed labels (trailing ^) as relabel_collisions makes them."""
    if isinstance(t, str):
        return t
    lab = t[0] + "^" if t[0] in (".", ",") else t[0]
    return (lab,) + tuple(_caret(c) for c in t[1:])
