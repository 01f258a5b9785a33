"""The linear solves of the q side (:func:`strgm.features.moments.q_moments`): solvers
for I − P_r, P_r the weighted transition matrix of ENCODE(θ) on its reachable states,
each returned only with a proof that ρ(P_r) < 1 (a positive x = (I − P_r)⁻¹ 1 checked by
:func:`fst_factors.wfsa.components.certifies_normalisable`, or a Collatz–Wielandt bound).
A solver is called as ``solve(b, transposed)``. Dense LU up to ``_DENSE_MAX`` states,
above it BiCGSTAB with a sparse LU as fallback.
"""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from strgm.errors import DivergenceError
from fst_factors.wfsa.components import certifies_normalisable

#: Largest DFA solved with a dense LU (faster than the sparse one below a few hundred
#: states, where multithreaded BLAS starts to cost more than it gains; the q-side DFAs of
#: EP beliefs have tens to hundreds).
_DENSE_MAX = 160
#: Largest DFA whose q moments take the compiled dense kernel (:mod:`strgm.features.q_kernel`,
#: LAPACK's LU on one BLAS thread) instead of the solvers below; chosen by
#: ``benchmarks/pep/q_route_speed.py``, below the size where the two routes' times cross.
COMPILED_MAX = 300


def _solve_dense(pr: np.ndarray):
    """A solver for I − P_r (``solve(b, transposed)``), or None if ρ(P_r) ≥ 1."""
    m = np.eye(len(pr)) - pr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lu = sla.lu_factor(m, check_finite=False)
            x = sla.lu_solve(lu, np.ones(len(pr)), check_finite=False)
        except (ValueError, np.linalg.LinAlgError):
            return None
    if not certifies_normalisable(x):
        return None
    return lambda b, trans: sla.lu_solve(lu, b, trans=1 if trans else 0, check_finite=False)


def _solve_sparse(p: sp.csr_matrix, reach: np.ndarray, pr: Optional[sp.spmatrix] = None):
    """As :func:`_solve_dense`, with a sparse LU (``pr``: P restricted to ``reach``, when
    the caller has it)."""
    pr = p[reach][:, reach] if pr is None else pr
    m = (sp.identity(len(reach), format="csc") - pr.tocsc()).tocsc()
    m.sum_duplicates()  # parallel DFA arcs (SuperLU expects one entry per cell)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lu = spla.splu(m)
            x = lu.solve(np.ones(len(reach)))
        except RuntimeError:
            return None
    if not certifies_normalisable(x):
        return None
    return lambda b, trans: lu.solve(b, trans="T" if trans else "N")


#: BiCGSTAB settings for :func:`_solve_krylov`: relative residual, iterations per solve.
_KRYLOV_RTOL = 1e-13
_KRYLOV_MAXITER = 100
#: Collatz–Wielandt margin: P x ≤ (1 − margin) x certifies ρ(P) < 1 despite rounding.
_CW_MARGIN = 1e-12


def _solve_krylov(p: sp.csr_matrix, reach: np.ndarray):
    """As :func:`_solve_sparse`, by BiCGSTAB instead of an LU; ``None`` when it cannot
    certify ρ(P_r) < 1 quickly (the caller then takes the LU, which also decides Z = ∞).

    Why: the DFA of a complete trigram family over N ≈ 36 symbols has ~N² states whose
    transition graph (ab → bc) is an expander, so an LU fills in to ~4.5·10⁵ entries,
    while BiCGSTAB needs 7–30 products with the ~N³-entry P per solve (measured:
    docs/pep.md).

    Certificate: x ≈ (I − P_r)⁻¹ 1 from BiCGSTAB is accepted only if x > 0 and
    P_r x ≤ (1 − 1e-12) x componentwise, checked with one product; then ρ(P_r) < 1 by the
    Collatz–Wielandt bound ρ ≤ maxᵢ (P_r x)ᵢ / xᵢ, however x was computed. Every solve
    must also meet its relative residual ‖b − (I − P_r) y‖ ≤ 10·rtol·‖b‖ (recomputed,
    not BiCGSTAB's recurrence); a later solve that misses it falls back to an LU."""
    pr = p[reach][:, reach].tocsr()
    k = len(reach)
    m = (sp.identity(k, format="csr") - pr).tocsr()

    def krylov(mat: sp.csr_matrix, b: np.ndarray) -> Optional[np.ndarray]:
        # Start from two Neumann terms b + P b: with x0 = 0 the shadow residual is b
        # itself, and for α's b = e_s (the start state has no incoming arc) BiCGSTAB
        # breaks down at once (r̂ᵀr = 0).
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            y, info = spla.bicgstab(mat, b, x0=2.0 * b - mat @ b, rtol=_KRYLOV_RTOL,
                                    atol=0.0, maxiter=_KRYLOV_MAXITER)
            if info != 0 or not np.all(np.isfinite(y)):
                return None
            res = np.linalg.norm(b - mat @ y)
        return y if res <= 10 * _KRYLOV_RTOL * np.linalg.norm(b) else None

    x = krylov(m, np.ones(k))
    if x is None or not (np.all(x > 0) and np.all(pr @ x <= (1.0 - _CW_MARGIN) * x)):
        return None
    fallback = []  # an LU, built only if some solve misses its residual
    mt = []

    def solve(b: np.ndarray, trans: bool) -> np.ndarray:
        if trans and not mt:
            mt.append(m.T.tocsr())
        y = krylov(mt[0] if trans else m, b)
        if y is not None:
            return y
        if not fallback:
            fallback.append(_solve_sparse(p, reach, pr))
        if fallback[0] is None:  # cannot happen after the certificate, but be explicit
            raise DivergenceError("q_theta: the LU contradicts the normalisability certificate")
        return fallback[0](b, trans)
    return solve
