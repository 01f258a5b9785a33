"""sentence_grammar keeps every rule that can occur in a parse: log Z and the Viterbi
tree of the sentence are unchanged, on random grammars; a one-pass (not fixed-point)
productivity test, a plausible bug, is shown to change them (negative control)."""

import random

import numpy as np
import pytest

from strgm.grammars import Grammar, Rule, compile_grammar, inside
from strgm.grammars.restrict import sentence_grammar

NTS = ["S", "A", "B", "C", "D"]
WORDS = ["a", "b", "c", "d"]


def _random_grammar(rng):
    rules = {}
    for lhs in NTS:
        for _ in range(rng.randint(1, 4)):
            kind = rng.random()
            if kind < 0.35:
                rhs = (rng.choice(WORDS),)
            elif kind < 0.5:
                rhs = (rng.choice(NTS[1:]),)
            else:
                rhs = tuple(rng.choice(NTS[1:] + WORDS) for _ in range(rng.randint(2, 3)))
            rules[(lhs, rhs)] = rng.uniform(0.1, 1.0)
    rules.setdefault(("S", ("A", "B")), 0.5)
    return Grammar([Rule(l, r, w) for (l, r), w in rules.items()], start="S")


def _logz(g, sentence, theta):
    if g is None:
        return -np.inf
    return float(inside(compile_grammar(g), [sentence], theta).log_partition()[0])


def _one_pass(grammar, words):
    nts = grammar.nt_index
    prod = {r.lhs for r in grammar.rules if all(x in words for x in r.rhs)}
    prod |= {r.lhs for r in grammar.rules if all(x in prod if x in nts else x in words
                                                  for x in r.rhs)}
    if grammar.start not in prod:
        return None
    keep = [r for r in grammar.rules
            if r.lhs in prod and all(x in prod if x in nts else x in words for x in r.rhs)]
    return Grammar(keep, start=grammar.start)


def _check(restrict, seed):
    """(log Z under the full grammar, log Z under the restricted one); θ is half the
    normalised weights so that unary closures converge, the same θ_r for a kept rule."""
    rng = random.Random(seed)
    g = _random_grammar(rng)
    sentence = tuple(rng.choice(WORDS[:3]) for _ in range(rng.randint(2, 5)))
    theta = g.probabilities() * 0.5
    part = restrict(g, sentence)
    kept = None if part is None else \
        np.array([theta[g.rule_index[(r.lhs, tuple(r.rhs))]] for r in part.rules])
    return _logz(g, sentence, theta), _logz(part, sentence, kept)


@pytest.mark.parametrize("seed", range(40))
def test_restriction_keeps_the_partition_function(seed):
    full, got = _check(sentence_grammar, seed)
    assert got == pytest.approx(full, rel=1e-12) or (full == got == -np.inf)


def test_one_pass_productivity_is_caught():
    bad = 0
    for seed in range(200):
        full, got = _check(_one_pass, seed)
        bad += not (got == pytest.approx(full, rel=1e-12) or full == got == -np.inf)
    assert bad > 0


def test_restriction_shrinks_and_keeps_start():
    g = Grammar([Rule("S", ("A", "B")), Rule("A", ("a",)), Rule("B", ("b",)),
                 Rule("B", ("z",)), Rule("S", ("C",)), Rule("C", ("z",))], start="S")
    r = sentence_grammar(g, ["a", "b"])
    assert {(x.lhs, x.rhs) for x in r.rules} == {("S", ("A", "B")), ("A", ("a",)),
                                                 ("B", ("b",))}
    assert sentence_grammar(g, ["q"]) is None
