"""Forward–backward on one cyclic topology under many weightings: the certificate, the
structure and the solutions of one weighting serve the next.

EP and PEP re-weight the same composition C = p·EOS ∘ T (a message with the counting
transducer of a feature DFA) once per cavity θ: arc e of C weighs w(e) − A_θ[id(e)]
(:func:`strgm.features.moments.p_moments`). The reference,
:func:`fst_factors.wfsa.measure.cyclic_forward_backward`, solves each weighting from scratch:
x = (I − A)⁻¹ 1 (and z = (I − A)⁻¹ x when x is too weak) only to certify ρ(A) < 1, then
β = (I − A)⁻¹ ρ and α = (I − A)⁻ᵀ e_start, by Gauss–Seidel sweeps from b over every arc
(:func:`fst_factors.wfsa.fixed_point.iterative_solves`). Here, with A' the next weighting:

* **certificate carried over.** For any y > 0, ρ(A') ≤ r := maxᵢ (A' y)ᵢ / yᵢ
  (Collatz–Wielandt). The y (x or z) that certified the last weighting is tried first:
  one product with A' instead of one or two solves. When r > 1 − 10⁻⁶ (θ moved far, or
  A' diverges) a partial sum y = Σ_{k<K} A'ᵏ 1 of 4 Gauss–Seidel sweeps, then 16, is tried
  (any y > 0 will do; on PEP's compositions it nearly always certifies), then the
  certification of :func:`iterative_solves`, with its divergence proofs; the vector
  that certified is carried to the next call. The error bound of
  :func:`iterative_solves` (a rounding-level residual amplified by at most 1/(1 − r))
  holds with this r.
* **warm starts.** β and α are swept from the last weighting's β and α (``WARM``):
  for a nonnegative A' with ρ(A') < 1 Gauss–Seidel converges from any start
  (Stein–Rosenberg), and a start within δ of the answer saves about log δ / log ρ of
  the sweeps. Such a start is neither below nor above the answer, so the sweeps end
  when no entry moves by more than ``WARM_RTOL`` (10⁻¹⁵) of its value; from b they end
  at an exact float64 fixed point of y = A'y + b.
* **parallel arcs summed.** The arcs of C between two states (one per label) are summed
  into one entry of A; the structure of A, of Aᵀ and the arc → entry map are built once
  (O(|arcs|), compiled). Each weighting fills the values in one compiled pass that also
  applies θ, and sums the expected counts per output label
  c(ℓ) = Σ_{e: olabel(e) = ℓ} α(src e)·exp(−w'(e))·β(dst e) / Z in another, in
  probability space (the reference goes to −log space and back).

α, β and Z equal the reference's up to rounding (tested to 1e-10 in
``tests/features/test_reweighted.py``). When this route cannot decide (no certificate, a sweep
past ``MAX_ITER``, weights outside float64's range) it returns None and the caller takes
the reference (:func:`fst_factors.wfsa.expectations.table_arc_counts`: solves by strongly
connected component, or OpenFst's log-space iteration), which raises the same
:class:`DivergenceError` as before. Cost per weighting: O(|arcs|) for the weights and
counts, one product for the certificate, and the β and α sweeps over the summed entries
(measured against the reference: ``benchmarks/results/pep_speed_compiled.md``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from fst_factors.errors import DivergenceError
from fst_factors.wfsa.compiled import njit
from fst_factors.wfsa.core import ArcTable
from fst_factors.wfsa.fixed_point import (_FIXED, _fixed_point, _gauss_seidel_steps,
                                    _sum_of_powers)
from fst_factors.wfsa.measure import TrimmedTopology, divergence_message

#: As :func:`fst_factors.wfsa.fixed_point.iterative_solves`: steps per solve, and the largest
#: Collatz–Wielandt bound accepted as a proof of ρ(A) < 1.
MAX_ITER = 200
MAX_BOUND = 1.0 - 1e-6
#: Start the β and α sweeps from the last weighting's solution.
WARM = True
#: A warm-started solve ends at the first sweep that changes no entry by more than this
#: times its value (a cold one, which rises monotonically from b, at an exact fixed
#: point). From a start that is neither below nor above the answer, rounding can keep
#: the last bits moving: on 200 synthetic words under PEP (EM-trained phonology) 136 of
#: 9,000 warm solves ran to MAX_ITER and went to the reference, and warm solves took
#: 48 sweeps on average against 27 from b.
WARM_RTOL = 1e-15
#: Partial sums tried as certificates before the full x solve: after this many
#: Gauss–Seidel sweeps in all, then continued to the next count (the measurement that
#: chose these counts: docs/decisions/reweighted_quick.md).
QUICK = (4, 16)


@njit(cache=True)
def _weigh(w, lab, a, cell, out, merged):  # pragma: no cover - compiled
    """out[k] = exp(−(w[k] − a[lab[k]])) (lab[k] < 0: no DFA arc, exp(−w[k])), and
    merged[cell[k]] = the sum of out over the parallel arcs of one matrix cell; returns
    False when some value is not finite."""
    ok = True
    merged[:] = 0.0
    for k in range(w.shape[0]):
        x = w[k]
        if lab[k] >= 0:
            x -= a[lab[k]]
        v = np.exp(-x)
        out[k] = v
        merged[cell[k]] += v
        if not np.isfinite(v):
            ok = False
    return ok


@njit(cache=True)
def _label_counts(indptr, indices, vals, lab, alpha, beta, z, ncell):  # pragma: no cover
    """Σ over trimmed arcs e with lab[e] = ℓ ≥ 0 of α(row)·vals[e]·β(col) / z."""
    out = np.zeros(ncell)
    for i in range(indptr.shape[0] - 1):
        ai = alpha[i]
        if ai == 0.0:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            if lab[k] >= 0:
                out[lab[k]] += ai * vals[k] * beta[indices[k]] / z
    return out


@njit(cache=True)
def _cells(indptr, indices, k):  # pragma: no cover - compiled
    """The summed matrix's structure: ``cell[e]`` (its entry for arc e; a row's cells in
    order of first appearance), its CSR (m_indptr, m_indices) and its transpose's CSR
    (t_indptr, t_indices, with ``perm``: the summed entries by column, rows ascending).
    O(nnz + k) with one marker per column."""
    m = indices.shape[0]
    cell = np.empty(m, np.int64)
    seen = np.full(k, -1, np.int64)
    m_indptr = np.zeros(k + 1, np.int64)
    m_indices = np.empty(m, np.int64)
    c = 0
    for i in range(k):
        start = c
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            if seen[j] < start:
                seen[j] = c
                m_indices[c] = j
                c += 1
            cell[e] = seen[j]
        m_indptr[i + 1] = c
    m_indices = m_indices[:c]
    t_indptr = np.zeros(k + 1, np.int64)
    for q in range(c):
        t_indptr[m_indices[q] + 1] += 1
    for j in range(k):
        t_indptr[j + 1] += t_indptr[j]
    fill = t_indptr[:-1].copy()
    perm = np.empty(c, np.int64)
    t_indices = np.empty(c, np.int64)
    for i in range(k):
        for q in range(m_indptr[i], m_indptr[i + 1]):
            j = m_indices[q]
            perm[fill[j]] = q
            t_indices[fill[j]] = i
            fill[j] += 1
    return cell, m_indptr, m_indices, t_indptr, t_indices, perm


class Reweighted:
    """A cyclic arc table's trimmed system, solved for many weightings (module docstring).

    ``labels[e]`` (one per arc of ``table``) is the index into the θ weight vector of arc
    e, −1 for arcs that carry no θ weight (ε-arcs); the arc's −log weight under θ is
    ``table.weight[e] − a[labels[e]]``. ρ = exp(−final) on the kept states. Parallel
    arcs (one per label between two states: a product with a shallow DFA has dozens per
    cell) are summed into one matrix entry, so the solves sweep |cells| entries, not
    |arcs|."""

    def __init__(self, table: ArcTable, topology: TrimmedTopology, labels: np.ndarray):
        topo = topology
        k = self.k = len(topo.keep)
        self.indptr = np.ascontiguousarray(topo.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(topo.indices, dtype=np.int64)
        self.w = np.ascontiguousarray(table.weight[topo.arcs], dtype=np.float64)
        self.lab = np.ascontiguousarray(labels[topo.arcs], dtype=np.int64)
        with np.errstate(over="ignore", under="ignore"):
            self.rho = np.exp(-table.final[topo.keep])
        self.start_row = topo.start_row
        (self.cell, self.m_indptr, self.m_indices, self.t_indptr, self.t_indices,
         self.perm) = _cells(self.indptr, self.indices, k)
        self.certificate: Optional[np.ndarray] = None
        self._warm: dict = {}  # backward (β) / forward (α) solution of the last weighting
        self.carried = 0  # weightings certified by the carried vector

    def label_counts(self, a: Optional[np.ndarray], ncell: int, what: str = "automaton"
                     ) -> Optional[tuple[np.ndarray, float]]:
        """(counts per label, log Z) under the weighting ``a`` (None: all zero), or None
        when the fixed-point route cannot decide (the caller takes the reference route).
        Raises :class:`DivergenceError` (naming ``what``) when the certification proves
        ρ(A) ≥ 1."""
        vals = np.empty_like(self.w)
        mv = np.empty(len(self.m_indices))
        a = np.zeros(ncell) if a is None else np.ascontiguousarray(a, dtype=np.float64)
        if not _weigh(self.w, self.lab, a, self.cell, vals, mv) \
                or not np.all(np.isfinite(self.rho)):
            return None
        m = sp.csr_matrix((mv, self.m_indices, self.m_indptr), shape=(self.k, self.k))
        try:
            certified = self._certify(m)
        except DivergenceError as e:  # as the reference route words it
            raise DivergenceError(divergence_message(what),
                                  radius_at_least=e.radius_at_least) from None
        if not certified:
            return None
        beta = self._solve((self.m_indptr, self.m_indices, mv), self.rho, True)
        if beta is None:
            return None
        e = np.zeros(self.k)
        e[self.start_row] = 1.0
        alpha = self._solve((self.t_indptr, self.t_indices, mv[self.perm]), e, False)
        if alpha is None:
            return None
        z = float(beta[self.start_row])
        if not (1e-250 < z < 1e250) or not (np.all(np.isfinite(alpha))
                                            and np.all(np.isfinite(beta))):
            return None
        counts = _label_counts(self.indptr, self.indices, vals, self.lab,
                               np.maximum(alpha, 0.0), np.maximum(beta, 0.0), z, ncell)
        return counts, float(np.log(z))

    def _solve(self, m: tuple, b: np.ndarray, backward: bool) -> Optional[np.ndarray]:
        """y = m y + b (m: int64 CSR arrays indptr, indices, data) by Gauss–Seidel sweeps to an exact float64 fixed point (None past
        ``MAX_ITER``), from the last weighting's solution when there is one (under the
        certificate ρ(m) < 1 the sweeps converge from any start; a start within δ of the
        answer saves about log δ / log ρ_local of the sweeps), else from b."""
        warm = self._warm.get(backward) if WARM else None
        y = (b if warm is None else warm).astype(np.float64, copy=True)
        indptr, indices, data = m
        _, y, _, status = _gauss_seidel_steps(indptr, indices, data, b, y, 1, MAX_ITER,
                                              False, backward,
                                              0.0 if warm is None else WARM_RTOL)
        if status != _FIXED:
            return None
        self._warm[backward] = y
        return y

    def _certify(self, m: sp.csr_matrix) -> bool:
        """ρ(m) < 1 proved by the carried vector, else by a partial sum of Σ mᵏ 1
        (:func:`partial_sum_certificate`: any y > 0 serves the Collatz–Wielandt bound,
        and on PEP's compositions 4 or 16 sweeps nearly always do), else by
        :func:`iterative_solves`'s x (or z) solve; the vector is carried. False when
        none decides. Raises :class:`DivergenceError` when the x solve proves ρ ≥ 1."""
        y = self.certificate
        if y is not None and _bound(m, y) <= MAX_BOUND:
            self.carried += 1
            return True
        self.certificate = None
        y = partial_sum_certificate(self.m_indptr, self.m_indices, m)
        if y is not None:
            self.certificate = y
            return True
        x = _sum_of_powers(m, MAX_ITER)
        if x is None:
            return False
        if _bound(m, x) > MAX_BOUND:
            x = _fixed_point(m, x, MAX_ITER, backward=True)
            if x is None or not np.all(np.isfinite(x)) or _bound(m, x) > MAX_BOUND:
                return False
        self.certificate = x
        return True


def partial_sum_certificate(indptr: np.ndarray, indices: np.ndarray, m: sp.csr_matrix,
                            stages: Optional[tuple] = None) -> Optional[np.ndarray]:
    """y = Σ_{k<K} mᵏ 1 by K Gauss–Seidel sweeps, for K in ``stages`` (default
    :data:`QUICK`) in turn, each continuing the last, returned at the first K where
    maxᵢ (m y)ᵢ / yᵢ ≤ :data:`MAX_BOUND` (a Collatz–Wielandt proof of ρ(m) < 1); None
    when none does. ``indptr``, ``indices``: m's structure as int64 arrays."""
    ones = np.ones(m.shape[0])
    y, done = ones.copy(), 0
    for sweeps in (QUICK if stages is None else stages):
        _, y, _, _ = _gauss_seidel_steps(indptr, indices, m.data, ones, y, done + 1,
                                         sweeps, False, True)
        done = sweeps
        if not np.all(np.isfinite(y)):
            return None
        if _bound(m, y) <= MAX_BOUND:
            return y
    return None


def _bound(m: sp.csr_matrix, y: np.ndarray) -> float:
    """maxᵢ (m y)ᵢ / yᵢ: a Collatz–Wielandt upper bound on ρ(m) for y > 0."""
    if not np.all(y > 0):
        return np.inf
    return float(np.max((m @ y) / y, initial=0.0))

