"""Metropolis–Hastings moves of the state locations ℓ_k and the kernel scale λ.

Target (u and q integrated out; Dawson 2015, eq. 40 × the priors):

    p(ℓ, λ | z, π) ∝ Π_k N(ℓ_k; 0, I) · Gamma(λ; a_λ, b_λ)
                     · Π_k (Σ_k' π_kk' φ_kk')^−n_k· Π_k' (π_kk' φ_kk')^n_kk'.

Each ℓ_k gets a Gaussian random-walk proposal and λ a log-normal one (with the Jacobian
λ'/λ in the ratio). With thousands of jumps the posterior of ℓ_k is narrow, so the
proposal scales shrink with the data: ``loc_step``/√(1 + λ·(n_k· + n_·k)) for ℓ_k and
``lam_step``/√(1 + Σn/L) for log λ. The scales depend only on z and λ (for ℓ) or on z
(for λ), which the move holds fixed, so each proposal stays symmetric and the moves are
exact Metropolis–Hastings steps. The moves are made with u and q
integrated out, so the kernel draws u and q afresh after them (docs/hmm.md).
Cost: O(L²·D) per proposal, L + 1 proposals per sweep.
"""

from __future__ import annotations

import numpy as np

from strgm.hmm.transitions import log_jump_likelihood, similarity

__all__ = ["move_locations", "move_scale"]


def _log_target(n, pi, ell, lam) -> float:
    return log_jump_likelihood(n, pi, similarity(ell, lam, True)) - 0.5 * float((ell ** 2).sum())


def move_locations(n, pi, ell, lam, step: float, rng) -> tuple[np.ndarray, int]:
    """(new ℓ, number of accepted moves): one random-walk proposal per state in turn."""
    ell = ell.copy()
    cur = _log_target(n, pi, ell, lam)
    accepted = 0
    L = len(ell)
    visits = n[:L].sum(axis=1) + n.sum(axis=0)
    scale = step / np.sqrt(1.0 + lam * visits)
    noise = rng.standard_normal(ell.shape) * scale[:, None]
    logu = np.log(rng.random(len(ell)))
    for k in range(len(ell)):
        old = ell[k].copy()
        ell[k] = old + noise[k]
        new = _log_target(n, pi, ell, lam)
        if logu[k] < new - cur:
            cur = new
            accepted += 1
        else:
            ell[k] = old
    return ell, accepted


def move_scale(n, pi, ell, lam, a: float, b: float, step: float, rng) -> tuple[float, bool]:
    """(new λ, accepted?): log-normal random walk under the Gamma(a, b) prior."""
    scale = step / np.sqrt(1.0 + n.sum() / len(ell))
    new_lam = lam * np.exp(scale * rng.standard_normal())

    def log_post(x):
        return _log_target(n, pi, ell, x) + (a - 1) * np.log(x) - b * x + np.log(x)

    if np.log(rng.random()) < log_post(new_lam) - log_post(lam):
        return float(new_lam), True
    return float(lam), False
