"""Rank-normalised split-R̂ and bulk/tail ESS (Vehtari et al. 2021) in the default chain
diagnostics: a hand case against a separate implementation of the paper's formulas, the
invariances they exist for, and controls where the classic split-R̂ misses a problem."""

import numpy as np
import pytest
from scipy.stats import norm, rankdata

from strgm.distributed.diagnostics import (
    RANK_RHAT_LIMIT,
    chain_summary,
    ess_bulk,
    ess_tail,
    rank_normalise,
    rank_rhat,
    split_rhat,
    summary_line,
)

HAND = [[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0]]


def _bda_rhat(psi):
    """Split-R̂ of chains already split (Gelman et al., BDA3 §11.4), written out again."""
    psi = np.asarray(psi, float)
    m, n = psi.shape
    w = np.mean([np.var(c, ddof=1) for c in psi])
    b = n * np.var(psi.mean(axis=1), ddof=1)
    return np.sqrt(((n - 1) / n * w + b / n) / w)


def _oracle_rank_rhat(x):
    x = np.asarray(x, float)
    half = x.shape[1] // 2

    def z(a):
        return norm.ppf((rankdata(a).reshape(a.shape) - 3 / 8) / (a.size + 1 / 4))

    def split(a):
        return np.concatenate([a[:, :half], a[:, -half:]], axis=0)
    return max(_bda_rhat(split(z(x))), _bda_rhat(split(z(np.abs(x - np.median(x))))))


def test_normal_scores_by_hand():
    # ranks among the 8 draws, ties averaged: 1 2.5 4.5 6.5 | 2.5 4.5 6.5 8
    ranks = np.array([[1, 2.5, 4.5, 6.5], [2.5, 4.5, 6.5, 8]])
    np.testing.assert_allclose(rank_normalise(HAND), norm.ppf((ranks - 0.375) / 8.25),
                               rtol=1e-12)
    assert rank_normalise(HAND).sum() == pytest.approx(0.0, abs=1e-12)  # symmetric ranks


@pytest.mark.parametrize("seed", [0, 1])
def test_rank_rhat_is_the_papers_formula(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 40)) * np.array([[1.0], [2.0], [1.0]]) + [[0], [0], [0.5]]
    assert rank_rhat(HAND) == pytest.approx(_oracle_rank_rhat(HAND), rel=1e-12)
    assert rank_rhat(x) == pytest.approx(_oracle_rank_rhat(x), rel=1e-12)


def test_odd_draws_drop_the_middle_one_as_the_split_does():
    x = np.arange(10.0).reshape(2, 5)
    assert rank_rhat(x) == pytest.approx(rank_rhat(np.delete(x, 2, axis=1)), rel=1e-12)


def test_monotone_transforms_change_nothing():
    x = np.random.default_rng(2).standard_normal((4, 200))
    y = np.exp(3 * x)
    # the bulk part of rank R̂ and both ESS depend on the ranks only (the folded part
    # depends on distances from the median, which a transform moves)
    assert split_rhat(rank_normalise(y)) == pytest.approx(split_rhat(rank_normalise(x)),
                                                          rel=1e-12)
    assert rank_rhat(4 * x) == pytest.approx(rank_rhat(x), rel=1e-12)  # exact scaling
    assert ess_bulk(y) == pytest.approx(ess_bulk(x), rel=1e-12)
    assert ess_tail(y) == pytest.approx(ess_tail(x), rel=1e-12)
    assert split_rhat(y) != pytest.approx(split_rhat(x), rel=1e-4)  # control: classic R̂


def test_chains_of_another_scale_are_caught_where_split_rhat_misses_them():
    x = np.random.default_rng(3).standard_normal((4, 1000)) * [[1], [1], [1], [3]]
    assert split_rhat(x) < RANK_RHAT_LIMIT  # control: the classic one sees nothing
    assert rank_rhat(x) > 1.05


def test_iid_and_autocorrelated_chains():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 1000))
    assert rank_rhat(x) < RANK_RHAT_LIMIT
    assert ess_bulk(x) == pytest.approx(4000, rel=0.15)
    assert ess_tail(x) == pytest.approx(4000, rel=0.25)
    a, e = np.zeros((4, 4000)), rng.standard_normal((4, 4000))
    for t in range(1, 4000):
        a[:, t] = 0.9 * a[:, t - 1] + e[:, t]
    assert ess_bulk(a) == pytest.approx(16000 * 0.1 / 1.9, rel=0.25)  # n (1 − ρ)/(1 + ρ)
    assert ess_tail(a) < 0.5 * 16000


def test_the_default_summary_and_its_line():
    x = np.random.default_rng(5).standard_normal((4, 100)) * [[1], [1], [1], [3]]
    s = chain_summary(x, "loglik")
    assert s["rank_rhat"] == rank_rhat(x) and s["ess_bulk"] == ess_bulk(x)
    assert s["ess_tail"] == ess_tail(x) and s["rhat"] == split_rhat(x)
    line = summary_line(s, 4, "the log-likelihood", "")
    assert f"split R-hat of the log-likelihood {s['rhat']:.4f}" in line
    assert (f"rank-normalised R-hat {s['rank_rhat']:.4f}, ESS bulk {s['ess_bulk']:.1f}, "
            f"tail {s['ess_tail']:.1f}") in line
    assert line.endswith("(R-hat > 1.01: the chains disagree; run more sweeps)")
    # the warning follows the rank-normalised R̂ at 1.01, not the classic one at 1.1
    calm = {**s, "rhat": 1.2, "rank_rhat": 1.005}
    assert "disagree" not in summary_line(calm, 4, "q", "")
    assert "disagree" in summary_line({**s, "rhat": 1.0, "rank_rhat": 1.02}, 4, "q", "")
