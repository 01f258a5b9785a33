"""Geweke's (2004) joint-distribution test for the infinite-HMM kernel.

Marginal-conditional simulation draws (parameters, z, u, q, x) from the prior; the
successive-conditional chain alternates x | z, θ with one kernel sweep. Both sample the
same joint exactly when the kernel leaves the posterior invariant, so every statistic's
mean must agree within Monte Carlo error (batch means for the chain)."""

from __future__ import annotations

import numpy as np

from strgm.hmm.kernel import HMMSampler
from strgm.hmm.prior import draw_parameters, draw_sequences
from strgm.hmm.transitions import failed_jumps, holding_times, jump_counts, similarity


def statistics(z, offsets, par, u, q, local=True) -> dict:
    first = offsets[:-1]
    same = np.ones(len(z) - 1, dtype=bool)
    same[offsets[1:-1] - 1] = False
    pairs = z[:-1][same] == z[1:][same]
    pi = par["pi"]
    out = {"self_jumps": pairs.mean(), "z0_is_0": float(z[first[0]] == 0),
           "distinct": len(np.unique(z)), "pi00_share": pi[0, 0] / pi[0].sum(),
           "pi_start0_share": pi[-1, 0] / pi[-1].sum(), "row0_above_1": float(pi[0].sum() > 1),
           "beta0": par["beta"][0], "log1p_u0": np.log1p(u[0]),
           "log1p_u_start": np.log1p(u[-1]), "log1p_q": np.log1p(q.sum()),
           "q01_positive": float(q[0, 1] > 0), "theta00": par["params"]["theta"][0, 0]}
    for k in ("alpha", "gamma", "kappa", "lam"):
        out[k] = par[k]
    out["ell00"] = par["ell"][0, 0] if local else 0.0
    out["ell0_sq"] = float((par["ell"][0] ** 2).sum()) if local else 0.0
    return out


def prior_draws(settings, emissions, lengths, n, rng, hypers) -> dict:
    rows = []
    for _ in range(n):
        par = draw_parameters(settings, emissions, rng, draw_hypers=hypers)
        seqs, z = draw_sequences(par, settings, emissions, rng, lengths=lengths)
        nn, _ = jump_counts(seqs, z, settings.L)
        phi = similarity(par["ell"], par["lam"], settings.local)
        u = holding_times(nn, par["pi"], phi, rng)
        q = failed_jumps(par["pi"], phi, u, rng)
        rows.append(statistics(z, seqs.offsets, par, u, q, settings.local))
    return {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}


def chain_draws(settings, emissions, lengths, n, rng, hypers, thin=1) -> dict:
    par = draw_parameters(settings, emissions, rng, draw_hypers=hypers)
    seqs, _ = draw_sequences(par, settings, emissions, rng, lengths=lengths)
    kernel = HMMSampler(seqs, settings, emissions)
    state = kernel.from_parameters(par, rng)
    rows = []
    for i in range(n * thin):
        x = emissions.draw_data(state.params, state.z, rng)
        kernel = kernel.with_data(x)
        state = kernel.sample(state)
        if i % thin == 0:
            p = {k: getattr(state, k) for k in ("pi", "beta", "alpha", "gamma", "kappa",
                                                  "lam", "ell", "params")}
            rows.append(statistics(state.z, seqs.offsets, p, state.u, state.q,
                                      settings.local))
    return {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}


def z_scores(prior: dict, chain: dict, batches: int = 50) -> dict:
    out = {}
    for k in prior:
        a, b = prior[k], chain[k]
        if np.std(a) == 0 and np.std(b) == 0:
            out[k] = 0.0 if a[0] == b[0] else np.inf
            continue
        bm = b[: len(b) // batches * batches].reshape(batches, -1).mean(axis=1)
        se = np.sqrt(a.var() / len(a) + bm.var(ddof=1) / batches)
        out[k] = float((b.mean() - a.mean()) / se)
    return out
