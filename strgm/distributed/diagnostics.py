"""Convergence diagnostics of several MCMC chains: split-R̂ and the effective sample size.

Both follow Gelman et al., *Bayesian Data Analysis* (3rd ed.) §11.4–11.5, on *split*
chains: each of the m chains of length n is cut into halves (a last odd draw is dropped),
giving m' = 2m chains ψ_ij of length n' = ⌊n/2⌋, so that a drift within one chain shows up
as disagreement between its halves.

    B = n'/(m'−1) Σ_j (ψ̄_.j − ψ̄_..)²          between-chain variance
    W = 1/m' Σ_j s_j²,  s_j² = 1/(n'−1) Σ_i (ψ_ij − ψ̄_.j)²   within-chain variance
    var⁺ = (n'−1)/n' · W + B/n'
    R̂ = √(var⁺ / W)                               (→ 1 as the chains mix)

    V_t = 1/(m'(n'−t)) Σ_j Σ_{i>t} (ψ_ij − ψ_{i−t,j})²      variogram at lag t
    ρ̂_t = 1 − V_t / (2 var⁺)                       autocorrelation at lag t, ρ̂_0 = 1
    ESS = m'n' / (1 + 2 Σ_{t=1}^{T} ρ̂_t)

where the sum is truncated by Geyer's initial positive sequence: the pair sums
P_k = ρ̂_{2k} + ρ̂_{2k+1} are added while they are positive, and each is capped at the one
before (initial monotone sequence); the denominator is floored at 1/log10(m'n'), as in
Stan, so that antithetic (negatively correlated) draws cannot claim an ESS above
m'n' · log10(m'n').  R̂ above 1.01–1.1 or an ESS of a few per chain says the chains have
not converged.
"""

from __future__ import annotations

import numpy as np

from strgm.errors import InputError

__all__ = ["chain_summary", "effective_sample_size", "split_chains", "split_rhat", "summary_line"]


def split_chains(draws) -> np.ndarray:
    """(m, n) draws → (2m, ⌊n/2⌋) halves (module docstring); InputError when there are
    fewer than 4 draws per chain or non-finite values."""
    x = np.asarray(draws, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] < 4:
        raise InputError(f"R-hat and ESS need chains of at least 4 draws, got shape "
                         f"{x.shape}")
    if not np.all(np.isfinite(x)):
        raise InputError("R-hat and ESS need finite draws")
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def _variances(psi: np.ndarray) -> tuple[float, float]:
    """(W, var⁺) of split chains ``psi`` (m', n')."""
    m, n = psi.shape
    means = psi.mean(axis=1)
    b = n * means.var(ddof=1) if m > 1 else 0.0
    w = float(psi.var(axis=1, ddof=1).mean())
    return w, (n - 1) / n * w + b / n


def split_rhat(draws) -> float:
    """Split-R̂ of ``draws`` (m chains × n draws, or one chain). A constant quantity
    (W = var⁺ = 0) gives 1.0 when every chain sits at the same value, inf otherwise."""
    psi = split_chains(draws)
    w, var_plus = _variances(psi)
    if w == 0.0:
        return 1.0 if var_plus == 0.0 else float("inf")
    return float(np.sqrt(var_plus / w))


def _autocorrelations(psi: np.ndarray, var_plus: float) -> np.ndarray:
    """ρ̂_t for t = 0 .. n'−1 from the variogram (module docstring)."""
    m, n = psi.shape
    rho = np.ones(n)
    for t in range(1, n):
        d = psi[:, t:] - psi[:, :-t]
        rho[t] = 1.0 - float((d * d).sum()) / (m * (n - t)) / (2.0 * var_plus)
    return rho


def effective_sample_size(draws) -> float:
    """ESS of ``draws`` (m chains × n draws) with Geyer's initial monotone sequence
    (module docstring); m'n' (the number of draws kept) for a constant quantity."""
    psi = split_chains(draws)
    m, n = psi.shape
    _, var_plus = _variances(psi)
    if var_plus == 0.0:
        return float(m * n)
    rho = _autocorrelations(psi, var_plus)
    total, prev = 0.0, np.inf
    for k in range(0, n, 2):
        pair = rho[k] + (rho[k + 1] if k + 1 < n else 0.0)
        if pair <= 0.0:
            break
        pair = min(pair, prev)
        total, prev = total + pair, pair
    tau = -1.0 + 2.0 * total
    return float(m * n / max(tau, 1.0 / np.log10(max(m * n, 10))))


def chain_summary(draws, name: str = "log_p") -> dict:
    """{quantity, chains, draws_per_chain, rhat, ess} of ``draws`` (m × n), for traces."""
    x = np.asarray(draws, dtype=float)
    x = x[None, :] if x.ndim == 1 else x
    return {"quantity": name, "chains": int(x.shape[0]), "draws_per_chain": int(x.shape[1]),
            "rhat": split_rhat(x), "ess": effective_sample_size(x)}


def summary_line(summary, chains: int, quantity: str, too_few: str) -> str:
    """One line for people: the chains' split-R̂ and ESS of ``quantity`` (a warning when
    R̂ > 1.1), or, when ``summary`` is None, why there is none (``too_few``)."""
    if summary is None:
        return f"{chains} chains: {too_few}"
    return (f"{summary['chains']} chains × {summary['draws_per_chain']} sweeps after "
            f"burn-in: split R-hat of {quantity} {summary['rhat']:.4f}, effective sample "
            f"size {summary['ess']:.1f}"
            + ("  (R-hat > 1.1: the chains disagree; run more sweeps)"
               if summary["rhat"] > 1.1 else ""))
