"""The size of a composition counted by a dry run, for the memory guard's second opinion.

The guard bounds A ∘ B from the operands' sizes (:mod:`fst_factors.wfsa.guard`). That bound
is loose when one operand is small and the other large: a held-out word's message
under an EM-trained English phonology (an acyclic 301-state UR message composed with a
1,981-state transducer of 445k arcs) was bounded at 596k states and 190M arcs, and
refused. When the bound does not fit, the guard asks this module instead, which walks
the pairs a composition could reach without building anything:

    from (start_A, start_B); an arc q –x:y→ q' of A with y ≠ 0 and an arc t –y:z→ t' of B
    give (q, t) → (q', t'); an output-ε arc of A gives (q, t) → (q', t); an input-ε arc
    of B gives (q, t) → (q, t'); when both exist, the two together give (q, t) → (q', t').

Every path of A ∘ B, under any of OpenFst's composition filters, is a path of this graph,
and a state of A ∘ B is a pair (q, t) with a filter state, of which there are at most
k = 3 when both operands have ε there (1 otherwise), each with at most the pair's arcs.
So |Q| ≤ k·P and |E| ≤ k·M for the P pairs and M arcs counted: a sound bound, and exact
up to the filter and trimming. One compiled breadth-first search over a dense pair index
(O(|Q_A|·|Q_B|) bytes, at most :data:`MAX_PAIRS` cells) and B's arcs looked up by binary
search in each state's label-sorted run; it stops counting once ``max_arcs`` is passed.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from fst_factors.wfsa.compiled import njit
from fst_factors.wfsa.core import ArcTable

#: Largest |Q_A|·|Q_B| for the dense pair index of the dry run (8 bytes per cell).
MAX_PAIRS = 8_000_000


@njit(cache=True)
def _visit(seen, queue, count, key):  # pragma: no cover - compiled
    """Queue ``key`` unless seen (the queue doubles when full); (queue, count)."""
    if not seen[key]:
        seen[key] = True
        if count == queue.shape[0]:
            grown = np.empty(2 * count, np.int64)
            grown[:count] = queue
            queue = grown
        queue[count] = key
        count += 1
    return queue, count


@njit(cache=True)
def _count(a_ptr, a_dst, a_out, b_ptr, b_dst, b_in, nb, start_a, start_b, both_eps,
           max_arcs):  # pragma: no cover - compiled
    """(pairs, arcs) reached (module docstring); arcs > max_arcs when stopped early."""
    seen = np.zeros((a_ptr.shape[0] - 1) * nb, np.bool_)
    queue = np.empty(64, np.int64)
    seen[start_a * nb + start_b] = True
    queue[0] = start_a * nb + start_b
    count, head, arcs = 1, 0, 0
    while head < count and arcs <= max_arcs:
        key = queue[head]
        head += 1
        q, t = key // nb, key % nb
        b_lo, b_hi = b_ptr[t], b_ptr[t + 1]
        b_eps_end = b_lo + np.searchsorted(b_in[b_lo:b_hi], 1)  # B's input-ε arcs first
        for e in range(a_ptr[q], a_ptr[q + 1]):
            y = a_out[e]
            if y == 0:
                lo, hi = b_lo, b_eps_end if both_eps else b_lo
                targets = 1 + (hi - lo)  # A alone, then A with each ε of B
            else:
                lo = b_lo + np.searchsorted(b_in[b_lo:b_hi], y)
                hi = b_lo + np.searchsorted(b_in[b_lo:b_hi], y + 1)
                targets = hi - lo
            for j in range(targets):
                if y == 0 and j == 0:
                    nxt = a_dst[e] * nb + t
                else:
                    nxt = a_dst[e] * nb + b_dst[lo + j - (1 if y == 0 else 0)]
                arcs += 1
                queue, count = _visit(seen, queue, count, nxt)
        for f in range(b_lo, b_eps_end):  # B alone on its input-ε arcs
            arcs += 1
            queue, count = _visit(seen, queue, count, q * nb + b_dst[f])
    return count, arcs


def _runs(t: ArcTable, labels: np.ndarray):
    order = np.lexsort((labels, t.src))
    ptr = np.zeros(t.num_states + 1, dtype=np.int64)
    np.cumsum(np.bincount(t.src, minlength=t.num_states), out=ptr[1:])
    return ptr, np.ascontiguousarray(t.dst[order]), np.ascontiguousarray(labels[order])


def reachable_size(a: ArcTable, b: ArcTable, max_arcs: int) -> Optional[tuple[int, int]]:
    """Sound bounds (states, arcs) of A ∘ B by the dry run (module docstring), or None
    when the pair index would exceed :data:`MAX_PAIRS` or more than ``max_arcs`` arcs
    were counted (the caller keeps its own bound)."""
    if a.start < 0 or b.start < 0:
        return 0, 0
    if a.num_states * b.num_states > MAX_PAIRS:
        return None
    a_eps = bool(np.any(a.olabel == 0))
    b_eps = bool(np.any(b.ilabel == 0))
    a_ptr, a_dst, a_out = _runs(a, a.olabel)
    b_ptr, b_dst, b_in = _runs(b, b.ilabel)
    pairs, arcs = _count(a_ptr, a_dst, a_out, b_ptr, b_dst, b_in, b.num_states,
                         a.start, b.start, a_eps and b_eps, max_arcs)
    if arcs > max_arcs:
        return None
    k = 3 if a_eps and b_eps else 1
    return k * pairs, k * arcs
