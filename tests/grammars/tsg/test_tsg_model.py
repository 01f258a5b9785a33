"""DP-TSG model: P0^C, the vectorised log joint against a direct sequential CRP on every
indicator configuration of toy corpora, ETs and their display."""

import math

import numpy as np
import pytest

from strgm.grammars.tsg import ETCounts, LocalGibbsTSG, elementary_trees
from tests.grammars.tsg.tsg_oracles import TOY, TOY2, configs, crp_log_joint, ets_of, log_p0, pcfg_of


@pytest.mark.parametrize("trees", [TOY, TOY2])
def test_log_joint_equals_sequential_crp(trees):
    k = LocalGibbsTSG(trees, alpha={"S": 0.3, "X": 2.0, "A": 0.7} if trees is TOY else 0.4,
                      s={"A": 0.2, "B": 0.9} if trees is TOY else 0.35)
    t = k.table
    alpha = dict(zip(t.labels, k.alpha0))
    s = dict(zip(t.labels, k.s0))
    n = 0
    for site in configs(t):
        c = ETCounts(t, site, np.log(k.s0), np.log1p(-k.s0))
        assert c.log_joint(k.alpha0) == pytest.approx(crp_log_joint(t, site, alpha, s),
                                                      abs=1e-10)
        n += 1
    assert n == 2 ** len(t.inner)


def test_p0_of_each_et_matches_the_definition():
    k = LocalGibbsTSG(TOY, s={"A": 0.2, "B": 0.9, "X": 0.6})
    t = k.table
    s = dict(zip(t.labels, k.s0))
    pcfg = pcfg_of(TOY)
    for site in configs(t):
        c = ETCounts(t, site, np.log(k.s0), np.log1p(-k.s0))
        mine = sorted((c.frags.bracketed(f), c.frags.lp0[f]) for f in c.cnt if c.cnt[f])
        direct = sorted({e for _, e in ets_of(t, site)})
        assert [e for e, _ in mine] == direct
        for e, lp in mine:
            assert lp == pytest.approx(log_p0(e, pcfg, s), abs=1e-12)


def test_minimal_and_maximal_init():
    k = LocalGibbsTSG(TOY)
    mn, mx = k.init(0, "minimal"), k.init(0, "maximal")
    assert mn.site.sum() == k.table.n_nodes
    assert mx.site.sum() == k.table.n_trees
    ets = elementary_trees(mx, k)
    assert sorted(e for _, e in ets) == ["(S (X (A a) (B b)) (C c))", "(S (X (A a) (B b)))"]
    ets = elementary_trees(mn, k)
    assert ets[0] == (2, "(A a)") and (1, "(S X C)") in ets


def test_log_joint_is_finite_for_huge_ets():
    deep = ("S", ("A", "a"))
    for _ in range(400):
        deep = ("S", ("A", "a"), deep)
    k = LocalGibbsTSG([deep], s=0.9)  # P0 = 0.1^801 · ...: α P0 underflows
    v = k.log_likelihood(k.init(0, "maximal"))
    assert math.isfinite(v) and v < -700
