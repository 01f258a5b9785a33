"""Moments of n-gram features: under q_θ by linear solves, under any WFSA by composition.

q side (docs/pep.md). Let P[h, h'] = Σ_{a: goto(h,a)=h'} e^{A[h,a]} be the weighted
transition matrix of ENCODE(θ) restricted to the states reachable from the start s, and
φ[h] = e^{A[h,$]}. Then

    Z_θ = e_sᵀ (I − P)⁻¹ φ,   finite  ⟺  ρ(P) < 1  ⟺  (I − P) x = 1 has a solution x ≥ 1

(the last equivalence as in :mod:`fst_factors.wfsa.measure`; one dense LU up to
``_DENSE_MAX`` states; above, BiCGSTAB with a Collatz–Wielandt certificate, and a sparse
LU when that fails). With β = (I − P)⁻¹ φ and α = (I − P)⁻ᵀ e_s, the expected counts are
c(h, a) = α_h e^{A[h,a]} β_{goto(h,a)} / Z and c(h, $) = α_h φ_h / Z, and E_q[f] follows by
accumulating them up the failure tree (:meth:`FeatureDFA.accumulate`). One factorisation
serves all three solves: O(LU(|C|)) + O(|C|·N), or O(iterations · |C|·N) by BiCGSTAB.

p side (PEP §6 "closed form", Li et al. 2009 fn. 9): for an arbitrary, possibly cyclic
WFSA p, compose p·EOS with the counting transducer of the feature DFA (output labels =
DFA arc ids), run forward–backward (:func:`fst_factors.wfsa.expected_arc_counts`), sum the arc
posteriors per DFA arc id and accumulate. Optionally the transducer carries ENCODE(θ)'s
weights, which yields the moments of p ⊙ ENCODE(θ) (EP's p̂_V, eq. 5) in the same pass.
Cost O(|p ∘ DFA|) plus the forward–backward on it. The composition is kept per message
(:class:`CompositionCache`) and re-weighted for each new θ; it serves every feature set
whose contexts it contains, so PEP's changing working sets rarely recompose it. A cyclic
one keeps its system, certificate and solutions across re-weightings, and hands them on
to its regrowth (:class:`fst_factors.wfsa.reweighted.Reweighted`, :mod:`strgm.features.carry`;
``REWEIGHTED = False``: the reference).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError, InconsistentEvidenceError
from strgm.features.carry import carry_over
from strgm.features.p_hat import p_hat_counts
from strgm.features.product import counting_product, message_arrays, product_topology
from strgm.features.q_kernel import OK as _Q_OK, q_moments_kernel
from strgm.features import q_solves
from strgm.features.q_solves import _DENSE_MAX, _solve_dense, _solve_krylov, _solve_sparse
from strgm.features.symbols import eos
from strgm.features.theta import FeatureSet, Theta
from fst_factors.wfsa.construct import string_acceptor
from fst_factors.wfsa.core import ArcTable, arc_table, is_acyclic, topological_levels
from fst_factors.wfsa.operations import compose
from fst_factors.wfsa.expectations import table_arc_counts
from fst_factors.wfsa.measure import TrimmedTopology, arcs_to_csr, trimmed_topology
from fst_factors.wfsa.reweighted import Reweighted

#: exp() of larger log weights would overflow the linear solves.
_MAX_LOG = 600.0


@dataclass(frozen=True)
class Moments:
    """log Z, feature expectations (over ``features``) and per-arc counts (|C| × (N+1)).

    ``cover``: the feature set on whose DFA ``arc_counts`` lie when it is not
    ``features``'s own (p̂'s moments are counted on a composition's cover); the
    expectations of any set whose contexts the cover holds follow from the counts alone
    (:meth:`strgm.features.dfa.FeatureDFA.accumulate`)."""

    features: FeatureSet
    log_z: float
    expectations: np.ndarray
    arc_counts: np.ndarray
    cover: Optional[FeatureSet] = None

    def on(self, features: FeatureSet) -> Optional["Moments"]:
        """The same distribution's moments over ``features``, from the counts (no new
        solve), or None when the counts' DFA lacks one of its contexts."""
        dfa = (self.cover or self.features).dfa
        if self.arc_counts.shape != (dfa.num_states, dfa.num_labels + 1) \
                or not dfa.contains_contexts_of(features):
            return None
        return Moments(features, self.log_z, dfa.accumulate(self.arc_counts, features),
                       self.arc_counts, self.cover or self.features)


def _as_values(theta: Theta, features: Optional[FeatureSet]) -> tuple[FeatureSet, np.ndarray]:
    if features is None:
        return theta.features, theta.values
    return features, theta.align(features).values


def q_moments(theta: Theta, features: Optional[FeatureSet] = None,
              what: str = "q_theta") -> Moments:
    """log Z_θ and E_{q_θ}[f] (f over ``features`` ⊇ support(θ), default θ's own set).

    Raises :class:`DivergenceError` when Z_θ = ∞ (spectral radius ≥ 1).
    """
    fs, vals = _as_values(theta, features)
    dfa = fs.dfa
    if FAST_Q and dfa.num_states <= q_solves.COMPILED_MAX and len(fs):
        st, log_z, eq, counts = q_moments_kernel(
            np.ascontiguousarray(vals, dtype=np.float64), *_q_tables(dfa))
        if st == _Q_OK:  # else the reference below raises the right error
            return Moments(fs, float(log_z), eq, counts)
    a = dfa.arc_logweights(vals)
    if a.max() > _MAX_LOG:
        raise DivergenceError(f"{what}: a log weight {a.max():.3g} is too large to "
                              "normalise (θ has exploded)")
    nc, n = dfa.num_states, dfa.num_labels
    ea = np.exp(a)
    reach = dfa.reachable
    pos = np.full(nc, -1)
    pos[reach] = np.arange(len(reach))
    k = len(reach)
    s = pos[dfa.start]
    e_s = np.zeros(k)
    e_s[s] = 1.0
    phi = ea[reach, -1]
    if nc <= _DENSE_MAX:
        dense = np.bincount(dfa.transition_cells, weights=ea[:, :-1].reshape(-1),
                            minlength=nc * nc).reshape(nc, nc)
        solve = _solve_dense(dense[np.ix_(reach, reach)])
    else:
        src, _, dst = dfa.arc_arrays
        p = arcs_to_csr(src, dst, ea[:, :-1].reshape(-1), nc)
        solve = _solve_krylov(p, reach) or _solve_sparse(p, reach)
    if solve is None:
        raise DivergenceError(
            f"{what} is not normalisable: its weighted transition matrix has spectral "
            "radius >= 1 (Z_theta = infinity)")
    beta = solve(phi, False)
    alpha = solve(e_s, True)
    z = beta[s]
    if not z > 0:
        raise InconsistentEvidenceError(f"{what} gives every string weight zero")
    beta_full = np.zeros(nc)
    beta_full[reach] = beta
    alpha_full = np.zeros(nc)
    alpha_full[reach] = np.maximum(alpha, 0.0)
    counts = np.empty((nc, n + 1))
    counts[:, :-1] = alpha_full[:, None] * ea[:, :-1] * beta_full[dfa.goto] / z
    counts[:, -1] = alpha_full * ea[:, -1] / z
    return Moments(fs, float(np.log(z)), dfa.accumulate(counts), counts)


#: q's moments by the compiled dense route (:mod:`strgm.features.q_kernel`) up to
#: ``q_solves.COMPILED_MAX`` states; False: always the numpy/scipy route (the reference).
FAST_Q = True


def _q_tables(dfa) -> tuple:
    """The DFA arrays the q kernel reads (kept on the DFA)."""
    t = dfa.__dict__.get("_q_tables")
    if t is None:
        reach = dfa.reachable.astype(np.int64)
        pos = np.full(dfa.num_states, -1, dtype=np.int64)
        pos[reach] = np.arange(len(reach))
        t = dfa.__dict__["_q_tables"] = (
            dfa.feat_node.astype(np.int64), dfa.feat_col.astype(np.int64),
            dfa.fail.astype(np.int64), dfa.goto.astype(np.int64), int(dfa.start), reach,
            pos)
    return t


def log_partition_theta(theta: Theta) -> float:
    """log Z_θ (raises DivergenceError when infinite)."""
    return q_moments(theta).log_z


def is_normalisable(theta: Theta) -> bool:
    try:
        return q_moments(theta) is not None
    except DivergenceError:
        return False


@dataclass(frozen=True, eq=False)
class Composition:
    """C = p·EOS ∘ T (T: the counting transducer of ``cover``'s DFA, weights one) as an
    arc table, with its topological levels (None when cyclic).

    C depends on p and on the *contexts* of ``cover`` only. Any feature set whose
    prefixes (w = s·a) are contexts of ``cover`` reads its moments from C: the arc counts
    accumulate up cover's failure tree and E[f_{s·a}] is read at (s, a)
    (:meth:`FeatureDFA.placement`). So one composition, grown when needed, serves the
    changing working sets of PEP's proximal steps on the same message."""

    p: pynini.Fst
    cover: FeatureSet
    table: ArcTable
    levels: Optional[np.ndarray]
    product: Optional[tuple] = None  # (q, h) per state, from the compiled product

    @cached_property
    def topology(self) -> Optional[TrimmedTopology]:
        """The trimming of C (cyclic only; it survives every re-weighting)."""
        if self.levels is not None:
            return None
        return product_topology(self.table) if self.product else trimmed_topology(self.table)

    @cached_property
    def reweighted(self) -> Reweighted:
        """C's trimmed system kept for re-weighting (cyclic C with a topology only)."""
        return Reweighted(self.table, self.topology, self.table.olabel - 1)

    def serves(self, p: pynini.Fst, features: FeatureSet) -> bool:
        return self.p is p and self.cover.dfa.contains_contexts_of(features)


class CompositionCache:
    """Compositions by message (identity of p), least recently used first.

    ``get(p, W)`` returns the cached composition of p if its cover serves W, else builds
    one on cover ∪ W (the cover only grows, so K passes over one message compose it about
    once). Bounded by ``max_size`` entries and/or ``max_arcs`` arcs held in all (about 40
    bytes each, 56 once a cyclic one keeps its trimming; the least recently used go
    first; None: no bound). Entries hold p itself, so an id is never reused while cached.
    Automata are treated as immutable: do not modify p in place."""

    def __init__(self, max_size: Optional[int] = None, max_arcs: Optional[int] = None):
        self.max_size = max_size
        self.max_arcs = max_arcs
        self._entries: "OrderedDict[int, Composition]" = OrderedDict()
        self.arcs = 0
        self.built = 0

    def get(self, p: pynini.Fst, features: FeatureSet, what: str) -> Composition:
        hit = self._entries.get(id(p))
        if hit is not None and hit.p is p:
            if hit.serves(p, features):
                self._entries.move_to_end(id(p))
                return hit
            features = hit.cover.union(features)
        comp = _compose_counting(p, features, what)
        carry_over(hit, comp)  # a finer cover of the same p: its solutions carry over
        self.built += 1
        old = self._entries.pop(id(p), None)
        if old is not None:
            self.arcs -= old.table.num_arcs
        self._entries[id(p)] = comp
        self.arcs += comp.table.num_arcs
        self._evict()
        return comp

    def discard(self, p: pynini.Fst) -> None:
        """Forget p's composition (p was replaced and will not be asked for again)."""
        hit = self._entries.get(id(p))
        if hit is not None and hit.p is p:
            del self._entries[id(p)]
            self.arcs -= hit.table.num_arcs

    def _evict(self) -> None:
        while len(self._entries) > 1 and (
                (self.max_size is not None and len(self._entries) > self.max_size)
                or (self.max_arcs is not None and self.arcs > self.max_arcs)):
            _, dropped = self._entries.popitem(last=False)
            self.arcs -= dropped.table.num_arcs


def _compose_counting(p: pynini.Fst, cover: FeatureSet, what: str) -> Composition:
    """C = p·EOS ∘ T by the compiled product (:mod:`strgm.features.product`), or by
    OpenFst when the product's pair index would be too large."""
    dfa = cover.dfa
    out = counting_product(arc_table(p), dfa.goto, dfa.start, cover.num_labels, what, True)
    if out is None:
        return compose_counting_reference(p, cover, what)
    levels = topological_levels(out[0]) if is_acyclic(p) else None
    return Composition(p, cover, out[0], levels, product=out[1:])


def compose_counting_reference(p: pynini.Fst, cover: FeatureSet,
                               what: str = "automaton") -> Composition:
    """C by OpenFst (concatenation with EOS, composition with the counting transducer,
    connection): the reference the compiled product is tested against."""
    with_eos = pynini.concat(pynini.project(p.copy(), "output"),
                             string_acceptor((eos(cover.num_labels),)))
    comp = compose(with_eos, cover.dfa.counting_transducer(None))
    if comp.num_states() == 0 or comp.start() < 0:
        raise InconsistentEvidenceError(f"{what} accepts no string")
    t = arc_table(comp)
    levels = topological_levels(t) if is_acyclic(comp) else None
    return Composition(p, cover, t, levels)


#: Shared by callers that bring no cache of their own.
_SHARED = CompositionCache(max_size=16)
#: Cyclic compositions by :class:`fst_factors.wfsa.reweighted.Reweighted` (else the reference)
REWEIGHTED = True


def p_moments(p: pynini.Fst, features: FeatureSet, theta: Optional[Theta] = None,
              what: str = "automaton",
              compositions: Optional[CompositionCache] = None) -> Moments:
    """Expected counts E_{p̃}[f_w] of every w ∈ ``features`` under p̃ ∝ p ⊙ ENCODE(θ)
    (p̃ ∝ p without θ). ``log_z`` is log Σ_v p(v)·exp(θ·f(v)).

    ``p`` is any log64 acceptor over labels 1..N (cyclic or not). Raises
    :class:`DivergenceError` if the total weight is infinite and
    :class:`InconsistentEvidenceError` if it is zero. θ's features must have their
    prefixes among the contexts of ``features`` (true when they are a subset).

    The composition C = p·EOS ∘ T (:class:`Composition`) does not depend on θ: every arc
    of C pairs one arc of p with at most one DFA arc (its output label, the DFA arc id +
    1), so the arcs of p ⊙ ENCODE(θ) weigh w_C(e) − A_θ[id(e)]. C comes from
    ``compositions`` (default: a shared cache of 16 messages) and is re-weighted for
    each cavity. The returned ``arc_counts`` are on the arcs of C's cover DFA.

    ``p`` may also be a *moment oracle* (a grammar factor's EP message, see
    :meth:`strgm.factors.Factor.moment_message`): its ``moments(features, theta, what)``
    answers instead, with no composition.
    """
    if not isinstance(p, pynini.Fst):  # a moment oracle (strgm.factors.Factor.moment_message)
        return p.moments(features, theta, what)
    if FAST_P_HAT:
        fast = _p_hat_fast(p, features, theta)
        if fast is not None:
            return fast
    cache = compositions if compositions is not None else _SHARED
    comp = cache.get(p, features, what)
    dfa = comp.cover.dfa
    n, nc, t = features.num_labels, dfa.num_states, comp.table
    a = None if theta is None else dfa.arc_logweights(theta.values, theta.features).ravel()
    if REWEIGHTED and comp.levels is None and comp.topology is not None:  # cyclic C
        fast = comp.reweighted.label_counts(a, nc * (n + 1), what)
        if fast is not None:  # else undecided: the reference route below
            counts = fast[0].reshape(nc, n + 1)
            return Moments(features, fast[1], dfa.accumulate(counts, features), counts,
                           comp.cover)
    ol = t.olabel
    ok = ol > 0
    if theta is not None:
        w = t.weight.copy()
        w[ok] -= a[ol[ok] - 1]
        t = dataclasses.replace(t, weight=w)
    try:
        post = table_arc_counts(t, comp.levels, what=what, topology=comp.topology)
    except ValueError as e:
        raise InconsistentEvidenceError(f"{what}: {e}") from None
    counts = np.bincount(ol[ok] - 1, weights=post.arc_counts[ok],
                         minlength=nc * (n + 1)).reshape(nc, n + 1)
    return Moments(features, post.log_z, dfa.accumulate(counts, features), counts,
                   comp.cover)


#: Small products by the compiled dense route (:mod:`strgm.features.p_hat`); False:
#: always the composition route (the reference).
FAST_P_HAT = True
_MESSAGE_ARRAYS: "OrderedDict[int, tuple]" = OrderedDict()


def _p_hat_fast(p: pynini.Fst, features: FeatureSet, theta: Optional[Theta]
                ) -> Optional[Moments]:
    """p̂'s moments on ``features``'s own DFA by :func:`strgm.features.p_hat.p_hat_counts`,
    or None (too large, or undecided: the composition route answers)."""
    dfa = features.dfa
    hit = _MESSAGE_ARRAYS.get(id(p))
    if hit is None or hit[0] is not p:
        table = arc_table(p)
        hit = (p, table, message_arrays(table))
        _MESSAGE_ARRAYS[id(p)] = hit  # holds p: its id is not reused while cached
        if len(_MESSAGE_ARRAYS) > 64:
            _MESSAGE_ARRAYS.popitem(last=False)
    a = np.zeros((dfa.num_states, dfa.num_labels + 1)) if theta is None else \
        dfa.arc_logweights(theta.values, theta.features)
    out = p_hat_counts(hit[1], dfa.goto, dfa.start, a, hit[2])
    if out is None:
        return None
    return Moments(features, out[0], dfa.accumulate(out[1], features), out[1], features)


def encode(theta: Theta) -> pynini.Fst:
    """ENCODE(θ): accepts v with weight exp(θ·f(v)) (a complete DFA, log64)."""
    return theta.features.dfa.encode(theta.values)
