"""Load a user's OpenFst ``.fst`` file as a factor over an alphabet.

The file's arc type is converted to log64 (tropical and log weights are both -log reals).
If the machine carries input/output symbol tables, its labels are remapped onto the
alphabet's labels by symbol name; a symbol the alphabet lacks is an error naming it. If it
has none, its labels must already lie in 0..|Σ|.
"""

from __future__ import annotations

from typing import Optional

import pynini

from strgm.errors import InputError, UnknownSymbolError
from strgm.wfsa import guard
from strgm.wfsa.core import ARC_TYPE, as_log, new_fst
from strgm.wfsa.fst_file import check_header, read_fst

_WEIGHT_TYPES = ("standard", "log", "log64")


def _relabel_map(table: Optional[pynini.SymbolTable], alphabet, path: str, side: str):
    if table is None:
        return None
    mapping = {}
    for key, sym in table:
        if key == 0 or sym in ("<eps>", "<epsilon>", "ε", "eps"):
            mapping[key] = 0
            continue
        if sym not in alphabet:
            raise UnknownSymbolError(sym, f"{side} symbol table of the FST", path=path)
        mapping[key] = alphabet.label(sym)
    return mapping


def load_fst_factor(path: str, alphabet, max_states: Optional[int] = None) -> pynini.Fst:
    """Read ``path`` and return a log64 FST whose labels are the alphabet's labels.

    The file goes through :func:`strgm.wfsa.fst_file.read_fst`, which checks the header
    against the file size before OpenFst allocates (a damaged header claiming 10¹⁵ states
    is an :class:`InputError`, not an abort), and the claimed size against the memory
    budget (:mod:`strgm.wfsa.guard`) and ``max_states``. Weights must be tropical or log
    (both are −log reals); any other arc type is an :class:`InputError` naming it."""
    h = check_header(path, "OpenFst factor file")
    if h["arc_type"] not in _WEIGHT_TYPES:
        raise InputError(f"arc type {h['arc_type']!r} is not supported; a factor needs "
                         f"tropical or log weights (arc types {', '.join(_WEIGHT_TYPES)})",
                         path=str(path))
    n, m = max(h["num_states"], 0), max(h["num_arcs"], 0)
    with guard.naming(f"{path}: OpenFst factor file"):
        guard.require("reading and relabelling it", 2 * n, 2 * m)  # file, then copy
    raw = read_fst(path, "OpenFst factor file", max_states=max_states)
    isyms = _relabel_map(raw.input_symbols(), alphabet, path, "input")
    osyms = _relabel_map(raw.output_symbols(), alphabet, path, "output")
    try:
        fst = as_log(raw)
    except TypeError as e:
        raise InputError(str(e), path=path) from None
    out = new_fst()
    out.add_states(fst.num_states())
    if fst.start() >= 0:
        out.set_start(fst.start())
    n = alphabet.size
    for s in fst.states():
        for arc in fst.arcs(s):
            il = isyms.get(arc.ilabel, None) if isyms is not None else arc.ilabel
            ol = osyms.get(arc.olabel, None) if osyms is not None else arc.olabel
            for lab, side, raw_lab in ((il, "input", arc.ilabel), (ol, "output", arc.olabel)):
                if lab is None or not 0 <= lab <= n:
                    raise InputError(f"{side} label {raw_lab} at state {s} is outside the "
                                     f"alphabet (labels 0..{n}) and has no symbol name",
                                     path=path)
            out.add_arc(s, pynini.Arc(il, ol, arc.weight, arc.nextstate))
        out.set_final(s, fst.final(s))
    assert out.arc_type() == ARC_TYPE
    return out
