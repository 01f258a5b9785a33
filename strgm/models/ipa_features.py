"""A small IPA feature table and the context classes the contextual edit model uses.

Each segment gets a feature bundle. Consonants: ``place`` (lab, cor, pal, vel, uvu,
glot), ``manner`` (stop, fric, affr, nasal, lat, rhot, glide), ``voice`` and ``sib``
(sibilant). Vowels: ``high``, ``low``, ``back`` (central vowels count as back, as in
Turkish ɨ) and ``round``. Modifier letters and combining marks on a base character add
``long`` (ː), ``pal`` (ʲ), ``asp`` (ʰ), ``nas`` (̃ ), ``rhot`` (˞) and keep the base's
features. The rhotic mid central vowels ɚ and ɝ are ə and ɜ with ``rhot``.

The table is user-overridable: ``feature_table(symbols, overrides={"x": {...}})``.
Symbols the table does not know get class ``other`` and a warning naming them (never a
silent drop); pass an override to place them.

From the bundles, :func:`symbol_classes` derives what the compiled transducer needs:

* ``major``   context classes: V, voiceless obstruent, voiced obstruent, nasal, liquid/glide
* ``natural`` context classes: ``major`` with obstruents split into coronal stops (t d),
  sibilants, and other obstruents (English -d → -ɪd after t/d, -z → -əz after sibilants)
* ``coarse``  V, voiceless obstruent, voiced obstruent, sonorant
* ``exact``   every symbol its own class
* ``tier``    vowel class (back, round) for the harmony tier, -1 for non-vowels
"""

from __future__ import annotations

import unicodedata
import warnings
from typing import Mapping, Optional, Sequence

from strgm.errors import InputError

_C = "consonant"
_V = "vowel"


def _cons(place, manner, voice, sib=False):
    return {"type": _C, "place": place, "manner": manner, "voice": voice, "sib": sib}


def _vow(high, low, back, rnd):
    return {"type": _V, "high": high, "low": low, "back": back, "round": rnd, "voice": True}


_BASE: dict[str, dict] = {}
for ch, pl in (("p", "lab"), ("t", "cor"), ("c", "pal"), ("k", "vel"), ("q", "uvu"),
               ("ʔ", "glot")):
    _BASE[ch] = _cons(pl, "stop", False)
for ch, pl in (("b", "lab"), ("d", "cor"), ("ɟ", "pal"), ("g", "vel"), ("ɡ", "vel"),
               ("ɢ", "uvu")):
    _BASE[ch] = _cons(pl, "stop", True)
for ch, pl, v, s in (("f", "lab", False, False), ("v", "lab", True, False),
                     ("ɸ", "lab", False, False), ("β", "lab", True, False),
                     ("θ", "cor", False, False), ("ð", "cor", True, False),
                     ("s", "cor", False, True), ("z", "cor", True, True),
                     ("ʃ", "cor", False, True), ("ʒ", "cor", True, True),
                     ("ɕ", "pal", False, True), ("ʑ", "pal", True, True),
                     ("ç", "pal", False, False), ("x", "vel", False, False),
                     ("ɣ", "vel", True, False), ("χ", "uvu", False, False),
                     ("h", "glot", False, False), ("ɦ", "glot", True, False)):
    _BASE[ch] = _cons(pl, "fric", v, s)
for ch, v in (("ʧ", False), ("ʤ", True), ("ʦ", False), ("ʣ", True), ("ʨ", False),
              ("ʥ", True)):
    _BASE[ch] = _cons("cor", "affr", v, True)
for ch, pl in (("m", "lab"), ("n", "cor"), ("ɲ", "pal"), ("ñ", "pal"), ("ŋ", "vel"),
               ("ɴ", "uvu")):
    _BASE[ch] = _cons(pl, "nasal", True)
for ch, pl, mn in (("l", "cor", "lat"), ("ʎ", "pal", "lat"), ("ɫ", "cor", "lat"),
                   ("r", "cor", "rhot"), ("ɾ", "cor", "rhot"), ("ɹ", "cor", "rhot"),
                   ("ʁ", "uvu", "rhot"), ("j", "pal", "glide"), ("w", "lab", "glide"),
                   ("ɥ", "pal", "glide")):
    _BASE[ch] = _cons(pl, mn, True)
for ch, h, lo, bk, rd in (("i", 1, 0, 0, 0), ("y", 1, 0, 0, 1), ("ɪ", 1, 0, 0, 0),
                          ("ʏ", 1, 0, 0, 1), ("e", 0, 0, 0, 0), ("ø", 0, 0, 0, 1),
                          ("ɛ", 0, 0, 0, 0), ("œ", 0, 0, 0, 1), ("æ", 0, 1, 0, 0),
                          ("a", 0, 1, 1, 0), ("ɑ", 0, 1, 1, 0), ("ɒ", 0, 1, 1, 1),
                          ("ɨ", 1, 0, 1, 0), ("ʉ", 1, 0, 1, 1), ("ə", 0, 0, 1, 0),
                          ("ɐ", 0, 1, 1, 0), ("u", 1, 0, 1, 1), ("ʊ", 1, 0, 1, 1),
                          ("ɯ", 1, 0, 1, 0), ("o", 0, 0, 1, 1), ("ɔ", 0, 0, 1, 1),
                          ("ʌ", 0, 0, 1, 0), ("ɤ", 0, 0, 1, 0), ("ɘ", 0, 0, 1, 0),
                          ("ɜ", 0, 0, 1, 0), ("ɞ", 0, 0, 1, 1)):
    _BASE[ch] = _vow(bool(h), bool(lo), bool(bk), bool(rd))
# rhotic (r-coloured) mid central vowels: ə and ɜ with a hook, as in English "bird"
for ch, base in (("ɚ", "ə"), ("ɝ", "ɜ")):
    _BASE[ch] = dict(_BASE[base], rhot=True)

_MODIFIERS = {"ː": "long", "ʲ": "pal", "ʰ": "asp", "\u0303": "nas", "ʷ": "lab",
              "ˀ": "glot", "˞": "rhot"}
CONSONANT_FEATURES = ("place", "manner", "voice", "sib")
VOWEL_FEATURES = ("high", "low", "back", "round", "long", "rhot")


def features_of(symbol: str, overrides: Optional[Mapping[str, dict]] = None
                ) -> Optional[dict]:
    """The feature bundle of one segment (a new dict), or None if unknown."""
    if overrides and symbol in overrides:
        return dict(overrides[symbol])
    s = unicodedata.normalize("NFD", symbol)
    base = s[0]
    if base not in _BASE:
        return None
    f = dict(_BASE[base])
    # affricates written as two letters with a tie bar (t͡ʃ): the second letter decides
    tail = [c for c in s[1:] if c not in ("\u0361", "\u035c")]
    if tail and tail[0] in _BASE and _BASE[tail[0]]["type"] == _C:
        f = _cons("cor", "affr", _BASE[tail[0]]["voice"], True)
        tail = tail[1:]
    for c in tail:
        if c in _MODIFIERS:
            f[_MODIFIERS[c]] = True
    f.setdefault("long", False)
    return f


def feature_table(symbols: Sequence[str], overrides: Optional[Mapping[str, dict]] = None,
                  warn: bool = True) -> dict[str, dict]:
    """Feature bundles for ``symbols``; unknown ones get ``{"type": "other"}`` and a
    warning naming them. ``overrides`` maps symbol -> bundle and wins over the table."""
    out, unknown = {}, []
    for sym in symbols:
        f = features_of(sym, overrides)
        if f is None:
            unknown.append(sym)
            f = {"type": "other", "voice": True, "long": False}
        out[sym] = f
    if unknown and warn:
        warnings.warn(f"IPA feature table: no features for {unknown}; they form their own "
                      "class (pass overrides to place them)", stacklevel=2)
    return out


def major_class(f: dict) -> str:
    if f["type"] == _V:
        return "V"
    if f["type"] != _C:
        return "other"
    if f["manner"] == "nasal":
        return "N"
    if f["manner"] in ("lat", "rhot", "glide"):
        return "L"
    return "D" if f["voice"] else "T"


def natural_class(f: dict) -> str:
    m = major_class(f)
    if m not in ("T", "D"):
        return m
    if f.get("sib"):
        return m + "sib"
    if f["manner"] == "stop" and f["place"] == "cor":
        return m + "cor"
    return m


def tier_class(f: dict) -> int:
    """0..3 = (back, round) of a vowel; -1 for anything else."""
    if f["type"] != _V:
        return -1
    return 2 * int(bool(f["back"])) + int(bool(f["round"]))


def feature_distance(f: dict, g: dict) -> int:
    """Number of differing features; a large number across vowel/consonant."""
    if f["type"] != g["type"]:
        return 99
    keys = CONSONANT_FEATURES if f["type"] == _C else VOWEL_FEATURES
    if f["type"] not in (_C, _V):
        return 1
    return sum(f.get(k, False) != g.get(k, False) for k in keys)


def vowels(symbols: Sequence[str], table: Optional[Mapping[str, dict]] = None) -> list:
    """The vowels among ``symbols``, in order (``table``: their bundles, by default
    looked up without warnings)."""
    table = table if table is not None else feature_table(list(symbols), warn=False)
    return [s for s in symbols if table[s]["type"] == _V]


SCHEMES = ("coarse", "major", "natural", "exact")


def symbol_classes(symbols: Sequence[str], scheme: str,
                   table: Mapping[str, dict]) -> list[int]:
    """Class id (0..C-1) of each symbol under ``scheme`` (order of first appearance)."""
    if scheme not in SCHEMES:
        raise InputError(f"unknown context class scheme {scheme!r}; choose from {SCHEMES}")
    names = []
    for s in symbols:
        names.append(s if scheme == "exact" else
                     major_class(table[s]) if scheme == "major" else
                     natural_class(table[s]) if scheme == "natural" else
                     {"N": "S", "L": "S"}.get(major_class(table[s]), major_class(table[s])))
    index: dict[str, int] = {}
    return [index.setdefault(n, len(index)) for n in names]


def symbol_info(symbols: Sequence[str], *, boundary: bool = False,
                context: str = "natural", right_context: str = "coarse",
                output_context: str = "coarse", max_sub_distance: int = 2,
                transparent: Sequence[str] = (), tier_features: bool = False,
                overrides: Optional[Mapping[str, dict]] = None):
    """The integer maps :class:`fst_factors.transducers.contextual_edit.SymbolInfo` needs.

    ``context`` classes serve L, ``right_context`` K/R, ``output_context`` O; substitutions
    are allowed between segments of the same type differing in at most
    ``max_sub_distance`` features (None: all). ``transparent``: vowels the harmony tier
    skips (they keep their own tier class but do not set the context); each must be a
    vowel of ``symbols``, else :class:`InputError`. ``tier_features``: add the harmony
    templates over single vowel features (back, round, high) to the (back, round) class
    ones (:class:`~fst_factors.transducers.contextual_edit.SymbolInfo`)."""
    import numpy as np

    from fst_factors.transducers.contextual_edit import SymbolInfo

    table = feature_table(symbols, overrides)
    fs = [table[s] for s in symbols]
    n = len(fs)
    voice = np.array([int(f["voice"]) if f["type"] == _C and major_class(f) in "TD" else -1
                      for f in fs])
    tier = np.array([tier_class(f) for f in fs])
    dist = np.array([[feature_distance(f, g) for g in fs] for f in fs])
    sub_ok = ~np.eye(n, dtype=bool)
    if max_sub_distance is not None:
        sub_ok &= dist <= max_sub_distance
    change = np.full((n, n), -1)
    sig: dict = {}
    for i, f in enumerate(fs):
        for j, g in enumerate(fs):
            if i != j and f["type"] == g["type"] and f["type"] in (_C, _V):
                keys = CONSONANT_FEATURES if f["type"] == _C else VOWEL_FEATURES
                diff = tuple(k for k in keys if f.get(k, False) != g.get(k, False))
                change[i, j] = sig.setdefault((f["type"],) + diff, len(sig))
    vs = vowels(symbols, table)
    bad = [t for t in transparent if t not in vs]
    if bad:
        raise InputError(f"transparent segment {bad[0]!r} is not a vowel of the alphabet "
                         f"(vowels: {' '.join(vs)})")
    skip = set(transparent)
    trigger = (tier >= 0) & np.array([s not in skip for s in symbols], dtype=bool)
    height = np.array([int(bool(f["high"])) if f["type"] == _V else -1 for f in fs])
    return SymbolInfo(np.array(symbol_classes(symbols, context, table)),
                      np.array(symbol_classes(symbols, right_context, table)),
                      np.array(symbol_classes(symbols, output_context, table)),
                      tier, voice, sub_ok, change, boundary, trigger, height,
                      bool(tier_features))
