"""The training workflow: EM on a paradigm's training words, then the held-out words
predicted by the trained phonology and scored.

    run = train_paradigm(read_paradigm("words.tsv"), "pruned", holdout=0.1, em_iters=3)
    run.train.trace, run.scores.exact_match

Prediction (:func:`strgm.models.prediction.predict`): a held-out word's surface belief is the
trained phonology applied to the concatenation of its morphemes' k-best beliefs. A word
with a morpheme that occurs in no training word cannot be predicted: like a word with an
unseen segment it gets p = 0 (never an exact match, −log p = inf) and its entry names the
``unseen_morphemes``; the run goes on. Scores come from
:func:`strgm.models.scoring.score_words`, the scorer of the paradigm workflow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from strgm.datasets.paradigm import Paradigm
from strgm.errors import OptionError
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import TrainResult, split
from strgm.models.prediction import predict
from strgm.models.restarts import train_with_restarts
from strgm.models.scoring import HoldoutScores, score_words
from strgm.models.tier_choice import TierScreening, choose_transparent, with_transparent
from strgm.workflows.paradigm import held_out_entries
from fst_factors.transducers.edit import P_COPY

__all__ = ["TrainRun", "score_trained", "train_paradigm"]


@dataclass
class TrainRun:
    """``train``: EM's result (model, trace, last E-step); ``held_out``: word key ->
    ParadigmEntry; ``scores``: held-out scores, None without a holdout or when no E-step
    ran (a checkpoint already past ``em_iters``)."""

    paradigm: Paradigm
    train: TrainResult
    held_out: dict = field(default_factory=dict)
    scores: Optional[HoldoutScores] = None
    tier_choice: list = field(default_factory=list)  # [(transparent set, objective)]
    ur_prior: object = None  # the UR prior EM used (None: the default unigram)


def score_trained(r: TrainResult, words: list, k: int = 8) -> HoldoutScores:
    """Scores of the held-out paradigm entries ``words`` under the trained model of ``r``
    (module docstring), from the k-best lists of the morpheme beliefs."""
    seen = set(r.graph_model.morpheme_vars)
    ok = [e for e in words if all(m in seen for m in e.morphemes)]
    beliefs = predict(r.model.fst(), r.model.alphabet, r.result, r.graph_model, ok, k)
    lost = {e.key: [m for m in e.morphemes if m not in seen] for e in words
            if e.key not in beliefs}
    return score_words(beliefs, {e.key: e for e in words}, r.model.alphabet,
                       unpredictable=lost)


def train_paradigm(paradigm: Paradigm, method: str = "pruned",
                   holdout: Optional[float] = None, seed: int = 0, model=None, *,
                   transparent=None, progress: Optional[Callable[[str], None]] = None,
                   ur_prior=None, **em_opts) -> TrainRun:
    """EM (:func:`strgm.models.restarts.train_with_restarts` with ``em_opts``:
    ``em_iters``, ``l2``, ``tol``, ``infer_opts``, ``checkpoint``, ``resume``,
    ``restarts``, ``restart_scale``, ``restart_seed``, ``report``) from ``model`` (default: the
    copy-biased start) on the words left after the ``holdout`` words (a fraction or word
    keys: :func:`~strgm.workflows.paradigm.held_out_entries`) are held out, then the
    held-out words scored (module docstring).

    ``transparent``: the vowels the harmony tier skips — None keeps ``model``'s, a
    sequence of vowels sets them, ``"auto"`` learns them from the training words
    (:func:`strgm.models.tier_choice.choose_transparent`; not with ``resume``).

    ``ur_prior``: the prior on the morphemes' underlying forms in every graph EM and the
    tier screening build (an :class:`~strgm.models.ur_prior.HMMPrior`; default the
    geometric-length unigram; docs/phonology.md)."""
    chosen = held_out_entries(paradigm, holdout, seed)
    held = {e.key: e for e in paradigm.entries if e.key in chosen}  # paradigm order
    em_opts = dict(em_opts, ur_prior=ur_prior)
    sc = _tier_start(paradigm, set(held), model, transparent, method, seed, progress,
                     em_opts)
    if sc.first_step is not None and sc.words.entries == split(paradigm, set(held)).entries:
        em_opts = dict(em_opts, first_step=sc.first_step)  # the same words, one start
    r = train_with_restarts(paradigm, method=method, heldout=set(held), model=sc.model,
                            progress=progress, **em_opts)
    scores = score_trained(r, list(held.values())) if held and r.result is not None else None
    return TrainRun(paradigm, r, held, scores, sc.scores, ur_prior)


def _tier_start(paradigm, held, model, transparent, method, seed, progress,
                em_opts) -> TierScreening:
    """The start model for ``transparent`` (:func:`train_paradigm`), with the screening
    when ``transparent`` is "auto"."""
    if transparent is None:
        return TierScreening(model)
    if isinstance(transparent, str) and transparent != "auto":
        raise OptionError("transparent", transparent, "must be None, 'auto' or a sequence "
                          "of vowels")
    if em_opts.get("resume"):
        raise OptionError("transparent", transparent, "a resumed run keeps the tier of its "
                          "checkpoint; leave transparent unset with resume")
    if model is None:
        model = PhonologyEditModel(paradigm.alphabet()).initial(em_opts.get("p_copy", P_COPY))
    if transparent != "auto":
        return TierScreening(with_transparent(model, tuple(transparent),
                                              em_opts.get("p_copy", P_COPY)))
    return choose_transparent(paradigm, held, model, seed=seed, method=method,
                              l2=em_opts.get("l2", 1.0), infer_opts=em_opts.get("infer_opts"),
                              p_copy=em_opts.get("p_copy", P_COPY), progress=progress,
                              ur_prior=em_opts.get("ur_prior"))
