"""The product of an acceptor C with ε-free W from chosen seed pairs, built into arrays.

For the quotient of W by cyclic context acceptors (:mod:`strgm.wfsa.quotient`) the
path sums that matter are those of the product automaton P = C × W:

    states: the pairs (c, w) reachable from the seeds;
    an arc c –a/u→ c' of C (a ≥ 1) and an arc w –a/v→ w' of W give (c, w) –/u+v→ (c', w');
    an ε-arc c –ε/u→ c' of C gives (c, w) –/u→ (c', w).

Unlike a composition, the search may start from many seeds at once (every (c₀, w) for
the backward sums β_w of a context read after the part). One breadth-first search in a
compiled loop numbers the pairs (seeds first, in the given order) and lists the arcs by
source pair. W's arcs are looked up per state and label by binary search in the state's
label-sorted run: O(|P| + |E_P| + Σ log deg) time, O(|C|·|W|) for the pair index, which
:data:`MAX_PAIRS` bounds before any allocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from strgm.wfsa import guard
from strgm.wfsa.compiled import njit
from strgm.wfsa.core import ArcTable

#: Largest |C|·|W| for the dense pair index (8 bytes per cell: 64 MB); beyond it
#: :func:`pair_product` returns None and the caller composes.
MAX_PAIRS = 8_000_000


@dataclass(frozen=True)
class PairProduct:
    """P's arcs (``src``, ``dst``, ``weight`` as −log, by source pair) and the (c, w) of
    each of its ``num_states`` pairs; pair k < len(seeds) is seed k."""

    num_states: int
    c: np.ndarray
    w: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray


@njit(cache=True)
def _grown(a, size):  # pragma: no cover - compiled
    out = np.empty(max(2 * a.shape[0], size), a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True)
def _search(c_ptr, c_dst, c_lab, c_wt, w_ptr, w_dst, w_lab, w_wt, nw, seed_c, seed_w
            ):  # pragma: no cover - compiled
    """Breadth-first numbering of the pairs and their arcs (module docstring)."""
    index = np.full((c_ptr.shape[0] - 1) * nw, -1, np.int64)
    pc = np.empty(max(16, 2 * seed_c.shape[0]), np.int64)
    pw = np.empty(pc.shape[0], np.int64)
    count = 0
    for k in range(seed_c.shape[0]):
        index[seed_c[k] * nw + seed_w[k]] = count
        pc[count] = seed_c[k]
        pw[count] = seed_w[k]
        count += 1
    src = np.empty(64, np.int64)
    dst = np.empty(64, np.int64)
    wt = np.empty(64, np.float64)
    m = 0
    head = 0
    while head < count:
        c = pc[head]
        w = pw[head]
        for e in range(c_ptr[c], c_ptr[c + 1]):
            a = c_lab[e]
            if a == 0:
                lo, hi = 0, 1  # an ε-arc of C: W stays
            else:
                lo = w_ptr[w] + np.searchsorted(w_lab[w_ptr[w]: w_ptr[w + 1]], a)
                hi = w_ptr[w] + np.searchsorted(w_lab[w_ptr[w]: w_ptr[w + 1]], a + 1)
            for f in range(lo, hi):
                w2 = w if a == 0 else w_dst[f]
                key = c_dst[e] * nw + w2
                if index[key] < 0:
                    if count == pc.shape[0]:
                        pc = _grown(pc, count + 1)
                        pw = _grown(pw, count + 1)
                    index[key] = count
                    pc[count] = c_dst[e]
                    pw[count] = w2
                    count += 1
                if m == src.shape[0]:
                    src = _grown(src, m + 1)
                    dst = _grown(dst, m + 1)
                    wt = _grown(wt, m + 1)
                src[m] = head
                dst[m] = index[key]
                wt[m] = c_wt[e] + (0.0 if a == 0 else w_wt[f])
                m += 1
        head += 1
    return pc[:count], pw[:count], src[:m], dst[:m], wt[:m]


def by_source(t: ArcTable, sort_labels: bool):
    """Row pointer and arcs ordered by source (and label within a source)."""
    order = np.lexsort((t.ilabel, t.src)) if sort_labels else np.argsort(t.src, kind="stable")
    ptr = np.zeros(t.num_states + 1, dtype=np.int64)
    np.cumsum(np.bincount(t.src, minlength=t.num_states), out=ptr[1:])
    return (ptr, np.ascontiguousarray(t.dst[order]), np.ascontiguousarray(t.ilabel[order]),
            np.ascontiguousarray(t.weight[order], dtype=np.float64))


def arc_bound(c: ArcTable, w: ArcTable) -> int:
    """At most Σ_a |E_C(a)|·|E_W(a)| + |E_C(ε)|·|Q_W| arcs: each arc of P pairs one arc of
    C with one of W (or an ε-arc of C with a state of W)."""
    top = int(max(c.ilabel.max(initial=0), w.ilabel.max(initial=0))) + 1
    cc = np.bincount(c.ilabel, minlength=top).astype(float)
    cw = np.bincount(w.ilabel, minlength=top).astype(float)
    return int(cc[1:] @ cw[1:] + cc[0] * w.num_states)


def pair_product(c: ArcTable, w: ArcTable, seed_c: np.ndarray, seed_w: np.ndarray,
                 w_runs: Optional[tuple] = None) -> Optional[PairProduct]:
    """P = C × W from the distinct seed pairs (module docstring); None when the pair
    index would exceed :data:`MAX_PAIRS` or the size guard (:mod:`strgm.wfsa.guard`)
    predicts that |C|·|W| states and :func:`arc_bound` arcs would not fit in memory (the
    caller's composition then decides, under the same guard). C may have ε-arcs
    (label 0), W must not. ``w_runs``: ``by_source(w, True)``, when the caller builds
    several products with the same W."""
    if c.num_states * w.num_states > MAX_PAIRS or not guard.fits(
            c.num_states * w.num_states, arc_bound(c, w)):
        return None
    pc, pw, src, dst, wt = _search(*by_source(c, False),
                                   *(by_source(w, True) if w_runs is None else w_runs),
                                   w.num_states, np.asarray(seed_c, dtype=np.int64),
                                   np.asarray(seed_w, dtype=np.int64))
    return PairProduct(len(pc), pc, pw, src, dst, wt)
