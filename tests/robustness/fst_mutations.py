"""OpenFst files to fuzz the reader with: a few good files, a plain-Python parse of the
binary VectorFst layout (independent of :mod:`fst_factors.wfsa.fst_verify`), and mutations
(truncations, byte flips, out-of-range targets, huge counts, other FST and arc types)
drawn through ``pick(lo, hi)`` / ``choice(seq)``, so that hypothesis and a seeded
``random.Random`` draw the same kinds of file."""

from __future__ import annotations

import struct

import pynini
import pywrapfst

import fst_factors.transducers as ff

WEIGHT_FMT = {"standard": "<f", "log": "<f", "log64": "<d"}


def _string(blob: bytes, pos: int) -> tuple[bytes, int]:
    (n,) = struct.unpack_from("<i", blob, pos)
    if n < 0 or pos + 4 + n > len(blob):
        raise ValueError("bad string")
    return blob[pos + 4:pos + 4 + n], pos + 4 + n


def parse(blob: bytes) -> dict:
    """Header fields, field offsets and the states (final, arcs) of a VectorFst file;
    ValueError (or struct.error) for what this plain parse cannot follow."""
    fst_type, pos = _string(blob, 4)
    arc_type, pos = _string(blob, pos)
    version, flags = struct.unpack_from("<ii", blob, pos)
    props_at = pos + 8
    start, n, m = struct.unpack_from("<qqq", blob, props_at + 8)
    pos = props_at + 32
    at = {"version": props_at - 8, "flags": props_at - 4, "properties": props_at,
          "start": props_at + 8, "num_states": props_at + 16, "num_arcs": props_at + 24}
    for bit in (1, 2):
        if flags & bit:
            _, pos = _string(blob, pos + 4)
            (size,) = struct.unpack_from("<q", blob, pos + 8)
            pos += 16
            for _ in range(size):
                _, pos = _string(blob, pos)
                pos += 8
    wf = WEIGHT_FMT[arc_type.decode()]
    w = struct.calcsize(wf)
    states, counts, arcs = [], [], []
    for _ in range(n):
        (final,) = struct.unpack_from(wf, blob, pos)
        (c,) = struct.unpack_from("<q", blob, pos + w)
        counts.append(pos + w)
        pos += w + 8
        out = []
        for _ in range(c):
            il, ol = struct.unpack_from("<ii", blob, pos)
            (wt,) = struct.unpack_from(wf, blob, pos + 8)
            (ns,) = struct.unpack_from("<i", blob, pos + 8 + w)
            out.append((il, ol, wt, ns))
            arcs.append(pos)
            pos += w + 12
        states.append((final, tuple(out)))
    if pos != len(blob):
        raise ValueError("length")
    return {"fst_type": fst_type, "arc_type": arc_type.decode(), "start": start,
            "states": tuple(states), "at": at, "counts": counts, "arcs": arcs, "w": w}


def bases() -> dict:
    """name -> bytes of good files: a cyclic log64 transducer, a standard acceptor with
    symbol tables, a log acceptor, an empty log64 FST."""
    edit = ff.edit_transducer(2)
    syms = pynini.SymbolTable()
    for s in ("<eps>", "a", "b", "c"):
        syms.add_symbol(s)
    acc = pynini.accep("a b c", token_type=syms).closure().optimize()
    acc.set_input_symbols(syms)
    acc.set_output_symbols(syms)
    log = pynini.arcmap(pynini.accep("abca", token_type="utf8").optimize(), map_type="to_log")
    return {"edit": edit.write_to_string(), "symbols": acc.write_to_string(),
            "log": log.write_to_string(),
            "empty": pynini.Fst(arc_type="log64").write_to_string()}


def const_file() -> bytes:
    """A ``const`` FST file (OpenFst maps it without checks)."""
    return pywrapfst.convert(pynini.accep("ab"), "const").write_to_string()


def put(blob: bytes, at: int, fmt: str, value) -> bytes:
    return blob[:at] + struct.pack(fmt, value) + blob[at + struct.calcsize(fmt):]


def rename(blob: bytes, which: int, name: str) -> bytes:
    """``blob`` with its FST type (0) or arc type (1) string replaced by ``name``."""
    pos = 4
    for _ in range(which):
        pos = _string(blob, pos)[1]
    end = _string(blob, pos)[1]
    return blob[:pos] + struct.pack("<i", len(name)) + name.encode() + blob[end:]


SPECIAL_TARGETS = (-5, -1, 10 ** 6, 2 ** 31 - 1, -2 ** 31)
SPECIAL_COUNTS = (-1, 10 ** 15, 2 ** 62, 2 ** 63 - 1, 1, 2, 64)
KINDS = ("truncate", "flip", "target", "count", "header", "fst_type", "arc_type",
         "label", "weight", "extra")


def mutate(blob: bytes, p: dict, kind: str, pick, choice) -> bytes:
    """One mutation of ``blob`` (parsed as ``p``) of ``kind``."""
    if kind == "target" and p["arcs"]:
        v = choice(SPECIAL_TARGETS + (len(p["states"]), -2 ** 31 + pick(0, 2 ** 32 - 1)))
        return put(blob, choice(p["arcs"]) + 8 + p["w"], "<i", v)
    if kind == "count" and p["counts"]:
        return put(blob, choice(p["counts"]), "<q", choice(SPECIAL_COUNTS + (
            -2 ** 63 + pick(0, 2 ** 64 - 1),)))
    if kind == "label" and p["arcs"]:
        return put(blob, choice(p["arcs"]) + 4 * pick(0, 1), "<i", choice((-1, -7, 2 ** 31 - 1)))
    if kind == "weight" and p["arcs"]:
        v = choice((float("nan"), float("-inf"), float("inf"), -1e30, 3.5))
        at = choice(p["arcs"] + p["counts"])
        at = at + 8 if at in p["arcs"] else at - p["w"]
        return put(blob, at, WEIGHT_FMT[p["arc_type"]], v)
    if kind == "header":
        field = choice(sorted(p["at"]))
        fmt = "<i" if field in ("version", "flags") else "<Q" if field == "properties" \
            else "<q"
        if fmt == "<Q":
            return put(blob, p["at"][field], fmt, pick(0, 2 ** 64 - 1))
        v = choice((-2, -1, 0, 1, 3, 8, len(p["states"]) + 1, 2 ** 31 - 1)
                   + ((10 ** 15,) if fmt == "<q" else ()))
        return put(blob, p["at"][field], fmt, v)
    if kind == "fst_type":
        return rename(blob, 0, choice(("const", "compact_string", "vectorx", "", "VECTOR")))
    if kind == "arc_type":
        return rename(blob, 1, choice(("standard", "log", "log64", "tropical", "log64x", "")))
    if kind == "truncate":
        return blob[:pick(0, len(blob) - 1)]
    if kind == "extra":
        at = pick(0, len(blob))
        return blob[:at] + bytes(pick(0, 255) for _ in range(pick(1, 24))) + blob[at:]
    out = bytearray(blob)  # "flip", and kinds a file without arcs cannot take
    for _ in range(pick(1, 4)):
        out[pick(0, len(out) - 1)] = pick(0, 255)
    return bytes(out)
