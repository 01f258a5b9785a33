"""The Table 1 transform: symbol spellings, the transformed PCFG's probability of every TSG
derivation (summing its equivalent transformed derivations, enumerated) against the MAP
TSG's Π_e p(e), the tree-constrained inside against brute force, and derivations drawn by
the chart converted back to indicators."""

import itertools
import math

import numpy as np
import pytest

from strgm.grammars.cfg import compile_grammar, tree_yield
from strgm.grammars.chart import inside
from strgm.grammars.tsg import BlockedMHTSG, base_label, constrained_inside, \
    derivation_to_tsg, primed, signed, transform
from strgm.grammars.tsg.blocked import add_tree, map_log_prob, remove_tree, tree_ets
from strgm.grammars.tsg.symbols import frontier, word_sig
from tests.grammars.tsg.tsg_oracles import TOY, TOY2

PTB = ["NP", "PRP$", "-LRB-", "''", "``", ",", ".", ":", "ADVP|PRT", "@NP", "$", "#"]


def test_symbols_invert_and_never_collide():
    syms = set(PTB)
    for x in PTB:
        p = primed(x)
        sg = signed(x, [frontier("DT"), signed("NN", [word_sig("a b{%}")])])
        assert base_label(p) == x and base_label(sg) == x and base_label(x) == x
        assert not any(ch.isspace() for ch in p + sg)
        assert p not in syms and sg not in syms and not p.startswith("@<")
        syms |= {p, sg}


def _derivations(g, sym, node):
    """All (prob, derivation) of ``sym`` yielding exactly the treebank subtree ``node``."""
    out = []
    for i, r in enumerate(g.rules):
        if r.lhs != sym:
            continue
        p = g.probabilities()[i]
        if base_label(sym) != node[0]:
            continue
        if sym == base_label(sym):  # a site, c → c' or c → sign(e): the same tree node
            out += [(p * q, (sym, d)) for q, d in _derivations(g, r.rhs[0], node)]
            continue
        kids = node[1:]
        if len(r.rhs) != len(kids):
            continue
        parts = []
        for x, k in zip(r.rhs, kids):
            if isinstance(k, str):
                parts.append([(1.0, k)] if x == k else [])
            else:
                parts.append(_derivations(g, x, k) if x in g.nt_index else [])
        for combo in itertools.product(*parts):
            out.append((p * math.prod(q for q, _ in combo), (sym,) + tuple(d for _, d in combo)))
    return out


@pytest.mark.parametrize("trees", [TOY, TOY2])
def test_transformed_derivations_sum_to_map_tsg_probability(trees):
    k = BlockedMHTSG(trees, alpha={"S": 0.6, "A": 1.5}, s=0.3)
    st = k.init(0, "maximal")
    st.site[k.table.inner[::2]] = 1  # counts of a mixed derivation
    c = k.counts(st)
    g = transform(c, st.alpha)
    la = np.log(st.alpha)
    for i, tree in enumerate(trees):
        got = {}
        for p, d in _derivations(g, tree[0], tree):
            back, sites, _ = derivation_to_tsg(d, k)
            assert back == tree
            got[tuple(sites)] = got.get(tuple(sites), 0.0) + p
        n = int(k.table.starts[i + 1] - k.table.starts[i])
        assert len(got) == 2 ** (n - 1)
        for sites, p in got.items():
            ets, _ = tree_ets(c, i, list(sites))
            assert math.log(p) == pytest.approx(map_log_prob(c, ets, st.alpha, la), abs=1e-10)


def test_constrained_inside_equals_brute_force():
    k = BlockedMHTSG(TOY2 + TOY, alpha=0.7, s={"A": 0.2, "S": 0.6})
    st = k.init(0, "minimal")
    st.site[k.table.inner[1::3]] = 0
    c = k.counts(st)
    al, s = list(st.alpha), list(st.s)
    la = np.log(st.alpha)
    for i in range(k.table.n_trees):
        remove_tree(c, i)
        logz, _, _ = constrained_inside(c, i, al, s)
        n = int(k.table.starts[i + 1] - k.table.starts[i])
        tot = [map_log_prob(c, tree_ets(c, i, [1] + list(b))[0], al, la)
               for b in itertools.product((0, 1), repeat=n - 1)]
        assert logz == pytest.approx(float(np.logaddexp.reduce(tot)), abs=1e-10)
        add_tree(c, i)


def test_chart_samples_convert_back_to_tsg_derivations():
    trees = [("S", ("NP", ("D", "the"), ("N", "dog")), ("VP", ("V", "saw"), ("NP", ("N", "it")))),
             ("S", (".", "."), ("X", "X")), ("NP", ("N", "it"))]
    k = BlockedMHTSG(trees)
    st = k.sample(k.init(0, "minimal"))
    g = transform(st, kernel=k)
    assert g.start == "TOP" and "X^" in g.nt_index and ".^" in g.nt_index
    cg = compile_grammar(g)
    for tree in trees:
        words = tree_yield(tree)
        for d, _ in inside(cg, [words]).sample(np.random.default_rng(0), 5)[0]:
            back, sites, ets = derivation_to_tsg(d, k)
            assert tree_yield(back) == words and sites[0] == 1 and len(ets) == sum(sites)
