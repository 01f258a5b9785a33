"""Prediction of held-out words from a trained phonology and the morphemes' beliefs.

Prediction: for a word w = m_1 … m_k, p(s) = Σ_u T_θ(s | u) Π_i b_{m_i}(u_i)
with u = u_1 … u_k ranging over the product of the morphemes' k-best belief strings
(each belief renormalised over its k-best) — "phonology applied to the concatenation of
its morphemes' beliefs".
"""

from __future__ import annotations

import itertools
from typing import Optional

import numpy as np
import pynini

from fst_factors.alphabet import Alphabet
from strgm.errors import InputError
from strgm.inference.belief import Belief
from strgm.models.scoring import score_words
from fst_factors.wfsa import compose, guard, weighted_strings

__all__ = ["morpheme_kbest", "predict", "predict_word", "score"]


def morpheme_kbest(result, pm, morpheme: str, k: int, prior_fst=None) -> list:
    """[(labels, log prob)] of a morpheme's k-best belief strings, renormalised."""
    if morpheme in pm.morpheme_vars:
        items = result.belief(pm.morpheme_vars[morpheme]).kbest_labels(k)
    else:
        raise InputError(f"morpheme {morpheme!r} occurs in no training word; cannot predict")
    lp = np.log([p for _, p in items])
    lp -= np.logaddexp.reduce(lp)
    return [(s, float(v)) for (s, _), v in zip(items, lp)]


def predict_word(phonology: pynini.Fst, alphabet: Alphabet, morph_lists: list,
                 name: str = "word", boundary_label: Optional[int] = None) -> Belief:
    """Belief over surfaces: Σ_u T(s|u) Π b_i(u_i) over the product of k-best lists."""
    urs: dict = {}
    for combo in itertools.product(*morph_lists):
        labels: tuple = ()
        for i, (s, _) in enumerate(combo):
            labels += ((boundary_label,) if i and boundary_label else ()) + tuple(s)
        lw = sum(v for _, v in combo)
        urs[labels] = np.logaddexp(urs.get(labels, -np.inf), lw)
    acc = weighted_strings([(u, -v) for u, v in urs.items()])
    out = pynini.project(compose(acc, phonology), "output")
    out = guard.rmepsilon(out, "ε-removal of a held-out word's prediction",
                          delta=1e-6).connect()
    return Belief(name, out, alphabet)


def predict(phonology: pynini.Fst, alphabet: Alphabet, result, pm, words: list,
            k: int = 8) -> dict:
    """{word key: Belief} for the given ParadigmEntry objects."""
    out = {}
    for e in words:
        lists = [morpheme_kbest(result, pm, m, k) for m in e.morphemes]
        out[e.key] = predict_word(phonology, alphabet, lists, e.key, alphabet.boundary_label)
    return out


def score(beliefs: dict, gold: dict, alphabet: Alphabet) -> dict:
    """Exact match of the 1-best and mean −log p(gold) (inf if a symbol is unknown), as a
    dict: :func:`strgm.models.scoring.score_words` (the one held-out scorer) with
    ``beliefs`` keyed by word."""
    return score_words(beliefs, gold, alphabet).to_dict()
