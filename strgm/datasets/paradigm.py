"""Paradigms: which morphemes make up each word, and the word's surface form if observed.

Long format (``read_paradigm_tsv``; the format of the textbook phonology problems)::

    # comment
    <morpheme labels, space-separated, in linear order><TAB><surface IPA>

A surface of ``?`` (or a line with the morphemes only) marks a word to predict.

Wide format (``read_paradigm_csv``): a CSV whose header names one morpheme *template* per
column, e.g. ``root,R,R PAST,R 3SG``; ``R`` in a template stands for the row's root. An
optional first column named ``root`` (or ``id``) gives the root label, otherwise roots are
named R01, R02, ... An empty cell means the word does not exist; ``?`` means predict it.

Files are decoded by :func:`strgm.safe_io.read_text` (UTF-8; a leading byte-order mark
is accepted and dropped). Every error names the file and line; nothing is silently
dropped; a file without any observed surface form is refused (nothing to learn from).
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from fst_factors.alphabet import Alphabet, describe_char, segment
from strgm.errors import InputError, did_you_mean
from strgm.safe_io import read_text

UNKNOWN = "?"


@dataclass(frozen=True)
class ParadigmEntry:
    """One word: its morphemes in order, its surface (None: to predict) and the surface's
    segments, computed once here (:func:`fst_factors.alphabet.segment`) and used by everything
    downstream (alphabet, model building, training, scoring) instead of re-segmenting."""

    morphemes: tuple[str, ...]
    surface: Optional[str]  # None: unobserved (to predict)
    line: Optional[int] = None
    segments: Optional[tuple[str, ...]] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.segments is None and self.surface is not None:
            object.__setattr__(self, "segments", segment(self.surface))

    @property
    def key(self) -> str:
        return " ".join(self.morphemes)


@dataclass(frozen=True)
class Paradigm:
    """An ordered collection of words; ``source`` names the file they came from."""

    entries: tuple[ParadigmEntry, ...]
    source: str = "<memory>"

    def __post_init__(self):
        seen: dict[str, ParadigmEntry] = {}
        for e in self.entries:
            if e.key in seen:
                first = seen[e.key]
                raise InputError(
                    f"word {e.key!r} listed twice (first at line {first.line})",
                    path=self.source, line=e.line)
            seen[e.key] = e

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[Sequence[str], Optional[str]]],
                   source: str = "<memory>") -> "Paradigm":
        return cls(tuple(ParadigmEntry(tuple(m), s, i + 1) for i, (m, s) in enumerate(pairs)),
                   source)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return (f"Paradigm(words={len(self.entries)}, observed={len(self.observed)}, "
                f"morphemes={len(self.morphemes)}, source={self.source!r})")

    @property
    def morphemes(self) -> list[str]:
        """Morpheme labels in order of first appearance."""
        out: dict[str, None] = {}
        for e in self.entries:
            for m in e.morphemes:
                out[m] = None
        return list(out)

    @property
    def observed(self) -> list[ParadigmEntry]:
        return [e for e in self.entries if e.surface is not None]

    def alphabet(self, boundary: Optional[str] = None) -> Alphabet:
        """The sorted set of segments of the observed surfaces (as
        :meth:`Alphabet.from_words`, from the entries' segments)."""
        return Alphabet(sorted({s for e in self.observed for s in e.segments}),
                        boundary=boundary)

    def with_hidden(self, keys: Iterable[str]) -> "Paradigm":
        """A new paradigm whose named words are unobserved."""
        keys = set(keys)
        unknown = keys - {e.key for e in self.entries}
        if unknown:
            first = min(unknown)
            hint = did_you_mean(first, [e.key for e in self.entries])
            raise InputError(f"cannot hide unknown words {sorted(unknown)}{hint}",
                             path=self.source)
        return Paradigm(tuple(ParadigmEntry(e.morphemes, None, e.line) if e.key in keys else e
                              for e in self.entries), self.source)


def _check_surface(surface: str, path: str, line: int, alphabet: Optional[Alphabet]
                   ) -> tuple[str, tuple[str, ...]]:
    """The NFC surface and its segments, or an :class:`InputError` at ``path:line``."""
    surface = unicodedata.normalize("NFC", surface.strip())
    for ch in surface:
        cat = unicodedata.category(ch)
        if cat.startswith("C") or cat in ("Zl", "Zp") or ch in "\t":
            raise InputError(f"surface form {surface!r} contains {describe_char(ch)}",
                             path=path, line=line)
    segs = segment(surface)
    if not segs:
        raise InputError("empty surface form (write '?' for a word to predict)",
                         path=path, line=line)
    if alphabet is not None:
        for s in segs:
            if s not in alphabet:
                raise InputError(f"unknown symbol {s!r} in surface form {surface!r} "
                                 f"(alphabet: {' '.join(alphabet.segment_symbols)})",
                                 path=path, line=line)
    return surface, segs


def _check_morphemes(labels: Sequence[str], path: str, line: int) -> tuple[str, ...]:
    if not labels:
        raise InputError("no morpheme labels before the tab", path=path, line=line)
    for m in labels:
        bad = [c for c in m if unicodedata.category(c).startswith("C")]
        if bad:
            raise InputError(f"morpheme label {m!r} contains {describe_char(bad[0])}",
                             path=path, line=line)
    if len(set(labels)) != len(labels):
        raise InputError(f"a morpheme appears twice in one word: {' '.join(labels)}",
                         path=path, line=line)
    return tuple(labels)


def _require_observed(entries: list, path: str) -> None:
    if not entries:
        raise InputError("no words found (the file is empty or has only comments)",
                         path=path)
    if all(e.surface is None for e in entries):
        raise InputError(f"none of the {len(entries)} words has a surface form (all are "
                         "'?'); give at least one observed word", path=path)


def read_paradigm_tsv(path: str, alphabet: Optional[Alphabet] = None) -> Paradigm:
    """Read the long paradigm format (module docstring). Raises :class:`InputError` with
    file:line on malformed lines, and for a missing, non-UTF-8 or empty file."""
    path = str(path)
    lines = read_text(path, "paradigm file").split("\n")
    entries = []
    for i, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if "\r" in line:
            raise InputError("carriage return (U+000D) inside a line: old Mac line endings? "
                             "save the file with \\n line endings", path=path, line=i)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) > 2:
            raise InputError(f"expected '<morphemes><TAB><surface>', found {len(parts)} "
                             "tab-separated fields", path=path, line=i)
        morphs = _check_morphemes(parts[0].split(), path, i)
        surf = parts[1].strip() if len(parts) == 2 else UNKNOWN
        if surf == UNKNOWN:
            entries.append(ParadigmEntry(morphs, None, i))
        else:
            surf, segs = _check_surface(surf, path, i, alphabet)
            entries.append(ParadigmEntry(morphs, surf, i, segs))
    if entries and all(e.surface is None for e in entries) and not any("\t" in x
                                                                       for x in lines):
        _refuse_spaces(entries, path)
    _require_observed(entries, path)
    return Paradigm(tuple(entries), path)


def _refuse_spaces(entries: list, path: str) -> None:
    """A file without a single tab whose words are all unobserved but have several
    fields was written with spaces between the columns: say so, and how to fix it."""
    first = next((e for e in entries if len(e.morphemes) >= 2), None)
    if first is not None:
        raise InputError("no tab in the file: the surface form must follow the morphemes "
                         "after a TAB, not spaces (fix: sed -E 's/ +([^ ]+) *$/\\t\\1/' "
                         "FILE, or type a tab before each surface form)",
                         path=path, line=first.line)


def _csv_rows(path: str) -> list:
    """(line, cells) of the non-empty, non-comment CSV records (line: where each ends)."""
    text = read_text(path, "paradigm file")
    if "\0" in text:  # Python < 3.11's csv stops at a NUL with its own wording
        line = text.count("\n", 0, text.index("\0")) + 1
        raise InputError(f"{describe_char(chr(0))} in the file", path=path, line=line)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows = []
    try:
        for r in reader:
            if any(c.strip() for c in r) and not r[0].lstrip().startswith("#"):
                rows.append((reader.line_num, r))
    except csv.Error as e:
        raise InputError(f"malformed CSV: {e}", path=path, line=reader.line_num) from None
    return rows


def read_paradigm_csv(path: str, alphabet: Optional[Alphabet] = None,
                      root_symbol: str = "R") -> Paradigm:
    """Read the wide paradigm format (module docstring); errors as for the TSV reader."""
    path = str(path)
    rows = _csv_rows(path)
    if not rows:
        raise InputError("no rows found (the file is empty)", path=path)
    hline, header = rows[0]
    header = [h.strip() for h in header]
    has_id = header[0].lower() in ("root", "id")
    templates = header[1:] if has_id else header
    for j, t in enumerate(templates):
        toks = t.split()
        if toks.count(root_symbol) != 1:
            raise InputError(f"column {j + 1 + has_id} template {t!r} must contain the root "
                             f"symbol {root_symbol!r} exactly once", path=path, line=hline)
    entries = []
    for n, (i, r) in enumerate(rows[1:], start=1):
        cells = [c.strip() for c in r]
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} cells, found {len(cells)}",
                             path=path, line=i)
        root = cells[0] if has_id else f"R{n:02d}"
        if has_id and not root:
            raise InputError("empty root label", path=path, line=i)
        for t, cell in zip(templates, cells[1:] if has_id else cells):
            if not cell:
                continue
            morphs = _check_morphemes([root if tok == root_symbol else tok
                                       for tok in t.split()], path, i)
            surf, segs = (None, None) if cell == UNKNOWN else \
                _check_surface(cell, path, i, alphabet)
            entries.append(ParadigmEntry(morphs, surf, i, segs))
    _require_observed(entries, path)
    return Paradigm(tuple(entries), path)


def read_paradigm(path: str, alphabet: Optional[Alphabet] = None) -> Paradigm:
    """Dispatch on the extension: ``.csv`` wide format, anything else the long TSV format."""
    if str(path).lower().endswith(".csv"):
        return read_paradigm_csv(path, alphabet)
    return read_paradigm_tsv(path, alphabet)
