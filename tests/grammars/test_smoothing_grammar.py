"""Backoff contexts, the backoff predictive (sums to 1; α → ∞ gives the backoff
distribution, α → 0 the relative frequencies; Collins's λ by hand) and the smoothed
grammars (proper, containing the observed rules, parsing to plain Penn labels)."""

from collections import Counter, defaultdict

import numpy as np
import pytest

from strgm.errors import OptionError
from strgm.grammars.binarize import binarize
from strgm.grammars.smoothing import smoothed_pcfg
from strgm.grammars.smoothing.backoff import concretize, consistent, observe
from strgm.grammars.smoothing.collins import collins_lambda, collins_predictive
from strgm.grammars.smoothing.evaluate import collision_map, heldout_rule_probs
from strgm.grammars.smoothing.hdp import Seating
from strgm.grammars.smoothing.hierarchy import build_hierarchy, chain_predictive

TREES = [
    ("S", ("NP", ("DT", "the"), ("JJ", "big"), ("JJ", "red"), ("NN", "dog")),
     ("VP", ("VBD", "barked"), ("PP", ("IN", "at"), ("NP", ("DT", "a"), ("NN", "cat")))),
     (".", ".")),
    ("S", ("NP", ("NNP", "Rex")), ("VP", ("VBD", "sat"), ("ADVP", ("RB", "down"))),
     (".", ".")),
    ("S", ("NP", ("DT", "the"), ("NN", "cat")),
     ("VP", ("VBD", "saw"), ("NP", ("DT", "the"), ("JJ", "red"), ("NN", "dog"))), (".", ".")),
    ("S", ("PP", ("IN", "at"), ("NP", ("NN", "noon"))), ("NP", ("DT", "the"), ("NN", "dog")),
     ("VP", ("VBD", "sat")), (".", ".")),
]


def _phrasal_rules(b, out):
    if isinstance(b, str) or (len(b) == 2 and isinstance(b[1], str)):
        return out
    out[(b[0], tuple(c[0] for c in b[1:]))] += 1
    for c in b[1:]:
        _phrasal_rules(c, out)
    return out


@pytest.mark.parametrize("h", [None, 0, 1, 2, 3])
@pytest.mark.parametrize("parent", [False, True])
def test_observe_gives_the_binarised_rules_and_they_are_consistent(h, parent):
    counts, ctxs = observe(TREES, h, parent)
    got = Counter()
    for (lhs, out), n in counts.items():
        assert consistent(ctxs[lhs], out, h)
        assert ctxs[lhs].lhs() == lhs
        got[(lhs, concretize(ctxs[lhs], out))] += n
    want = Counter()
    for t in TREES:
        _phrasal_rules(binarize(t, h, "right", parent), want)
    assert got == want


def _hier(parent=True, h=1):
    counts, ctxs = observe(TREES, h, parent)
    return build_hierarchy(counts, ctxs, h, None), counts, ctxs


def _sums(hier, pi):
    tot = defaultdict(float)
    for lhs, p in zip(hier.pair_lhs, pi):
        tot[lhs] += p
    return tot


def test_node_predictives_sum_to_one_at_every_level():
    hier, _, _ = _hier()
    pooled, node_tot, distinct = hier.pooled_counts()
    node_rows = [i for i, lhs in enumerate(hier.pair_lhs) if "|<" not in lhs]
    for conc in (0.5 * distinct, 3.0 * distinct + 1):
        pi = chain_predictive(hier, pooled, node_tot, conc)
        for lhs, s in _sums(hier, pi).items():
            if "|<" not in lhs:
                assert s == pytest.approx(1.0)
        # the backoff level alone: a huge concentration at the full contexts
        big = conc.copy()
        big[[k[0] == "full" for k in hier.node_keys]] = 1e12
        pi = chain_predictive(hier, pooled, node_tot, big)
        assert all(abs(s - 1) < 1e-9 for lhs, s in _sums(hier, pi).items() if "|<" not in lhs)
    assert node_rows


def test_hdp_state_predictive_sums_to_one_over_node_outcomes():
    hier, _, _ = _hier()
    s = Seating(hier, 2.0)
    s.sweep(7, init=True)
    s.sweep(8)
    for lhs, tot in _sums(hier, s.predictive()).items():
        if "|<" not in lhs:
            assert tot == pytest.approx(1.0)


def test_limits_of_the_concentration():
    hier, _, _ = _hier()
    pooled, node_tot, distinct = hier.pooled_counts()
    full = np.array([k[0] == "full" for k in hier.node_keys])
    conc = np.where(full, 1e-12, 2.0)
    mle = chain_predictive(hier, pooled, node_tot, conc)
    c_full = pooled[np.maximum(hier.pair_cells[:, 0], 0)] * (hier.pair_cells[:, 0] >= 0)
    assert np.allclose(mle, c_full / node_tot[hier.pair_nodes[:, 0]])
    conc = np.where(full, 1e12, 2.0)
    backed = chain_predictive(hier, pooled, node_tot, conc)
    parent = hier.pair_nodes[:, 1]
    rows = (parent >= 0) & (hier.pair_nodes[:, 2] < 0)  # parent is a top node
    assert rows.sum() > 5
    c_par = np.where(hier.pair_cells[:, 1] >= 0, pooled[np.maximum(hier.pair_cells[:, 1], 0)], 0)
    # the parents here are top nodes: π = (c + a H) / (n + a), H = 1 / V
    expect = (c_par + 2.0 / hier.top_size[parent]) / (node_tot[parent] + 2.0)
    assert np.allclose(backed[rows], expect[rows])


def test_collins_lambda_by_hand():
    assert collins_lambda(10, 4, 0.5) == pytest.approx(10 / 12)
    hier, counts, ctxs = _hier()
    b = 0.5
    pi = collins_predictive(hier, b)
    # NP^S: NP^S -> DT NP^S|<JJ> (1), -> DT NN (2), -> NNP (1); backoff NP: all NPs
    lhs = "NP^S"
    rows = [k for k, a in enumerate(hier.pair_lhs) if a == lhs]
    by_rhs = {hier.pair_rhs[k]: pi[k] for k in rows}
    lam_full = collins_lambda(4, 3, b)      # NP^S seen 4 times, 3 distinct outcomes
    np_tokens = Counter()
    for (a, out), n in counts.items():
        if ctxs[a].kind == "node" and ctxs[a].x == "NP":
            np_tokens[out] += n
    c_np, u_np = sum(np_tokens.values()), len(np_tokens)
    lam_np = collins_lambda(c_np, u_np, b)
    out = ("DT", "NN")
    expect = lam_full * 2 / 4 + (1 - lam_full) * (lam_np * np_tokens[out] / c_np
                                                  + (1 - lam_np) / u_np)
    assert by_rhs[out] == pytest.approx(expect)


@pytest.mark.parametrize("smoothing", ["collins", "hdp"])
@pytest.mark.parametrize("parent", [False, True])
def test_smoothed_grammars_are_proper_and_keep_the_observed_rules(smoothing, parent):
    g, info = smoothed_pcfg(TREES, smoothing, 1, parent, threshold=0, iters=10, seed=1)
    g0, _ = smoothed_pcfg(TREES, "none", 1, parent, threshold=0)
    assert {(r.lhs, r.rhs) for r in g0.rules} <= set(g.rule_index)
    theta = g.probabilities()
    for lhs in g.nonterminals:
        assert theta[g.lhs_index == g.nt_index[lhs]].sum() == pytest.approx(1.0)
    nts = set(g.nonterminals)
    assert all(s in nts for r in g.rules if "|<" in r.lhs or "^" in r.lhs for s in r.rhs
               if r.rhs[0] not in g.terminals)
    if parent:
        assert info["unseen_rules"] > 0 and "NP^S" in nts


def test_extra_bounds_the_unseen_rules():
    g0, i0 = smoothed_pcfg(TREES, "hdp", 1, True, threshold=0, iters=5, extra=0)
    g1, i1 = smoothed_pcfg(TREES, "hdp", 1, True, threshold=0, iters=5, extra=1)
    assert i0["unseen_rules"] == 0 < i1["unseen_rules"] <= len(
        [lhs for lhs in g1.nonterminals if "^" in lhs or "|<" in lhs])


def test_bad_options():
    with pytest.raises(OptionError, match="smoothing"):
        smoothed_pcfg(TREES, "foo")
    with pytest.raises(OptionError, match="iters"):
        smoothed_pcfg(TREES, "hdp", iters=0)
    with pytest.raises(OptionError, match="factor"):
        smoothed_pcfg(TREES, "collins", factor="left")
    with pytest.raises(OptionError, match="b"):
        smoothed_pcfg(TREES, "collins", collins_b=-1)


def test_heldout_rule_probabilities():
    g, _ = smoothed_pcfg(TREES[:3], "collins", 1, True, threshold=0)
    keys, n, p = heldout_rule_probs(g, TREES[3:], collision_map(TREES[:3], 0), 1, True)
    assert n.sum() == sum(_phrasal_rules(binarize(TREES[3], 1, "right", True),
                                         Counter()).values())
    assert (p > 0).any() and (p == 0).any()  # S -> PP ... was never seen
