"""An automaton's arcs read from OpenFst's binary serialisation by one compiled walk.

``pynini.Fst.write_to_string`` gives a VectorFst as: a header (magic, the FST and arc type
names as length-prefixed strings, version, flags, properties, start, number of states,
number of arcs — the last written as 0 by a string stream), then per state its final
weight (f64), its arc count (i64) and its arcs, each ilabel (i32), olabel (i32), weight
(f64), nextstate (i32), packed in 20 bytes.

:func:`read_arcs` copies that body once into aligned 32-bit words (every record is a
whole number of words) and walks it twice in a compiled loop: once over the states'
headers to count the arcs and check that the records end exactly at the end of the
string, once to decode them into arrays, the 64-bit fields assembled from two words.
O(|Q| + |E|), with no per-state Python call (the numpy route of
:func:`fst_factors.wfsa.core.arc_table_reference` asks OpenFst for every state's arc count and
masks the headers out byte by byte). Anything unexpected — symbol tables in
the header, another FST type, a body of another length — returns ``None``, and the
caller takes the numpy route.
"""

from __future__ import annotations

import struct
from typing import Optional

import numpy as np

from fst_factors.wfsa.compiled import COMPILED, njit

_ARC_BYTES = 20
_ARC_WORDS = _ARC_BYTES // 4
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


def _words(blob: bytes, body: int) -> Optional[np.ndarray]:
    """The body from ``body`` as little-endian 32-bit words (one aligned copy), or None
    when its length is not a whole number of words."""
    if (len(blob) - body) % 4:
        return None
    return np.frombuffer(blob, dtype=np.uint8, offset=body).copy().view("<i4")


@njit(cache=True, inline="always")
def _i64(words, p):  # pragma: no cover - compiled
    """The 64-bit value (as int64 bits) held in words p (low) and p + 1 (high)."""
    return (np.int64(words[p]) & 0xFFFFFFFF) | (np.int64(words[p + 1]) << 32)


@njit(cache=True)
def _count_arcs(words, n):  # pragma: no cover - compiled
    """Total arcs of the ``n`` state records (4 words of header, 5 per arc); -1 unless
    they end the body exactly."""
    pos = 0
    m = 0
    for _ in range(n):
        if pos + 4 > words.shape[0]:
            return -1
        c = _i64(words, pos + 2)
        if c < 0:
            return -1
        m += c
        pos += 4 + _ARC_WORDS * c
    return m if pos == words.shape[0] else -1


@njit(cache=True)
def _decode(words, n, m):  # pragma: no cover - compiled
    """The final weights and the arcs (src, dst, ilabel, olabel, weight), in state order;
    the 64-bit fields are assembled from two words into int64 views of the outputs."""
    final = np.empty(n, np.float64)
    final_bits = final.view(np.int64)
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    ilabel = np.empty(m, np.int64)
    olabel = np.empty(m, np.int64)
    weight = np.empty(m, np.float64)
    weight_bits = weight.view(np.int64)
    pos = 0
    k = 0
    for s in range(n):
        final_bits[s] = _i64(words, pos)
        c = _i64(words, pos + 2)
        pos += 4
        for _ in range(c):
            ilabel[k] = words[pos]
            olabel[k] = words[pos + 1]
            weight_bits[k] = _i64(words, pos + 2)
            dst[k] = words[pos + 4]
            src[k] = s
            pos += _ARC_WORDS
            k += 1
    return final, src, dst, ilabel, olabel, weight


def read_arcs(blob: bytes, num_states: int) -> Optional[tuple]:
    """(final, src, dst, ilabel, olabel, weight) of a serialised log64 VectorFst with
    ``num_states`` states, or None (module docstring; also without numba, where the walk
    would be a Python loop per arc)."""
    body = _body_offset(blob)
    if body is None or not COMPILED:
        return None
    words = _words(blob, body)
    if words is None:
        return None
    m = _count_arcs(words, num_states)
    if m < 0:
        return None
    return _decode(words, num_states, m)
