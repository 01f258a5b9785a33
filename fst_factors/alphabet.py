"""Symbols <-> integer labels, and IPA segmentation.

Label 0 is epsilon; the alphabet's symbols are labels 1..|Σ| in the order given. An
optional *boundary* symbol (a morpheme boundary written between concatenated morphemes)
is the last label; it is part of underlying strings only, never of priors or surfaces.

Segmentation (``segment``): a segment is a base character followed by its combining
marks (Unicode categories Mn, Me), its spacing modifier letters (category Lm, e.g.
ː ʰ ʲ ʷ ˀ ʼ) and, after a tie bar (U+0361, U+035C), the next base character (t͡ʃ).
Text containing spaces is taken as pre-segmented: segments are the space-separated
tokens. Text is NFC-normalised first so precomposed and decomposed marks agree.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Iterable, Optional, Sequence

import pynini

from fst_factors.errors import InputError, UnknownSymbolError

TIE_BARS = {"\u0361", "\u035c"}
EPSILON_SYMBOL = "<eps>"


_FORMAT_NAMES = {"\ufeff": "a byte-order mark", "\u200b": "a zero-width space",
                 "\u00ad": "a soft hyphen", "\u200e": "a left-to-right mark",
                 "\u200f": "a right-to-left mark"}


def describe_char(ch: str) -> str:
    """A phrase naming a character that has no place in a word, for error messages:
    ``'the byte-order mark U+FEFF'``, ``'the control character U+0007'``. A byte-order
    mark inside a line is usually left over from concatenated files; one at the very
    start of a file is accepted by the readers and never gets here."""
    code = f"U+{ord(ch):04X}"
    if ch in _FORMAT_NAMES:
        return f"{_FORMAT_NAMES[ch]} {code} (remove it)"
    cat = unicodedata.category(ch)
    if cat == "Cc":
        return f"the control character {code}"
    if cat == "Cf":
        return f"the invisible format character {code}"
    if cat in ("Zl", "Zp"):
        return f"the line/paragraph separator {code}"
    return f"the non-text character {code} ({cat})"


def _attaches(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Me", "Lm")


def segment(text: str) -> tuple[str, ...]:
    """Split a word into segments (see module docstring).

    >>> segment("tʃʰaːt͡ʃ")
    ('t', 'ʃʰ', 'aː', 't͡ʃ')
    >>> segment("t ʃ a")
    ('t', 'ʃ', 'a')
    """
    text = unicodedata.normalize("NFC", text.strip())
    if not text:
        return ()
    if any(c.isspace() for c in text):
        return tuple(text.split())
    segs: list[str] = []
    join_next = False
    for ch in text:
        if segs and (join_next or _attaches(ch)):
            segs[-1] += ch
            join_next = ch in TIE_BARS
        else:
            segs.append(ch)
            join_next = False
    return tuple(segs)


class Alphabet:
    """An immutable symbol inventory: symbol i (0-based) has label i + 1.

    >>> a = Alphabet(["a", "b"])
    >>> a.encode(segment("ab")), a.join((2, 1))
    ((1, 2), 'ba')
    """

    def __init__(self, symbols: Iterable[str], boundary: Optional[str] = None):
        syms = tuple(symbols)
        if not all(isinstance(s, str) for s in syms):
            raise InputError("alphabet symbols must be strings")
        if len(set(syms)) != len(syms):
            seen: set = set()
            dup = sorted({s for s in syms if s in seen or seen.add(s)})
            raise InputError(f"duplicate symbols in alphabet: {dup[:10]}")
        for s in syms:
            if not s or any(c.isspace() for c in s):
                raise InputError(f"invalid alphabet symbol {s!r} (empty or contains space)")
        if boundary is not None:
            if not isinstance(boundary, str):
                raise InputError(f"boundary symbol {boundary!r} is not a string")
            if boundary in syms:
                raise InputError(f"boundary symbol {boundary!r} is also a segment symbol")
            syms = syms + (boundary,)
        self._symbols = syms
        self._boundary = boundary
        self._index = {s: i + 1 for i, s in enumerate(syms)}
        self._spaced = any(segment(s) != (s,) for s in syms)

    # --- construction -------------------------------------------------------------
    @classmethod
    def from_words(cls, words: Iterable[str], boundary: Optional[str] = None) -> "Alphabet":
        """The sorted set of segments occurring in ``words``."""
        seen: set[str] = set()
        for w in words:
            seen.update(segment(w))
        return cls(sorted(seen), boundary=boundary)

    def with_boundary(self, boundary: str) -> "Alphabet":
        return Alphabet(self.segment_symbols, boundary=boundary)

    # --- queries ------------------------------------------------------------------
    @property
    def symbols(self) -> tuple[str, ...]:
        """All symbols, label order (boundary last if present)."""
        return self._symbols

    @property
    def segment_symbols(self) -> tuple[str, ...]:
        return self._symbols[:-1] if self._boundary is not None else self._symbols

    @property
    def boundary(self) -> Optional[str]:
        return self._boundary

    @property
    def boundary_label(self) -> Optional[int]:
        return len(self._symbols) if self._boundary is not None else None

    @property
    def size(self) -> int:
        """Number of labels (including the boundary, excluding epsilon)."""
        return len(self._symbols)

    @property
    def num_segments(self) -> int:
        return len(self.segment_symbols)

    def __len__(self) -> int:
        return self.size

    def __contains__(self, sym: str) -> bool:
        return sym in self._index

    def __eq__(self, other) -> bool:
        return isinstance(other, Alphabet) and other._symbols == self._symbols and \
            other._boundary == self._boundary

    def __hash__(self) -> int:
        return hash((self._symbols, self._boundary))

    def __repr__(self) -> str:
        b = f", boundary={self._boundary!r}" if self._boundary else ""
        return f"Alphabet({list(self.segment_symbols)!r}{b})"

    def label(self, sym: str, where: str = "") -> int:
        try:
            return self._index[sym]
        except KeyError:
            raise UnknownSymbolError(sym, where) from None

    def symbol(self, label: int) -> str:
        if not 1 <= label <= len(self._symbols):
            raise InputError(f"label {label} outside alphabet 1..{len(self._symbols)}")
        return self._symbols[label - 1]

    def encode(self, word: str | Sequence[str], where: str = "") -> tuple[int, ...]:
        """Labels of a word (a string to segment, or a sequence of segments).

        Raises :class:`UnknownSymbolError` naming the first unknown segment."""
        segs = segment(word) if isinstance(word, str) else tuple(word)
        out = []
        for s in segs:
            if s not in self._index:
                ctx = f"{where} " if where else ""
                raise UnknownSymbolError(s, f"{ctx}{''.join(segs)!r}".strip())
            out.append(self._index[s])
        return tuple(out)

    def decode(self, labels: Sequence[int]) -> tuple[str, ...]:
        return tuple(self.symbol(a) for a in labels)

    def join(self, labels: Sequence[int]) -> str:
        """Display form of a labelled string; segments are space-separated only when
        some symbol would not re-segment to itself (pre-segmented multi-letter input)."""
        return (" " if self._spaced else "").join(self.decode(labels))

    def symbol_table(self) -> pynini.SymbolTable:
        st = pynini.SymbolTable()
        st.add_symbol(EPSILON_SYMBOL, 0)
        for i, s in enumerate(self._symbols, start=1):
            st.add_symbol(s, i)
        return st

    # --- persistence --------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"symbols": list(self.segment_symbols), "boundary": self._boundary}

    @classmethod
    def from_dict(cls, d: dict) -> "Alphabet":
        return cls(d["symbols"], boundary=d.get("boundary"))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)
