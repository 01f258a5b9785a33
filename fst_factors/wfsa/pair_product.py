"""The product of an acceptor C with ε-free W from chosen seed pairs, built into arrays.

For the quotient of W by cyclic context acceptors (:mod:`fst_factors.wfsa.quotient`) the
path sums that matter are those of the product automaton P = C × W:

    states: the pairs (c, w) reachable from the seeds;
    an arc c –a/u→ c' of C (a ≥ 1) and an arc w –a/v→ w' of W give (c, w) –/u+v→ (c', w');
    an ε-arc c –ε/u→ c' of C gives (c, w) –/u→ (c', w).

Unlike a composition, the search may start from many seeds at once (every (c₀, w) for
the backward sums β_w of a context read after the part). One breadth-first search in a
compiled loop numbers the pairs (seeds first, in the given order) and lists the arcs by
source pair. The loop runs over W's arcs (a few per state) and looks up C's arcs with
the same label in a table of C's label-sorted runs (first arc of state c with label
≥ a; C is typically a complete n-gram DFA, N arcs per state, of which few match):
O(|C|·N + |P|·deg_W + |E_P|) time, O(|C|·|W|) for the pair index, which
:data:`MAX_PAIRS` bounds before any allocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from fst_factors.wfsa import guard
from fst_factors.wfsa.compiled import njit
from fst_factors.wfsa.core import ArcTable

#: Largest |C|·|W| for the dense pair index and queue (16 bytes per cell: 128 MB); beyond it
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
def _label_table(c_ptr, c_lab, w_lab):  # pragma: no cover - compiled
    """first[c, a]: the first arc of C's state c with label ≥ a (runs sorted by label)."""
    nc = c_ptr.shape[0] - 1
    top = 1
    for e in range(c_lab.shape[0]):
        top = max(top, c_lab[e] + 1)
    for f in range(w_lab.shape[0]):
        top = max(top, w_lab[f] + 1)
    first = np.empty((nc, top + 1), np.int64)
    for c in range(nc):
        e = c_ptr[c]
        for a in range(top + 1):
            while e < c_ptr[c + 1] and c_lab[e] < a:
                e += 1
            first[c, a] = e
    return first


@njit(cache=True)
def _search(c_ptr, c_dst, c_lab, c_wt, w_ptr, w_dst, w_lab, w_wt, nw, seed_c, seed_w
            ):  # pragma: no cover - compiled
    """Breadth-first numbering of the pairs and their arcs (module docstring), in two
    passes: the first numbers the pairs and counts the arcs, the second writes them into
    arrays of the exact size (arrays grown inside a compiled loop cost ~100 ns per arc).
    For pair (c, w), C's ε-arcs come first, then W's arcs f matched with C's arcs of
    f's label."""
    nc = c_ptr.shape[0] - 1
    first = _label_table(c_ptr, c_lab, w_lab)
    index = np.full(nc * nw, -1, np.int64)
    keys = np.empty(nc * nw, np.int64)  # pair number -> c·|W| + w
    count = 0
    for k in range(seed_c.shape[0]):
        index[seed_c[k] * nw + seed_w[k]] = count
        keys[count] = seed_c[k] * nw + seed_w[k]
        count += 1
    m = 0
    head = 0
    while head < count:
        c = keys[head] // nw
        w = keys[head] - c * nw
        for e in range(c_ptr[c], first[c, 1]):  # ε-arcs of C: W stays
            key = c_dst[e] * nw + w
            if index[key] < 0:
                index[key] = count
                keys[count] = key
                count += 1
            m += 1
        for f in range(w_ptr[w], w_ptr[w + 1]):
            a = w_lab[f]
            for e in range(first[c, a], first[c, a + 1]):
                key = c_dst[e] * nw + w_dst[f]
                if index[key] < 0:
                    index[key] = count
                    keys[count] = key
                    count += 1
                m += 1
        head += 1
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    wt = np.empty(m, np.float64)
    m = 0
    for head in range(count):
        c = keys[head] // nw
        w = keys[head] - c * nw
        for e in range(c_ptr[c], first[c, 1]):
            src[m] = head
            dst[m] = index[c_dst[e] * nw + w]
            wt[m] = c_wt[e]
            m += 1
        for f in range(w_ptr[w], w_ptr[w + 1]):
            a = w_lab[f]
            for e in range(first[c, a], first[c, a + 1]):
                src[m] = head
                dst[m] = index[c_dst[e] * nw + w_dst[f]]
                wt[m] = c_wt[e] + w_wt[f]
                m += 1
    pc = keys[:count] // nw
    return pc, keys[:count] - pc * nw, src, dst, wt


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
    index would exceed :data:`MAX_PAIRS` or the size guard (:mod:`fst_factors.wfsa.guard`)
    predicts that |C|·|W| states and :func:`arc_bound` arcs would not fit in memory (the
    caller's composition then decides, under the same guard). C may have ε-arcs
    (label 0), W must not. ``w_runs``: ``by_source(w, True)``, when the caller builds
    several products with the same W."""
    if c.num_states * w.num_states > MAX_PAIRS or not guard.fits(
            c.num_states * w.num_states, arc_bound(c, w)):
        return None
    pc, pw, src, dst, wt = _search(*by_source(c, True),
                                   *(by_source(w, True) if w_runs is None else w_runs),
                                   w.num_states, np.asarray(seed_c, dtype=np.int64),
                                   np.asarray(seed_w, dtype=np.int64))
    return PairProduct(len(pc), pc, pw, src, dst, wt)
