"""p̂'s moments in one compiled call for small products (PEP eq. 5, §6 "closed form").

For a message p and a feature DFA with cavity log weights A (|C| × (N+1), column N the
final weight), p̂ ∝ p ⊙ ENCODE(θ) is the product automaton of
:mod:`strgm.features.product` with its arcs re-weighted:

    (q, h) –a→ (q', goto(h, a))   weight e^{−w_e + A[h, a]}   (an arc e of p, 1 ≤ a ≤ N)
    (q, h) –ε→ (q', h)            weight e^{−w_e}             (an ε-arc of p)
    (q, h) final                  weight e^{−ρ_q + A[h, $]}

On its k trimmed states (accessible and co-accessible) let M be the k × k weight matrix
and φ the final weights; M is block triangular over the strongly connected components
(Tarjan), so every solve below runs component by component, sinks first for β and
sources first for α, with one dense LU per component. Z = e_sᵀ(I − M)⁻¹φ is finite iff ρ(M) < 1, proved here by
x = (I − M)⁻¹1 ≥ 1 (:func:`fst_factors.wfsa.components.certifies_normalisable`). With
β = (I − M)⁻¹φ and α = (I − M)⁻ᵀe_s, the expected count of a product arc s → t of weight
m is α_s m β_t / Z and of s's final weight α_s φ_s / Z; summed per DFA arc (h, a) they
are the counts that :meth:`strgm.features.dfa.FeatureDFA.accumulate` turns into E_p̂[f].
The spectrum of M is the union of its diagonal blocks', so the
certificate is checked per component. Cost O(Σ_c k_c³ + arcs).
:func:`strgm.features.moments.p_moments` takes this route for products up to
:data:`MAX_STATES` states with components up to :data:`MAX_COMPONENT`, and keeps the composition route
(:class:`strgm.features.moments.CompositionCache`, :mod:`fst_factors.wfsa.reweighted`) as the
reference and for larger products; the tests hold the two to 1e-10.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from strgm.features.product import (MAX_PAIRS, _number_states, message_arrays,
                                    reverse_reachable)
from strgm.features.dense_lu import CERT_SLACK, MAX_LOG, _lu, _lu_solve
from strgm.features.p_hat_levels import level_order, p_hat_levels_kernel
from strgm.compiled import njit
from fst_factors.wfsa.core import ArcTable

#: Largest product (states) and largest strongly connected component solved here.
MAX_STATES = 20_000
MAX_COMPONENT = 400
OK, DIVERGED, FAILED, TOO_BIG = 0, 1, 2, 3
#: Levelled messages by :mod:`strgm.features.p_hat_levels` (False: this module's kernel
#: for every message, the reference the tests compare it with).
LEVELS = True


@njit(cache=True)
def _product_arcs(indptr, dst, lab, ew, final, goto, ea, index, pq, ph):
    # pragma: no cover - compiled
    """The product's arcs by source (src, dst, weight e^{−w}·e^{A[h,a]}, DFA cell
    h·(N+1)+a−1 or −1 for ε) and final weights (0 where not final); ``ew`` = e^{−w}
    per message arc and ``ea`` = e^A, so no exponential is taken per product arc."""
    nh, n = goto.shape
    k = pq.shape[0]
    m = 0
    for s in range(k):
        q = pq[s]
        for e in range(indptr[q], indptr[q + 1]):
            if 0 <= lab[e] <= n:
                m += 1
    src = np.empty(m, np.int64)
    tgt = np.empty(m, np.int64)
    mw = np.empty(m)
    cell = np.empty(m, np.int64)
    phi = np.zeros(k)
    j = 0
    for s in range(k):
        q, h = pq[s], ph[s]
        for e in range(indptr[q], indptr[q + 1]):
            lb = lab[e]
            if lb == 0:
                tgt[j] = index[dst[e] * nh + h]
                mw[j] = ew[e]
                cell[j] = -1
            elif 1 <= lb <= n:
                tgt[j] = index[dst[e] * nh + goto[h, lb - 1]]
                mw[j] = ew[e] * ea[h, lb - 1]
                cell[j] = h * (n + 1) + lb - 1
            else:
                continue
            src[j] = s
            j += 1
        if final[q] < np.inf:
            phi[s] = np.exp(-final[q]) * ea[h, n]
    return src, tgt, mw, cell, phi


@njit(cache=True)
def _useful_states(indptr, dst, lab, final, n):  # pragma: no cover - compiled
    """States q of the message that reach a final state through arcs with labels in
    0..N. The DFA is complete, so a product state (q, h) is co-accessible iff q is."""
    nq = indptr.shape[0] - 1
    m = 0
    for e in range(dst.shape[0]):
        if 0 <= lab[e] <= n:
            m += 1
    src = np.empty(m, np.int64)
    tgt = np.empty(m, np.int64)
    j = 0
    for q in range(nq):
        for e in range(indptr[q], indptr[q + 1]):
            if 0 <= lab[e] <= n:
                src[j] = q
                tgt[j] = dst[e]
                j += 1
    seeds = np.flatnonzero(final < np.inf)
    return reverse_reachable(src, tgt, nq, seeds)


@njit(cache=True)
def _components(out_ptr, tgt, useful, k):  # pragma: no cover - compiled
    """Tarjan's strongly connected components of the useful states (iterative), numbered
    in order of completion: every arc leaves a component for one of lower number."""
    index = np.full(k, -1, np.int64)
    low = np.zeros(k, np.int64)
    on = np.zeros(k, np.bool_)
    stack = np.empty(k, np.int64)
    cs_v = np.empty(k, np.int64)
    cs_e = np.empty(k, np.int64)
    comp = np.full(k, -1, np.int64)
    counter, sp, ncomp = 0, 0, 0
    for root in range(k):
        if not useful[root] or index[root] >= 0:
            continue
        top = 0
        cs_v[0], cs_e[0] = root, out_ptr[root]
        index[root] = low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on[root] = True
        while top >= 0:
            v = cs_v[top]
            e = cs_e[top]
            if e < out_ptr[v + 1]:
                cs_e[top] = e + 1
                u = tgt[e]
                if not useful[u]:
                    continue
                if index[u] < 0:
                    index[u] = low[u] = counter
                    counter += 1
                    stack[sp] = u
                    sp += 1
                    on[u] = True
                    top += 1
                    cs_v[top], cs_e[top] = u, out_ptr[u]
                elif on[u] and index[u] < low[v]:
                    low[v] = index[u]
            else:
                if low[v] == index[v]:
                    while True:
                        sp -= 1
                        u = stack[sp]
                        on[u] = False
                        comp[u] = ncomp
                        if u == v:
                            break
                    ncomp += 1
                top -= 1
                if top >= 0 and low[v] < low[cs_v[top]]:
                    low[cs_v[top]] = low[v]
    return comp, ncomp


@njit(cache=True)
def _block(members, local, out_ptr, tgt, mw):  # pragma: no cover - compiled
    """I − M restricted to one component (``local``: state → position in it, −1
    outside)."""
    sz = members.shape[0]
    mat = np.zeros((sz, sz))
    for i in range(sz):
        mat[i, i] = 1.0
        s = members[i]
        for e in range(out_ptr[s], out_ptr[s + 1]):
            j = local[tgt[e]]
            if j >= 0:
                mat[i, j] -= mw[e]
    return mat


@njit(cache=True)
def _too_large(w, a, final):  # pragma: no cover - compiled
    """True when a log weight could overflow exp() in the product."""
    if w.shape[0] and -w.min() > MAX_LOG / 2:
        return True
    for h in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[h, j] > MAX_LOG / 2:
                return True
    for q in range(final.shape[0]):
        if -final[q] > MAX_LOG / 2:
            return True
    return False


@njit(cache=True)
def _by_component(comp, ncomp, k):  # pragma: no cover - compiled
    """(offsets, states ordered by component): component c's states are
    order[size[c]:size[c+1]]; size[0] = −1 when a component exceeds MAX_COMPONENT."""
    size = np.zeros(ncomp + 1, np.int64)
    for s in range(k):
        if comp[s] >= 0:
            size[comp[s] + 1] += 1
    for c in range(ncomp):
        if size[c + 1] > MAX_COMPONENT:
            size[0] = -1
            return size, np.empty(0, np.int64)
        size[c + 1] += size[c]
    order = np.empty(size[ncomp], np.int64)
    fill = size[:-1].copy()
    for s in range(k):
        if comp[s] >= 0:
            order[fill[comp[s]]] = s
            fill[comp[s]] += 1
    return size, order


@njit(cache=True)
def _beta_sweep(size, order, out_ptr, tgt, mw, phi, lus, lu_at, pivs, local, k):
    # pragma: no cover - compiled
    """β = (I − M)⁻¹φ component by component, sinks first (every later target's β is
    known), each block's LU kept in ``lus`` for the α sweep; False when a block's
    certificate x = (I − M_cc)⁻¹1 ≥ 1 fails."""
    beta = np.zeros(k)
    for c in range(size.shape[0] - 1):
        members = order[size[c]:size[c + 1]]
        sz = members.shape[0]
        for i in range(sz):
            local[members[i]] = i
        mat = _block(members, local, out_ptr, tgt, mw)
        rhs = np.empty(sz)
        for i in range(sz):
            s = members[i]
            r = phi[s]
            for e in range(out_ptr[s], out_ptr[s + 1]):
                if local[tgt[e]] < 0:
                    r += mw[e] * beta[tgt[e]]
            rhs[i] = r
        piv = pivs[size[c]:size[c + 1]]
        if not _lu(mat, piv):
            return False, beta
        x = _lu_solve(mat, piv, np.ones(sz), False)
        for i in range(sz):
            if not (np.isfinite(x[i]) and x[i] >= 1.0 - CERT_SLACK):
                return False, beta
        b = _lu_solve(mat, piv, rhs, False)
        lus[lu_at[c]:lu_at[c + 1]] = mat.ravel()
        for i in range(sz):
            beta[members[i]] = b[i]
            local[members[i]] = -1
    return True, beta


@njit(cache=True)
def _alpha_sweep(size, order, out_ptr, tgt, mw, useful, lus, lu_at, pivs, local, k):
    # pragma: no cover - compiled
    """α = (I − M)⁻ᵀe_s component by component, sources first (the flow into a block from
    earlier ones pushed along their arcs), with the β sweep's LU factors."""
    alpha = np.zeros(k)
    push = np.zeros(k)
    push[0] = 1.0
    for c in range(size.shape[0] - 2, -1, -1):
        members = order[size[c]:size[c + 1]]
        sz = members.shape[0]
        for i in range(sz):
            local[members[i]] = i
        rhs = np.empty(sz)
        for i in range(sz):
            rhs[i] = push[members[i]]
        mat = lus[lu_at[c]:lu_at[c + 1]].reshape((sz, sz))
        al = _lu_solve(mat, pivs[size[c]:size[c + 1]], rhs, True)
        for i in range(sz):
            alpha[members[i]] = max(al[i], 0.0)
        for i in range(sz):
            s = members[i]
            for e in range(out_ptr[s], out_ptr[s + 1]):
                t = tgt[e]
                if local[t] < 0 and useful[t]:
                    push[t] += alpha[s] * mw[e]
        for i in range(sz):
            local[members[i]] = -1
    return alpha


@njit(cache=True)
def p_hat_kernel(indptr, dst, lab, w, final, start, goto, h0, a, max_states):
    # pragma: no cover - compiled
    """(status, log Z, per-DFA-arc counts |C| × (N+1)) of p̂ (module docstring), solved
    component by component in the order of :func:`_components`."""
    nh, n = goto.shape
    counts = np.zeros((nh, n + 1))
    index, pq, ph = _number_states(indptr, dst, lab, start, h0, goto, n)
    k = pq.shape[0]
    if k > max_states:
        return TOO_BIG, 0.0, counts
    if _too_large(w, a, final):
        return DIVERGED, 0.0, counts
    src, tgt, mw, cell, phi = _product_arcs(indptr, dst, lab, np.exp(-w), final, goto,
                                            np.exp(a), index, pq, ph)
    useful_q = _useful_states(indptr, dst, lab, final, n)
    useful = np.empty(k, np.bool_)
    for s in range(k):
        useful[s] = useful_q[pq[s]]
        if not useful[s]:
            phi[s] = 0.0
    if not useful[0]:
        return FAILED, 0.0, counts
    out_ptr = np.zeros(k + 1, np.int64)
    for e in range(src.shape[0]):
        out_ptr[src[e] + 1] += 1
    for s in range(k):
        out_ptr[s + 1] += out_ptr[s]
    comp, ncomp = _components(out_ptr, tgt, useful, k)
    size, order = _by_component(comp, ncomp, k)
    if size[0] < 0:
        return TOO_BIG, 0.0, counts
    lu_at = np.zeros(ncomp + 1, np.int64)  # offsets of the components' LU factors
    for c in range(ncomp):
        lu_at[c + 1] = lu_at[c] + (size[c + 1] - size[c]) ** 2
    lus = np.empty(lu_at[ncomp])
    pivs = np.empty(size[ncomp], np.int64)
    local = np.full(k, -1, np.int64)
    ok, beta = _beta_sweep(size, order, out_ptr, tgt, mw, phi, lus, lu_at, pivs, local, k)
    if not ok:
        return DIVERGED, 0.0, counts
    z = beta[0]
    if not z > 0.0:
        return FAILED, 0.0, counts
    alpha = _alpha_sweep(size, order, out_ptr, tgt, mw, useful, lus, lu_at, pivs, local, k)
    for e in range(src.shape[0]):
        if cell[e] >= 0 and useful[tgt[e]] and alpha[src[e]] > 0.0:
            h = cell[e] // (n + 1)
            counts[h, cell[e] - h * (n + 1)] += alpha[src[e]] * mw[e] * beta[tgt[e]] / z
    for s in range(k):
        if phi[s] > 0.0 and alpha[s] > 0.0:
            counts[ph[s], n] += alpha[s] * phi[s] / z
    return OK, np.log(z), counts


def p_hat_counts(p: ArcTable, goto: np.ndarray, dfa_start: int, a: np.ndarray,
                 arrays: Optional[tuple] = None) -> Optional[tuple[float, np.ndarray]]:
    """(log Z, per-DFA-arc counts) of p̂ by :func:`p_hat_kernel` (levelled messages:
    :func:`strgm.features.p_hat_levels.p_hat_levels_kernel`), or None when the
    product is too large or the kernel cannot decide (the caller takes the composition
    route, which also raises the right error for Z = ∞ or Z = 0)."""
    if p.start < 0 or p.num_states == 0 or p.num_states * goto.shape[0] > MAX_PAIRS:
        return None
    indptr, dst, lab, w, final, start = message_arrays(p) if arrays is None else arrays
    goto = np.ascontiguousarray(goto, dtype=np.int64)
    a = np.ascontiguousarray(a)
    order = level_order(indptr, dst, lab, final, goto.shape[1]) if LEVELS else None
    st = TOO_BIG
    if order is not None and len(order):
        if _too_large(w, a, final):
            return None
        st, log_z, counts = p_hat_levels_kernel(order, indptr, dst, lab, w, final, start,
                                                goto, int(dfa_start), np.exp(a),
                                                MAX_COMPONENT)
    if st == TOO_BIG:  # not levelled, or a level above MAX_COMPONENT states
        st, log_z, counts = p_hat_kernel(indptr, dst, lab, w, final, start, goto,
                                         int(dfa_start), a, MAX_STATES)
    if st != OK:
        return None
    return float(log_z), counts
