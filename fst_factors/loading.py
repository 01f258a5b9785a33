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
from strgm.wfsa.core import ARC_TYPE, as_log, new_fst


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


def load_fst_factor(path: str, alphabet) -> pynini.Fst:
    """Read ``path`` and return a log64 FST whose labels are the alphabet's labels."""
    try:
        raw = pynini.Fst.read(path)
    except Exception as e:  # pynini raises FstIOError / generic errors
        raise InputError(f"cannot read OpenFst file ({e})", path=path) from None
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
