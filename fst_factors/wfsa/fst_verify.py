"""An OpenFst binary VectorFst verified byte for byte before OpenFst reads it.

OpenFst's reader trusts what a file says: an arc to a state that does not exist is stored
as it is (and crashes the first algorithm that follows it), an arc count of 10¹⁵ is
reserved before it is read (``std::bad_alloc``), a ``const`` FST is mapped without
checks, and the header's property bits are believed by every algorithm. So
:func:`verify_fst_bytes` parses the whole file first and refuses, with one
:class:`~strgm.errors.InputError` naming the file and the fault, anything but:

* the header (``fst/fst.h``): magic 2125659606, FST type ``vector``, an accepted arc type
  (weights of 4 bytes for ``standard``/``log``, 8 for ``log64``), version 2, only the
  flags for input/output symbol tables (and alignment), a state count ≥ 0, the start
  state in [0, states) or −1 (no start), an arc count of 0 (what VectorFst writes) or
  the body's total;
* each symbol table the flags announce (``fst/symbol-table.h``): magic 2125658996, its
  name, next key, size, then (symbol, key ≥ 0) pairs, keys and symbols distinct;
* the body: per state a final weight and an int64 arc count that fits in the bytes left,
  then the arcs as int32 ilabel, int32 olabel, weight, int32 nextstate; labels ≥ 0,
  every nextstate in [0, states), no weight NaN or −∞ (+∞ is the semiring's zero), and
  the last state ending exactly at the end of the file.

The bytes then handed to OpenFst are the verified ones with the stored properties
replaced by "none known" (``kExpanded | kMutable``), so that OpenFst computes any property
it needs instead of believing the file. One walk over the states (compiled where numba
is available), numpy over the arcs: O(|Q| + |E|) time, one copy of the arc records.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from fst_factors.errors import InputError
from fst_factors.wfsa.compiled import njit

MAGIC = 2125659606
SYMBOL_MAGIC = 2125658996
VERSION = 2
#: Bytes of one weight, per arc type read.
WEIGHT_BYTES = {"standard": 4, "log": 4, "log64": 8}
ARC_TYPES = tuple(WEIGHT_BYTES)
_ISYMBOLS, _OSYMBOLS, _KNOWN_FLAGS = 0x1, 0x2, 0x7
#: ``kExpanded | kMutable``: the properties every VectorFst has, and nothing else known.
_NO_PROPERTIES = 0x3
_MAX_NAME = 256


class FormatFault(ValueError):
    """What is wrong with the bytes (the caller names the file)."""


@dataclass(frozen=True)
class VerifiedFst:
    """A verified file: ``data`` is what OpenFst may read (properties cleared)."""

    data: bytes
    arc_type: str
    num_states: int
    num_arcs: int
    start: int


class _Cursor:
    """Reads little-endian fields from ``buf``, a :class:`FormatFault` past its end."""

    def __init__(self, buf: bytes, pos: int = 0, what: str = "header"):
        self.buf, self.pos, self.what = buf, pos, what

    def take(self, fmt: str):
        n = struct.calcsize(fmt)
        if self.pos + n > len(self.buf):
            raise FormatFault(f"truncated {self.what}")
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return v

    def string(self, limit: int) -> bytes:
        n = self.take("<i")
        if n < 0 or n > limit or self.pos + n > len(self.buf):
            raise FormatFault(f"damaged {self.what}")
        s = self.buf[self.pos:self.pos + n]
        self.pos += n
        return s


def parse_header(buf: bytes) -> dict:
    """The header fields of an OpenFst binary file (``fst_type``, ``arc_type``,
    ``version``, ``flags``, ``properties_at``, ``start``, ``num_states``, ``num_arcs``,
    ``header_bytes``); :class:`FormatFault` for a truncated or damaged header."""
    c = _Cursor(buf)
    if c.take("<i") != MAGIC:
        raise FormatFault("wrong magic number")
    names = []
    for _ in range(2):
        try:
            names.append(c.string(_MAX_NAME).decode("ascii"))
        except UnicodeDecodeError:
            raise FormatFault("damaged header") from None
    version, flags = c.take("<i"), c.take("<i")
    at = c.pos
    c.take("<Q")
    start, num_states, num_arcs = c.take("<q"), c.take("<q"), c.take("<q")
    return {"fst_type": names[0], "arc_type": names[1], "version": version, "flags": flags,
            "properties_at": at, "start": start, "num_states": num_states,
            "num_arcs": num_arcs, "header_bytes": c.pos}


def _check_header(h: dict, arc_types) -> None:
    if h["fst_type"] != "vector":
        raise FormatFault(f"FST type {h['fst_type']!r} is not read (only 'vector' files)")
    if h["arc_type"] not in arc_types:
        raise FormatFault(f"arc type {h['arc_type']!r} is not read here (expected "
                          f"{' or '.join(arc_types)})")
    if h["version"] != VERSION:
        raise FormatFault(f"file version {h['version']} is not read (expected {VERSION})")
    if h["flags"] & ~_KNOWN_FLAGS:
        raise FormatFault(f"unknown header flags 0x{h['flags']:x}")
    n, start = h["num_states"], h["start"]
    if n < 0:
        raise FormatFault(f"the header gives {n} states")
    if not -1 <= start < n:
        raise FormatFault(f"start state {start} is out of range (the file has {n} states)")


def _skip_symbol_table(buf: bytes, pos: int, which: str) -> int:
    """The position after the symbol table at ``pos``, once it is checked."""
    c = _Cursor(buf, pos, f"{which} symbol table")
    if c.take("<i") != SYMBOL_MAGIC:
        raise FormatFault(f"{which} symbol table: wrong magic number")
    c.string(len(buf))
    c.take("<q")  # the next key to assign
    size = c.take("<q")
    if size < 0 or size > (len(buf) - c.pos) // 12:
        raise FormatFault(f"{which} symbol table claims {size} symbols")
    keys, symbols = set(), set()
    for _ in range(size):
        sym, key = c.string(len(buf)), c.take("<q")
        if key < 0 or key in keys or sym in symbols:
            raise FormatFault(f"{which} symbol table has a negative or repeated key or a "
                              f"repeated symbol (key {key})")
        keys.add(key)
        symbols.add(sym)
    return c.pos


@njit(cache=True)
def _walk(raw, n, w, offsets, counts, finals):  # pragma: no cover - compiled
    """Fill each state's offset, arc count and final weight; (0, n, 0) if the records
    end the bytes exactly, else (code, state, value): 1 truncated state, 2 negative count,
    3 count beyond the bytes left, 4 bytes after the last state."""
    hs, ab = w + 8, w + 12
    b8 = np.empty(8, np.uint8)
    i8, f8 = b8.view(np.int64), b8.view(np.float64)
    f4 = b8[:4].view(np.float32)
    end = raw.shape[0]
    pos = 0
    for s in range(n):
        if end - pos < hs:
            return 1, s, end - pos
        b8[:w] = raw[pos:pos + w]
        finals[s] = f8[0] if w == 8 else f4[0]
        b8[:] = raw[pos + w:pos + hs]
        c = i8[0]
        if c < 0:
            return 2, s, c
        if c > (end - pos - hs) // ab:
            return 3, s, c
        offsets[s] = pos
        counts[s] = c
        pos += hs + ab * c
    if pos != end:
        return 4, n, end - pos
    return 0, n, 0


@njit(cache=True)
def _gather(raw, n, w, offsets, counts, out):  # pragma: no cover - compiled
    """The arc records of all states, back to back, into ``out``."""
    hs, ab = w + 8, w + 12
    k = 0
    for s in range(n):
        size = ab * counts[s]
        out[k:k + size] = raw[offsets[s] + hs:offsets[s] + hs + size]
        k += size


_WALK_FAULTS = {1: "state {s} is cut short ({v} bytes left; truncated file?)",
                2: "state {s} claims {v} arcs",
                3: "state {s} claims {v} arcs, more than the bytes left can hold",
                4: "{v} bytes follow the last state ({s} states in the header)"}


def _weights_problem(weights: np.ndarray) -> int:
    """Index of the first weight that is NaN or −∞, or −1."""
    bad = np.flatnonzero(np.isnan(weights) | (weights == -np.inf))
    return int(bad[0]) if bad.size else -1


def _labels_problem(recs: np.ndarray) -> int:
    """Index of the first arc with a negative label, or −1."""
    bad = np.flatnonzero((recs["ilabel"] < 0) | (recs["olabel"] < 0))
    return int(bad[0]) if bad.size else -1


def _targets_problem(recs: np.ndarray, n: int) -> int:
    """Index of the first arc whose nextstate is not a state, or −1."""
    t = recs["nextstate"]
    bad = np.flatnonzero((t < 0) | (t >= n))
    return int(bad[0]) if bad.size else -1


def _check_body(body: np.ndarray, n: int, w: int) -> int:
    """The number of arcs of the verified body; :class:`FormatFault` otherwise."""
    offsets, counts = np.zeros(n, np.int64), np.zeros(n, np.int64)
    finals = np.zeros(n, np.float64)
    code, s, v = _walk(body, n, w, offsets, counts, finals)
    if code:
        raise FormatFault(_WALK_FAULTS[code].format(s=s, v=v))
    s = _weights_problem(finals)
    if s >= 0:
        raise FormatFault(f"state {s} has final weight {finals[s]}")
    m = int(counts.sum())
    dtype = np.dtype([("ilabel", "<i4"), ("olabel", "<i4"), ("weight", f"<f{w}"),
                      ("nextstate", "<i4")])
    out = np.empty(m * dtype.itemsize, np.uint8)
    _gather(body, n, w, offsets, counts, out)
    recs = out.view(dtype)
    ends = np.cumsum(counts)

    def where(k: int) -> str:
        src = int(np.searchsorted(ends, k, side="right"))
        return f"state {src}, arc {k - int(ends[src] - counts[src])}"

    k = _labels_problem(recs)
    if k >= 0:
        raise FormatFault(f"{where(k)} has a negative label")
    k = _targets_problem(recs, n)
    if k >= 0:
        raise FormatFault(f"{where(k)} leads to state {int(recs['nextstate'][k])}, but "
                          f"the file has {n} states")
    k = _weights_problem(recs["weight"].astype(np.float64))
    if k >= 0:
        raise FormatFault(f"{where(k)} has weight {float(recs['weight'][k])}")
    return m


def verify_fst_bytes(blob: bytes, path, arc_types=ARC_TYPES) -> VerifiedFst:
    """``blob`` (the bytes of the file ``path``) verified as the module docstring says,
    with the bytes OpenFst may read; an :class:`InputError` naming ``path`` and the fault
    (one line) otherwise."""
    try:
        h = parse_header(blob)
        _check_header(h, tuple(arc_types))
        pos = h["header_bytes"]
        for flag, which in ((_ISYMBOLS, "input"), (_OSYMBOLS, "output")):
            if h["flags"] & flag:
                pos = _skip_symbol_table(blob, pos, which)
        n, w = h["num_states"], WEIGHT_BYTES[h["arc_type"]]
        if n > (len(blob) - pos) // (w + 8):
            raise FormatFault(f"the header claims {n} states, more than the file can hold")
        m = _check_body(np.frombuffer(blob, np.uint8, offset=pos), n, w)
        if h["num_arcs"] not in (0, m):
            raise FormatFault(f"the header claims {h['num_arcs']} arcs, the body has {m}")
    except FormatFault as e:
        raise InputError(f"not a valid OpenFst file: {e}", path=str(path)) from None
    at = h["properties_at"]
    data = blob[:at] + struct.pack("<Q", _NO_PROPERTIES) + blob[at + 8:]
    return VerifiedFst(data, h["arc_type"], n, m, h["start"])
