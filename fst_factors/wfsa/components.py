"""Linear solves with I − A one strongly connected component at a time.

For a nonnegative n × n matrix A (the transition matrix of a weighted automaton in
probability space), order the states by the strongly connected components of A's graph
and split A = D + N into the diagonal blocks D (arcs inside a component) and the rest N
(arcs between components). The components form a DAG, so

* ρ(A) = max_C ρ(A_CC): the automaton is normalisable iff every component is
  (a singleton with self-loop weight a iff a < 1, a larger component iff
  (I − A_CC) x = 1 has a solution x ≥ 1, as in :mod:`fst_factors.wfsa.measure`);
* the block-Jacobi sweep y ← (I − D)⁻¹ (N y + b) from y = 0 is exact after at most
  depth + 1 sweeps, depth being the longest chain of components: (I − D)⁻¹ N is
  nilpotent because N only leads from a component to a later one. Each state's value
  stops changing once those of its successors have, so the sweep stops at the first
  repeated vector, a floating-point fixed point reached in the same number of steps.

This replaces one sparse LU of the whole I − A, whose fill-in is severe on compositions
with n-gram DFAs (a 4,000-state trigram composition with 3·10⁵ arcs filled in 13×),
and the plain fixed-point iteration y ← A y + b, which needs
thousands of steps — or cannot certify anything — when one component has ρ close to 1.
Here the cyclic components are small (≤ 500 states on those machines) and are inverted
densely; the sweeps cost O(depth · nnz(A)). The block inverses are nonnegative
(Σ_k A_CCᵏ), so a sweep adds nonnegative terms only and loses no accuracy to
cancellation — unlike the global LU, which on badly scaled messages (arc weights up to
e^{+23}) returned solutions with negative entries for normalisable machines.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Optional

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from fst_factors.errors import DivergenceError

#: Cyclic components up to this size are solved with dense linear algebra (an
#: inverse of |C|² entries); larger ones get a sparse LU of their own block.
DENSE_COMPONENT_MAX = 1500


def certifies_normalisable(x: Optional[np.ndarray]) -> bool:
    """True when x, a computed solution of (I − A) x = 1, proves ρ(A) < 1: finite and
    ≥ 1 componentwise (1e-9 slack for rounding). For ρ(A) < 1 the solution is
    Σ_k Aᵏ 1 ≥ 1; conversely x ≥ 1 gives A x = x − 1 ≤ (1 − 1/max x) x and the
    Collatz–Wielandt bound ρ(A) ≤ 1 − 1/max x < 1."""
    return x is not None and bool(np.all(np.isfinite(x))) and float(x.min()) >= 1.0 - 1e-9


def radius_lower_bound(a: sp.spmatrix, u: np.ndarray, rounds: int = 8) -> float:
    """A proven lower bound c > 1 on ρ(A), or 0.0 when none is found.

    Looks for v ≥ 0, v ≠ 0 supported inside {u > 0} with A v ≥ (1 + 1e-9) v: v = u on a
    support that shrinks to the states where the inequality holds. Then A v ≥ c v with
    c = min over the support of (A v)ᵢ / vᵢ, and Aᵏ v ≥ cᵏ v gives ρ(A) ≥ c. With u close
    to A's Perron vector (an increment Aᵏ 1 of a diverging iteration, or a power
    iterate), c approaches ρ(A)."""
    if not np.all(np.isfinite(u)) or u.max() <= 0.0:
        return 0.0
    u = u / u.max()
    s = u > 0.0
    for _ in range(rounds):
        v = np.where(s, u, 0.0)
        av = a @ v
        keep = s & (av >= (1.0 + 1e-9) * v)
        if keep.sum() == s.sum():
            return float(np.min(av[s] / v[s])) if s.any() else 0.0
        s = keep
    return 0.0


def _perron_iterate(block, steps: int = 64) -> Optional[np.ndarray]:
    """u ← (u + A u) / max after ``steps`` rounds from u = 1: a positive approximation
    of the Perron vector of an irreducible block. The shift by I keeps the iteration from
    cycling on periodic components (common on n-gram compositions), where A alone
    oscillates and proves nothing."""
    u = np.ones(block.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            u = u + block @ u
            top = u.max()
            if not (np.isfinite(top) and top > 0):
                return None
            u = u / top
    return u


def _upper_bound(block, y: Optional[np.ndarray]) -> float:
    """Collatz–Wielandt: ρ(A) ≤ maxᵢ (A y)ᵢ / yᵢ for y > 0 (∞ when y is not positive)."""
    if y is None or not (np.all(np.isfinite(y)) and y.min() > 0.0):
        return np.inf
    return float(np.max((block @ y) / y))


#: A certificate vector y must give maxᵢ (A y)ᵢ / yᵢ below this (a margin far above the
#: rounding of a nonnegative matrix–vector product).
CERTIFICATE_MAX = 1.0 - 1e-12


def _certificate(block, solve) -> tuple[Optional[np.ndarray], Optional[float]]:
    """(y, None) with y > 0 and A y < y componentwise, proving ρ(A) < 1; or (None, c)
    with a proven ρ(A) ≥ c > 1 (c None when neither could be proved).

    Tries x = (I − A)⁻¹ 1 (exact arithmetic gives A x = x − 1); on badly scaled blocks
    (entries up to 1e5, condition numbers up to 1e11 on trigram compositions) x can come
    out with wrong signs, so then the shifted Perron iterate u, and
    u ⊙ (I − B_u)⁻¹ 1 = (I − A)⁻¹ u with B_u = D_u⁻¹ A D_u, a well-scaled solve."""
    x = solve(block, np.ones(block.shape[0]))
    if _upper_bound(block, x) <= CERTIFICATE_MAX:
        return x, None
    u = _perron_iterate(block)
    if u is None:
        return None, None
    if _upper_bound(block, u) <= CERTIFICATE_MAX:
        return u, None
    c = radius_lower_bound(block, u)
    if c > 1.0:
        return None, c
    x = u * solve(_scaled(block, u), np.ones(block.shape[0]))
    if _upper_bound(block, x) <= CERTIFICATE_MAX:
        return x, None
    return None, None


def _scaled(block, y: np.ndarray):
    """D_y⁻¹ A D_y: row sums (A y)ᵢ / yᵢ, the same spectrum."""
    if sp.issparse(block):
        d = sp.diags(y)
        return (sp.diags(1.0 / y) @ block @ d).tocsc()
    return block * y[None, :] / y[:, None]


def _dense_solve(block: np.ndarray, b: np.ndarray) -> Optional[np.ndarray]:
    try:
        return sla.solve(np.eye(block.shape[0]) - block, b, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None


def _sparse_solve(block, b: np.ndarray) -> Optional[np.ndarray]:
    try:
        m = (sp.identity(block.shape[0], format="csc") - block).tocsc()
        return spla.splu(m).solve(b)
    except RuntimeError:
        return None


def _divergent(what: str, radius: Optional[float]) -> DivergenceError:
    bound = f" (spectral radius >= {radius:.6g})" if radius else " (spectral radius >= 1)"
    return DivergenceError(f"{what} has infinite total weight{bound}",
                           radius_at_least=radius)


@dataclasses.dataclass(frozen=True)
class ComponentSolver:
    """(I − A)⁻¹ b and (I − A)⁻ᵀ b for a nonnegative A with ρ(A) < 1 (see the module
    docstring); built by :func:`factor_by_components`, which certifies ρ(A) < 1.

    ``between`` is N (arcs between components), ``inverse`` the block-diagonal
    (I − D)⁻¹ for singletons and dense components, ``sparse_blocks`` the
    (members, y, LU of I − D_y⁻¹ A_CC D_y) of components above
    :data:`DENSE_COMPONENT_MAX`."""

    between: sp.csr_matrix
    inverse: sp.csr_matrix
    sparse_blocks: tuple
    max_sweeps: int

    def solve(self, b: np.ndarray) -> np.ndarray:
        """(I − A)⁻¹ b, exactly up to rounding, in ≤ depth + 1 sweeps of O(nnz(A))."""
        return self._sweep(self.between, self.inverse, b, trans=False)

    def solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """(I − A)⁻ᵀ b (forward weights α with b = e_start)."""
        return self._sweep(self.between.T.tocsr(), self.inverse.T.tocsr(), b, trans=True)

    def _sweep(self, n: sp.csr_matrix, inv: sp.csr_matrix, b: np.ndarray,
               trans: bool) -> np.ndarray:
        y = np.zeros_like(b, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(self.max_sweeps):
                r = n @ y + b
                yn = inv @ r
                for members, y_c, lu in self.sparse_blocks:  # (I − A)⁻¹ = D (I − B)⁻¹ D⁻¹
                    if trans:
                        yn[members] = lu.solve(r[members] * y_c, trans="T") / y_c
                    else:
                        yn[members] = y_c * lu.solve(r[members] / y_c)
                if np.array_equal(yn, y) or not np.all(np.isfinite(yn)):
                    return yn
                y = yn
        raise AssertionError("block sweep did not terminate (the components are a DAG)")


def _canonical(a: sp.spmatrix) -> sp.csr_matrix:
    """A float CSR copy with parallel entries summed (scipy 1.17's strong-component
    search never returns on a CSR matrix with duplicate entries)."""
    a = sp.csr_matrix(a, dtype=float, copy=True)
    a.sum_duplicates()
    return a


def _cyclic_components(a: sp.csr_matrix, comp: np.ndarray, sizes: np.ndarray, what: str):
    """Yield (members, block, dense, y) for every strongly connected component of more
    than one state: ``block`` = A_CC (a dense array when ``dense``), y > 0 with
    A_CC y < y its certificate of ρ(A_CC) < 1. Raises :class:`DivergenceError` (with a
    proven ``radius_at_least`` when one is found) at the first component, singleton
    self-loops included, whose certificate fails."""
    loops = a.diagonal()
    single = sizes[comp] == 1
    bad = single & (loops >= 1.0)
    if bad.any():
        raise _divergent(what, float(loops[bad].max()))
    if not (sizes > 1).any():
        return
    order = np.argsort(comp, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for c in np.flatnonzero(sizes > 1):
        members = order[starts[c]:starts[c + 1]]
        block = a[members][:, members]
        dense = len(members) <= DENSE_COMPONENT_MAX
        if dense:
            block = block.toarray()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            y, radius = _certificate(block, _dense_solve if dense else _sparse_solve)
        if y is None:
            raise _divergent(what, radius)
        yield members, block, dense, y


def _labels(a: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Strong-component label of every state and the size of every component."""
    ncomp, comp = connected_components(a, directed=True, connection="strong")
    return comp, np.bincount(comp, minlength=ncomp)


def check_components(a: sp.spmatrix, what: str = "automaton") -> None:
    """Raise :class:`DivergenceError` unless ρ(A) < 1 is certified component by
    component (no inverses are formed). Cost: O(|Q| + nnz) plus Σ_C |C|³."""
    a = _canonical(a)
    for _ in _cyclic_components(a, *_labels(a), what):
        pass


def factor_by_components(a: sp.spmatrix, what: str = "automaton") -> ComponentSolver:
    """Split I − A by strongly connected components, certify ρ(A) < 1 component by
    component and invert the diagonal blocks.

    Raises :class:`DivergenceError` when some component is not certified (then
    ρ(A) ≥ 1 up to rounding), with ``radius_at_least`` set when a bound c > 1 is proved:
    a singleton's self-loop weight, or a Collatz–Wielandt bound from the shifted Perron
    iterate of the block. The inverse of each cyclic block is taken on the well-scaled
    D_y⁻¹ A_CC D_y (y its certificate; row sums < 1), which keeps small entries of
    (I − A_CC)⁻¹ accurate. Cost: O(|Q| + nnz) for the components, Σ_C |C|³ for the
    dense blocks."""
    a = _canonical(a)
    n = a.shape[0]
    comp, sizes = _labels(a)
    blocks = list(_cyclic_components(a, comp, sizes, what))
    row = np.repeat(np.arange(n), np.diff(a.indptr))
    inside = comp[row] == comp[a.indices]
    between = sp.csr_matrix((a.data[~inside], (row[~inside], a.indices[~inside])),
                            shape=(n, n))
    single = sizes[comp] == 1
    loops = np.where(single, a.diagonal(), 0.0)
    idx = np.flatnonzero(single)
    rows, cols, vals = [idx], [idx], [1.0 / (1.0 - loops[idx])]
    sparse_blocks = []
    for members, block, dense, y in blocks:
        k = len(members)
        scaled = _scaled(block, y)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if not dense:
                lu = spla.splu((sp.identity(k, format="csc") - scaled).tocsc())
                sparse_blocks.append((members, y, lu))
                continue
            inv = sla.inv(np.eye(k) - scaled, check_finite=False)
        inv = np.maximum(inv * y[:, None] / y[None, :], 0.0)  # Σ_k A_CCᵏ ≥ 0
        rows.append(np.repeat(members, k))
        cols.append(np.tile(members, k))
        vals.append(inv.ravel())
    inverse = sp.csr_matrix((np.concatenate(vals),
                             (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    return ComponentSolver(between, inverse, tuple(sparse_blocks),
                           max_sweeps=len(sizes) + 1)
