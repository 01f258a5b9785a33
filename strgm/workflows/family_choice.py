"""The automatic choice between the two phonology families, per held-out word, made on
the training words alone (docs/architecture.md §5).

A held-out word's surface is modelled as a mixture of the two families: the rules'
form (:mod:`strgm.models.rule_phonology`) with probability 1 − ε, the trained edit
phonology's distribution with probability ε,

    p(y) = (1 − ε)·[y = rules' form] + ε·p_edit(y),   ε = (e + 1) / (c + 2),

where c is the number of training words that share a morpheme with the word and e the
number of those the cascade does not reproduce: ε is Laplace's rule of succession for
"the rules fail on the next word about these morphemes", estimated on training words
only. The prediction is the mixture's best form: the rules' form whenever ε < ½
(1 − ε > ε ≥ ε·p_edit of any other form), i.e. when the rules reproduce more than half
of the related training words (2e < c); else the edit phonology's 1-best (a lower
bound on the mixture's choice, which would need p_edit of the rules' form).

    choice = choose_family(train_run)        # after strgm.workflows.training
    choice.exact_match, choice.per_word["R1 PAST"]["family"]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strgm.models.rule_phonology import RuleRun, train_rule_phonology


@dataclass
class FamilyChoice:
    """Per held-out word: ``gold``, ``predicted``, ``family`` ("rules"/"edit"),
    ``rules`` and ``edit`` predictions, ``rules_forms`` (every form the training words
    allow under the rules, the rules' prediction first: several when they cannot decide,
    :mod:`strgm.models.rule_ambiguity`), ``neg_logp``; the learned rules in ``rules``."""

    rules: RuleRun
    per_word: dict

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
                "per_word": self.per_word}


def combine(rules: RuleRun, edit_words: dict) -> FamilyChoice:
    """The per-word mixture and choice (module docstring) from a rule run and the edit
    phonology's held-out records (key → {"gold", "predicted", "p_gold"}, as
    :class:`strgm.models.scoring.HoldoutScores` ``per_word``). A word whose morphemes
    the rules have no UR for is the edit phonology's alone (ε = 1)."""
    pred = rules.predictions()
    evidence = rules.evidence()
    forms = rules.heldout_forms()
    out = {}
    for key, w in edit_words.items():
        c, e = evidence.get(key, (0, 0))
        eps = (e + 1) / (c + 2) if pred.get(key) is not None else 1.0
        p = (1 - eps) * (pred.get(key) == w["gold"]) + eps * float(w.get("p_gold") or 0.0)
        use_rules = eps < 0.5
        out[key] = {"gold": w["gold"], "family": "rules" if use_rules else "edit",
                    "predicted": pred[key] if use_rules else w["predicted"],
                    "rules": pred.get(key), "edit": w["predicted"],
                    "related_words": c, "rules_wrong_on": e, "epsilon": eps,
                    "rules_forms": forms.get(key, []),
                    "neg_logp": float(-np.log(p)) if p > 0 else float("inf")}
    return FamilyChoice(rules, out)


def choose_family(run, progress=None, **rule_opts) -> FamilyChoice:
    """Learn the rule family on ``run``'s training words (the same held-out words) and
    combine it with ``run``'s edit phonology (a :class:`strgm.workflows.training.
    TrainRun` with held-out scores)."""
    rules = train_rule_phonology(run.paradigm, sorted(run.held_out), progress=progress,
                                 **rule_opts)
    return combine(rules, run.scores.per_word if run.scores is not None else {})
