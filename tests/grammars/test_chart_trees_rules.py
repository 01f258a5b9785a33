"""tree_of_rules inverts tree_rules (strgm/grammars/chart_trees.py): every tree sampled
from a grammar comes back from its preorder rule indices; a derivation that is not one
tree's is refused; control: a decoder that reads the rules in postorder gets other
trees."""

import random

import pytest

from strgm.errors import GrammarError
from strgm.grammars.cfg import tree_rules
from strgm.grammars.chart_trees import tree_of_rules
from strgm.grammars.johnson_format import parse_grammar

G = parse_grammar("S --> NP VP\nS --> S C S\nC --> and\nNP --> Al\nNP --> D N\nD --> the\n"
                  "N --> dog\nVP --> barks\nVP --> V NP\nV --> sees\n")


def _sample(rng, label, depth=0):
    rules = [r for r in G.rules if r.lhs == label]
    if depth > 3:
        rules = [r for r in rules if label not in r.rhs] or rules
    r = rng.choice(rules)
    return (label,) + tuple(_sample(rng, c, depth + 1) if c in G.nt_index else c
                            for c in r.rhs)


@pytest.mark.parametrize("seed", range(20))
def test_tree_of_rules_inverts_tree_rules(seed):
    t = _sample(random.Random(seed), "S")
    assert tree_of_rules(G, tree_rules(G, t)) == t


def test_a_postorder_reading_is_another_tree_control():
    differ = 0
    for seed in range(20):
        t = _sample(random.Random(seed), "S")
        try:
            differ += tree_of_rules(G, tree_rules(G, t)[::-1]) != t
        except GrammarError:
            differ += 1
    assert differ > 0


def test_a_sequence_that_is_no_derivation_is_refused():
    ids = tree_rules(G, ("S", ("NP", "Al"), ("VP", "barks")))
    with pytest.raises(GrammarError, match="rules left"):
        tree_of_rules(G, ids + [ids[1]])
    with pytest.raises(GrammarError, match="ends before"):
        tree_of_rules(G, ids[:2])
    with pytest.raises(GrammarError, match="by a rule of"):
        tree_of_rules(G, [ids[0], ids[2]])
