"""Two small paradigms of our own making whose analyses need the rule search's width-2
contexts and its beam (docs/phonology.md), with invented stems.

* :func:`nasal_prefixed_paradigm`: a prefix /n/ ("3") takes the place of a following
  stop and voices it, and is lost before a fricative (as in Zoque): /n+pelu/ → [mbelu],
  /n+kilo/ → [ŋɡilo], /n+sofa/ → [sofa]. The voicing rule must be found before place
  assimilation pays, so the first rule of the right analysis gains less than a rival's.
* :func:`raised_devoiced_paradigm`: o → u before a final voiced non-nasal consonant,
  then final devoicing (the counterbleeding order of Polish): /rob/ → [rup], /robi/ →
  [robi], /ton/ → [ton]. The raising context is two segments wide.
"""

from __future__ import annotations

from typing import Sequence

from strgm.datasets.paradigm import Paradigm

#: invented stems for :func:`nasal_prefixed_paradigm`
NASAL_PREFIX_STEMS = ("pelu", "tiko", "kasa", "bari", "dumo", "ɡena", "ʧupi", "sofa",
                      "fise", "ʃoti", "piru", "tuma", "kilo", "potu", "ɡali", "sima")
#: invented stems for :func:`raised_devoiced_paradigm`
RAISING_STEMS = ("rob", "kod", "noz", "loɡ", "bor", "sol", "toj", "dom", "ton", "kot",
                 "sop", "nos", "tuk", "ʃum", "ʒur", "klub", "ɡruz", "ʒab", "wiɡ", "ded",
                 "bez", "ʃab", "mod", "ʒol", "pod", "lur")

_VOICED = {"p": "b", "t": "d", "k": "ɡ", "ʧ": "ʤ"}
_PLACE = {"p": "m", "b": "m", "k": "ŋ", "ɡ": "ŋ", "ʧ": "ɲ", "ʤ": "ɲ"}
_DEVOICED = {"b": "p", "d": "t", "z": "s", "ɡ": "k"}


def nasal_prefixed(stem: str) -> str:
    """The surface of /n/ + ``stem``."""
    c = stem[0]
    if c in "sfʃ":
        return stem
    return _PLACE.get(c, "n") + _VOICED.get(c, c) + stem[1:]


def raised_devoiced(stem: str) -> str:
    """The surface of the bare ``stem``."""
    if len(stem) >= 2 and stem[-2] == "o" and stem[-1] in "bdzɡrlj":
        stem = stem[:-2] + "u" + stem[-1]
    return stem[:-1] + _DEVOICED.get(stem[-1], stem[-1])


def nasal_prefixed_paradigm(stems: Sequence[str] = NASAL_PREFIX_STEMS) -> Paradigm:
    """Stem ``R00``… bare, and with the prefix ``3`` (words ``R00`` and ``3 R00``)."""
    pairs = []
    for i, st in enumerate(stems):
        pairs += [([f"R{i:02d}"], st), (["3", f"R{i:02d}"], nasal_prefixed(st))]
    return Paradigm.from_pairs(pairs, source="<nasal-prefixed>")


def raised_devoiced_paradigm(stems: Sequence[str] = RAISING_STEMS) -> Paradigm:
    """Stem ``R00``… bare, and with the plural ``-i`` (words ``R00`` and ``R00 PL``)."""
    pairs = []
    for i, st in enumerate(stems):
        pairs += [([f"R{i:02d}"], raised_devoiced(st)), ([f"R{i:02d}", "PL"], st + "i")]
    return Paradigm.from_pairs(pairs, source="<raised-devoiced>")
