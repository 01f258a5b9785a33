"""p̂'s moments for messages whose states come in levels: in some order of the states
(:func:`level_order` finds it) every arc goes from a state to itself or to a later one,
and every state is final (PEP eq. 5; the general kernel is :mod:`strgm.features.p_hat`).

Such messages are the rule, not the exception: a word's lattice of positions (ε-removed,
so a state reaches every later position on every label) read through a concatenation's
quotient ends at any position and has no cycles but its self-loops. Their product with a
feature DFA, (q, h) –a→ (q', goto(h, a)), is then block triangular by q: the only cycles
are inside one level q, through its self-loops. So with the notation of
:mod:`strgm.features.p_hat` (M the re-weighted transition matrix, φ the final weights):

* β_q = (I − M_qq)⁻¹ (φ_q + Σ_{q' > q} M_qq' β_q'), levels from the last;
* α_q = (I − M_qq)⁻ᵀ Σ_{q' < q} M_q'qᵀ α_q' (+ e_{h0} at the start), levels from the first;
* the count of a product arc s → t of weight m is α_s m β_t / Z, of a final weight
  α_s φ_s / Z, summed per DFA arc (h, a).

M_qq is one dense block over the DFA states reachable at level q, certified like the
general kernel's components (x = (I − M_qq)⁻¹1 ≥ 1). Nothing is stored per product arc:
each pass reads the message's arcs and the DFA's table directly, which is what makes this
route cheaper than the general one on these dense lattices. Cost O(|E_p|·|C| + Σ_q
k_q³) with k_q the DFA states reachable at level q.
"""

from __future__ import annotations

import numpy as np

from strgm.features.dense_lu import CERT_SLACK, _lu, _lu_solve
from strgm.compiled import njit

OK, DIVERGED, FAILED, TOO_BIG = 0, 1, 2, 3


@njit(cache=True)
def level_order(indptr, dst, lab, final, n):  # pragma: no cover - compiled
    """The states in an order in which every arc with a label in 1..N goes to its own
    state or a later one (Kahn's algorithm without the self-loops), when there is one,
    no arc is ε and every state is final: the messages this module handles. Else an
    empty array."""
    nq = indptr.shape[0] - 1
    none = np.empty(0, np.int64)
    indeg = np.zeros(nq, np.int64)
    for q in range(nq):
        if not final[q] < np.inf:
            return none
        for e in range(indptr[q], indptr[q + 1]):
            if lab[e] == 0:
                return none
            if lab[e] <= n and dst[e] != q:
                indeg[dst[e]] += 1
    order = np.empty(nq, np.int64)
    top = 0
    for q in range(nq):
        if indeg[q] == 0:
            order[top] = q
            top += 1
    head = 0
    while head < top:
        q = order[head]
        head += 1
        for e in range(indptr[q], indptr[q + 1]):
            if lab[e] <= n and dst[e] != q:
                indeg[dst[e]] -= 1
                if indeg[dst[e]] == 0:
                    order[top] = dst[e]
                    top += 1
    return order if top == nq else none


@njit(cache=True)
def _reachable(order, indptr, dst, lab, start, h0, goto, n):  # pragma: no cover
    """reach[q, h]: the product state (q, h) is reachable from (start, h0); levels in
    ``order``, each closed under its self-loops by a work list."""
    nq = indptr.shape[0] - 1
    nh = goto.shape[0]
    reach = np.zeros((nq, nh), np.bool_)
    reach[start, h0] = True
    work = np.empty(nh, np.int64)
    for q in order:
        top = 0
        for h in range(nh):
            if reach[q, h]:
                work[top] = h
                top += 1
        while top > 0:
            top -= 1
            h = work[top]
            for e in range(indptr[q], indptr[q + 1]):
                if lab[e] > n:
                    continue
                h2 = goto[h, lab[e] - 1]
                if not reach[dst[e], h2]:
                    reach[dst[e], h2] = True
                    if dst[e] == q:
                        work[top] = h2
                        top += 1
    return reach


@njit(cache=True)
def _level_matrix(q, hs, local, indptr, dst, lab, ew, ea, goto, n):
    # pragma: no cover - compiled
    """I − M_qq over the reachable DFA states ``hs`` of level q (``local``: DFA state →
    position in ``hs``)."""
    k = hs.shape[0]
    mat = np.eye(k)
    for i in range(k):
        h = hs[i]
        for e in range(indptr[q], indptr[q + 1]):
            if dst[e] == q and lab[e] <= n:
                mat[i, local[goto[h, lab[e] - 1]]] -= ew[e] * ea[h, lab[e] - 1]
    return mat


@njit(cache=True)
def _offsets(reach):  # pragma: no cover - compiled
    """Offsets of every level's LU factors (k_q²) and pivots (k_q) in flat arrays."""
    nq = reach.shape[0]
    lu_at = np.zeros(nq + 1, np.int64)
    piv_at = np.zeros(nq + 1, np.int64)
    for q in range(nq):
        k = 0
        for h in range(reach.shape[1]):
            if reach[q, h]:
                k += 1
        lu_at[q + 1] = lu_at[q] + k * k
        piv_at[q + 1] = piv_at[q] + k
    return lu_at, piv_at


@njit(cache=True)
def _beta(order, reach, indptr, dst, lab, ew, final, ea, goto, n, lus, lu_at, pivs,
          piv_at):  # pragma: no cover - compiled
    """β over the product (0 where unreachable), levels from the last, each level's LU
    factors kept in ``lus``/``pivs`` for the α pass; False when a certificate fails."""
    nq, nh = reach.shape
    beta = np.zeros((nq, nh))
    local = np.full(nh, -1, np.int64)
    for j in range(nq - 1, -1, -1):
        q = order[j]
        hs = np.flatnonzero(reach[q])
        k = hs.shape[0]
        for i in range(k):
            local[hs[i]] = i
        rhs = np.empty(k)
        for i in range(k):
            h = hs[i]
            r = np.exp(-final[q]) * ea[h, n]
            for e in range(indptr[q], indptr[q + 1]):
                if dst[e] != q and lab[e] <= n:
                    r += ew[e] * ea[h, lab[e] - 1] * beta[dst[e], goto[h, lab[e] - 1]]
            rhs[i] = r
        mat = _level_matrix(q, hs, local, indptr, dst, lab, ew, ea, goto, n)
        piv = pivs[piv_at[q]:piv_at[q + 1]]
        if not _lu(mat, piv):
            return False, beta
        x = _lu_solve(mat, piv, np.ones(k), False)
        for i in range(k):
            if not (np.isfinite(x[i]) and x[i] >= 1.0 - CERT_SLACK):
                return False, beta
        b = _lu_solve(mat, piv, rhs, False)
        lus[lu_at[q]:lu_at[q + 1]] = mat.ravel()
        for i in range(k):
            beta[q, hs[i]] = b[i]
            local[hs[i]] = -1
    return True, beta


@njit(cache=True)
def _alpha(order, reach, lus, lu_at, pivs, piv_at, indptr, dst, lab, ew, ea, goto, n,
           start, h0):
    # pragma: no cover - compiled
    """α over the product, levels from the first, with the β pass's LU factors."""
    nq, nh = reach.shape
    alpha = np.zeros((nq, nh))
    push = np.zeros((nq, nh))
    push[start, h0] = 1.0
    for q in order:
        hs = np.flatnonzero(reach[q])
        k = hs.shape[0]
        rhs = np.empty(k)
        for i in range(k):
            rhs[i] = push[q, hs[i]]
        mat = lus[lu_at[q]:lu_at[q + 1]].reshape((k, k))
        al = _lu_solve(mat, pivs[piv_at[q]:piv_at[q + 1]], rhs, True)
        for i in range(k):
            alpha[q, hs[i]] = max(al[i], 0.0)
        for i in range(k):
            h = hs[i]
            for e in range(indptr[q], indptr[q + 1]):
                if dst[e] != q and lab[e] <= n:
                    push[dst[e], goto[h, lab[e] - 1]] += \
                        alpha[q, h] * ew[e] * ea[h, lab[e] - 1]
    return alpha


@njit(cache=True)
def _counts(alpha, beta, reach, indptr, dst, lab, ew, final, ea, goto, n, z):
    # pragma: no cover - compiled
    """Expected counts per DFA arc (h, a), column N the final weights."""
    nq, nh = reach.shape
    counts = np.zeros((nh, n + 1))
    for q in range(nq):
        for h in range(nh):
            if not reach[q, h] or alpha[q, h] <= 0.0:
                continue
            f = alpha[q, h] / z
            counts[h, n] += f * np.exp(-final[q]) * ea[h, n]
            for e in range(indptr[q], indptr[q + 1]):
                if lab[e] <= n:
                    a = lab[e] - 1
                    counts[h, a] += f * ew[e] * ea[h, a] * beta[dst[e], goto[h, a]]
    return counts


@njit(cache=True)
def p_hat_levels_kernel(order, indptr, dst, lab, w, final, start, goto, h0, ea,
                        max_level):  # pragma: no cover - compiled
    """(status, log Z, per-DFA-arc counts |C| × (N+1)) of p̂ for a levelled message
    whose states in ``order`` are its levels (:func:`level_order`; module docstring);
    ``ea`` = e^A, the cavity's arc weights. TOO_BIG when a level has more than
    ``max_level`` reachable DFA states (its dense block would be too large)."""
    nh, n = goto.shape
    ew = np.exp(-w)
    reach = _reachable(order, indptr, dst, lab, start, h0, goto, n)
    lu_at, piv_at = _offsets(reach)
    for q in range(piv_at.shape[0] - 1):
        if piv_at[q + 1] - piv_at[q] > max_level:
            return TOO_BIG, 0.0, np.zeros((nh, n + 1))
    lus = np.empty(lu_at[-1])
    pivs = np.empty(piv_at[-1], np.int64)
    ok, beta = _beta(order, reach, indptr, dst, lab, ew, final, ea, goto, n, lus, lu_at,
                     pivs, piv_at)
    if not ok:
        return DIVERGED, 0.0, np.zeros((nh, n + 1))
    z = beta[start, h0]
    if not z > 0.0:
        return FAILED, 0.0, np.zeros((nh, n + 1))
    alpha = _alpha(order, reach, lus, lu_at, pivs, piv_at, indptr, dst, lab, ew, ea, goto,
                   n, start, h0)
    return OK, np.log(z), _counts(alpha, beta, reach, indptr, dst, lab, ew, final, ea,
                                  goto, n, z)
