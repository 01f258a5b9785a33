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

The rank-normalised diagnostics of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021,
*Bayesian Analysis* 16(2)), those ArviZ and Stan report, work on normal scores instead
of the draws: pooling all S = mn draws, each gets z = Φ⁻¹((r − 3/8)/(S + 1/4)) with r
its rank (ties averaged), so that heavy tails and monotone transforms change nothing.

    rank R̂   = max(split-R̂ of z, split-R̂ of the scores of |x − median x|)
    bulk ESS = ESS of z
    tail ESS = min(ESS of 1{x ≤ q_0.05}, ESS of 1{x ≤ q_0.95})

The folded term catches chains that agree in location but not in scale. They recommend
rank R̂ < 1.01 with bulk and tail ESS of at least 100 per chain; :func:`summary_line`
warns above 1.01. With an odd number of
draws per chain the middle draw is dropped before ranking, as in the splits.
"""

from __future__ import annotations

import numpy as np

from strgm.errors import InputError

__all__ = ["chain_summary", "effective_sample_size", "ess_bulk", "ess_tail", "rank_normalise",
           "rank_rhat", "split_chains", "split_rhat", "summary_line"]

#: the rank-normalised R̂ above which the chains are said to disagree (Vehtari et al.)
RANK_RHAT_LIMIT = 1.01


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


def _even(draws) -> np.ndarray:
    """(m, n) draws checked as :func:`split_chains` does, with the middle draw of each
    chain dropped when n is odd (what the halves keep)."""
    x = np.asarray(draws, dtype=float)
    x = x[None, :] if x.ndim == 1 else x
    split_chains(x)  # the checks
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=1)


def rank_normalise(draws) -> np.ndarray:
    """The normal scores z of ``draws`` (m × n), ranked all together (module docstring)."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    x = np.asarray(draws, dtype=float)
    r = rankdata(x, method="average").reshape(x.shape)
    return ndtri((r - 0.375) / (x.size + 0.25))


def rank_rhat(draws) -> float:
    """Rank-normalised split-R̂: the larger of the bulk and the folded one."""
    x = _even(draws)
    folded = np.abs(x - np.median(x))
    return max(split_rhat(rank_normalise(x)), split_rhat(rank_normalise(folded)))


def ess_bulk(draws) -> float:
    """The ESS of the normal scores of ``draws``: how well the chains' centre is known."""
    return effective_sample_size(rank_normalise(_even(draws)))


def ess_tail(draws) -> float:
    """The smaller ESS of the 5% and 95% quantile indicators: how well the tails are."""
    x = _even(draws)
    lo, hi = np.quantile(x, [0.05, 0.95])
    return min(effective_sample_size((x <= lo).astype(float)),
               effective_sample_size((x <= hi).astype(float)))


def chain_summary(draws, name: str = "log_p") -> dict:
    """{quantity, chains, draws_per_chain, rhat, ess, rank_rhat, ess_bulk, ess_tail} of
    ``draws`` (m × n), for traces: the classic split-R̂ and ESS and the rank-normalised
    ones (module docstring)."""
    x = np.asarray(draws, dtype=float)
    x = x[None, :] if x.ndim == 1 else x
    return {"quantity": name, "chains": int(x.shape[0]), "draws_per_chain": int(x.shape[1]),
            "rhat": split_rhat(x), "ess": effective_sample_size(x),
            "rank_rhat": rank_rhat(x), "ess_bulk": ess_bulk(x), "ess_tail": ess_tail(x)}


def summary_line(summary, chains: int, quantity: str, too_few: str) -> str:
    """One line for people: the chains' split-R̂ and ESS of ``quantity``, then the
    rank-normalised R̂ and the bulk and tail ESS (a warning when that R̂ exceeds
    :data:`RANK_RHAT_LIMIT`), or, when ``summary`` is None, why there is none
    (``too_few``)."""
    if summary is None:
        return f"{chains} chains: {too_few}"
    rank = summary.get("rank_rhat", summary["rhat"])
    ranked = ("" if "rank_rhat" not in summary else
              f"; rank-normalised R-hat {rank:.4f}, ESS bulk {summary['ess_bulk']:.1f}, "
              f"tail {summary['ess_tail']:.1f}")
    return (f"{summary['chains']} chains × {summary['draws_per_chain']} sweeps after "
            f"burn-in: split R-hat of {quantity} {summary['rhat']:.4f}, effective sample "
            f"size {summary['ess']:.1f}{ranked}"
            + (f"  (R-hat > {RANK_RHAT_LIMIT}: the chains disagree; run more sweeps)"
               if rank > RANK_RHAT_LIMIT else ""))
