"""evalb's parameter files (``.prm``): what they say and how they are read.

evalb (Sekine & Collins 1997) takes its scoring conventions from a parameter file of
``KEY VALUE`` lines.  :func:`read_evalb_params` reads one into an :class:`EvalbParams`,
accepting every file evalb reads without complaint and reading it as evalb does:

* a line whose first character is ``#`` is a comment, and so is a blank line; a ``#``
  anywhere else is not (evalb would read ``CUTOFF_LEN 40 # words`` as the value
  ``40 # words``), so it is refused;
* the key is the text up to the first white space, in capitals, starting in the first
  column; the value is the rest of the line with the surrounding white space removed;
* ``DEBUG``, ``MAX_ERROR``, ``CUTOFF_LEN`` and ``LABELED`` take one integer (the last
  line of a key wins, as in evalb): ``DEBUG`` 0, 1 or 2, ``MAX_ERROR`` and ``CUTOFF_LEN``
  at least 0, ``LABELED`` 0 (unlabelled brackets) or 1;
* ``DELETE_LABEL``, ``DELETE_LABEL_FOR_LENGTH`` and ``QUOTE_LABEL`` add one label each
  (evalb would take ``A B`` as one label with a space, which no tree has: refused);
* ``EQ_LABEL`` and ``EQ_WORD`` take two labels or words, counted as equal in both
  directions.  Like evalb, the relation is exactly the listed pairs (not their transitive
  closure); :attr:`EvalbParams.eq_label_map` gives the classes as a map for callers that
  want one.

What evalb only warns about (an unknown key, a missing value, ``EQ_LABEL`` with one
label), silently misreads (``CUTOFF_LEN forty`` is 0 to evalb) or skips (a line of one or
two characters) is an :class:`~strgm.errors.InputError` naming the file and the line.
``QUOTE_LABEL`` is accepted: the evalb of 2006 (distributed today, with ``new.prm``)
reads it.  ``DEBUG`` is read, but evalb's debugging dumps are not reproduced.
Without a parameter file evalb uses :data:`DEFAULTS`; :data:`COLLINS` is the
distribution's ``COLLINS.prm``, the convention of WSJ parsing results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from strgm.errors import InputError
from strgm.safe_io import read_text

__all__ = ["EvalbParams", "DEFAULTS", "COLLINS", "read_evalb_params",
           "parse_evalb_params", "format_evalb_params"]

#: The integer keys with (smallest, largest) value allowed (None: no upper bound).
INT_KEYS = {"DEBUG": (0, 2), "MAX_ERROR": (0, None), "CUTOFF_LEN": (0, None),
            "LABELED": (0, 1)}
#: The keys that add one label to a set.
LABEL_KEYS = ("DELETE_LABEL", "DELETE_LABEL_FOR_LENGTH", "QUOTE_LABEL")
#: The keys that add a pair of equal labels or words.
PAIR_KEYS = ("EQ_LABEL", "EQ_WORD")
KEYS = (*INT_KEYS, *LABEL_KEYS, *PAIR_KEYS)
#: evalb's white space (C's ``isspace`` in the C locale).
SPACE = " \t\n\v\f\r"
_INT = re.compile(r"[+-]?[0-9]+")
_FIELDS = re.compile(f"[{re.escape(SPACE)}]+")


@dataclass(frozen=True)
class EvalbParams:
    """The settings of one evalb parameter file (field ``x`` is key ``X``); the defaults
    are evalb's own, used when no file is given.  ``path`` names the file read (for
    messages; not compared)."""

    debug: int = 0
    max_error: int = 10
    cutoff_len: int = 40
    labeled: bool = True
    delete_label: frozenset = frozenset()
    delete_label_for_length: frozenset = frozenset()
    quote_label: frozenset = frozenset()
    eq_label: tuple = ()
    eq_word: tuple = ()
    path: str | None = field(default=None, compare=False)

    def same_label(self, a: str, b: str) -> bool:
        """evalb's label comparison: equal, or a listed ``EQ_LABEL`` pair either way."""
        return a == b or (a, b) in self.eq_label or (b, a) in self.eq_label

    def same_word(self, a: str, b: str) -> bool:
        """evalb's word comparison: equal, or a listed ``EQ_WORD`` pair either way."""
        return a == b or (a, b) in self.eq_word or (b, a) in self.eq_word

    @property
    def eq_label_map(self) -> dict:
        """``EQ_LABEL``'s classes as label -> representative (the class's label that
        comes first in the file), representatives left out: ``{"PRT": "ADVP"}`` for
        :data:`COLLINS`.  Equal to :meth:`same_label` when no two pairs share a label."""
        rep: dict = {}

        def find(x):
            while rep.get(x, x) != x:
                x = rep[x]
            return x
        for a, b in self.eq_label:
            ra, rb = find(a), find(b)
            rep.setdefault(ra, ra)
            if ra != rb:
                rep[rb] = ra
        return {x: find(x) for x in rep if find(x) != x}

    def to_dict(self) -> dict:
        """The settings as a JSON-ready dict keyed by evalb's keys (sets sorted)."""
        return {"DEBUG": self.debug, "MAX_ERROR": self.max_error,
                "CUTOFF_LEN": self.cutoff_len, "LABELED": int(self.labeled),
                "DELETE_LABEL": sorted(self.delete_label),
                "DELETE_LABEL_FOR_LENGTH": sorted(self.delete_label_for_length),
                "QUOTE_LABEL": sorted(self.quote_label),
                "EQ_LABEL": [list(p) for p in self.eq_label],
                "EQ_WORD": [list(p) for p in self.eq_word]}


#: evalb's settings without a parameter file.
DEFAULTS = EvalbParams()

#: The settings of the distribution's ``COLLINS.prm``: labelled brackets, ``TOP``,
#: ``-NONE-`` and the punctuation tags deleted, length without ``-NONE-``, ADVP = PRT.
COLLINS = EvalbParams(
    delete_label=frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."}),
    delete_label_for_length=frozenset({"-NONE-"}), eq_label=(("ADVP", "PRT"),),
    path="COLLINS.prm")


def read_evalb_params(path) -> EvalbParams:
    """The parameter file at ``path`` (UTF-8); InputError naming the file, and the line
    for a bad line (module docstring)."""
    return parse_evalb_params(read_text(path, "evalb parameter file"), str(path))


def parse_evalb_params(text: str, path: str = "<string>") -> EvalbParams:
    """The parameters written in ``text`` (the contents of a file named ``path``)."""
    values: dict = {}
    sets: dict = {k: [] for k in (*LABEL_KEYS, *PAIR_KEYS)}
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip(SPACE)
        if not line or line.startswith("#"):
            continue
        key, value = _key_value(line, path, number)
        if key in INT_KEYS:
            values[key] = _int_value(key, value, path, number)
        else:
            fields = _FIELDS.split(value)
            want = 2 if key in PAIR_KEYS else 1
            if len(fields) != want:
                what = "two labels" if key == "EQ_LABEL" else (
                    "two words" if key == "EQ_WORD" else "one label")
                raise InputError(f"{key} takes {what}, got {value!r}", path, number)
            sets[key].append(tuple(fields) if want == 2 else fields[0])
    return EvalbParams(
        debug=values.get("DEBUG", DEFAULTS.debug),
        max_error=values.get("MAX_ERROR", DEFAULTS.max_error),
        cutoff_len=values.get("CUTOFF_LEN", DEFAULTS.cutoff_len),
        labeled=bool(values.get("LABELED", int(DEFAULTS.labeled))),
        delete_label=frozenset(sets["DELETE_LABEL"]),
        delete_label_for_length=frozenset(sets["DELETE_LABEL_FOR_LENGTH"]),
        quote_label=frozenset(sets["QUOTE_LABEL"]),
        eq_label=tuple(dict.fromkeys(sets["EQ_LABEL"])),
        eq_word=tuple(dict.fromkeys(sets["EQ_WORD"])), path=path)


def _key_value(line: str, path: str, number: int) -> tuple:
    """(key, value) of a non-comment line; InputError for an indented line, an unknown
    key or a missing value."""
    if line[0] in SPACE:
        raise InputError("indented line: evalb reads a key only from the first column "
                         "(a comment starts with '#' in the first column)", path, number)
    parts = _FIELDS.split(line, maxsplit=1)
    key = parts[0]
    if key not in KEYS:
        raise InputError(f"unknown key {key!r} (evalb's keys: {', '.join(KEYS)})",
                         path, number)
    value = parts[1].strip(SPACE) if len(parts) > 1 else ""
    if not value:
        raise InputError(f"{key} has no value", path, number)
    if "#" in value and key in INT_KEYS:
        raise InputError(f"{key}: '#' starts a comment only in the first column "
                         f"(evalb would read the value {value!r})", path, number)
    return key, value


def _int_value(key: str, value: str, path: str, number: int) -> int:
    """The integer value of an integer key, in its range; InputError otherwise."""
    lo, hi = INT_KEYS[key]
    if not _INT.fullmatch(value):
        raise InputError(f"{key} takes one integer, got {value!r}", path, number)
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        allowed = f"at least {lo}" if hi is None else f"from {lo} to {hi}"
        raise InputError(f"{key} must be {allowed}, got {v}", path, number)
    return v


def format_evalb_params(params: EvalbParams) -> str:
    """``params`` as the text of a parameter file that evalb and
    :func:`parse_evalb_params` read back as ``params``."""
    out = [f"DEBUG {params.debug}", f"MAX_ERROR {params.max_error}",
           f"CUTOFF_LEN {params.cutoff_len}", f"LABELED {int(params.labeled)}"]
    for key in LABEL_KEYS:
        out += [f"{key} {x}" for x in sorted(getattr(params, key.lower()))]
    for key in PAIR_KEYS:
        out += [f"{key} {a} {b}" for a, b in getattr(params, key.lower())]
    return "\n".join(out) + "\n"

