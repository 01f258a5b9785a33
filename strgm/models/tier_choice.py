"""Which vowels the harmony tier skips, learned from the training words.

The contextual edit model's tier context T is the (back, round) class of the nearest
preceding output vowel that *sets* the tier (:mod:`strgm.transducers.contextual_edit`).
In Turkish every vowel sets it; in Hungarian or Finnish back harmony the front unrounded
vowels are *neutral*: transparent, so a suffix after ``…a…i`` harmonises with the ``a``.
Which vowels are transparent is a fact about the language, so it is learned:

1. candidates (:func:`transparent_candidates`): no vowel, the front unrounded vowels
   ([−back −round]), and the high front unrounded vowels — the transparent sets of the
   harmony systems in textbooks — where present and not all the vowels;
2. every candidate's model is trained by ``screen_iters`` EM iterations (from the same
   copy-biased start) on at most ``screen_words`` training words (a seeded subset of
   30 by default; the held-out words are never used);
3. the candidate with the highest penalised training objective
   ℓ(θ) = Σ_w log p_θ(s_w) − ½λ‖θ‖² wins; ties go to the earlier (smaller) set.

The candidates share every feature template and differ only in the tier's update, so
their objectives compare like for like. Cost: |candidates| × ``screen_iters`` EM
iterations on the subset.
"""

from __future__ import annotations

import warnings
from typing import Callable, Optional

import numpy as np

from strgm.datasets.paradigm import Paradigm
from strgm.errors import ConvergenceWarning
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import split, train_phonology
from strgm.models.ipa_features import feature_table, vowels
from strgm.progress import tagged
from strgm.validate import check_int

__all__ = ["transparent_candidates", "choose_transparent", "with_transparent"]


def transparent_candidates(symbols) -> list:
    """The candidate transparent sets over ``symbols`` (module docstring), as tuples:
    always ``()`` first."""
    table = feature_table(list(symbols), warn=False)
    vs = vowels(symbols, table)
    front = tuple(v for v in vs if not table[v]["back"] and not table[v]["round"])
    high = tuple(v for v in front if table[v]["high"])
    out = [()]
    for c in (front, high):
        if c and c not in out and len(c) < len(vs):
            out.append(c)
    return out


def with_transparent(model: PhonologyEditModel, transparent: tuple,
                     p_copy: float = 0.99) -> PhonologyEditModel:
    """A copy-biased start like ``model`` whose tier skips ``transparent``."""
    classes = dict(model.classes, transparent=tuple(transparent))
    return PhonologyEditModel(model.alphabet, model.spec, classes).initial(p_copy)


def choose_transparent(paradigm: Paradigm, heldout: set, model: PhonologyEditModel, *,
                       screen_words: int = 30, screen_iters: int = 1, seed: int = 0,
                       method: str = "pruned", l2: float = 1.0,
                       infer_opts: Optional[dict] = None, p_copy: float = 0.99,
                       progress: Optional[Callable[[str], None]] = None) -> tuple:
    """(the start model with the chosen transparent set, [(candidate, objective)]).

    Without a tier, or with one candidate only, ``model`` comes back unchanged with an
    empty list."""
    screen_words = check_int("screen_words", screen_words, min=1)
    screen_iters = check_int("screen_iters", screen_iters, min=1)
    cands = transparent_candidates(model.alphabet.segment_symbols)
    if not model.spec.tier or len(cands) < 2:
        return model, []
    train = split(paradigm, set(heldout))
    words = list(train.observed)
    if len(words) > screen_words:
        pick = np.sort(np.random.default_rng(seed).choice(len(words), screen_words,
                                                          replace=False))
        words = [words[i] for i in pick]
    subset = Paradigm(tuple(words), paradigm.source)
    scores = []
    for i, c in enumerate(cands):
        tell = (lambda msg, i=i: progress(tagged(
            msg, f"harmony tier, candidate {i + 1}/{len(cands)}"))) if progress else None
        with warnings.catch_warnings():  # a screening: its E-steps' convergence is moot
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = train_phonology(subset, model=with_transparent(model, c, p_copy),
                                method=method, em_iters=screen_iters, l2=l2,
                                infer_opts=dict(infer_opts or {}), progress=tell)
        scores.append((c, float(r.trace[-1]["objective"])))
    best = max(range(len(cands)), key=lambda i: (scores[i][1], -i))
    return with_transparent(model, cands[best], p_copy), scores
