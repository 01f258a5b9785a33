"""Synthetic paradigms with gold underlying forms.

Morpheme URs are sampled from CV templates over a small inventory, words are a root alone
or a root plus one suffix, and surfaces are produced by a known cascade of obligatory
``pynini.cdrewrite`` rules (:func:`fst_factors.transducers.rule_cascade`), in this order:

1. vowel harmony: a front vowel (i, e) becomes back (u, o) after a back vowel and up to
   two consonants;
2. voicing assimilation: a voiced obstruent becomes voiceless after a voiceless obstruent;
3. final devoicing: a voiced obstruent becomes voiceless at the end of the word.

So the same suffix surfaces in several forms (-de/-te/-do/-to) and roots alternate
(final devoicing), which is what underlying-form inference must undo. Accuracy is then
measured as in PEP §7: mean −log q_V(gold UR) over the morpheme variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pynini

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.errors import StrgmError
from fst_factors.wfsa.construct import string_acceptor
from fst_factors.wfsa.paths import candidate_strings

VOICELESS = "ptks"
VOICED = "bdgz"
SONORANTS = "mnl"
FRONT = "ie"
BACK = "uo"
CONSONANTS = VOICELESS + VOICED + SONORANTS
VOWELS = FRONT + BACK
#: suffix label -> UR (each shows a different alternation)
SUFFIXES = {"PL": "z", "PAST": "de", "GEN": "in", "DIM": "ek"}
TEMPLATES = ("CVC", "CVCV", "CVCC", "CCVC", "CVCVC")


@dataclass
class SyntheticData:
    """A paradigm with every surface observed, the gold URs and the generating rules."""

    paradigm: Paradigm
    alphabet: Alphabet
    gold_urs: dict  # morpheme label -> UR (string)
    gold_surfaces: dict  # word key -> surface (string)
    rules: list = field(default_factory=list)

    def gold_labels(self) -> dict:
        return {m: self.alphabet.encode(u) for m, u in self.gold_urs.items()}


def inventory() -> Alphabet:
    return Alphabet(list(CONSONANTS + VOWELS))


def phonology_rules(alphabet: Alphabet) -> list:
    """The rule cascade (see module docstring) over ``alphabet``'s labels."""
    lab = alphabet.label
    cons = [(lab(c),) for c in CONSONANTS]
    back_ctx = []
    for v in BACK:
        back_ctx.append((lab(v),))
        back_ctx += [(lab(v),) + c for c in cons]
        back_ctx += [(lab(v),) + c + d for c in cons for d in cons]
    rules = [ff.Rule(((lab(f),),), (lab(b),), left=tuple(back_ctx), name=f"harmony {f}->{b}")
             for f, b in zip(FRONT, BACK)]
    vl = tuple((lab(c),) for c in VOICELESS)
    rules += [ff.Rule(((lab(v),),), (lab(u),), left=vl, name=f"assimilation {v}->{u}")
              for v, u in zip(VOICED, VOICELESS)]
    rules += [ff.Rule(((lab(v),),), (lab(u),), at_end=True, name=f"devoicing {v}->{u}")
              for v, u in zip(VOICED, VOICELESS)]
    return rules


def apply_rules(cascade: pynini.Fst, labels: tuple) -> tuple:
    """The (unique) output of the deterministic rule cascade on a label string."""
    out = pynini.project(pynini.compose(string_acceptor(labels),
                                        pynini.arcsort(cascade, "ilabel")), "output")
    cands = candidate_strings(out, 2)
    if len(cands) != 1:
        raise StrgmError(f"rule cascade is not a function on {labels}: {cands}")
    return cands[0]


def _sample_root(rng: np.random.Generator) -> str:
    t = TEMPLATES[rng.integers(len(TEMPLATES))]
    return "".join(rng.choice(list(CONSONANTS if c == "C" else VOWELS)) for c in t)


def synthetic_paradigm(n_words: int = 100, seed: int = 0, n_suffixes: int = 4
                       ) -> SyntheticData:
    """About ``n_words`` words: roots × (bare form + ``n_suffixes`` suffixed forms).

    Deterministic given ``seed``. Root URs are distinct; each root gets the bare form and
    every suffix, until ``n_words`` words exist.
    """
    rng = np.random.default_rng(seed)
    alphabet = inventory()
    rules = phonology_rules(alphabet)
    cascade = ff.rule_cascade(rules, alphabet.size)
    sufs = dict(list(SUFFIXES.items())[:n_suffixes])
    gold = dict(sufs)
    pairs, surfaces = [], {}
    roots: set = set()
    r = 0
    while len(pairs) < n_words:
        root = _sample_root(rng)
        if root in roots:
            continue
        roots.add(root)
        r += 1
        label = f"R{r:03d}"
        gold[label] = root
        for morphs in [(label,)] + [(label, s) for s in sufs]:
            if len(pairs) >= n_words:
                break
            ur = "".join(gold[m] for m in morphs)
            sr = alphabet.join(apply_rules(cascade, alphabet.encode(ur)))
            key = " ".join(morphs)
            pairs.append((morphs, sr))
            surfaces[key] = sr
    para = Paradigm.from_pairs(pairs, source=f"<synthetic n={n_words} seed={seed}>")
    used = {m for e in para.entries for m in e.morphemes}
    gold = {m: u for m, u in gold.items() if m in used}
    return SyntheticData(para, alphabet, gold, surfaces, rules)
