"""Low-level helpers for log64 automata: weights, arc tables, sorting, composition.

Every automaton in strgm is a ``pynini.Fst`` whose arc type is ``log64``: an arc weight
``w`` stands for the non-negative real ``exp(-w)``; ``+inf`` is the semiring zero and
``0`` the semiring one. Label 0 is epsilon.

``arc_table`` turns an automaton into numpy arrays so that forward-backward, expected
counts and matrix tests run vectorised. It parses OpenFst's binary serialisation: exact weights (the text printer rounds to
six digits) and no per-arc Python work.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pynini

from fst_factors.wfsa import acyclic
from fst_factors.wfsa.compiled import COMPILED
from fst_factors.wfsa.known_tables import KNOWN
from fst_factors.wfsa.serialised import read_arcs
from fst_factors.wfsa.interrupts import native

ARC_TYPE = "log64"
ZERO = float("inf")  # -log 0
ONE = 0.0  # -log 1


def weight(x: float) -> pynini.Weight:
    """A log64 weight holding ``x`` = -log(value). Never pass plain floats to ``pynini.Arc``."""
    return pynini.Weight(ARC_TYPE, float(x))


def new_fst() -> pynini.Fst:
    """An empty mutable log64 FST (no states)."""
    return pynini.Fst(arc_type=ARC_TYPE)


def as_log(fst: pynini.Fst) -> pynini.Fst:
    """``fst`` if it is already log64, else a log64 copy (weights converted as -log reals)."""
    if fst.arc_type() == ARC_TYPE:
        return fst
    if fst.weight_type() in ("tropical", "log"):
        return pynini.arcmap(pynini.arcmap(fst, map_type="to_log64"), map_type="identity")
    raise TypeError(f"cannot convert arc type {fst.arc_type()!r} to {ARC_TYPE}")


def is_acyclic(fst: pynini.Fst) -> bool:
    """True when the automaton has no cycle (computed, not trusted from cached bits)."""
    return fst.properties(pynini.ACYCLIC, True) == pynini.ACYCLIC


def num_arcs(fst: pynini.Fst) -> int:
    known = KNOWN.get(fst)
    if known is not None:
        return known.num_arcs
    return sum(fst.num_arcs(s) for s in fst.states())


@dataclass(frozen=True)
class ArcTable:
    """The arcs and final weights of an automaton as numpy arrays.

    ``src, dst, ilabel, olabel`` are int64 and ``weight`` float64 (-log values), one entry
    per arc in OpenFst's state/arc order. ``final[s]`` is the final weight of state s
    (``inf`` when not final). ``start`` is the start state (-1 for an empty machine).
    """

    num_states: int
    start: int
    src: np.ndarray
    dst: np.ndarray
    ilabel: np.ndarray
    olabel: np.ndarray
    weight: np.ndarray
    final: np.ndarray

    @property
    def num_arcs(self) -> int:
        return int(self.src.shape[0])


_ARC_DTYPE = np.dtype([("ilabel", "<i4"), ("olabel", "<i4"), ("weight", "<f8"),
                       ("nextstate", "<i4")])


def arc_table(fst: pynini.Fst) -> ArcTable:
    """Vectorised view of ``fst`` (see :class:`ArcTable`), with exact double weights.

    Parses OpenFst's binary VectorFst serialisation (per state: final weight f64, arc
    count i64, then arcs as i32 ilabel, i32 olabel, f64 weight, i32 nextstate) by one
    compiled walk (:func:`fst_factors.wfsa.serialised.read_arcs`), or by
    :func:`arc_table_reference` where the walk declines. O(|E| + |Q|). An automaton that
    :func:`from_arc_table` built with ``remember=True`` gets the arrays it was built from
    (:mod:`fst_factors.wfsa.known_tables`; read-only), in O(1).
    """
    known = KNOWN.get(fst)
    if known is not None:
        return known
    n = fst.num_states()
    start = fst.start()
    if n == 0:
        e = np.empty(0, dtype=np.int64)
        return ArcTable(0, -1, e, e, e, e, np.empty(0), np.empty(0))
    if fst.arc_type() != ARC_TYPE:
        raise TypeError(f"arc_table needs a {ARC_TYPE} automaton, got {fst.arc_type()}")
    read = read_arcs(fst.write_to_string(), n)
    if read is None:
        return arc_table_reference(fst)
    final, src, dst, ilabel, olabel, weight = read
    return ArcTable(n, start, src, dst, ilabel, olabel, weight, final)


def arc_table_reference(fst: pynini.Fst) -> ArcTable:
    """:func:`arc_table` by numpy indexing: the route the compiled walk of
    :func:`fst_factors.wfsa.serialised.read_arcs` is tested against, and its fallback."""
    n = fst.num_states()
    start = fst.start()
    na = fst.num_arcs
    counts = np.fromiter((na(s) for s in range(n)), dtype=np.int64, count=n)
    m = int(counts.sum())
    blob = fst.write_to_string()
    step = _ARC_DTYPE.itemsize
    sizes = 16 + step * counts
    header = len(blob) - int(sizes.sum())
    state_pos = header + np.concatenate([[0], np.cumsum(sizes)[:-1]])
    raw = np.frombuffer(blob, dtype=np.uint8)
    head = state_pos[:, None] + np.arange(16)  # per state: final weight, arc count
    final = raw[head[:, :8]].copy().view("<f8").reshape(n)
    # dropping the file header and the 16-byte state headers leaves the arc records
    # back to back: one boolean mask, one copy, one view
    arc_bytes = np.ones(len(raw), dtype=bool)
    arc_bytes[:header] = False
    arc_bytes[head.reshape(-1)] = False
    recs = raw[arc_bytes].view(_ARC_DTYPE).reshape(m)
    src = np.repeat(np.arange(n, dtype=np.int64), counts)
    return ArcTable(n, start, src, recs["nextstate"].astype(np.int64),
                    recs["ilabel"].astype(np.int64), recs["olabel"].astype(np.int64),
                    recs["weight"].astype(np.float64), final.astype(np.float64))


def topological_levels(t: ArcTable) -> Optional[np.ndarray]:
    """Longest-path depth of every state from any source, or None if there is a cycle
    (:func:`fst_factors.wfsa.acyclic.depths`, O(|Q| + |E|); without numba the reference
    :func:`topological_levels_reference`)."""
    if not COMPILED:
        return topological_levels_reference(t)
    depth, ok = acyclic.depths(t.num_states, acyclic.as_int64(t.src),
                               acyclic.as_int64(t.dst))
    return depth if ok else None


def topological_levels_reference(t: ArcTable) -> Optional[np.ndarray]:
    """:func:`topological_levels` by relaxation, depth[dst] = max(depth[src] + 1)
    repeated until stable: at most (longest path + 1) vectorised passes over the arcs."""
    depth = np.zeros(t.num_states, dtype=np.int64)
    for _ in range(t.num_states + 1):
        new = depth.copy()
        if t.num_arcs:
            np.maximum.at(new, t.dst, depth[t.src] + 1)
        if np.array_equal(new, depth):
            return depth
        depth = new
    return None


def acyclic_distances(t: ArcTable, reverse: bool = False,
                      levels: Optional[np.ndarray] = None) -> np.ndarray:
    """Log-semiring shortest distances (-log α, or -log β with ``reverse``) of an acyclic
    automaton, by one pass over the arcs grouped by topological level
    (:func:`fst_factors.wfsa.acyclic.distances`: the additions of
    :func:`acyclic_distances_reference`, in its order)."""
    if not COMPILED:
        return acyclic_distances_reference(t, reverse, levels)
    if levels is None:
        levels = topological_levels(t)
        if levels is None:
            raise ValueError("acyclic_distances needs an acyclic automaton")
    return acyclic.distances(t.num_states, int(t.start), acyclic.as_int64(t.src),
                             acyclic.as_int64(t.dst), acyclic.as_float64(t.weight),
                             acyclic.as_float64(t.final), acyclic.as_int64(levels),
                             bool(reverse))


def acyclic_distances_reference(t: ArcTable, reverse: bool = False,
                                levels: Optional[np.ndarray] = None) -> np.ndarray:
    """:func:`acyclic_distances` by one vectorised log-sum-exp pass per topological
    level. Exact in float64."""
    if levels is None:
        levels = topological_levels(t)
        if levels is None:
            raise ValueError("acyclic_distances needs an acyclic automaton")
    n = t.num_states
    d = np.full(n, ZERO)
    if n == 0:
        return d
    if reverse:
        d = t.final.copy()
        by_level = levels[t.src]
        order = range(int(levels.max()), -1, -1)
        for lev in order:
            sel = by_level == lev
            if not sel.any():
                continue
            cand = -(t.weight[sel] + d[t.dst[sel]])
            acc = -d.copy()
            np.logaddexp.at(acc, t.src[sel], cand)
            d = -acc
        return d
    d[t.start] = ONE
    by_level = levels[t.src]
    for lev in range(int(levels.max()) + 1):
        sel = by_level == lev
        if not sel.any():
            continue
        cand = -(d[t.src[sel]] + t.weight[sel])
        acc = -d.copy()
        np.logaddexp.at(acc, t.dst[sel], cand)
        d = -acc
    return d


def weights_to_array(weights) -> np.ndarray:
    """Exact float64 values of a sequence of log64 ``pynini.Weight`` objects.

    ``float(Weight)`` goes through a 9-significant-digit string, which loses ~1e-6 at
    log-weights near 1000; here the weights are stored as final weights of a scratch FST
    and read back from its binary form."""
    n = len(weights)
    if n == 0:
        return np.empty(0)
    f = new_fst()
    f.add_states(n)
    for s, w in enumerate(weights):
        f.set_final(s, w)
    return arc_table(f).final


def shortest_distance(fst: pynini.Fst, reverse: bool = False, delta: float = 1e-10
                      ) -> np.ndarray:
    """Exact-precision log-semiring shortest distances (-log α or -log β) per state,
    ``inf`` for states that cannot reach / be reached. Never call on a divergent machine
    (see :func:`fst_factors.wfsa.measure.check_normalisable`)."""
    if is_acyclic(fst):
        return acyclic_distances(arc_table(fst), reverse=reverse)
    with native():
        d = weights_to_array(pynini.shortestdistance(fst, delta=delta, reverse=reverse))
    out = np.full(fst.num_states(), ZERO)
    out[: len(d)] = d
    return out


_HEADER_MAGIC = 2125659606
_STATE_DTYPE = np.dtype([("final", "<f8"), ("narcs", "<i8")])
# kExpanded | kMutable: nothing else is asserted, OpenFst recomputes properties on demand.
_PROPS = 0x3


def from_arc_table(num_states: int, start: int, src, dst, ilabel, olabel, weights,
                   final, remember: bool = False) -> pynini.Fst:
    """A log64 VectorFst from numpy arrays (inverse of :func:`arc_table`), through
    OpenFst's binary format: no per-arc Python.

    Weights are −log values; ``final`` has one entry per state (``inf`` = not final);
    arcs may come in any order (they are grouped by source, stably). O(|Q| + |E|) numpy
    work plus one deserialisation. With ``remember``, the next :func:`arc_table` of the
    result returns these arrays (in that grouped order) without reading the automaton
    (:mod:`fst_factors.wfsa.known_tables`): for automata that are read right after being built.
    """
    src = np.asarray(src, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    m = src.shape[0]
    sorted_arcs = (np.asarray(ilabel, dtype=np.int64)[order],
                   np.asarray(olabel, dtype=np.int64)[order],
                   np.asarray(weights, dtype=np.float64)[order],
                   np.asarray(dst, dtype=np.int64)[order])
    arcs = np.empty(m, dtype=_ARC_DTYPE)
    arcs["ilabel"], arcs["olabel"], arcs["weight"], arcs["nextstate"] = sorted_arcs
    counts = np.bincount(src, minlength=num_states).astype(np.int64)
    states = np.empty(num_states, dtype=_STATE_DTYPE)
    states["final"] = np.asarray(final, dtype=np.float64)
    states["narcs"] = counts
    # Both record sizes are multiples of 4 bytes: lay the body out in int32 words, mark
    # the state headers' words, and fill the two kinds of word with one masked copy each.
    hw, aw = _STATE_DTYPE.itemsize // 4, _ARC_DTYPE.itemsize // 4
    before = np.cumsum(counts) - counts
    head_at = hw * np.arange(num_states, dtype=np.int64) + aw * before
    is_head = np.zeros(hw * num_states + aw * m, dtype=bool)
    is_head[(head_at[:, None] + np.arange(hw)).reshape(-1)] = True
    body = np.empty(is_head.shape[0], dtype="<i4")
    body[is_head] = states.view("<i4")
    body[~is_head] = arcs.view("<i4")
    head = struct.pack("<i", _HEADER_MAGIC)
    for name in (b"vector", ARC_TYPE.encode()):
        head += struct.pack("<i", len(name)) + name
    head += struct.pack("<iiQqqq", 2, 0, _PROPS, start if num_states else -1, num_states, m)
    fst = pynini.Fst.read_from_string(head + body.tobytes())
    if remember and num_states:
        KNOWN.remember(fst, ArcTable(num_states, int(start), src[order], sorted_arcs[3],
                                     sorted_arcs[0], sorted_arcs[1], sorted_arcs[2],
                                     np.array(final, dtype=np.float64)))
    return fst


def project(fst: pynini.Fst, tape: str) -> pynini.Fst:
    """Acceptor on the ``"input"`` or ``"output"`` tape of ``fst`` (a new object)."""
    return pynini.project(fst.copy(), tape)
