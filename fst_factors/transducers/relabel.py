"""Any ``pynini.Fst`` as a factor: log64 weights and the alphabet's labels.

:func:`to_alphabet` converts the arc type to log64 (tropical and log weights are both
−log reals) and maps each side's labels onto an :class:`~fst_factors.alphabet.Alphabet`'s
labels 1..|Σ| (0 stays ε), in one of three ways:

* ``"symbols"``: by symbol name, through the FST's input/output symbol tables (or the
  ``symbols`` argument; a side without a table uses the other side's);
* ``"text"``: a label is the code point of a one-character symbol, as in pynini's
  ``"byte"`` (ASCII) and ``"utf8"`` string labels. A multi-character segment such as
  t͡ʃ has no such label: an FST over one needs a symbol table;
* ``"alphabet"``: the labels already are the alphabet's labels (strgm-built machines).

``"auto"`` (the default) takes ``"symbols"`` when there is a table, else whichever of
``"alphabet"`` and ``"text"`` maps every label; when both would, and they disagree, it
refuses to guess. A label that does not map is an error naming it (and its symbol).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from fst_factors.errors import InputError, UnknownSymbolError
from fst_factors.wfsa.core import ARC_TYPE, arc_table, as_log

LABEL_MODES = ("auto", "symbols", "text", "alphabet")
EPSILON_NAMES = ("<eps>", "<epsilon>", "ε", "eps")
_MAX_CODE_POINT = 0x10FFFF


def to_alphabet(fst: pynini.Fst, alphabet, labels: str = "auto",
                symbols: Optional[pynini.SymbolTable] = None, where: str = "the FST",
                path: Optional[str] = None) -> pynini.Fst:
    """A log64 copy of ``fst`` whose labels are ``alphabet``'s labels, without symbol
    tables (see the module docstring for ``labels``). ``symbols`` is a symbol table for
    both sides, for machines compiled with ``token_type=table`` (pynini attaches none).
    Errors are :class:`InputError` naming ``where`` (and ``path`` when given)."""
    if not isinstance(fst, pynini.Fst):
        raise InputError(f"{where}: expected a pynini.Fst, got {type(fst).__name__}",
                         path=path)
    if labels not in LABEL_MODES:
        raise InputError(f"{where}: labels must be one of {', '.join(LABEL_MODES)}, "
                         f"got {labels!r}", path=path)
    itab, otab = (symbols, symbols) if symbols is not None else \
        (fst.input_symbols(), fst.output_symbols())
    itab, otab = (itab if itab is not None else otab), (otab if otab is not None else itab)
    try:
        out = as_log(fst).copy()
    except TypeError as e:
        raise InputError(f"{where}: {e} (a factor needs tropical or log weights)",
                         path=path) from None
    if labels == "symbols" and itab is None:
        raise InputError(f"{where}: labels='symbols' but the FST has no symbol table "
                         "(pass symbols=)", path=path)
    if itab is not None and labels in ("auto", "symbols"):
        imap, omap = _table_map(itab, alphabet), _table_map(otab, alphabet)
        _check_sides(out, imap, omap, itab, otab, where, path)
        _relabel(out, imap, omap)
    else:
        _map_plain(out, alphabet, labels, where, path)
    out.set_input_symbols(None)
    out.set_output_symbols(None)
    assert out.arc_type() == ARC_TYPE
    return out


def _table_map(table, alphabet) -> dict:
    """old label -> alphabet label for every symbol of ``table`` the alphabet has (ε ->
    0); symbols the alphabet lacks are left out, so that only those the FST uses are
    reported."""
    mapping = {}
    for key, sym in table:
        if key == 0 or sym in EPSILON_NAMES:
            mapping[key] = 0
        elif sym in alphabet:
            mapping[key] = alphabet.label(sym)
    return mapping


def _labels(fst: pynini.Fst) -> tuple[np.ndarray, np.ndarray]:
    """The distinct nonzero input and output labels of a log64 FST."""
    t = arc_table(fst)
    return (np.unique(t.ilabel[t.ilabel != 0]), np.unique(t.olabel[t.olabel != 0]))


def _check_sides(fst, imap, omap, itab, otab, where, path) -> None:
    """Every label the FST uses must have a symbol the alphabet knows."""
    ilabs, olabs = _labels(fst)
    for side, labs, mapping, table in (("input", ilabs, imap, itab),
                                       ("output", olabs, omap, otab)):
        bad = [int(a) for a in labs if int(a) not in mapping]
        if not bad:
            continue
        named = [(a, table.find(a)) for a in bad]
        missing = [a for a, s in named if not s]
        if missing:
            raise InputError(f"{where}: {side} label {missing[0]} has no symbol in its "
                             "symbol table", path=path)
        also = ", ".join(repr(s) for _, s in named[1:6])
        raise UnknownSymbolError(named[0][1], f"the {side} symbol table of {where}"
                                 + (f" (also {also})" if also else ""), path=path)


def _relabel(fst: pynini.Fst, imap: dict, omap: dict) -> None:
    ip = [(a, b) for a, b in imap.items() if a != b]
    op = [(a, b) for a, b in omap.items() if a != b]
    if ip or op:
        fst.relabel_pairs(ipairs=ip or None, opairs=op or None)


def _text_map(labs: np.ndarray, alphabet) -> dict:
    """label -> alphabet label for the labels that are code points of symbols."""
    out = {}
    for a in labs:
        a = int(a)
        if 0 < a <= _MAX_CODE_POINT and chr(a) in alphabet:
            out[a] = alphabet.label(chr(a))
    return out


def _map_plain(fst, alphabet, labels, where, path) -> None:
    """Labels without a table: the alphabet's own, or code points of its symbols."""
    ilabs, olabs = _labels(fst)
    labs = np.union1d(ilabs, olabs)
    n = alphabet.size
    fits_alphabet = bool(labs.size == 0 or (labs.min() >= 1 and labs.max() <= n))
    text = _text_map(labs, alphabet)
    fits_text = len(text) == labs.size
    if labels == "auto":
        if fits_alphabet and fits_text and any(text[int(a)] != a for a in labs):
            raise InputError(f"{where}: its labels are both alphabet labels (1..{n}) and "
                             "code points of alphabet symbols; pass labels='alphabet' or "
                             "labels='text'", path=path)
        labels = "alphabet" if fits_alphabet else "text" if fits_text else "none"
    if labels == "alphabet" and not fits_alphabet:
        bad = [int(a) for a in labs if not 1 <= a <= n]
        raise InputError(f"{where}: {_show(bad)} outside the alphabet (labels 1..{n})",
                         path=path)
    if labels in ("text", "none") and not fits_text:
        raise InputError(_unmapped_text(labs, text, alphabet, where, labels == "none"),
                         path=path)
    if labels == "text":
        _relabel(fst, text, text)


def _show(labs, limit: int = 6) -> str:
    """``label 120 'x' is`` / ``labels 97 'a', 120 'x' are``: the labels with the
    character they encode as text (when printable), and the verb."""
    parts = []
    for a in labs[:limit]:
        a = int(a)
        ch = chr(a) if 0 < a <= _MAX_CODE_POINT else ""
        sym = _generated_symbol(a) or (ch if ch.isprintable() else "")
        parts.append(f"{a} {sym!r}" if sym else str(a))
    more = f" (+{len(labs) - limit} more)" if len(labs) > limit else ""
    return (f"label {parts[0]} is" if len(labs) == 1
            else f"labels {', '.join(parts)}{more} are")


def _generated_symbol(a: int) -> str:
    """The name pynini gave a bracketed byte/UTF-8 symbol such as ``[BOS]``, if any."""
    name = pynini.generated_symbols().find(a)
    return name if a > 0 and name else ""


def _unmapped_text(labs, text, alphabet, where, also_alphabet: bool) -> str:
    """The one-line error for labels that are not code points of alphabet symbols."""
    bad = [int(a) for a in labs if int(a) not in text]
    msg = f"{where}: {_show(bad)} not the code point of a one-character alphabet symbol"
    if also_alphabet:
        msg += f" nor alphabet labels 1..{alphabet.size}, and the FST has no symbol table"
    if any(128 <= a <= 255 for a in bad):
        msg += "; compile non-ASCII text with token_type='utf8', not 'byte'"
    multi = [s for s in alphabet.symbols if len(s) > 1]
    if multi:
        msg += (f"; multi-character symbols such as {multi[0]!r} cannot be byte/UTF-8 "
                "labels: compile with a pynini.SymbolTable and pass it as symbols=")
    return msg
