"""NLTK interop: grammar and tree round trips, and the inside probability and Viterbi
parse of a converted grammar equal NLTK's own parsers'. Skipped without NLTK, except the
check of the error given when it is missing."""

import math
import sys

import numpy as np
import pytest

from strgm.errors import GrammarError, InputError, StrgmError
from strgm.grammars import Grammar, Rule, compile_grammar, inside
from strgm.grammars.nltk_interop import (grammar_from_nltk, grammar_to_nltk, tree_from_nltk,
                                         tree_to_nltk)

#: PP attachment ambiguity and a unary chain NP -> PRP -> I
PCFG_TEXT = """
S -> NP VP [1.0]
NP -> Det N [0.5] | NP PP [0.2] | PRP [0.3]
PRP -> 'I' [1.0]
VP -> V NP [0.6] | VP PP [0.4]
PP -> P NP [1.0]
Det -> 'the' [0.6] | 'a' [0.4]
N -> 'man' [0.5] | 'telescope' [0.3] | 'dog' [0.2]
V -> 'saw' [1.0]
P -> 'with' [0.7] | 'near' [0.3]
"""
SENTENCES = ["I saw the man with the telescope", "I saw a dog near the man with a dog",
             "the dog saw I"]


@pytest.fixture
def nltk():
    return pytest.importorskip("nltk")


def strgm_grammar() -> Grammar:
    """Unnormalised weights, a rule with a pseudocount and a ternary rule."""
    return Grammar([Rule("S", ("NP", "VP"), 2.0), Rule("S", ("NP", "VP", "PP"), 1.0),
                    Rule("NP", ("she",), 3.0, pseudocount=0.5), Rule("NP", ("NP", "PP"), 1.0),
                    Rule("VP", ("runs",), 1.0), Rule("PP", ("home",), 5.0)], start="S")


def test_grammar_round_trip_keeps_rules_and_probabilities(nltk):
    g = strgm_grammar()
    p = grammar_to_nltk(g)
    assert isinstance(p, nltk.PCFG) and p.start() == nltk.Nonterminal("S")
    back = grammar_from_nltk(p)
    assert [(r.lhs, r.rhs) for r in back.rules] == [(r.lhs, r.rhs) for r in g.rules]
    np.testing.assert_allclose(back.probabilities(), g.probabilities(), rtol=1e-12)
    assert back.start == g.start and back.terminals == g.terminals
    again = grammar_to_nltk(back)
    assert again.productions() == p.productions()  # NLTK compares probabilities too
    from_text = nltk.PCFG.fromstring(PCFG_TEXT)
    assert grammar_to_nltk(grammar_from_nltk(from_text)).productions() == \
        from_text.productions()


def test_given_probabilities_and_unnormalised_ones(nltk):
    g = strgm_grammar()
    theta = np.array([0.5, 0.5, 0.9, 0.1, 1.0, 1.0])
    p = grammar_to_nltk(g, theta)
    assert [q.prob() for q in p.productions()] == pytest.approx(theta)
    with pytest.raises(GrammarError, match="rules of 'NP' have total probability 1.5"):
        grammar_to_nltk(g, [0.5, 0.5, 0.9, 0.6, 1.0, 1.0])
    with pytest.raises(GrammarError, match="expected 6 rule probabilities"):
        grammar_to_nltk(g, [1.0])


@pytest.mark.parametrize("sentence", SENTENCES)
def test_inside_probability_and_viterbi_equal_nltk(nltk, sentence):
    pcfg = nltk.PCFG.fromstring(PCFG_TEXT)
    words = sentence.split()
    chart = inside(compile_grammar(grammar_from_nltk(pcfg)), [tuple(words)])
    parses = list(nltk.InsideChartParser(pcfg).parse(words))
    assert len(parses) >= 1
    assert math.exp(chart.log_partition()[0]) == pytest.approx(
        sum(t.prob() for t in parses), rel=1e-10)
    best = next(nltk.ViterbiParser(pcfg).parse(words))
    tree, logp = chart.viterbi()[0]
    assert tree == tree_from_nltk(best)
    assert math.exp(logp) == pytest.approx(best.prob(), rel=1e-10)


def test_inside_comparison_can_fail(nltk):
    """Negative control: one changed probability changes the inside probability."""
    pcfg = nltk.PCFG.fromstring(PCFG_TEXT)
    other = nltk.PCFG.fromstring(PCFG_TEXT.replace("[0.7] | 'near' [0.3]",
                                                   "[0.6] | 'near' [0.4]"))
    words = SENTENCES[0].split()
    chart = inside(compile_grammar(grammar_from_nltk(other)), [tuple(words)])
    nltk_inside = sum(t.prob() for t in nltk.InsideChartParser(pcfg).parse(words))
    assert math.exp(chart.log_partition()[0]) != pytest.approx(nltk_inside, rel=1e-3)


def test_tree_round_trip(nltk):
    t = ("S", ("NP", ("PRP", "I")), ("VP", ("V", "saw"), ("NP", ("Det", "a"), ("N", "dog"))))
    n = tree_to_nltk(t)
    assert isinstance(n, nltk.Tree) and n.leaves() == ["I", "saw", "a", "dog"]
    assert str(n) == str(nltk.Tree.fromstring("(S (NP (PRP I)) (VP (V saw) (NP (Det a) "
                                              "(N dog))))"))
    assert tree_from_nltk(n) == t
    nt = nltk.Tree(nltk.Nonterminal("X"), ["x"])
    assert tree_from_nltk(nt) == ("X", "x")


def test_bad_inputs_are_named(nltk):
    with pytest.raises(GrammarError, match="nonterminal 'B' .* no productions"):
        grammar_from_nltk(nltk.CFG.fromstring("A -> B 'x'\nC -> 'c'"))
    with pytest.raises(GrammarError, match="terminal 'C' has the name of a nonterminal"):
        grammar_from_nltk(nltk.CFG.fromstring("A -> 'C' C\nC -> 'c'"))
    uniform = grammar_from_nltk(nltk.CFG.fromstring("A -> 'a' | 'b' A"))
    assert uniform.probabilities().tolist() == [0.5, 0.5]
    with pytest.raises(InputError, match="expected an nltk.PCFG or nltk.CFG, got dict"):
        grammar_from_nltk({})
    with pytest.raises(InputError, match="leaf 3 is not a string"):
        tree_from_nltk(nltk.Tree("A", [3]))
    with pytest.raises(InputError, match="not a tree node"):
        tree_to_nltk(("S", ["NP"]))
    with pytest.raises(InputError, match="got the string 'S'"):
        tree_to_nltk("S")


def test_missing_nltk_is_one_line_saying_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)  # import nltk -> ImportError
    for call in (lambda: grammar_to_nltk(strgm_grammar()), lambda: grammar_from_nltk(None),
                 lambda: tree_to_nltk(("S", "x")), lambda: tree_from_nltk(None)):
        with pytest.raises(StrgmError, match=r"^NLTK is not installed: pip install "
                                             r"'strgm\[nltk\]'$"):
            call()
