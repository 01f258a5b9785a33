"""Dense LU with partial pivoting as compiled loops, for the small systems I − P of the
q and p̂ sides (k up to a few hundred states: a loop beats LAPACK's call overhead
there). The certificate constants are those of
:func:`strgm.wfsa.components.certifies_normalisable` and
:func:`strgm.features.moments.q_moments`."""

from __future__ import annotations

import numpy as np

from strgm.wfsa.compiled import njit

#: exp() of larger log weights would overflow (the bound of q_moments).
MAX_LOG = 600.0
#: slack of the normalisability certificate x = (I − P)⁻¹1 ≥ 1
CERT_SLACK = 1e-9


@njit(cache=True)
def _lu(m, piv):  # pragma: no cover - compiled
    """In-place LU with partial pivoting: P·M = L·U, row i of P·M is row piv[i] of M.
    Returns False when a pivot is exactly zero."""
    k = m.shape[0]
    for i in range(k):
        piv[i] = i
    for j in range(k):
        p = j
        best = abs(m[j, j])
        for i in range(j + 1, k):
            v = abs(m[i, j])
            if v > best:
                best, p = v, i
        if best == 0.0:
            return False
        if p != j:
            for c in range(k):
                t = m[j, c]
                m[j, c] = m[p, c]
                m[p, c] = t
            t2 = piv[j]
            piv[j] = piv[p]
            piv[p] = t2
        d = m[j, j]
        for i in range(j + 1, k):
            f = m[i, j] / d
            m[i, j] = f
            if f != 0.0:
                for c in range(j + 1, k):
                    m[i, c] -= f * m[j, c]
    return True


@njit(cache=True)
def _lu_solve(lu, piv, b, trans):  # pragma: no cover - compiled
    """x with M x = b (``trans``: Mᵀ x = b) from :func:`_lu`'s factors."""
    k = lu.shape[0]
    x = np.empty(k)
    if not trans:
        for i in range(k):  # L y = P b
            s = b[piv[i]]
            for j in range(i):
                s -= lu[i, j] * x[j]
            x[i] = s
        for i in range(k - 1, -1, -1):  # U x = y
            s = x[i]
            for j in range(i + 1, k):
                s -= lu[i, j] * x[j]
            x[i] = s / lu[i, i]
        return x
    w = np.empty(k)
    for i in range(k):  # Uᵀ w = b
        s = b[i]
        for j in range(i):
            s -= lu[j, i] * w[j]
        w[i] = s / lu[i, i]
    for i in range(k - 1, -1, -1):  # Lᵀ v = w
        s = w[i]
        for j in range(i + 1, k):
            s -= lu[j, i] * w[j]
        w[i] = s
    for i in range(k):  # x = Pᵀ v
        x[piv[i]] = w[i]
    return x
