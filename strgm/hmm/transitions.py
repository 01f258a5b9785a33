"""Transition side of the HDP-HMM-LT: the Markov process with failed jumps.

Notation (Dawson 2015, eqs. 35–47). Contexts are the L states plus a start context
(row L, from which the first state is drawn; φ ≡ 1 there). Targets are the L states.

* π_kk' ~ Gamma(αβ_k' + κ·[k = k'], 1)        (eq. 36; κ > 0 only for the sticky model)
* a_kk' = π_kk' φ_kk', φ_kk' = exp(−λ‖ℓ_k − ℓ_k'‖²/2)   (eq. 37)
* z_t | z_{t−1} ~ a_{z_{t−1}·} / Σ_k' a_{z_{t−1}k'}       (eq. 38)

Given the jump counts n_kk' (from z), the augmentation restores conjugacy:

* u_k ~ Gamma(n_k·, Σ_k' a_kk')  — time spent in k (eq. 41);
* q_kk' ~ Poisson(π_kk'(1 − φ_kk')u_k) — failed jumps (eq. 44);
* π_kk' | · ~ Gamma(αβ_k' + κ[k = k'] + n_kk' + q_kk', 1 + u_k)  (eq. 47 × eq. 36).

Integrating π gives Π_k (1 + u_k)^−(α + κ) Π_k' Γ(c_kk' + N_kk')/Γ(c_kk')
(eqs. 49–51, with N = n + q and c_kk' = αβ_k' + κ[k = k']). Expanding each ratio into
table counts m_kk' (eq. 52) and, for the sticky diagonal, splitting the m_kk tables into
w_k "override" tables of κ and m̄_kk = m_kk − w_k of αβ_k (Fox et al. 2008, §3 — here with
the u augmentation the split needs no further auxiliary variable):

* w_k | m_kk ~ Binomial(m_kk, κ/(κ + αβ_k));
* α | · ~ Gamma(a_α + Σ m̄, b_α + Σ_{k=0..L} log(1 + u_k))   (eqs. 53–54);
* κ | · ~ Gamma(a_κ + Σ w, b_κ + Σ_{k<L} log(1 + u_k));
* β | · ~ Dirichlet(γ/L + m̄_·k')  (weak limit of the DP posterior).

Every function is O(L²) numpy work plus O(Σ N) uniforms for the table counts.
"""

from __future__ import annotations

import numpy as np

from strgm.hmm.auxiliary import table_counts

__all__ = ["similarity", "jump_probabilities", "jump_counts", "holding_times",
           "failed_jumps", "concentrations", "sticky_overrides", "draw_pi",
           "log_jump_likelihood"]


def similarity(ell: np.ndarray, lam: float, local: bool) -> np.ndarray:
    """φ as an (L+1, L) array: exp(−λ‖ℓ_k − ℓ_k'‖²/2) for the LT model, else 1; the
    start row is 1."""
    L = len(ell)
    phi = np.ones((L + 1, L))
    if local:
        d2 = ((ell[:, None, :] - ell[None, :, :]) ** 2).sum(axis=2)
        phi[:L] = np.exp(-0.5 * lam * d2)
    return phi


def jump_probabilities(pi: np.ndarray, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p0 (L,), P (L, L)): the normalised rows of a = π·φ (eq. 38)."""
    a = pi * phi
    full = a / a.sum(axis=1, keepdims=True)
    return full[-1], full[:-1]


def jump_counts(seqs, z: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """(n (L+1, L): jumps k → k', row L counting first states; ends (L,): last states)."""
    first, last = seqs.first_last()
    src, dst = seqs.transitions()
    n = np.bincount(z[src] * L + z[dst], minlength=L * L).reshape(L, L)
    start = np.bincount(z[first], minlength=L)
    return np.vstack([n, start[None, :]]), np.bincount(z[last], minlength=L)


def holding_times(n: np.ndarray, pi: np.ndarray, phi: np.ndarray, rng) -> np.ndarray:
    """u_k ~ Gamma(n_k·, rate Σ_k' a_kk') (eq. 41); 0 for a context never left."""
    rows = n.sum(axis=1)
    rate = (pi * phi).sum(axis=1)
    u = np.zeros(len(rows))
    on = rows > 0
    u[on] = rng.gamma(rows[on]) / rate[on]
    return u


#: Above this mean a failed-jump count is drawn from the normal approximation of the
#: Poisson (rounded, ≥ 0): its skewness mean^(−1/2) is then below 1e-6. Counts are floats,
#: since u_k (and with it q) grows without bound when state k's jump rates are tiny.
POISSON_EXACT_MAX = 1e12


def failed_jumps(pi: np.ndarray, phi: np.ndarray, u: np.ndarray, rng) -> np.ndarray:
    """q_kk' ~ Poisson(π_kk'(1 − φ_kk')u_k) (eq. 44), as a float array; all 0 when φ ≡ 1."""
    mean = pi * (1.0 - phi) * u[:, None]
    big = mean > POISSON_EXACT_MAX
    q = rng.poisson(np.where(big, 0.0, mean)).astype(float)
    if np.any(big):
        q[big] = np.maximum(np.round(mean[big] + np.sqrt(mean[big])
                                     * rng.standard_normal(int(big.sum()))), 0.0)
    return q


def concentrations(alpha: float, beta: np.ndarray, kappa: float) -> np.ndarray:
    """c_kk' = αβ_k' + κ[k = k'] as an (L+1, L) array (no κ on the start row)."""
    L = len(beta)
    c = np.tile(alpha * beta, (L + 1, 1))
    c[np.arange(L), np.arange(L)] += kappa
    return c


def sticky_overrides(m: np.ndarray, alpha: float, beta: np.ndarray, kappa: float,
                     rng) -> tuple[np.ndarray, np.ndarray]:
    """(m̄, w): the diagonal tables split into κ-overrides w_k ~ Binomial(m_kk,
    κ/(κ + αβ_k)) and the rest; m̄ = m off the diagonal."""
    L = len(beta)
    diag = m[np.arange(L), np.arange(L)].astype(np.int64)
    w = rng.binomial(diag, kappa / (kappa + alpha * beta)) if kappa > 0 else np.zeros(L, int)
    m_bar = m.copy()
    m_bar[np.arange(L), np.arange(L)] -= w
    return m_bar, w


def draw_tables(N: np.ndarray, alpha: float, beta: np.ndarray, kappa: float, rng):
    """(m̄, w) given N = n + q customers per cell (module docstring)."""
    m = table_counts(N, concentrations(alpha, beta, kappa), rng)
    return sticky_overrides(m, alpha, beta, kappa, rng)


#: Floor of every π_kk': keeps each jump weight positive and u_k ≤ n_k·/PI_FLOOR finite
#: (a Gamma draw with a tiny shape can underflow to 0). Weights this small are zero for
#: every transition probability printed or used in float64.
PI_FLOOR = 1e-100


def draw_pi(c: np.ndarray, N: np.ndarray, u: np.ndarray, rng) -> np.ndarray:
    """π_kk' ~ Gamma(c_kk' + N_kk', rate 1 + u_k), floored at :data:`PI_FLOOR`."""
    pi = rng.gamma(c + N) / (1.0 + u)[:, None]
    return np.maximum(pi, PI_FLOOR)


def log_jump_likelihood(n: np.ndarray, pi: np.ndarray, phi: np.ndarray) -> float:
    """log p(z | π, φ) = Σ_k [Σ_k' n_kk' log a_kk' − n_k· log Σ_k' a_kk'] (eq. 40)."""
    a = pi * phi
    on = n > 0
    return float((n[on] * np.log(a[on])).sum() - (n.sum(axis=1) * np.log(a.sum(axis=1))).sum())
