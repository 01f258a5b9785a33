"""Compiled passes over an acyclic automaton's arc table: topological depths, and the
forward and backward log-semiring distances by depth.

Depth. depth(q) is the length of the longest path from any state without incoming arcs
to q: Kahn's algorithm visits each state once all its predecessors have been, and sets
depth(q) = max over arcs p → q of depth(p) + 1 (0 for a source). A cycle leaves states
unvisited, and the answer is then "none". O(|Q| + |E|).

Distances (−log α, or −log β with ``reverse``), with arcs grouped by the depth of their
source: in log space a = −d,

    forward    a(start) = 0;     a(q') ← log(e^{a(q')} + e^{a(q) − w})   for arcs q → q'
    backward   a(q) = −ρ(q);     a(q) ← log(e^{a(q)} + e^{a(q') − w})

the forward pass taking depths 0, 1, … and the backward pass the reverse order, arcs of
one depth in index order. Every arc out of a state of depth k has its head deeper, so
a source's (forward) or head's (backward) value is final when its arcs are read. The
order of the additions, and the log-add itself (numpy's ``logaddexp``: x + log1p(e^{y−x})
with the larger argument first, x + log 2 for equal ones), are those of the vectorised
reference in :mod:`fst_factors.wfsa.core`, so the two agree to the last bit. O(|Q| + |E|).
"""

from __future__ import annotations

import math

import numpy as np

from fst_factors.wfsa.compiled import njit

_LOG2 = 0.693147180559945309417232121458176568


@njit(cache=True, inline="always")
def _logaddexp(x, y):  # pragma: no cover - compiled
    """numpy's ``logaddexp`` for float64 (npymath's npy_logaddexp)."""
    if x == y:
        return x + _LOG2
    tmp = x - y
    if tmp > 0:
        return x + math.log1p(math.exp(-tmp))
    if tmp <= 0:
        return y + math.log1p(math.exp(tmp))
    return tmp


@njit(cache=True)
def depths(num_states, src, dst):  # pragma: no cover - compiled
    """(depth of every state, True) — or (zeros, False) when there is a cycle."""
    m = src.shape[0]
    indeg = np.zeros(num_states, np.int64)
    out_count = np.zeros(num_states + 1, np.int64)
    for k in range(m):
        indeg[dst[k]] += 1
        out_count[src[k] + 1] += 1
    for q in range(num_states):
        out_count[q + 1] += out_count[q]
    out_arcs = np.empty(m, np.int64)
    fill = out_count[:num_states].copy()
    for k in range(m):
        out_arcs[fill[src[k]]] = k
        fill[src[k]] += 1
    depth = np.zeros(num_states, np.int64)
    queue = np.empty(num_states, np.int64)
    head, tail = 0, 0
    for q in range(num_states):
        if indeg[q] == 0:
            queue[tail] = q
            tail += 1
    while head < tail:
        q = queue[head]
        head += 1
        for j in range(out_count[q], out_count[q + 1]):
            r = dst[out_arcs[j]]
            if depth[q] + 1 > depth[r]:
                depth[r] = depth[q] + 1
            indeg[r] -= 1
            if indeg[r] == 0:
                queue[tail] = r
                tail += 1
    if tail < num_states:
        return np.zeros(num_states, np.int64), False
    return depth, True


@njit(cache=True)
def distances(num_states, start, src, dst, weight, final, depth, reverse):
    # pragma: no cover - compiled
    """−log α (or −log β with ``reverse``) by the passes of the module docstring."""
    m = src.shape[0]
    levels = 0
    for q in range(num_states):
        levels = max(levels, depth[q] + 1)
    first = np.zeros(levels + 1, np.int64)
    for k in range(m):
        first[depth[src[k]] + 1] += 1
    for lev in range(levels):
        first[lev + 1] += first[lev]
    order = np.empty(m, np.int64)
    fill = first[:levels].copy()
    for k in range(m):
        lev = depth[src[k]]
        order[fill[lev]] = k
        fill[lev] += 1
    a = np.full(num_states, -np.inf)
    if reverse:
        for q in range(num_states):
            a[q] = -final[q]
    elif num_states > 0:
        a[start] = -0.0
    for i in range(levels):
        lev = levels - 1 - i if reverse else i
        for j in range(first[lev], first[lev + 1]):
            k = order[j]
            if reverse:
                a[src[k]] = _logaddexp(a[src[k]], a[dst[k]] - weight[k])
            else:
                a[dst[k]] = _logaddexp(a[dst[k]], a[src[k]] - weight[k])
    return -a


def as_int64(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.int64)


def as_float64(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)
