"""Fixed-point solves of (I − A) x = b for the nonnegative matrices of weighted automata,
with Collatz–Wielandt certificates of convergence and of divergence.

Used by :mod:`fst_factors.wfsa.measure` (log partition functions of cyclic machines) and
:mod:`fst_factors.wfsa.epsilon` (the ε-removal shortcut); the sparse LU of
:mod:`fst_factors.wfsa.components` answers when these cannot prove their result.

The solves are Gauss–Seidel sweeps in compiled loops: on machines whose states are
numbered roughly in topological order (breadth-first products, OpenFst's compositions) a
sweep in reverse order (x, z, β) or in order (α) settles a whole acyclic stretch at once,
and for a nonnegative A it converges at least as fast as the plain iteration
(Stein–Rosenberg; on the Catalan problem under PEP, 14–19 sweeps on average against 30
steps, 49.7M row products against 71.4M). A Gauss–Seidel fixed point is a fixed point of
y = A y + b in floating point, so the certificates of :func:`iterative_solves` hold
unchanged. Its increments prove divergence less sharply, so when the sweeps for x do not
settle, x is recomputed by the plain iteration, whose increments give the divergence
proof and its bound on ρ.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from fst_factors.errors import DivergenceError
from fst_factors.wfsa.compiled import njit
from fst_factors.wfsa.components import factor_by_components, radius_lower_bound


def iterative_solves(a: sp.csr_matrix, rho: np.ndarray, e: np.ndarray,
                     max_iter: int = 200, max_bound: float = 1.0 - 1e-6
                     ) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(I − A)⁻¹ ρ and (I − A)⁻ᵀ e by fixed-point iteration; None (use the LU) when
    neither convergence nor divergence can be proved; raises :class:`DivergenceError`
    when ρ(A) ≥ 1 is proved.

    Machines built from a string message (a composition of a word's phonology message
    with a feature DFA, say) are nearly nilpotent: cycles only come from deletion loops
    of small weight, and y ← A y + b reaches a floating-point fixed point in about as
    many steps as the longest path. From y₀ = 0 the iterates increase monotonically.

    Both answers rest on Collatz–Wielandt bounds for a nonnegative A (irreducible or
    not), which iteration supplies for free:

    * convergence: for any y > 0, ρ(A) ≤ r := maxᵢ (A y)ᵢ / yᵢ (A y ≤ r y gives
      Aᵏ y ≤ rᵏ y). First y = x = (I − A)⁻¹ 1, where r = maxᵢ (1 − 1/xᵢ); that is
      weak when some state carries a huge mass (unnormalised messages: max x ≈ 1e8–1e22
      is common), so then y = z = (I − A)⁻¹ x = Σₖ (k + 1) Aᵏ 1, where
      r = 1 − minᵢ xᵢ/zᵢ ≈ 1 − 1/(the longest expected path length) on nilpotent-like
      machines. The solves are accepted only when r ≤ ``max_bound`` and every solve
      reaches an exact float64 fixed point within ``max_iter`` steps; in the z-weighted
      max-norm ‖D⁻¹AD‖ ≤ r, so the remaining error is a rounding-level residual
      amplified by at most 1/(1 − r).
    * divergence: if v ≥ 0, v ≠ 0 and A v ≥ v then ρ(A) ≥ 1 (Aᵏ v ≥ v). The increments
      uₖ = Aᵏ 1 of the x iteration approach the dominant direction; every 16 steps the
      support S = {uₖ > 0} is shrunk to the states where (A u_S)ᵢ ≥ (1 + 1e-9) uᵢ until
      it is stable, and a non-empty S is the proof. Partial sums that overflow float64
      also raise: the true x is at least as large.

    The x iteration also gives up early (None) when it cannot finish in time: every 16
    steps the decay g_k / g_(k−16) of the largest increment g = max uₖ projects the steps
    still needed to bring it below 2⁻⁵³ · max x; more than ``max_iter`` in all, or no
    decay at all from step 32 on, sends the machine to the component solves at once
    (near ρ = 1 on trigram-EP machines, 200 wasted steps were half the run time).

    The solves are Gauss–Seidel sweeps (module docstring; :func:`_sum_of_powers` for x).

    Cost O(sweeps · nnz(A)), against the component solves."""
    def bound(y: np.ndarray) -> float:
        return float(np.max((a @ y) / y))

    x = _sum_of_powers(a, max_iter)
    if x is None:
        return None
    if bound(x) > max_bound:
        z = _fixed_point(a, x, max_iter, backward=True)
        if z is None or not np.all(np.isfinite(z)) or bound(z) > max_bound:
            return None
    beta = _fixed_point(a, rho, max_iter, backward=True)
    alpha = _fixed_point(a.T.tocsr(), e, max_iter, backward=False) \
        if beta is not None else None
    return None if alpha is None else (beta, alpha)


def finite_path_sums(a: sp.csr_matrix, rho: np.ndarray, e: np.ndarray,
                     what: str = "automaton") -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(β, α) = ((I − A)⁻¹ ρ, (I − A)⁻ᵀ e), clipped at 0, by :func:`iterative_solves`,
    else by strongly connected components
    (:func:`fst_factors.wfsa.components.factor_by_components`); ``None`` when the sums diverge,
    merely overflow float64 (both raise :class:`DivergenceError` there) or come out not
    finite. For callers that then take a general route which decides and words the
    error (ε-removal's shortcut, the quotient's product route)."""
    try:
        solved = iterative_solves(a, rho, e)
        if solved is None:
            solver = factor_by_components(a, what)
            solved = solver.solve(rho), solver.solve_transposed(e)
    except DivergenceError:
        return None
    beta, alpha = solved
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(alpha))):
        return None
    return np.maximum(beta, 0.0), np.maximum(alpha, 0.0)


def _sum_of_powers(a: sp.csr_matrix, max_iter: int) -> Optional[np.ndarray]:
    """x = (I − A)⁻¹ 1 by Gauss–Seidel sweeps; when they do not settle, by the plain
    iteration, whose increments prove divergence with a sharp bound on ρ (raised as
    :class:`DivergenceError`), or None when neither decides."""
    ones = np.ones(a.shape[0])
    try:
        x = _fixed_point(a, ones, max_iter, watch=True, backward=True)
    except DivergenceError:
        x = None
    return x if x is not None else _fixed_point(a, ones, max_iter, watch=True)


def _too_slow(decay16: float, g: float, y: np.ndarray, k: int, max_iter: int) -> bool:
    """True when increments shrinking by ``decay16`` per 16 steps cannot fall from g
    below 2⁻⁵³ · max y by step ``max_iter`` (see :func:`iterative_solves`)."""
    if not decay16 < 1.0:
        return True
    if decay16 <= 0.0:
        return False
    target = np.ldexp(float(y.max()), -53)
    if g <= target:
        return False
    return k + 16.0 * np.log(target / g) / np.log(decay16) > max_iter


def _fixed_point(m: sp.csr_matrix, b: np.ndarray, max_iter: int, watch: bool = False,
                 backward: Optional[bool] = None) -> Optional[np.ndarray]:
    """Solve y = m y + b from y = b to an exact float64 fixed point, by the plain
    iteration y ← m y + b (``backward`` None) or by Gauss–Seidel sweeps (rows in reverse
    order when ``backward``, else in order); None past ``max_iter`` steps or, with
    ``watch``, as soon as the projected count exceeds it. With ``watch`` the divergence
    proof of :func:`iterative_solves` runs every 16 steps.

    The steps run in compiled loops (:func:`_jacobi_steps`, :func:`_gauss_seidel_steps`)
    that return to Python only at the checkpoints; :func:`_fixed_point_reference` is the
    plain iteration with scipy, which the tests compare them with."""
    m = m.tocsr()
    indptr = np.ascontiguousarray(m.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(m.indices, dtype=np.int64)
    data = np.ascontiguousarray(m.data, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    y, k, last = b.copy(), 1, None
    while k <= max_iter:
        if backward is None:
            before, y, k, status = _jacobi_steps(indptr, indices, data, b, y, k, max_iter,
                                                 watch)
        else:
            before, y, k, status = _gauss_seidel_steps(indptr, indices, data, b, y, k,
                                                       max_iter, watch, backward)
        if status == _FIXED:
            return y
        if status == _OUT_OF_STEPS:
            return None
        if status == _NOT_FINITE:
            raise DivergenceError("automaton has infinite total weight (its path "
                                  "sums exceed float64's range)")
        last = _checkpoint(m, before, y, k, max_iter, last)  # status _CHECKPOINT
        if last is None:
            return None
        k += 1
    return None


_FIXED, _NOT_FINITE, _CHECKPOINT, _OUT_OF_STEPS = 0, 1, 2, 3


def _checkpoint(m, y: np.ndarray, yn: np.ndarray, k: int, max_iter: int,
                last: Optional[float]) -> Optional[float]:
    """Every 16 steps of a watched iteration: raise when the increment proves ρ ≥ 1;
    None when the iteration cannot finish in time (:func:`_too_slow`); else the largest
    increment, to compare with at the next checkpoint (``last``: None at the first)."""
    u = yn - y
    c = radius_lower_bound(m, u)
    if c > 1.0:
        raise DivergenceError("automaton has infinite total weight (spectral "
                              f"radius >= {c:.6g})", radius_at_least=c)
    g = float(u.max())
    if last is not None and not np.isnan(last) and k >= 32 and \
            _too_slow(g / last, g, yn, k, max_iter):
        return None
    return g


@njit(cache=True)
def _jacobi_steps(indptr, indices, data, b, y, k, max_iter, watch):  # pragma: no cover
    """Steps k, k+1, … of y ← m y + b (the same products in the same order as scipy's
    CSR product) until a fixed point (status 0), a non-finite iterate under ``watch``
    (1), a checkpoint under ``watch`` (2: every 16th step and the last) or step
    ``max_iter`` is passed (3). Returns (y before the last step, y, k, status)."""
    n = b.shape[0]
    yn = np.empty(n)
    while k <= max_iter:
        for i in range(n):
            s = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                s += data[jj] * y[indices[jj]]
            yn[i] = s + b[i]
        same = True
        for i in range(n):
            if yn[i] != y[i]:
                same = False
                break
        if same:
            return y, y, k, 0
        if watch:
            for i in range(n):
                if not np.isfinite(yn[i]):
                    return y, yn, k, 1
            if k % 16 == 0 or k == max_iter:
                return y, yn, k, 2
        y, yn = yn, y
        k += 1
    return y, y, k, 3


@njit(cache=True)
def _gauss_seidel_steps(indptr, indices, data, b, y, k, max_iter, watch,
                        backward, rtol=0.0):  # pragma: no cover
    """Gauss–Seidel sweeps k, k+1, … of y = m y + b, in place (rows in reverse order when
    ``backward``), until a sweep changes nothing (status 0), a non-finite value under
    ``watch`` (1), a checkpoint under ``watch`` (2: every 16th sweep and the last) or
    sweep ``max_iter`` is passed (3). Returns (y before the last sweep — only kept at a
    checkpoint —, y, k, status). With ``rtol`` > 0 a sweep that changes no entry by
    more than ``rtol`` times its new value also ends the sweeps (status 0)."""
    n = b.shape[0]
    before = y
    while k <= max_iter:
        check = watch and (k % 16 == 0 or k == max_iter)
        if check:
            before = y.copy()
        changed = False
        for t in range(n):
            i = n - 1 - t if backward else t
            s = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                s += data[jj] * y[indices[jj]]
            v = s + b[i]
            if v != y[i]:
                if not changed and (rtol == 0.0 or not np.isfinite(v)
                                    or abs(v - y[i]) > rtol * abs(v)):
                    changed = True
                y[i] = v
        if not changed:
            return y, y, k, 0
        if watch:
            for i in range(n):
                if not np.isfinite(y[i]):
                    return y, y, k, 1
            if check:
                return before, y, k, 2
        k += 1
    return y, y, k, 3


def _fixed_point_reference(m: sp.csr_matrix, b: np.ndarray, max_iter: int,
                           watch: bool = False) -> Optional[np.ndarray]:
    """:func:`_fixed_point` as a plain scipy loop (the reference of the tests)."""
    y = b.copy()
    last = None
    for k in range(1, max_iter + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            yn = m @ y + b
        if np.array_equal(yn, y):
            return y
        if watch and not np.all(np.isfinite(yn)):
            raise DivergenceError("automaton has infinite total weight (its path "
                                  "sums exceed float64's range)")
        if watch and (k % 16 == 0 or k == max_iter):
            last = _checkpoint(m, y, yn, k, max_iter, last)
            if last is None:
                return None
        y = yn
    return None
