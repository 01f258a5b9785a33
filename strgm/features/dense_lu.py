"""Dense LU with partial pivoting for the small systems I − P of the q and p̂ sides
(k up to a few hundred states), callable from compiled kernels.

:func:`_lu` factors in place and :func:`_lu_solve` solves M x = b or Mᵀ x = b with the
factors. Below :data:`LAPACK_FROM` states the factorisation is a compiled loop (no call
overhead); from there on it is LAPACK's blocked ``getrf``, reached through numba's own
binding, which is several times faster at a few hundred states (measured in
``benchmarks/pep/dense_lu_speed.py``). Both layouts are functions of k alone, so
:func:`_lu_solve` knows which one it reads:

* loop: P·M = L·U, L unit lower and U upper in M's place, row i of P·M is row piv[i]
  of M;
* LAPACK: ``getrf`` factors the column-major view of the C array, which is Mᵀ:
  Mᵀ = P·L·U, so M = Uᵀ·Lᵀ·Pᵀ; the C array holds Uᵀ in its lower triangle (with the
  diagonal) and Lᵀ strictly above it, and piv[i] is the row swapped with row i at step
  i (LAPACK's ipiv − 1).

A factorisation fails (returns False) exactly when a pivot is zero, in both routes.
The certificate constants are those of
:func:`fst_factors.wfsa.components.certifies_normalisable` and
:func:`strgm.features.moments.q_moments`."""

from __future__ import annotations

import numpy as np

from strgm.compiled import COMPILED, njit

try:  # numba's binding of LAPACK's dgetrf (the one np.linalg.inv uses)
    from numba import types as _types
    from numba.np.linalg import _LAPACK

    _GETRF = _LAPACK().numba_xxgetrf(_types.float64)
    LAPACK = COMPILED
except Exception:  # pragma: no cover - numba without that binding: loops only
    _GETRF = None
    LAPACK = False
#: LAPACK's kind code of float64 (numba's binding takes the BLAS letter)
_KIND = ord("d")
#: Systems of at least this many states are factored by LAPACK (module docstring; chosen
#: by benchmarks/pep/dense_lu_speed.py, the smallest size from which LAPACK was faster).
LAPACK_FROM = 32

#: exp() of larger log weights would overflow (the bound of q_moments).
MAX_LOG = 600.0
#: slack of the normalisability certificate x = (I − P)⁻¹1 ≥ 1
CERT_SLACK = 1e-9


@njit(cache=True)
def _by_lapack(k):  # pragma: no cover - compiled
    """True when a k-state system takes the LAPACK route (module docstring)."""
    return LAPACK and k >= LAPACK_FROM


@njit(cache=True)
def _lu(m, piv):  # pragma: no cover - compiled
    """In-place LU with partial pivoting of the C-contiguous square ``m`` (module
    docstring: the layout depends on k). Returns False when a pivot is exactly zero."""
    if _by_lapack(m.shape[0]):
        return _lu_lapack(m, piv)
    return _lu_loop(m, piv)


@njit(cache=True)
def _lu_lapack(m, piv):  # pragma: no cover - compiled
    """``getrf`` on the column-major view of ``m`` (Mᵀ = P·L·U), piv 0-based."""
    k = m.shape[0]
    ip = np.empty(k, np.int32)
    r = _GETRF(_KIND, k, k, m.ctypes, k, ip.ctypes)
    for i in range(k):
        piv[i] = ip[i] - 1
    return r == 0


@njit(cache=True)
def _lu_loop(m, piv):  # pragma: no cover - compiled
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
    if _by_lapack(lu.shape[0]):
        return _lu_solve_lapack(lu, piv, b, trans)
    return _lu_solve_loop(lu, piv, b, trans)


@njit(cache=True)
def _lu_solve_lapack(lu, piv, b, trans):  # pragma: no cover - compiled
    """Solves from :func:`_lu_lapack`'s factors, M = Uᵀ·Lᵀ·Pᵀ (module docstring)."""
    k = lu.shape[0]
    x = b.copy()
    if trans:  # Mᵀ x = b: P·L·U x = b
        for i in range(k):  # Pᵀ b: the swaps in order
            t = x[i]
            x[i] = x[piv[i]]
            x[piv[i]] = t
        for i in range(k):  # L y = Pᵀ b, L[i, j] = lu[j, i] (unit diagonal)
            s = x[i]
            for j in range(i):
                s -= lu[j, i] * x[j]
            x[i] = s
        for i in range(k - 1, -1, -1):  # U x = y, U[i, j] = lu[j, i]
            s = x[i]
            for j in range(i + 1, k):
                s -= lu[j, i] * x[j]
            x[i] = s / lu[i, i]
        return x
    for i in range(k):  # Uᵀ w = b (lower triangle of lu, with its diagonal)
        s = x[i]
        for j in range(i):
            s -= lu[i, j] * x[j]
        x[i] = s / lu[i, i]
    for i in range(k - 1, -1, -1):  # Lᵀ z = w (strictly upper, unit diagonal)
        s = x[i]
        for j in range(i + 1, k):
            s -= lu[i, j] * x[j]
        x[i] = s
    for i in range(k - 1, -1, -1):  # x = P z: the swaps in reverse order
        t = x[i]
        x[i] = x[piv[i]]
        x[piv[i]] = t
    return x


@njit(cache=True)
def _lu_solve_loop(lu, piv, b, trans):  # pragma: no cover - compiled
    """x with M x = b (``trans``: Mᵀ x = b) from :func:`_lu_loop`'s factors."""
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
