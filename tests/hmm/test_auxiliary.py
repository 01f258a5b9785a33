"""Table counts against Antoniak's law; the slice sampler against exact densities."""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from strgm.hmm import auxiliary
from strgm.hmm.auxiliary import HEAD, log_gamma_posterior, slice_log, table_counts


def antoniak(n: int, c: float) -> np.ndarray:
    """p(m | c, n) = Γ(c)/Γ(c+n) s(n, m) c^m for m = 0..n, by the Stirling recurrence
    s(k+1, m) = k s(k, m) + s(k, m−1), in log space."""
    logs = np.full(n + 1, -np.inf)
    logs[0] = 0.0
    for k in range(n):
        new = np.full(n + 1, -np.inf)
        new[1:] = np.logaddexp(np.log(k) + logs[1:] if k else np.full(n, -np.inf), logs[:-1])
        logs = new
    m = np.arange(n + 1)
    lp = gammaln(c) - gammaln(c + n) + logs + m * np.log(c)
    return np.exp(lp - np.logaddexp.reduce(lp))


def _tv(draws, exact):
    h = np.bincount(draws.astype(int), minlength=len(exact)) / len(draws)
    return 0.5 * np.abs(h - exact).sum()


@pytest.mark.parametrize("n,c", [(12, 0.7), (HEAD + 150, 2.5)])
def test_table_counts_follow_antoniak(n, c):
    rng = np.random.default_rng(0)
    draws = table_counts(np.full(20000, n), np.full(20000, c), rng)
    assert _tv(draws, antoniak(n, c)) < 0.03


def test_table_counts_negative_control_wrong_concentration():
    rng = np.random.default_rng(0)
    n, c = HEAD + 150, 2.5
    draws = table_counts(np.full(20000, n), np.full(20000, 1.5 * c), rng)
    assert _tv(draws, antoniak(n, c)) > 0.1


def test_table_counts_tail_negative_control(monkeypatch):
    """Dropping the tail beyond HEAD customers must be detected."""
    monkeypatch.setattr(auxiliary, "_tail_tables", lambda s, N, c, rng: np.zeros(len(N)))
    rng = np.random.default_rng(0)
    n, c = HEAD + 2000, 2.5
    draws = table_counts(np.full(20000, n), np.full(20000, c), rng)
    assert draws.mean() < c * (np.sum(1 / (c + np.arange(n)))) - 1.0


def test_table_counts_edges():
    rng = np.random.default_rng(1)
    m = table_counts(np.array([[0, 1], [5, 1e25]]), np.array([[1.0, 1.0], [1e-9, 1.0]]), rng)
    assert m[0, 0] == 0 and m[0, 1] == 1 and m[1, 0] == 1
    assert 20 < m[1, 1] < 120  # mean c(ψ(c+N) − ψ(c)) ≈ 58


def _log_gamma_3_half(v):
    """stats.gamma.logpdf(v, 3.0, scale=0.5) in closed form (scipy's per-call overhead
    made the 20,000 draws below take 12 s; the same draws now take 0.3 s)."""
    if v <= 0:
        return -math.inf
    return 2.0 * math.log(v) - 2.0 * v - math.lgamma(3.0) + 3.0 * math.log(2.0)


def test_slice_sampler_draws_a_gamma():
    for v in (-1.0, 0.0, 0.1, 1.0, 3.3):
        assert _log_gamma_3_half(v) == pytest.approx(stats.gamma.logpdf(v, 3.0, scale=0.5),
                                                     rel=1e-12)
    rng = np.random.default_rng(2)
    x, out = 1.0, []
    for _ in range(20000):
        x = slice_log(_log_gamma_3_half, x, rng)
        out.append(x)
    out = np.array(out)
    assert out.mean() == pytest.approx(1.5, rel=0.03)
    assert out.var() == pytest.approx(0.75, rel=0.08)


def test_gamma_posterior_slice_matches_quadrature():
    m_bar = np.array([5.0, 2.0, 0.0, 1.0, 0.0])
    a, b = 2.0, 0.5
    dens = lambda g: np.exp(log_gamma_posterior(g, m_bar, a, b))
    z = integrate.quad(dens, 0, 200)[0]
    mean = integrate.quad(lambda g: g * dens(g), 0, 200)[0] / z
    rng = np.random.default_rng(3)
    g, out = 1.0, []
    for _ in range(20000):
        g = slice_log(lambda v: log_gamma_posterior(v, m_bar, a, b), g, rng)
        out.append(g)
    assert np.mean(out) == pytest.approx(mean, rel=0.04)
