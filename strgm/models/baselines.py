"""Baselines as settings of the same prediction code (strgm.models.prediction.predict).

* ``no_training``: the untrained copy-biased edit transducer (p_copy = 0.99) as the
  phonology, pruned BP on the training words, prediction from morpheme beliefs.
* ``surface_baseline``: each morpheme's surface allomorphs (pieces of the training
  surfaces, split at the boundaries that best match the untrained model's 1-best URs by
  edit distance), most frequent first; p(word) = the allomorph frequency product,
  smoothed by the same untrained edit transducer (so the 1-best is the concatenation of
  the most frequent allomorphs).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

import fst_factors.transducers as ff
from strgm.inference import infer
from strgm.models.em import split
from strgm.models.prediction import predict, predict_word
from strgm.models.phonology import build_phonology_model
from strgm.validate import check_int, check_probability
from fst_factors.transducers.edit import P_COPY


def _untrained(paradigm, heldout, p_copy, progress=None, ur_prior=None):
    p_copy = check_probability("p_copy", p_copy)
    alphabet = paradigm.alphabet()
    train = split(paradigm, set(heldout))
    fst = ff.edit_transducer(alphabet.num_segments, ff.EditParams(p_copy))
    pm = build_phonology_model(train, alphabet=alphabet, phonology=fst, ur_prior=ur_prior)
    # a grammar prior (strgm.models.grammar_prior) has no WFSA message: EP reads it
    method = "pep" if hasattr(ur_prior, "add_to") else "pruned"
    return alphabet, fst, pm, infer(pm.graph, method, max_iters=3, progress=progress)


def no_training(paradigm, heldout, words, p_copy: float = P_COPY, k: int = 8,
                ur_prior=None) -> dict:
    k = check_int("k", k, min=1)
    alphabet, fst, pm, res = _untrained(paradigm, heldout, p_copy, ur_prior=ur_prior)
    return predict(fst, alphabet, res, pm, words, k)


def _edit(a, b) -> int:
    d = np.arange(len(b) + 1)
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return int(d[-1])


def surface_allomorphs(paradigm, heldout, p_copy: float = P_COPY, progress=None,
                       ur_prior=None):
    """(alphabet, untrained edit transducer, morpheme → Counter of its surface pieces in
    the training words, morpheme → the untrained model's 2-best URs): each training
    surface is cut where the pieces best match the untrained 1-best URs by edit
    distance (module docstring). ``progress``: passed to the inference; ``ur_prior``:
    the morphemes' prior (:func:`strgm.models.phonology.build_phonology_model`)."""
    alphabet, fst, pm, res = _untrained(paradigm, heldout, p_copy, progress, ur_prior)
    kbest = {m: [u for u, _ in res.belief(v).kbest_labels(2)]
             for m, v in pm.morpheme_vars.items()}
    ur = {m: ks[0] for m, ks in kbest.items()}
    allo: dict = {m: Counter() for m in ur}
    for e in split(paradigm, set(heldout)).observed:
        s = alphabet.encode(e.segments)
        k = len(e.morphemes)
        best = None
        for cuts in itertools.combinations(range(len(s) + 1), k - 1):
            b = (0,) + cuts + (len(s),)
            cost = sum(_edit(s[b[i]:b[i + 1]], ur[m]) for i, m in enumerate(e.morphemes))
            if best is None or cost < best[0]:
                best = (cost, b)
        b = best[1]
        for i, m in enumerate(e.morphemes):
            allo[m][s[b[i]:b[i + 1]]] += 1
    return alphabet, fst, allo, kbest


def surface_baseline(paradigm, heldout, words, p_copy: float = P_COPY) -> dict:
    alphabet, fst, allo, kbest = surface_allomorphs(paradigm, heldout, p_copy)
    ur = {m: ks[0] for m, ks in kbest.items()}
    out = {}
    for e in words:
        lists = []
        for m in e.morphemes:
            c = allo.get(m) or Counter({ur.get(m, ()): 1})
            tot = sum(c.values())
            lists.append([(a, float(np.log(n / tot))) for a, n in c.most_common(8)])
        out[e.key] = predict_word(fst, alphabet, lists, e.key)
    return out
