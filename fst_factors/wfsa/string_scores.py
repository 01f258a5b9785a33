"""Log weights of many strings under an acceptor whose arcs all read a label, by one
compiled walk of the strings' trie.

For an automaton W whose every arc has a non-ε output label, the weight of a string
v = v_1 … v_n is a sum over finitely many paths, however many cycles W has:

    W(v) = Σ_q [e_start · A_{v_1} ⋯ A_{v_n}]_q · ρ_q,

with A_a the matrix of W's a-labelled arcs and ρ its final weights (probability space;
the walk keeps log values and adds by log-sum-exp). The strings are visited in sorted
order, depth first: the vector after a prefix is kept on a stack of levels, so a prefix
shared by several strings is walked once (the strings' trie, never built). Each level
holds only the states the prefix reaches, in one growing buffer.

Cost: Σ over the trie's edges, over the states reached at the parent, of a binary
search among the state's arcs (sorted by label) plus the arcs it matches; a composition
with a marker trie instead builds, connects and serialises the product
(:func:`fst_factors.wfsa.measure.score_strings_by_composition`, the reference this route is
tested against). An arc table of W is needed (:class:`LabelledArcs`): callers that score
one automaton many times keep it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from fst_factors.wfsa.compiled import COMPILED, njit
from fst_factors.wfsa.core import ArcTable


@dataclass(frozen=True)
class LabelledArcs:
    """W's arcs grouped by source state (``indptr``: state q's arcs are
    ``indptr[q]:indptr[q + 1]``, sorted by label), their output labels, next states and
    −log weights, the −log final weights (``inf``: not final) and the start state.
    Compact: 16 bytes per arc."""

    indptr: np.ndarray
    label: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    final: np.ndarray
    start: int


def labelled_arcs(t: ArcTable) -> Optional[LabelledArcs]:
    """The :class:`LabelledArcs` of the arc table ``t``, or None when some arc has an
    ε output label (then the walk does not apply). O(|Q| + |E|)."""
    if t.num_arcs and int(t.olabel.min()) <= 0:
        return None
    src, lab = t.src, t.olabel
    order = None
    if len(src) > 1 and not np.all((src[1:] > src[:-1]) |
                                   ((src[1:] == src[:-1]) & (lab[1:] >= lab[:-1]))):
        order = np.lexsort((lab, src))
    def pick(a, dtype):
        return np.ascontiguousarray(a if order is None else a[order], dtype=dtype)
    indptr = np.zeros(t.num_states + 1, dtype=np.int64)
    if t.num_states:
        np.cumsum(np.bincount(src, minlength=t.num_states), out=indptr[1:])
    return LabelledArcs(indptr, pick(t.olabel, np.int32), pick(t.dst, np.int32),
                        pick(t.weight, np.float64), np.ascontiguousarray(t.final,
                                                                         dtype=np.float64),
                        int(t.start))


@njit(cache=True, inline="always")
def _log_add(a, b):  # pragma: no cover - compiled
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True)
def _grown(buf, need):  # pragma: no cover - compiled
    """``buf`` itself when it holds ``need`` entries, else a copy twice as large."""
    if need <= buf.shape[0]:
        return buf
    out = np.empty(max(need, 2 * buf.shape[0]), buf.dtype)
    out[: buf.shape[0]] = buf
    return out


@njit(cache=True)
def _step(indptr, label, dst, weight, sup, val, slot, lo_j, hi_j, a, base):
    # pragma: no cover - compiled
    """The level after reading ``a`` from the level in ``sup``/``val``[lo_j:hi_j],
    written from ``base`` on: (sup, val — grown if needed —, its number of states)."""
    c = 0
    for j in range(lo_j, hi_j):
        s = sup[j]
        v = val[j]
        lo = indptr[s]
        hi = indptr[s + 1]
        while lo < hi:  # the first of s's arcs with a label ≥ a
            mid = (lo + hi) // 2
            if label[mid] < a:
                lo = mid + 1
            else:
                hi = mid
        for e in range(lo, indptr[s + 1]):
            if label[e] != a:
                break
            x = v - weight[e]
            t = dst[e]
            p = slot[t]
            if p < 0:
                sup = _grown(sup, base + c + 1)
                val = _grown(val, base + c + 1)
                slot[t] = base + c
                sup[base + c] = t
                val[base + c] = x
                c += 1
            else:
                val[p] = _log_add(val[p], x)
    for j in range(base, base + c):
        slot[sup[j]] = -1
    return sup, val, c


@njit(cache=True)
def _walk(indptr, label, dst, weight, final, start, strings, lengths):
    # pragma: no cover - compiled
    """log W(v) of every row v of ``strings`` (first ``lengths[i]`` entries of row i;
    rows in sorted order make the shared prefixes consecutive); −inf when rejected."""
    n = final.shape[0]
    k, width = strings.shape
    out = np.full(k, -np.inf)
    off = np.zeros(width + 2, np.int64)  # level d occupies [off[d], off[d + 1])
    sup = np.empty(4 * n + 64, np.int64)
    val = np.empty(4 * n + 64, np.float64)
    slot = np.full(n, -1, np.int64)
    sup[0] = start
    val[0] = 0.0
    off[1] = 1
    done = 0  # levels 0..done are those of the previous string
    for i in range(k):
        m = lengths[i]
        d = 0
        if i > 0:
            top = min(m, lengths[i - 1], done)
            while d < top and strings[i, d] == strings[i - 1, d]:
                d += 1
        for lv in range(d, m):
            sup, val, c = _step(indptr, label, dst, weight, sup, val, slot, off[lv],
                                off[lv + 1], strings[i, lv], off[lv + 1])
            off[lv + 2] = off[lv + 1] + c
        done = m
        total = -np.inf
        for j in range(off[m], off[m + 1]):
            rho = final[sup[j]]
            if rho < np.inf:
                total = _log_add(total, val[j] - rho)
        out[i] = total
    return out


def scores_by_walk(arcs: LabelledArcs, strings: Sequence[Sequence[int]]) -> np.ndarray:
    """log W(v) for each of ``strings`` (module docstring); ``-inf`` for rejected ones.
    Without numba it still runs (as Python), correct and slow: callers check
    :data:`fst_factors.wfsa.compiled.COMPILED` first."""
    strings = [tuple(s) for s in strings]
    out = np.full(len(strings), -np.inf)
    if not strings or arcs.start < 0 or arcs.final.shape[0] == 0:
        return out
    uniq = sorted(set(strings))
    width = max(1, max(len(s) for s in uniq))
    mat = np.zeros((len(uniq), width), dtype=np.int64)
    for r, s in enumerate(uniq):
        mat[r, : len(s)] = s
    lengths = np.array([len(s) for s in uniq], dtype=np.int64)
    got = _walk(arcs.indptr, arcs.label, arcs.dst, arcs.weight, arcs.final, arcs.start,
                mat, lengths)
    pos = {s: r for r, s in enumerate(uniq)}
    return got[[pos[s] for s in strings]]


__all__ = ["COMPILED", "LabelledArcs", "labelled_arcs", "scores_by_walk"]
