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
