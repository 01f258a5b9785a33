"""Reading OpenFst binary files safely: nothing OpenFst reads is unverified.

OpenFst's binary format starts with a header (``fst/fst.h``, ``FstHeader::Read``)::

    int32 magic (2125659606) | string fsttype | string arctype | int32 version |
    int32 flags | uint64 properties | int64 start | int64 numstates | int64 numarcs

(a string is an int32 length followed by its bytes), then the symbol tables named by the
flags, then the body. :func:`check_header` refuses, from the header alone, counts that
the file cannot hold (every state takes at least 12 bytes, every arc at least 16), so a
header claiming 10¹⁵ states costs one ``stat`` and a 4 KB read. :func:`read_fst` then
reads the file once, verifies every byte of it
(:func:`fst_factors.wfsa.fst_verify.verify_fst_bytes`: arc counts, targets, labels, weights,
symbol tables, FST and arc type, length) and hands OpenFst those verified bytes
(``pynini.Fst.read_from_string``), so the file cannot change between check and read.
"""

from __future__ import annotations

import os
from typing import Optional

import pynini

from fst_factors.errors import InputError, MessageTooLargeError
from fst_factors.files import check_file as check_input, read_file_bytes as read_bytes
from fst_factors.wfsa.fst_verify import (ARC_TYPES, WEIGHT_BYTES, FormatFault, parse_header,
                                   verify_fst_bytes)

MIN_STATE_BYTES = 12
MIN_ARC_BYTES = 16


def read_header(path: str | os.PathLike, what: str = "FST file") -> dict:
    """The parsed header of an OpenFst binary file (keys ``fst_type``, ``arc_type``,
    ``version``, ``flags``, ``start``, ``num_states``, ``num_arcs``, ``file_size``,
    ``header_bytes``). Raises :class:`InputError` naming the file for anything that is
    not such a header."""
    p = check_input(path, what)
    size = p.stat().st_size
    with open(p, "rb") as fh:
        head = fh.read(4096)
    try:
        h = parse_header(head)
    except FormatFault as e:
        raise InputError(f"not a valid OpenFst binary file ({e})", path=str(p)) from None
    h["file_size"] = size
    return h


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
             max_states: Optional[int] = None, arc_types=ARC_TYPES) -> pynini.Fst:
    """The FST in ``path``, read by OpenFst from bytes verified first: the header against
    the file's size (:func:`check_header`), ``max_states`` and the memory budget
    (:mod:`fst_factors.wfsa.guard`) before the file is read, raising
    :class:`MessageTooLargeError` beyond them; then the whole file
    (:func:`fst_factors.wfsa.fst_verify.verify_fst_bytes`, a ``vector`` FST of one of
    ``arc_types``). Every other failure is an :class:`InputError` naming the file."""
    from fst_factors.wfsa import guard

    h = check_header(path, what)
    n = h["num_states"]
    if max_states is not None and n > max_states:
        raise MessageTooLargeError(f"{path}: {what} has {n} states, more than --max-states "
                                   f"{max_states}")
    w = WEIGHT_BYTES.get(h["arc_type"], 4)
    arcs = max(h["file_size"] - h["header_bytes"] - (w + 8) * max(n, 0), 0) // (w + 12)
    with guard.naming(f"{path}: {what}"):
        guard.require("reading it", max(n, 0), max(h["num_arcs"], arcs))
    verified = verify_fst_bytes(read_bytes(path, what), path, arc_types)
    try:
        return pynini.Fst.read_from_string(verified.data)
    except (OSError, RuntimeError) as e:  # pynini's FstIOError / FstOpError
        raise InputError(f"cannot read {what}: {e}", path=str(path)) from None
