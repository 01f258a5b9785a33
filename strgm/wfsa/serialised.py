"""An automaton's arcs read from OpenFst's binary serialisation by one compiled walk.

``pynini.Fst.write_to_string`` gives a VectorFst as: a header (magic, the FST and arc type
names as length-prefixed strings, version, flags, properties, start, number of states,
number of arcs — the last written as 0 by a string stream), then per state its final
weight (f64), its arc count (i64) and its arcs, each ilabel (i32), olabel (i32), weight
(f64), nextstate (i32), packed in 20 bytes.

:func:`read_arcs` walks that body twice in a compiled loop: once over the states' headers
to count the arcs and check that the records end exactly at the end of the string, once
to decode them into arrays. O(|Q| + |E|), with no per-state Python call (the numpy
route of :func:`strgm.wfsa.core.arc_table_reference` asks OpenFst for every state's arc
count and masks the headers out byte by byte). Anything unexpected — symbol tables in
the header, another FST type, a body of another length — returns ``None``, and the
caller takes the numpy route.
"""

from __future__ import annotations

import struct
from typing import Optional

import numpy as np

from strgm.wfsa.compiled import COMPILED, njit

_ARC_BYTES = 20
_HAS_SYMBOLS = 0x3  # OpenFst's header flags for input / output symbol tables


def _body_offset(blob: bytes) -> Optional[int]:
    """Where the state records start, or None for a header this reader does not know."""
    try:
        pos = 4  # magic number
        names = []
        for _ in range(2):
            (size,) = struct.unpack_from("<i", blob, pos)
            names.append(blob[pos + 4: pos + 4 + size])
            pos += 4 + size
        (flags,) = struct.unpack_from("<i", blob, pos + 4)
    except struct.error:
        return None
    if names[0] != b"vector" or flags & _HAS_SYMBOLS:
        return None
    return pos + 40  # version, flags (i32), properties, start, #states, #arcs (i64)


@njit(cache=True)
def _count_arcs(raw, body, n):  # pragma: no cover - compiled
    """Total arcs of the ``n`` state records from ``body``; -1 unless they end the string."""
    b8 = np.empty(8, np.uint8)
    i8 = b8.view(np.int64)
    pos = body
    m = 0
    for _ in range(n):
        if pos + 16 > raw.shape[0]:
            return -1
        b8[:] = raw[pos + 8: pos + 16]
        c = i8[0]
        if c < 0:
            return -1
        m += c
        pos += 16 + _ARC_BYTES * c
    return m if pos == raw.shape[0] else -1


@njit(cache=True)
def _decode(raw, body, n, m):  # pragma: no cover - compiled
    """The final weights and the arcs (src, dst, ilabel, olabel, weight), in state order."""
    final = np.empty(n, np.float64)
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    ilabel = np.empty(m, np.int64)
    olabel = np.empty(m, np.int64)
    weight = np.empty(m, np.float64)
    b8 = np.empty(8, np.uint8)
    f8 = b8.view(np.float64)
    i8 = b8.view(np.int64)
    b4 = np.empty(4, np.uint8)
    i4 = b4.view(np.int32)
    pos = body
    k = 0
    for s in range(n):
        b8[:] = raw[pos: pos + 8]
        final[s] = f8[0]
        b8[:] = raw[pos + 8: pos + 16]
        c = i8[0]
        pos += 16
        for _ in range(c):
            b4[:] = raw[pos: pos + 4]
            ilabel[k] = i4[0]
            b4[:] = raw[pos + 4: pos + 8]
            olabel[k] = i4[0]
            b8[:] = raw[pos + 8: pos + 16]
            weight[k] = f8[0]
            b4[:] = raw[pos + 16: pos + 20]
            dst[k] = i4[0]
            src[k] = s
            pos += _ARC_BYTES
            k += 1
    return final, src, dst, ilabel, olabel, weight


def read_arcs(blob: bytes, num_states: int) -> Optional[tuple]:
    """(final, src, dst, ilabel, olabel, weight) of a serialised log64 VectorFst with
    ``num_states`` states, or None (module docstring; also without numba, where the walk
    would be a Python loop per arc)."""
    body = _body_offset(blob)
    if body is None or not COMPILED:
        return None
    raw = np.frombuffer(blob, dtype=np.uint8)
    m = _count_arcs(raw, body, num_states)
    if m < 0:
        return None
    return _decode(raw, body, num_states, m)
