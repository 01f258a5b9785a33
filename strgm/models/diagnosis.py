"""Why a held-out word was missed: a classification of prediction errors by controls.

A trained phonology predicts a held-out word w = m_1 … m_k from its morphemes' beliefs
(:func:`strgm.models.prediction.predict`). When the 1-best prediction is wrong, the cause is one
of a few kinds, each told apart by re-running one part of the pipeline with more
information or more search, everything else fixed:

``unseen``
    w has a morpheme or a segment that occurs in no training word: no learner can
    predict it.
``search``
    the trained θ predicts w correctly when the search is widened (pruned BP with
    ``wide_kbest`` strings per variable and ``wide_k`` UR strings per morpheme at
    prediction): the k-best lists, not the model, lost it. When the wide search outgrows
    the memory budget, the width is halved (down to 20 strings) until it fits; the width
    used is recorded as the control ``wide_kbest``.
``data``
    a phonology fitted to *all* words (w included, θ_all) predicts w correctly from the
    morphemes' beliefs when w is observed, but not from the training words alone: the
    underlying form (or the alternant) that w needs is shown only by w itself, so a
    learner can get it only by a lucky guess (e.g. Polish [trut] ~ [trudi]: /d/ vs /t/ is
    undecidable from [trut] under final devoicing).
``learning``
    θ_all predicts w correctly from the training words' beliefs, θ from the training
    words does not: what w needs is in the training words' URs but the process learned
    from them does not generalise to w (the evidence for it lies in held-out words, or
    the model family and regulariser generalise the wrong way).
``optimum``
    θ_all misses w even with w observed, but the best of ``restarts`` EM runs on all
    words (highest objective) gets it: EM stopped in a poor optimum.
``family``
    every all-words fit misses w with w observed: the model family (contexts, classes,
    windows) cannot express the map from w's underlying form to its surface.

The **upper bound** of a problem is the fraction of held-out words that are not
``unseen`` or ``data``: what a learner can reach without guessing.

Cost: the trained run, one wide E-step, ``restarts`` EM runs on all words and two
E-steps per all-words fit — about (2 + restarts)× one training run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from strgm.datasets.paradigm import Paradigm
from strgm.errors import MessageTooLargeError
from strgm.models.em import e_step, split, train_phonology
from strgm.models.prediction import predict
from strgm.models.restarts import perturbed
from strgm.validate import check_int

__all__ = ["CLASSES", "WordDiagnosis", "HoldoutDiagnosis", "diagnose_holdout"]

#: Error classes, in the order they are tested.
CLASSES = ("unseen", "search", "data", "learning", "optimum", "family")


@dataclass
class WordDiagnosis:
    """One held-out word: the trained model's 1-best ``predicted``, and for a miss its
    ``cause`` and the 1-best of every control that ran (``controls``: name -> string;
    names as in :func:`cause_of`)."""

    key: str
    truth: str
    predicted: str
    correct: bool
    cause: Optional[str] = None  # one of CLASSES when not correct
    controls: dict = field(default_factory=dict)


def cause_of(truth: str, unseen: bool, controls: dict) -> str:
    """The class of a miss from the controls' 1-best predictions (module docstring):
    ``wide`` (trained θ, wider search), ``all_observed`` (θ_all, word observed),
    ``all_from_train`` (θ_all, training words only) and ``best_observed`` (the best
    all-words restart, word observed). Tested in order; a control that did not run is
    absent."""
    if unseen:
        return "unseen"
    if controls.get("wide") == truth:
        return "search"
    if controls.get("all_observed") == truth:
        return "learning" if controls.get("all_from_train") == truth else "data"
    if controls.get("best_observed") == truth:
        return "optimum"
    return "family"


@dataclass
class HoldoutDiagnosis:
    """Per-word diagnoses of one holdout split, and the counts per class."""

    words: list = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.words)

    def count(self, cause: str) -> int:
        return sum(w.cause == cause for w in self.words)

    @property
    def correct(self) -> int:
        return sum(w.correct for w in self.words)

    @property
    def upper_bound(self) -> float:
        """Fraction of words not lost to ``unseen`` or ``data`` (module docstring)."""
        lost = self.count("unseen") + self.count("data")
        return (self.n - lost) / self.n if self.n else float("nan")

    def to_dict(self) -> dict:
        return {"n": self.n, "correct": self.correct, "upper_bound": self.upper_bound,
                "counts": {c: self.count(c) for c in CLASSES},
                "words": [w.__dict__ for w in self.words]}


def _one_best(beliefs: dict, alphabet) -> dict:
    """{word key: 1-best surface string} of prediction beliefs."""
    out = {}
    for key, b in beliefs.items():
        top = b.kbest_labels(1)
        out[key] = alphabet.join(top[0][0]) if top else ""
    return out


def _predictions(model, paradigm: Paradigm, heldout: set, words: list, infer_opts: dict,
                 k: int = 8) -> dict:
    """1-best predictions of ``words`` under ``model`` with the morpheme beliefs of an
    E-step on the paradigm minus ``heldout`` (pruned BP with ``infer_opts``)."""
    train = split(paradigm, heldout)
    res, pm = e_step(model, train, "pruned", infer_opts)[2:]
    ok = [e for e in words if all(m in pm.morpheme_vars for m in e.morphemes)]
    return _one_best(predict(model.fst(), model.alphabet, res, pm, ok, k), model.alphabet)


def _wide_predictions(model, paradigm, heldout, words, opts, kbest, k) -> tuple:
    """(predictions, width used) of the wide search: ``kbest`` halved while a message
    outgrows the memory budget (:class:`MessageTooLargeError`), down to 20; at 20 the
    error is raised."""
    while True:
        try:
            return _predictions(model, paradigm, heldout, words, dict(opts, kbest=kbest),
                                k=k), kbest
        except MessageTooLargeError:
            if kbest <= 20:
                raise
            kbest = max(20, kbest // 2)


def _unseen(entry, train: Paradigm) -> bool:
    """A morpheme or a segment of ``entry`` occurs in no training word."""
    seen_m = {m for e in train.observed for m in e.morphemes}
    seen_s = {s for e in train.observed for s in e.segments}
    return not set(entry.morphemes) <= seen_m or not set(entry.segments) <= seen_s


def diagnose_holdout(paradigm: Paradigm, heldout: set, *, em_iters: int = 3,
                     l2: float = 1.0, restarts: int = 3, restart_scale: float = 0.3,
                     infer_opts: Optional[dict] = None, wide_kbest: int = 64,
                     wide_k: int = 32, model=None) -> HoldoutDiagnosis:
    """Train on the paradigm minus ``heldout`` (pruned-BP EM, ``em_iters``, ``l2``, from
    ``model`` or the copy-biased start), predict the held-out words and classify every
    miss (module docstring). Returns a :class:`HoldoutDiagnosis`."""
    restarts = check_int("restarts", restarts, min=1)
    wide_kbest = check_int("wide_kbest", wide_kbest, min=1)
    wide_k = check_int("wide_k", wide_k, min=1)
    opts = dict({"max_iters": 3}, **(infer_opts or {}))
    heldout = set(heldout)
    train = split(paradigm, heldout)
    words = [e for e in paradigm.observed if e.key in heldout]
    fit = dict(em_iters=em_iters, l2=l2, infer_opts=opts)
    r = train_phonology(paradigm, heldout=heldout, model=model, **fit)
    alph = r.model.alphabet
    ok = [e for e in words if all(m in r.graph_model.morpheme_vars for m in e.morphemes)]
    base = _one_best(predict(r.model.fst(), alph, r.result, r.graph_model, ok), alph)
    diag = [WordDiagnosis(e.key, e.surface, base.get(e.key, ""),
                          base.get(e.key) == e.surface) for e in words]
    missed = {d.key: d for d in diag if not d.correct}
    entries = {e.key: e for e in words}
    unseen = {k for k in missed if _unseen(entries[k], train)}
    todo = [entries[k] for k in missed if k not in unseen]
    if todo:
        wide, used = _wide_predictions(r.model, paradigm, heldout, todo, opts, wide_kbest,
                                       wide_k)
        for e in todo:
            missed[e.key].controls.update(wide=wide.get(e.key, ""), wide_kbest=used)
        todo = [e for e in todo if wide.get(e.key) != e.surface]
    if todo:
        for name, preds in _all_words_controls(paradigm, heldout, todo, r.model, fit,
                                               restarts, restart_scale, model).items():
            for e in todo:
                missed[e.key].controls[name] = preds.get(e.key, "")
    for key, d in missed.items():
        d.cause = cause_of(d.truth, key in unseen, d.controls)
    return HoldoutDiagnosis(diag)


def _all_words_controls(paradigm, heldout, todo, trained, fit, restarts, restart_scale,
                        model) -> dict:
    """Predictions of the words in ``todo`` by EM runs on *all* words (restart 0 from
    the default start, the others perturbed): ``all_observed``, ``all_from_train`` and
    ``best_observed`` (:func:`cause_of`)."""
    start = model if model is not None else type(trained)(
        trained.alphabet, trained.spec, trained.classes).initial()
    runs = []
    for i in range(restarts):
        s = start if i == 0 else perturbed(start, restart_scale, [0, i])
        runs.append(train_phonology(paradigm, model=s, **fit))
    alph = trained.alphabet

    def observed(run) -> dict:  # the word observed: the all-words E-step's beliefs
        return _one_best(predict(run.model.fst(), alph, run.result, run.graph_model, todo),
                         alph)

    best = max(range(restarts), key=lambda i: (runs[i].trace[-1]["objective"], -i))
    out = {"all_observed": observed(runs[0]),
           "all_from_train": _predictions(runs[0].model, paradigm, heldout, todo,
                                          fit["infer_opts"])}
    out["best_observed"] = out["all_observed"] if best == 0 else observed(runs[best])
    return out
