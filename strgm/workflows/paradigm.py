"""The paradigm workflow: build the phonology graph of a paradigm, infer, score held-out
words (Cotterell, Peng & Eisner 2015, §6: predict hidden surface forms from the inferred
underlying forms).

    run = infer_paradigm(read_paradigm("words.tsv"), "pruned", holdout=0.1, seed=0)
    run.result.belief(run.model.morpheme_vars["PAST"]).kbest(3)
    run.scores.exact_match, run.scores.mean_neg_logp

No argparse and no printing: ``strgm infer`` and ``strgm demo`` call the two halves
(:func:`prepare_paradigm`, then :func:`run_inference`) to print the size of the model
before inference starts, and only format what they return; the examples call
:func:`infer_paradigm`. Progress goes to the optional ``progress(message)`` callback of
:func:`strgm.inference.infer`.

Held-out words are chosen by :func:`strgm.models.phonology.holdout_split` (seeded), hidden
in the graph, and scored by :func:`strgm.models.scoring.score_words` — the scorer EM's
held-out evaluation uses too — from the segments their paradigm entries already hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import strgm.inference as inference
from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError
from strgm.models.phonology import PhonologyModel, build_phonology_model, holdout_split
from strgm.models.scoring import HoldoutScores, score_words
from fst_factors.transducers.edit import P_COPY

__all__ = ["ParadigmRun", "held_out_entries", "infer_paradigm", "prepare_paradigm",
           "run_inference"]


@dataclass
class ParadigmRun:
    """One run of the paradigm workflow.

    ``paradigm`` is the paradigm as given; ``model`` its factor graph with the held-out
    words hidden; ``held_out`` the held-out entries (word key -> ParadigmEntry, with
    their true surfaces); after :func:`run_inference`, ``result`` is the
    :class:`~strgm.inference.InferenceResult` and ``scores`` the held-out scores (None
    without a holdout)."""

    paradigm: Paradigm
    model: PhonologyModel
    held_out: dict = field(default_factory=dict)
    method: Optional[str] = None
    result: Optional[object] = None
    scores: Optional[HoldoutScores] = None

    def __repr__(self) -> str:
        acc = "" if self.scores is None else \
            f", exact_match={self.scores.exact_match:.3g}"
        return (f"ParadigmRun(words={len(self.paradigm)}, "
                f"morphemes={len(self.paradigm.morphemes)}, held_out={len(self.held_out)}, "
                f"method={self.method!r}, done={self.result is not None}{acc})")

    @property
    def gold(self) -> dict:
        """Held-out word key -> true surface form."""
        return {k: e.surface for k, e in self.held_out.items()}

    def underlying_forms(self, k: int = 1) -> dict:
        """Morpheme → its ``k`` best underlying forms [(form, probability)] under the
        result's beliefs (after :func:`run_inference`)."""
        if self.result is None:
            raise InputError("no inference has run: call run_inference(run, method) first")
        return {m: self.result.belief(v).kbest(k)
                for m, v in sorted(self.model.morpheme_vars.items())}

    @property
    def n_observed(self) -> int:
        """Observed words of the graph (those of the paradigm minus the held-out ones)."""
        return len(self.model.paradigm.observed)


def held_out_entries(paradigm: Paradigm, holdout, seed: int = 0) -> dict:
    """Word key -> entry of the held-out words: a seeded random fraction of the observed
    words when ``holdout`` is a number in (0, 1) (:func:`holdout_split`), the named words
    when it is a collection of word keys (each must be an observed word), none when it is
    None or empty."""
    if not holdout:
        return {}
    by_key = {e.key: e for e in paradigm.entries}
    if isinstance(holdout, (int, float)):
        return {k: by_key[k] for k in holdout_split(paradigm, holdout, seed)}
    if isinstance(holdout, str):
        holdout = [holdout]
    for k in holdout:
        if k not in by_key or by_key[k].surface is None:
            raise InputError(f"cannot hold out {k!r}: not an observed word",
                             path=paradigm.source)
    return {k: by_key[k] for k in sorted(holdout)}


def prepare_paradigm(paradigm: Paradigm, holdout: Optional[float] = None, seed: int = 0,
                     model=None, *, p_copy: float = P_COPY, boundary: Optional[str] = None,
                     mean_length: Optional[float] = None, ur_prior=None) -> ParadigmRun:
    """The graph of ``paradigm`` with its ``holdout`` words hidden (a fraction or word
    keys: :func:`held_out_entries`). ``model``: a trained phonology (a
    :class:`~strgm.models.edit_model.PhonologyEditModel`, e.g. from ``strgm train
    --save``) used as every word's phonology, over its own alphabet; default the
    untrained copy-biased edit transducer with ``p_copy``. ``ur_prior``: the prior on
    every morpheme's underlying form (an :class:`~strgm.models.ur_prior.HMMPrior` or an
    acceptor; default the geometric-length unigram, docs/phonology.md). Bad
    keywords raise :class:`~strgm.errors.OptionError` naming them (``fraction``, ``seed``,
    ``p_copy``, ``boundary``, ``mean_length``)."""
    held = held_out_entries(paradigm, holdout, seed)
    extra = {}
    if model is not None:
        extra = {"alphabet": model.alphabet, "phonology": model.fst()}
    pm = build_phonology_model(paradigm, p_copy=p_copy, hidden=held.keys(), boundary=boundary,
                               mean_length=mean_length, ur_prior=ur_prior, **extra)
    return ParadigmRun(paradigm, pm, held)


def run_inference(run: ParadigmRun, method: str = "pruned",
                  progress: Optional[Callable[[str], None]] = None, **opts) -> ParadigmRun:
    """``run`` with inference done (:func:`strgm.inference.infer` with ``method`` and the
    engine options ``opts``: ``max_iters``, ``tol``, ``kbest``, ``max_states``,
    ``max_memory``, ``order``, ``projection``, ``lam``, ``anneal``) and its held-out words
    scored from the beliefs of their surface variables."""
    result = inference.infer(run.model.graph, method, progress=progress, **opts)
    scores = None
    if run.held_out:
        beliefs = {k: result.belief(run.model.word_vars[k]) for k in run.held_out}
        scores = score_words(beliefs, run.held_out, run.model.alphabet)
    return replace(run, method=method, result=result, scores=scores)


def infer_paradigm(paradigm: Paradigm, method: str = "pruned",
                   holdout: Optional[float] = None, seed: int = 0, model=None, *,
                   p_copy: float = P_COPY, boundary: Optional[str] = None,
                   mean_length: Optional[float] = None, ur_prior=None,
                   progress: Optional[Callable[[str], None]] = None, **opts) -> ParadigmRun:
    """Underlying forms of ``paradigm`` by ``method`` ("bp", "pruned", "ep", "pep"), with
    an optional seeded held-out evaluation: :func:`prepare_paradigm` then
    :func:`run_inference` (their docstrings list the keywords)."""
    run = prepare_paradigm(paradigm, holdout, seed, model, p_copy=p_copy, boundary=boundary,
                           mean_length=mean_length, ur_prior=ur_prior)
    return run_inference(run, method, progress=progress, **opts)
