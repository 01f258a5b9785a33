"""Reading OpenFst binary files safely: the header is checked before OpenFst allocates.

OpenFst's binary format starts with a header (``fst/fst.h``, ``FstHeader::Read``)::

    int32 magic (2125659606) | string fsttype | string arctype | int32 version |
    int32 flags | uint64 properties | int64 start | int64 numstates | int64 numarcs

(a string is an int32 length followed by its bytes), then the symbol tables named by the
flags, then the body. ``pynini.Fst.read`` trusts ``numstates``/``numarcs`` and reserves
memory for them, so a damaged or hostile header claiming 10¹⁵ states aborts the process
with ``std::bad_alloc``. :func:`read_fst` first parses the header and refuses counts that
the file cannot hold: every stored state takes at least 12 bytes (a final weight of ≥ 4
bytes and an int64 arc count) and every arc at least 16 (two int32 labels, a weight,
an int32 target), so ``12·numstates + 16·numarcs ≤ file size`` is necessary. Cost: one
``stat`` and a read of the header's first bytes before the real read.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Optional

import pynini

from strgm.errors import InputError, MessageTooLargeError
from strgm.safe_io import check_input

MAGIC = 2125659606
MIN_STATE_BYTES = 12
MIN_ARC_BYTES = 16


def read_header(path: str | os.PathLike, what: str = "FST file") -> dict:
    """The parsed header of an OpenFst binary file (keys ``fst_type``, ``arc_type``,
    ``version``, ``flags``, ``start``, ``num_states``, ``num_arcs``, ``file_size``).
    Raises :class:`InputError` naming the file for anything that is not such a header."""
    p = check_input(path, what)
    size = p.stat().st_size
    with open(p, "rb") as fh:
        head = fh.read(4096)

    def bad(msg):
        return InputError(f"not a valid OpenFst binary file ({msg})", path=str(p))

    pos = 0

    def take(fmt):
        nonlocal pos
        n = struct.calcsize(fmt)
        if pos + n > len(head):
            raise bad("truncated header")
        (v,) = struct.unpack_from(fmt, head, pos)
        pos += n
        return v

    def string():
        nonlocal pos
        n = take("<i")
        if n < 0 or n > 256 or pos + n > len(head):
            raise bad("damaged header")
        s = head[pos:pos + n]
        pos += n
        try:
            return s.decode("ascii")
        except UnicodeDecodeError:
            raise bad("damaged header") from None

    if take("<i") != MAGIC:
        raise bad("wrong magic number")
    fst_type, arc_type = string(), string()
    version, flags = take("<i"), take("<i")
    take("<Q")  # properties
    start, num_states, num_arcs = take("<q"), take("<q"), take("<q")
    return {"fst_type": fst_type, "arc_type": arc_type, "version": version, "flags": flags,
            "start": start, "num_states": num_states, "num_arcs": num_arcs,
            "file_size": size, "header_bytes": pos}


#: Bytes of one weight for the arc types whose VectorFst layout is known exactly.
WEIGHT_BYTES = {"standard": 4, "log": 4, "log64": 8}


def check_header(path: str | os.PathLike, what: str = "FST file") -> dict:
    """The header of ``path`` once its counts are known to fit in the file: every state
    takes ≥ 12 bytes and every arc ≥ 16; for a ``vector`` FST of a known arc type exactly
    ``w + 8`` per state and ``w + 12`` per arc after the header (w: weight bytes), so a
    truncated file is refused here rather than by OpenFst (which prints to stderr).
    :class:`InputError` naming the file otherwise."""
    h = read_header(path, what)
    n, m = h["num_states"], h["num_arcs"]
    if n < -1 or m < -1 or h["start"] < -1 or (n >= 0 and h["start"] >= max(n, 1)):
        raise InputError("not a valid OpenFst binary file (damaged header counts)",
                         path=str(path))
    need = MIN_STATE_BYTES * max(n, 0) + MIN_ARC_BYTES * max(m, 0)
    w = WEIGHT_BYTES.get(h["arc_type"])
    exact = h["fst_type"] == "vector" and w is not None and n >= 0 and m >= 0
    if exact:
        need = h["header_bytes"] + (w + 8) * n + (w + 12) * m
    if need > h["file_size"]:
        raise InputError(f"damaged OpenFst file: the header claims {n} states and {m} arcs, "
                         f"which need at least {need} bytes, but the file has "
                         f"{h['file_size']} (truncated?)", path=str(path))
    return h


def read_fst(path: str | os.PathLike, what: str = "FST file",
             max_states: Optional[int] = None) -> pynini.Fst:
    """``pynini.Fst.read(path)`` once the header is known to be consistent with the file's
    size (:func:`check_header`), within ``max_states`` and within the memory budget
    (:mod:`strgm.wfsa.guard`), raising :class:`MessageTooLargeError` beyond them. Every
    other failure is an :class:`InputError` naming the file."""
    from strgm.wfsa import guard

    h = check_header(path, what)
    n, m = h["num_states"], h["num_arcs"]
    if max_states is not None and n > max_states:
        raise MessageTooLargeError(f"{path}: {what} has {n} states, more than --max-states "
                                   f"{max_states}")
    with guard.naming(f"{path}: {what}"):
        guard.require("reading it", max(n, 0), max(m, 0))
    try:
        return pynini.Fst.read(str(Path(path)))
    except OSError as e:  # pynini's FstIOError
        raise InputError(f"cannot read {what}: {e}", path=str(path)) from None
