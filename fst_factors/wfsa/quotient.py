"""Two-sided quotient of a weighted acceptor by string lists, without composition.

For an acceptor W and acyclic acceptors B_1 … B_r (read before) and A_1 … A_s (read
after), the quotient is the weighted language

    Q(m) = Σ_{p_1 ∈ B_1, …, a_s ∈ A_s} B_1(p_1) ⊗ … ⊗ B_r(p_r) ⊗ W(p_1 … p_r · m · a_1 … a_s)
                                       ⊗ A_1(a_1) ⊗ … ⊗ A_s(a_s),

restricted to strings m over the labels ``1 … num_labels``. It is the message of a
concatenation factor to one part when the other parts' messages are string lists (pruned
BP's k-best domains): docs/messages.md.

Composition computes it as project(T ∘ W) with T inserting the other parts on ε input
arcs, and then needs ε-removal over the product of the lists with W. The quotient needs
neither. With A_a the matrix of W's a-labelled arcs (probability space) and ρ its final
weights:

* forward through the lists before: α = e_start, then for each B_j the sum over its
  accepted strings p of B_j(p) α A_{p_1} ⋯ A_{p_n} (one vector per state of B_j, in
  topological order);
* backward through the lists after: β = ρ, then for each A_j from the last the sum over
  its strings a of A_j(a) A_{a_1} ⋯ A_{a_n} β;
* the result is W's labelled arcs with final weights β, plus a new start state that has
  each state q's arcs weighted α_q and the final weight α·β; then trimmed.

Cost O((|E_B| + |E_A|) · |E_W| / |Σ| + |E_W|) vector operations against the composition's
product of sizes. Vectors are rescaled to a maximum of 1 at every step (the scale is kept
in log space), so long lists cannot underflow.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pynini

from fst_factors.wfsa import guard
from fst_factors.wfsa.core import ArcTable, arc_table, from_arc_table, topological_levels
from fst_factors.wfsa.measure import arcs_to_csr, reachable
from fst_factors.wfsa.quotient_product import ends_by_product

#: An arc weight (−log) beyond this is treated as out of float64 range for exp(−w).
_MAX_WEIGHT = 600.0


class _Scaled:
    """A nonnegative vector v·exp(−shift) over W's states (max(v) = 1 unless v = 0)."""

    __slots__ = ("v", "shift")

    def __init__(self, v: np.ndarray, shift: float = 0.0):
        m = v.max() if v.size else 0.0
        if m > 0:
            self.v, self.shift = v / m, shift - np.log(m)
        else:
            self.v, self.shift = v, np.inf


def _add(a: Optional[_Scaled], b: _Scaled, w: float) -> _Scaled:
    """a + exp(−w)·b with the shifts reconciled."""
    if b.shift == np.inf:
        return a if a is not None else b
    if a is None or a.shift == np.inf:
        return _Scaled(b.v, b.shift + w)
    s = min(a.shift, b.shift + w)
    return _Scaled(a.v * np.exp(s - a.shift) + b.v * np.exp(s - b.shift - w), s)


class _Labelled:
    """W's arcs grouped by label, probability-space weights."""

    def __init__(self, t: ArcTable):
        order = np.argsort(t.ilabel, kind="stable")
        lab = t.ilabel[order]
        self.labels, starts = np.unique(lab, return_index=True)
        ends = np.append(starts[1:], len(lab))
        self.n = t.num_states
        self.groups = {int(a): (t.src[order[s:e]], t.dst[order[s:e]],
                                np.exp(-t.weight[order[s:e]]))
                       for a, s, e in zip(self.labels, starts, ends)}

    def step(self, x: _Scaled, a: int, backward: bool) -> _Scaled:
        """x A_a (forwards) or A_a x (backwards)."""
        g = self.groups.get(a)
        if g is None or x.shift == np.inf:
            return _Scaled(np.zeros(self.n))
        src, dst, p = g
        into, frm = (src, dst) if backward else (dst, src)
        return _Scaled(np.bincount(into, weights=x.v[frm] * p, minlength=self.n), x.shift)


def _through(w: _Labelled, x: _Scaled, lst: ArcTable, levels: np.ndarray,
             backward: bool) -> _Scaled:
    """Σ over the strings of the acyclic acceptor ``lst`` (weights included; ``levels``
    its topological levels) of x carried through W reading them: forwards
    (x A_{s_1} ⋯ A_{s_n}) or backwards (A_{s_1} ⋯ A_{s_n} x)."""
    at: list = [None] * lst.num_states
    total: Optional[_Scaled] = None
    order = np.argsort(levels[lst.src], kind="stable")
    if backward:
        for q in np.flatnonzero(np.isfinite(lst.final)):
            at[q] = _add(None, x, float(lst.final[q]))
        for k in order[::-1]:
            d = at[lst.dst[k]]
            if d is not None:
                at[lst.src[k]] = _add(at[lst.src[k]], w.step(d, int(lst.ilabel[k]), True),
                                      float(lst.weight[k]))
        return at[lst.start] if at[lst.start] is not None else _Scaled(np.zeros(w.n))
    at[lst.start] = x
    for k in order:
        s = at[lst.src[k]]
        if s is not None:
            at[lst.dst[k]] = _add(at[lst.dst[k]], w.step(s, int(lst.ilabel[k]), False),
                                  float(lst.weight[k]))
    for q in np.flatnonzero(np.isfinite(lst.final)):
        if at[q] is not None:
            total = _add(total, at[q], float(lst.final[q]))
    return total if total is not None else _Scaled(np.zeros(w.n))


def _usable(t: ArcTable) -> bool:
    return bool(np.all(t.ilabel == t.olabel) and np.all(t.ilabel > 0)
                and np.all(t.weight < _MAX_WEIGHT) and np.all(t.weight > -_MAX_WEIGHT))


def quotient(whole: pynini.Fst, before: Sequence[pynini.Fst], after: Sequence[pynini.Fst],
             num_labels: int, what: str = "quotient", by_product: bool = False
             ) -> Optional[pynini.Fst]:
    """The two-sided quotient (module docstring) as a trimmed, ε-free, ilabel-sorted log64
    acceptor, or ``None`` when this route does not apply: a context that is not an ε-free
    acceptor, ``whole`` with ε arcs, or weights beyond float64's range for exp(−w); for
    the list route also a cyclic list, for the product route (``by_product``) a product
    beyond its size bound or whose path sums cannot be certified finite. The caller then
    composes instead."""
    tables = [arc_table(f) for f in (*before, *after)]  # the contexts first: cheap to refuse
    if any(t.start < 0 for t in tables) or not all(_usable(t) for t in tables):
        return None
    levels = [None if by_product else topological_levels(t) for t in tables]
    if not by_product and any(lv is None for lv in levels):
        return None
    tw = arc_table(whole)
    if tw.start < 0 or not _usable(tw):
        return None
    if np.any(np.abs(tw.final[np.isfinite(tw.final)]) >= _MAX_WEIGHT):
        return None
    if by_product:
        ends = ends_by_product(tw, tables[: len(before)], tables[len(before):], what)
        return None if ends is None else _assemble(tw, *map(_Scaled, ends), num_labels, what)
    w = _Labelled(tw)
    alpha = _Scaled(np.eye(1, tw.num_states, tw.start).ravel())
    for t, lv in zip(tables[: len(before)], levels):
        alpha = _through(w, alpha, t, lv, backward=False)
    beta = _Scaled(np.where(np.isfinite(tw.final), np.exp(-np.where(
        np.isfinite(tw.final), tw.final, 0.0)), 0.0))
    for t, lv in zip(tables[len(before):][::-1], levels[len(before):][::-1]):
        beta = _through(w, beta, t, lv, backward=True)
    return _assemble(tw, alpha, beta, num_labels, what)


def _assemble(tw: ArcTable, alpha: _Scaled, beta: _Scaled, num_labels: int, what: str
              ) -> pynini.Fst:
    """W's arcs over 1 … num_labels, final weights β, a new start state n with the arcs of
    every q weighted α_q; trimmed and sorted by label."""
    n = tw.num_states
    if alpha.shift == np.inf or beta.shift == np.inf:
        return from_arc_table(0, -1, [], [], [], [], [], [])
    keep = tw.ilabel <= num_labels
    src, dst, lab, wt = tw.src[keep], tw.dst[keep], tw.ilabel[keep], tw.weight[keep]
    with np.errstate(divide="ignore"):
        la = -np.log(alpha.v) + alpha.shift
        lb = -np.log(beta.v) + beta.shift
    first = np.isfinite(la[src])  # arcs of the states the new start copies
    g = arcs_to_csr(src, dst, np.ones(len(src)), n)
    live = reachable(g, np.unique(dst[first])) & \
        reachable(g.T.tocsr(), np.flatnonzero(np.isfinite(lb)))
    inner = live[src] & live[dst]
    outer = first & live[dst]
    new_src = np.concatenate([src[inner], np.full(int(outer.sum()), n)])
    new_dst = np.concatenate([dst[inner], dst[outer]])
    new_lab = np.concatenate([lab[inner], lab[outer]])
    new_wt = np.concatenate([wt[inner], wt[outer] + la[src[outer]]])
    fin = np.append(np.where(live, lb, np.inf), _dot(alpha, beta))
    # renumber the live states (the new start last) and sort each state's arcs by label
    ids = np.full(n + 1, -1, dtype=np.int64)
    alive = np.append(live, True)
    ids[alive] = np.arange(int(alive.sum()))
    order = np.lexsort((new_lab, ids[new_src]))
    guard.require(what, int(alive.sum()), len(order))
    return from_arc_table(int(alive.sum()), int(ids[n]), ids[new_src[order]],
                          ids[new_dst[order]], new_lab[order], new_lab[order],
                          new_wt[order], fin[alive], remember=True)


def _dot(alpha: _Scaled, beta: _Scaled) -> float:
    s = float(alpha.v @ beta.v)
    return -np.log(s) + alpha.shift + beta.shift if s > 0 else np.inf
