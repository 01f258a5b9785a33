"""Penn Treebank reader and treebank grammar."""

from pathlib import Path

import numpy as np
import pytest

from strgm.grammars.ptb import (clean_tree, parse_trees, read_treebank, relabel_collisions,
                                tree_leaves, treebank_grammar)
from strgm.errors import InputError
from strgm.grammars.cfg import compile_grammar, tree_rules
from strgm.grammars.chart import inside

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "treebank" / "wsj"

TEXT = """( (S (NP-SBJ-1 (NNP Pierre) (NNP Vinken))
     (VP (VBD slept) (NP (-NONE- *-1)))
     (. .)) )
"""


def test_parse_and_clean():
    (t,) = parse_trees(TEXT)
    c = clean_tree(t)
    assert c == ("S", ("NP", ("NNP", "Pierre"), ("NNP", "Vinken")), ("VP", ("VBD", "slept")),
                 (".", "."))
    assert tree_leaves(c) == ("Pierre", "Vinken", "slept", ".")


def test_an_x_over_x_left_by_an_empty_element_is_collapsed():
    """(NP (NP the dog) (-NONE- *)) loses its empty element and then its X → X link;
    a unary with another label stays (control)."""
    (t,) = parse_trees("( (S (NP-SBJ (NP (DT the) (NN dog)) (-NONE- *ICH*-1)) "
                       "(VP (VBD barked) (ADVP (RB loudly)))) )")
    assert clean_tree(t) == ("S", ("NP", ("DT", "the"), ("NN", "dog")),
                             ("VP", ("VBD", "barked"), ("ADVP", ("RB", "loudly"))))
    (u,) = parse_trees("( (S (NP (NP (NNP Al))) (VP (VBD ran))) )")
    assert clean_tree(u) == ("S", ("NP", ("NNP", "Al")), ("VP", ("VBD", "ran")))


@pytest.mark.parametrize("bad,line", [("( (S (NP a)\n (VP b) )", 1), ("(S a))\n", 1),
                                      ("(S a)\n(S b) )", 2)])
def test_unbalanced_brackets(bad, line):
    with pytest.raises(InputError) as e:
        parse_trees(bad, "x.mrg")
    assert e.value.line == line


def test_treebank_grammar_gold_tree_probability():
    (t,) = parse_trees(TEXT)
    c = clean_tree(t)
    g = treebank_grammar([c, c])
    ch = inside(compile_grammar(g), [tree_leaves(c)])
    # one tree only: P = product of relative frequencies = P(NNP->Pierre) P(NNP->Vinken)
    assert ch.logZ[0] == pytest.approx(np.log(0.25))
    assert "." not in g.nt_index and ".^" in g.nt_index
    assert tree_rules(g, ("TOP", relabel_collisions([c])[0]))


@pytest.mark.skipif(not DATA.exists(), reason=f"treebank sample not found at {DATA}")
def test_real_treebank_sample():
    trees = [clean_tree(t) for t in read_treebank(DATA, limit=5)]
    trees = relabel_collisions([t for t in trees if t is not None])
    assert len(trees) > 20
    g = treebank_grammar(trees)
    short = [t for t in trees if len(tree_leaves(t)) <= 12][:3]
    cg = compile_grammar(g)
    for t in short:
        ch = inside(cg, [tree_leaves(t)])
        gold = sum(np.log(g.probabilities()[r]) for r in tree_rules(g, ("TOP", t)))
        assert ch.logZ[0] >= gold - 1e-9
        assert ch.viterbi()[0][1] >= gold - 1e-9
