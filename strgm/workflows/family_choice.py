"""The automatic choice between the two phonology families, per held-out word, made on
the training words alone (docs/phonology.md).

A held-out word's surface is modelled as a mixture of the two families: the rule
family's distribution q (:mod:`strgm.models.rule_phonology`) with probability 1 − ε,
the trained edit phonology's with probability ε,

    p(y) = (1 − ε)·q(y) + ε·p_edit(y),   ε = (e + 1) / (c + 2),

where c is the number of training words that share a morpheme with the word and e the
number of those the cascade does not reproduce: ε is Laplace's rule of succession for
"the rules fail on the next word about these morphemes", estimated on training words
only. q is 1 on the cascade's form when the training words decide the word; when they
leave several forms F(w) open (:mod:`strgm.models.rule_ambiguity`), q over F(w) is the
posterior predictive of a Dirichlet–multinomial whose observations are the supports of
the training words' proportions (:mod:`strgm.models.rule_analogy`: the cascade's own
choice counts as one supporter) and whose concentration is learned by leave-one-out on
the training words (:mod:`strgm.models.rule_calibration`: no undecided form gets more
than 0.99). The prediction is the rules' best form
argmax q whenever ε < ½, i.e. when the rules reproduce more than half of the related
training words (2e < c); else the edit phonology's 1-best. (With q a point mass this
is the mixture's best form; with q spread over F(w) it is the rule of thumb "trust the
family that fits the related words", kept so that a choice never hinges on p_edit.)

    choice = choose_family(train_run)        # after strgm.workflows.training
    choice.exact_match, choice.per_word["R1 PAST"]["family"]

The two families are learned independently, so the rules can be learned while EM runs,
on another core (:mod:`strgm.workflows.background`):

    job = start_rule_family(paradigm, held_out_keys)  # before strgm.workflows.training
    choice = choose_family(train_run, rules=job)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from strgm.errors import StrgmError
from strgm.models.rule_calibration import calibrated_forms
from strgm.models.rule_phonology import RuleRun, train_rule_phonology
from fst_factors.wfsa.measure import warm_compiled
from strgm.workflows.background import Job, start


@dataclass
class FamilyChoice:
    """Per held-out word: ``gold``, ``predicted``, ``family`` ("rules"/"edit"),
    ``rules`` (argmax q), ``cascade`` (the cascade's own URs rewritten) and ``edit``
    predictions, ``rules_forms`` with ``rules_weights`` (every form the training words
    allow under the rules and its q, best first: several when they cannot decide),
    ``neg_logp``; the learned rules in ``rules``, the concentration of q in
    ``concentration`` (:mod:`strgm.models.rule_calibration`)."""

    rules: RuleRun
    per_word: dict
    concentration: float = float("nan")

    @property
    def exact_match(self) -> float:
        w = self.per_word.values()
        return float(np.mean([x["predicted"] == x["gold"] for x in w])) if w else float("nan")

    @property
    def mean_neg_logp(self) -> float:
        w = self.per_word.values()
        return float(np.mean([x["neg_logp"] for x in w])) if w else float("nan")

    def to_dict(self) -> dict:
        return {"exact_match": self.exact_match, "mean_neg_logp": self.mean_neg_logp,
                "concentration": self.concentration, "per_word": self.per_word}


def combine(rules: RuleRun, edit_words: dict) -> FamilyChoice:
    """The per-word mixture and choice (module docstring) from a rule run and the edit
    phonology's held-out records (key → {"gold", "predicted", "p_gold"}, as
    :class:`strgm.models.scoring.HoldoutScores` ``per_word``). A word whose morphemes
    the rules have no UR for is the edit phonology's alone (ε = 1)."""
    cascade = rules.cascade_predictions()
    evidence = rules.evidence()
    calibration = calibrated_forms(rules)
    ranked = calibration.ranked
    out = {}
    for key, w in edit_words.items():
        c, e = evidence.get(key, (0, 0))
        q = dict(ranked.get(key) or ([(cascade[key], 1.0)] if cascade.get(key) else []))
        own = ranked[key][0][0] if key in ranked else cascade.get(key)
        eps = (e + 1) / (c + 2) if own is not None else 1.0
        p = (1 - eps) * q.get(w["gold"], 0.0) + eps * float(w.get("p_gold") or 0.0)
        use_rules = eps < 0.5
        out[key] = {"gold": w["gold"], "family": "rules" if use_rules else "edit",
                    "predicted": own if use_rules else w["predicted"],
                    "rules": own, "cascade": cascade.get(key), "edit": w["predicted"],
                    "related_words": c, "rules_wrong_on": e, "epsilon": eps,
                    "rules_forms": [f for f, _ in ranked.get(key, [])],
                    "rules_weights": [x for _, x in ranked.get(key, [])],
                    "neg_logp": float(-np.log(p)) if p > 0 else float("inf")}
    return FamilyChoice(rules, out, calibration.alpha)


def start_rule_family(paradigm, heldout, *, progress=None, parallel: bool = True,
                      **rule_opts) -> Job:
    """Start learning the rule family on the words of ``paradigm`` left after
    ``heldout`` (word keys) with :func:`~strgm.models.rule_phonology.
    train_rule_phonology`: in a child process on another core when ``parallel`` and
    the machine allows (:func:`strgm.workflows.background.start`), else now. Pass the
    job to :func:`choose_family`. The compiled kernels are loaded first, so that the
    child inherits them (:func:`fst_factors.wfsa.measure.warm_compiled`)."""
    warm_compiled()
    return start(train_rule_phonology, paradigm, sorted(heldout), parallel=parallel,
                 progress=progress, **rule_opts)


def choose_family(run, progress=None, rules: Optional[Job] = None,
                  **rule_opts) -> FamilyChoice:
    """Combine the rule family with ``run``'s edit phonology (a :class:`strgm.
    workflows.training.TrainRun` with held-out scores): the rules of the job ``rules``
    (:func:`start_rule_family`, waited for with ``progress``), which must hold out
    ``run``'s words, or else learned now on ``run``'s training words."""
    if rules is None:
        learned = train_rule_phonology(run.paradigm, sorted(run.held_out),
                                       progress=progress, **{"ur_prior": run.ur_prior,
                                                             **rule_opts})
    else:
        learned = rules.result(progress)
        if {e.key for e in learned.held_out} != {k for k, e in run.held_out.items()
                                                  if e.surface}:
            raise StrgmError("the rule family was learned with other held-out words "
                             "than the edit phonology's")
    return combine(learned, run.scores.per_word if run.scores is not None else {})
