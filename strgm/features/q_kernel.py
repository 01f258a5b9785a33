"""q_θ's moments in one compiled call (the dense route of
:func:`strgm.features.moments.q_moments`, which stays the reference).

A = the arc log weights (failure-tree pass of
:meth:`strgm.features.dfa.FeatureDFA.arc_logweights`), M = I − P on the reachable states,
one LU with partial pivoting (:mod:`strgm.features.dense_lu`), x = M⁻¹1 as the
certificate of ρ(P) < 1 (x ≥ 1, :func:`fst_factors.wfsa.components.certifies_normalisable`),
β = M⁻¹φ, α = M⁻ᵀe_s, c(h, a) = α_h e^{A[h,a]} β_{goto(h,a)} / Z and the pass up the
failure tree (:meth:`strgm.features.dfa.FeatureDFA.accumulate`). O(k³ + |C|·N) for k
reachable states.

Status codes: ``OK``; ``DIVERGED`` (Z = ∞, a singular system, or a log weight above the
overflow bound); ``FAILED`` (Z = 0). The callers turn both into the reference's errors.
"""

from __future__ import annotations

import numpy as np

from strgm.features.dense_lu import CERT_SLACK, MAX_LOG, _lu, _lu_solve
from strgm.compiled import njit

OK, DIVERGED, FAILED = 0, 1, 2


@njit(cache=True)
def _log_weights(vals, feat_node, feat_col, fail, nc, n):  # pragma: no cover - compiled
    """A (|C| × (N+1)) and its largest entry: θ placed at (node, col), the constant
    feature added to every final weight, then A[h] += A[fail(h)] with the states in
    canonical (depth) order."""
    a = np.zeros((nc, n + 1))
    const = 0.0
    for i in range(vals.shape[0]):
        if feat_node[i] >= 0:
            a[feat_node[i], feat_col[i]] = vals[i]
        elif feat_node[i] == -1:
            const += vals[i]
    for h in range(1, nc):
        f = fail[h]
        for j in range(n + 1):
            a[h, j] += a[f, j]
    top = -np.inf
    for h in range(nc):
        a[h, n] += const
        for j in range(n + 1):
            top = max(top, a[h, j])
    return a, top


@njit(cache=True)
def _expectations(alpha, beta, ea, goto, fail, feat_node, feat_col, z):
    # pragma: no cover - compiled
    """(E[f], counts): c(h, a) = α_h e^{A[h,a]} β_{goto(h,a)} / Z, c(h, $) = α_h φ_h / Z,
    accumulated up the failure tree (deepest first) and read at each feature's cell."""
    nc, n = goto.shape
    counts = np.zeros((nc, n + 1))
    final_sum = 0.0
    for h in range(nc):
        ah = alpha[h] / z
        for j in range(n):
            counts[h, j] = ah * ea[h, j] * beta[goto[h, j]]
        counts[h, n] = ah * ea[h, n]
        final_sum += counts[h, n]
    up = counts.copy()
    for h in range(nc - 1, 0, -1):
        f = fail[h]
        for j in range(n + 1):
            up[f, j] += up[h, j]
    out = np.empty(feat_node.shape[0])
    for i in range(feat_node.shape[0]):
        out[i] = up[feat_node[i], feat_col[i]] if feat_node[i] >= 0 else final_sum
    return out, counts


@njit(cache=True)
def q_moments_kernel(vals, feat_node, feat_col, fail, goto, start, reach, pos):
    # pragma: no cover - compiled
    """(status, log Z, E_q[f] over the features, per-arc counts |C| × (N+1)) of q_θ for
    θ = ``vals`` on a DFA's own features (module docstring)."""
    nc, n = goto.shape
    empty = np.zeros(vals.shape[0])
    none = np.zeros((nc, n + 1))
    a, top = _log_weights(vals, feat_node, feat_col, fail, nc, n)
    if top > MAX_LOG:
        return DIVERGED, 0.0, empty, none
    ea = np.exp(a)
    k = reach.shape[0]
    m = np.zeros((k, k))
    for i in range(k):
        m[i, i] = 1.0
        for j in range(n):
            m[i, pos[goto[reach[i], j]]] -= ea[reach[i], j]
    piv = np.empty(k, dtype=np.int64)
    if not _lu(m, piv):
        return DIVERGED, 0.0, empty, none
    x = _lu_solve(m, piv, np.ones(k), False)
    for i in range(k):
        if not (np.isfinite(x[i]) and x[i] >= 1.0 - CERT_SLACK):
            return DIVERGED, 0.0, empty, none
    phi = np.empty(k)
    for i in range(k):
        phi[i] = ea[reach[i], n]
    beta_r = _lu_solve(m, piv, phi, False)
    e_s = np.zeros(k)
    e_s[pos[start]] = 1.0
    alpha_r = _lu_solve(m, piv, e_s, True)
    z = beta_r[pos[start]]
    if not z > 0.0:
        return FAILED, 0.0, empty, none
    beta = np.zeros(nc)
    alpha = np.zeros(nc)
    for i in range(k):
        beta[reach[i]] = beta_r[i]
        alpha[reach[i]] = max(alpha_r[i], 0.0)
    out, counts = _expectations(alpha, beta, ea, goto, fail, feat_node, feat_col, z)
    return OK, np.log(z), out, counts
