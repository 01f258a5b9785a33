"""Collapsed MH move statistics: identical proposals reported apart from real moves.

Oracles by enumeration on a tiny grammar (every tree of every sentence, every joint state):

* per sweep, exactly: ``accepted_moved`` is the number of sentences whose tree changed (each
  sentence is proposed once per sweep, and an accepted t'_i ≠ t_i changes it);
* for a corpus whose sentences have one parse each, every proposal is the current tree;
* in stationarity, exactly in expectation: every sub-step leaves the collapsed posterior
  π(t) = P(t | w, α) invariant and the visiting order is independent of the state, so the
  expected counts per sweep are

      E[proposed_same]  = Σ_i Σ_t π(t) q_i(t_i)
      E[accepted_moved] = Σ_i Σ_t π(t) Σ_{t'_i ≠ t_i} q_i(t'_i) min{1, r_i(t → t')}

  with q_i = PCFG(θ̃₋ᵢ) restricted to the parses of w_i and r_i the MH ratio of
  Johnson, Griffiths & Goldwater (2007).  Negative controls: the old combined rate
  (identical proposals counted as acceptances) and the uncorrected sampler fail the oracle.
"""

import itertools
import math

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R, collapsed_logprob, exact_collapsed_posterior, enumerate_trees
from strgm.grammars.cfg import Grammar, tree_rules
from strgm.grammars.samplers import CollapsedMH, mh_sweep_stats, run

G = Grammar([R("S", "A", "A"), R("S", "A"), R("A", "P"), R("A", "Q"), R("P", "a"),
             R("Q", "a")])
CORPUS = [("a", "a"), ("a",), ("a", "a")]
ALPHA = 0.1
SWEEPS = 1500


def _proposal(g, rules_i, others, alpha):
    """log q_i(t) for each parse (rule list) of w_i, θ̃ = E[θ | t₋ᵢ, α] (normalised)."""
    f = np.zeros(len(g.rules))
    for rl in others:
        for r in rl:
            f[r] += 1
    tot = np.bincount(g.lhs_index, weights=f + alpha, minlength=g.n_lhs)
    lth = np.log((f + alpha) / tot[g.lhs_index])
    lw = np.array([sum(lth[r] for r in rl) for rl in rules_i])
    return lw - np.logaddexp.reduce(lw)


def oracle_counts(g, corpus, alpha):
    """(E[proposed_same], E[accepted_moved]) per sweep in stationarity (module docstring)."""
    a = g.pseudocounts(alpha)
    parses = [[tuple(tree_rules(g, t)) for t in enumerate_trees(g, s)] for s in corpus]
    post = exact_collapsed_posterior(g, corpus, a)
    pi = {tuple(tuple(tree_rules(g, t)) for t in k): v for k, v in post.items()}
    same = moved = 0.0
    for state, p in pi.items():
        lp = collapsed_logprob(g, state, a)
        for i in range(len(corpus)):
            others = state[:i] + state[i + 1:]
            lq = _proposal(g, parses[i], others, a)
            cur = parses[i].index(state[i])
            same += p * math.exp(lq[cur])
            for j, t2 in enumerate(parses[i]):
                if j == cur:
                    continue
                lp2 = collapsed_logprob(g, state[:i] + (t2,) + state[i + 1:], a)
                lr = lp2 - lp + lq[cur] - lq[j]
                moved += p * math.exp(lq[j]) * min(1.0, math.exp(lr))
    return same, moved


def _chain_counts(kernel, sweeps, seed=5, burn=50):
    """Per-sweep (proposed, proposed_same, accepted_moved, accepted) after burn-in."""
    res = run(kernel, kernel.init(seed), sweeps + burn)
    rows = res.trace[burn:]
    return np.array([[r["proposed"], r["proposed_same"], r["accepted_moved"],
                      round(r["acceptance"] * r["proposed"])] for r in rows], dtype=float)


def _mean_and_se(x, batches=30):
    """Mean and batch-means standard error (the chain's draws are autocorrelated)."""
    b = np.array_split(np.asarray(x, float), batches)
    means = np.array([c.mean() for c in b])
    return float(x.mean()), float(means.std(ddof=1) / math.sqrt(batches))


def _agrees(x, target, k=4.0):
    m, se = _mean_and_se(x)
    return abs(m - target) <= k * se + 1e-9


@pytest.fixture(scope="module")
def counts():
    return _chain_counts(CollapsedMH(G, CORPUS, alpha=ALPHA), SWEEPS)


@pytest.fixture(scope="module")
def oracle():
    return oracle_counts(G, CORPUS, ALPHA)


def test_oracle_is_not_degenerate(oracle):
    same, moved = oracle
    assert 0.5 < same < 2.8 and 0.2 < moved < 2.0  # both kinds of event are common
    assert same + moved < len(CORPUS)  # and some real proposals are rejected


def _moved_given_changed(c, oracle):
    """accepted_moved − ρ·(proposed − proposed_same), ρ = the oracle's acceptance rate of
    real (changed) proposals: mean 0 exactly when moves are accepted at rate ρ."""
    rho = oracle[1] / (len(CORPUS) - oracle[0])
    return c[:, 2] - rho * (c[:, 0] - c[:, 1])


def test_identical_proposals_match_the_enumeration_oracle(counts, oracle):
    assert np.all(counts[:, 0] == len(CORPUS))
    assert _agrees(counts[:, 1], oracle[0])
    assert _agrees(counts[:, 2], oracle[1])
    assert _agrees(_moved_given_changed(counts, oracle), 0.0)


def test_old_combined_rate_fails_the_moved_oracle(counts, oracle):
    # negative control: identical proposals counted as accepted moves
    assert np.all(counts[:, 3] == counts[:, 1] + counts[:, 2])
    assert not _agrees(counts[:, 3], oracle[1])
    assert not _agrees(np.zeros(len(counts)), oracle[0])  # "never the same tree"


def test_uncorrected_sampler_fails_the_moved_oracle(oracle):
    # negative control: accept_all accepts every real move, more often than MH does
    c = _chain_counts(CollapsedMH(G, CORPUS, alpha=ALPHA, accept_all=True), 400)
    assert np.all(c[:, 2] == c[:, 0] - c[:, 1])
    assert not _agrees(_moved_given_changed(c, oracle), 0.0)


def test_moved_count_equals_changed_trees_every_sweep():
    k = CollapsedMH(G, CORPUS * 2, alpha=ALPHA)
    st = k.init(2)
    seen = 0
    for _ in range(60):
        new = k.sample(st)
        changed = sum(a != b for a, b in zip(st.trees, new.trees))
        s = mh_sweep_stats(new)
        assert s["accepted_moved"] == changed
        assert s["proposed"] == len(k.corpus)
        assert new.accepted - st.accepted == s["proposed_same"] + s["accepted_moved"]
        seen += changed
        st = new
    assert seen > 0


def test_unambiguous_corpus_proposes_only_the_current_tree():
    g = Grammar([R("S", "A", "B"), R("A", "a"), R("B", "b"), R("S", "c")])
    corpus = [("a", "b"), ("c",), ("a", "b")]
    assert all(len(enumerate_trees(g, s)) == 1 for s in corpus)
    res = run(CollapsedMH(g, corpus, alpha=0.5), CollapsedMH(g, corpus, alpha=0.5).init(0), 5)
    for r in res.trace:
        assert r["proposed_same"] == r["proposed"] == 3 and r["accepted_moved"] == 0
        assert r["acceptance"] == 1.0 and r["acceptance_moved"] is None


def test_stats_survive_a_checkpoint_and_old_keys_stay(tmp_path):
    from strgm.grammars.samplers import SamplerState
    k = CollapsedMH(G, CORPUS, alpha=ALPHA)
    res = run(k, k.init(1), 4, checkpoint=tmp_path / "c.json")
    back = SamplerState.load(tmp_path / "c.json")
    assert back.trace == res.trace
    assert {"acceptance", "proposed", "proposed_same", "accepted_moved",
            "acceptance_moved"} <= set(res.trace[-1])
    assert mh_sweep_stats(back) == {}  # counts of the last sweep live in the trace rows
    assert list(itertools.accumulate(r["proposed"] for r in res.trace))[-1] == back.proposed
