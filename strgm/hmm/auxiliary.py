"""Auxiliary-variable draws of the HDP hyperparameters: table counts, and γ by slicing.

**Table counts** (Antoniak 1974; Teh et al. 2006 §5.3). A Dirichlet process with
concentration c that has generated N draws of one atom seated them at m tables, with

    p(m | c, N) = Γ(c)/Γ(c + N) · s(N, m) · c^m        (Dawson 2015, eq. 60),

s the unsigned Stirling numbers of the first kind. A draw: m = Σ_{i=0}^{N−1} b_i with
independent b_i ~ Bernoulli(c / (c + i)) (the i-th customer opens a table). The first
:data:`HEAD` customers of every cell are drawn in one vectorised pass. Beyond them (N can
be astronomically large when the failed jumps q are), the next table is found by
inverting its survival function exactly: the probability that customers i..j all join
existing tables is

    S(i, j) = Π_{l=i}^{j} l/(c + l) = (c)_i↑ / (c)_{j+1}↑,   (x)_c↑ = Γ(x + c)/Γ(x),

(the Pochhammer ratio, ``scipy.special.poch``, accurate for any x), so with U uniform the
next table opens at the smallest j with log (i)_c↑ − log (j+1)_c↑ < log U, found by
bisection on log j. Cost O(Σ min(N, HEAD)) plus O(c·log(N/HEAD)·60) per large cell.

**γ given the table counts** in the weak limit β ~ Dirichlet(γ/L, …): integrating β,

    p(m̄ | γ) ∝ Γ(γ)/Γ(γ + M) · Π_k Γ(γ/L + m̄_k)/Γ(γ/L),    M = Σ_k m̄_k,

which tends to γ^K·Γ(γ)/Γ(γ + M) (K = number of k with m̄_k > 0) as L → ∞, the form of
the seed's eqs. 55–57. Under a Gamma(a, b) prior the exact weak-limit conditional is not
conjugate, so γ is drawn by a stepping-out slice sampler on log γ (Neal 2003, §4),
O(L) per density evaluation, a few dozen evaluations per draw.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, poch

__all__ = ["table_counts", "slice_log", "log_gamma_posterior", "HEAD"]

#: Customers per cell drawn one by one; later ones by the exact skipping method.
HEAD = 256


def table_counts(N: np.ndarray, conc: np.ndarray, rng) -> np.ndarray:
    """Number of tables m for each cell (same shape as ``N``), given N customers (an
    integer-valued array, possibly float for huge counts) and concentration ``conc``
    (> 0 where N > 0). m = 0 where N = 0, 1 ≤ m ≤ N elsewhere; float64 result."""
    shape = np.shape(N)
    N = np.asarray(N, dtype=float).reshape(-1)
    c = np.broadcast_to(np.asarray(conc, dtype=float), shape).reshape(-1)
    head = np.minimum(N, HEAD).astype(np.int64)
    idx = np.repeat(np.arange(len(N)), head)
    i = np.arange(len(idx)) - np.repeat(np.cumsum(head) - head, head)
    opens = rng.random(len(idx)) * (c[idx] + i) < c[idx]
    m = np.bincount(idx, weights=opens, minlength=len(N))
    big = np.flatnonzero(N > HEAD)
    if len(big):
        m[big] += _tail_tables(np.full(len(big), float(HEAD)), N[big], c[big], rng)
    return m.reshape(shape)


def _tail_tables(start: np.ndarray, N: np.ndarray, c: np.ndarray, rng) -> np.ndarray:
    """Tables opened by customers start..N−1 of each cell (module docstring)."""
    m = np.zeros(len(N))
    active = np.arange(len(N))
    while len(active):
        i, n, cc = start[active], N[active], c[active]
        target = np.log(poch(i, cc)) - np.log(rng.random(len(active)))
        found = np.log(poch(n, cc)) > target  # some customer in i..N−1 opens a table
        active, i, n, cc, target = (a[found] for a in (active, i, n, cc, target))
        lo, hi = np.log(i), np.log(n)  # smallest x = j + 1 in (i, n] with log poch > target
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            up = np.log(poch(np.exp(mid), cc)) > target
            hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
        j1 = np.minimum(np.maximum(np.ceil(np.exp(hi) - 1e-9), i + 1), n)
        m[active] += 1
        start[active] = j1
        keep = j1 < n
        active = active[keep]
    return m


def log_gamma_posterior(gamma: float, m_bar: np.ndarray, a: float, b: float) -> float:
    """log p(γ | m̄) up to a constant (module docstring), Gamma(a, b) prior."""
    L = len(m_bar)
    g = gamma / L
    return float((a - 1) * np.log(gamma) - b * gamma + gammaln(gamma)
                 - gammaln(gamma + m_bar.sum()) + np.sum(gammaln(g + m_bar) - gammaln(g)))


def slice_log(logdensity, x0: float, rng, width: float = 1.0, max_steps: int = 50) -> float:
    """One slice-sampling update of a positive scalar x with density ∝ exp(logdensity(x)),
    done on y = log x (density exp(logdensity(e^y) + y)): stepping out then shrinking."""
    def f(y):
        return logdensity(np.exp(y)) + y

    y0 = np.log(x0)
    level = f(y0) + np.log(rng.random())
    lo = y0 - width * rng.random()
    hi = lo + width
    for _ in range(max_steps):
        if f(lo) <= level:
            break
        lo -= width
    for _ in range(max_steps):
        if f(hi) <= level:
            break
        hi += width
    while True:
        y = lo + (hi - lo) * rng.random()
        if f(y) > level:
            return float(np.exp(y))
        if y < y0:
            lo = y
        else:
            hi = y
        if hi - lo < 1e-12:
            return float(x0)
