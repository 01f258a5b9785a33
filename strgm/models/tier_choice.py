"""Which vowels the harmony tier skips, learned from the training words.

The contextual edit model's tier context T is the (back, round) class of the nearest
preceding output vowel that *sets* the tier (:mod:`fst_factors.transducers.contextual_edit`).
In Turkish every vowel sets it; in Hungarian or Finnish back harmony the front unrounded
vowels are *neutral*: transparent, so a suffix after ``…a…i`` harmonises with the ``a``.
Which vowels are transparent is a fact about the language, so it is learned:

1. candidates (:func:`transparent_candidates`): no vowel, the front unrounded vowels
   ([−back −round]), and the high front unrounded vowels — the transparent sets of the
   harmony systems in textbooks — where present and not all the vowels;
2. every candidate starts from the same copy-biased θ₀ on the training words (all of
   them by default, else a seeded subset of ``screen_words``; the held-out words are
   never used). θ₀ sets only the global biases, so every candidate's T_θ₀ defines the same
   distribution p_θ₀(s | u): one E-step serves them all
   (:func:`strgm.models.em.e_step_messages`), and each candidate's expected counts
   are read off the same messages in its own feature templates;
3. each candidate takes one M-step, θ_c = argmax_θ Q_c(θ) − ½λ‖θ‖², and the candidate
   with the highest maximised auxiliary Q_c(θ_c) − ½λ‖θ_c‖² wins; ties go to the
   earlier (smaller) set. Q_c(θ₀) is the same for every candidate (the posterior
   expected log-probability of the edit paths under one distribution), so this ranks
   the candidates by EM's guaranteed gain, ℓ(θ_c) − ℓ(θ₀) ≥ Q_c(θ_c) − Q_c(θ₀)
   (Dempster, Laird & Rubin 1977), without an E-step per candidate.

The candidates share every feature template and differ only in the tier's update, so
their auxiliaries compare like for like. On every training word the screening *is*
EM's first iteration with the candidates' M-steps side by side: EM continues from the
winner's θ_c (:class:`strgm.models.em.FirstStep`). Cost: one E-step, and per candidate
one pass of expected counts and one M-step; over plain EM, the losers' counts and
M-steps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from strgm.datasets.paradigm import Paradigm
from strgm.errors import ConvergenceWarning
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import FirstStep, e_step_messages, split
from strgm.models.training import expected_counts, m_step
from strgm.models.ipa_features import feature_table, vowels
from strgm.progress import tagged
from strgm.validate import check_int
from fst_factors.transducers.edit import P_COPY

__all__ = ["TierScreening", "transparent_candidates", "choose_transparent",
           "screen_candidates", "screening_words", "with_transparent"]


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
                     p_copy: float = P_COPY) -> PhonologyEditModel:
    """A copy-biased start like ``model`` whose tier skips ``transparent``."""
    classes = dict(model.classes, transparent=tuple(transparent))
    return PhonologyEditModel(model.alphabet, model.spec, classes).initial(p_copy)


@dataclass
class TierScreening:
    """What :func:`choose_transparent` found: the start ``model`` with the chosen
    transparent set, ``scores`` [(candidate, maximised Q)], the screening ``words`` and
    the chosen candidate's iteration on them (``first_step``: the shared E-step, its
    counts and the M-step; None when there was no screening).
    The chosen start defines the distribution that E-step ran under, so EM on the same
    words begins with it."""

    model: PhonologyEditModel
    scores: list = field(default_factory=list)
    words: Optional[Paradigm] = None
    first_step: Optional[FirstStep] = None


def choose_transparent(paradigm: Paradigm, heldout: set, model: PhonologyEditModel, *,
                       screen_words: Optional[int] = None, seed: int = 0,
                       method: str = "pruned",
                       l2: float = 1.0, infer_opts: Optional[dict] = None,
                       p_copy: float = P_COPY,
                       progress: Optional[Callable[[str], None]] = None,
                       ur_prior=None) -> TierScreening:
    """The screening of the module docstring (``ur_prior``: the morphemes' prior in its
    graph). Without a tier, or with one candidate only, ``model`` comes back unchanged
    with no scores."""
    if screen_words is not None:
        screen_words = check_int("screen_words", screen_words, min=1)
    cands = transparent_candidates(model.alphabet.segment_symbols)
    if not model.spec.tier or len(cands) < 2:
        return TierScreening(model)
    subset = screening_words(paradigm, heldout, screen_words, seed)
    shared, screened = screen_candidates(
        subset, [with_transparent(model, c, p_copy) for c in cands], method=method, l2=l2,
        infer_opts=infer_opts, progress=progress, ur_prior=ur_prior)
    scores = [(c, q) for c, q, _, _ in screened]
    best = max(range(len(cands)), key=lambda i: (scores[i][1], -i))
    _, q, theta, (counts, ll) = screened[best]
    first = FirstStep(shared, counts=counts, ll=ll, theta=theta, q=q)
    return TierScreening(with_transparent(model, cands[best], p_copy), scores, subset,
                         first)


def screening_words(paradigm: Paradigm, heldout: set, screen_words: int,
                    seed: int) -> Paradigm:
    """The training words of ``paradigm`` (``heldout`` keys removed), or a seeded subset
    of ``screen_words`` of them in paradigm order (None: all of them)."""
    words = list(split(paradigm, set(heldout)).observed)
    if screen_words is not None and len(words) > screen_words:
        pick = np.sort(np.random.default_rng(seed).choice(len(words), screen_words,
                                                          replace=False))
        words = [words[i] for i in pick]
    return Paradigm(tuple(words), paradigm.source)


def screen_candidates(train: Paradigm, starts: list, *, method: str = "pruned",
                      l2: float = 1.0, infer_opts: Optional[dict] = None,
                      progress: Optional[Callable[[str], None]] = None,
                      ur_prior=None) -> tuple:
    """(the shared E-step, [(transparent set, Q_c(θ_c) − ½λ‖θ_c‖², θ_c,
    (counts, Σ log Z))]) for the copy-biased ``starts`` (one distribution: module
    docstring) on the words of ``train``: one shared E-step, then each candidate's
    counts and M-step."""
    opts = dict(infer_opts or {})
    with warnings.catch_warnings():  # a screening: its E-step's convergence is moot
        warnings.simplefilter("ignore", ConvergenceWarning)
        shared = e_step_messages(starts[0], train, method, opts,
                                 _tell(progress, "harmony tier"), ur_prior)
    out = []
    for i, m in enumerate(starts):
        tell = _tell(progress, f"harmony tier, candidate {i + 1}/{len(starts)}")
        counts, ll = expected_counts(m.structure, m.theta, shared[0], tell)
        theta, q = m_step(m.structure, counts, m.theta, l2, progress=tell)
        out.append((tuple(m.classes["transparent"]), float(q), theta, (counts, ll)))
    return shared, out


def _tell(progress, tag: str):
    """``progress`` with its messages tagged ``tag`` (None stays None)."""
    return (lambda msg: progress(tagged(msg, tag))) if progress else None
