"""The automatic choice between the two phonology families, per held-out word, made on
the training words alone (docs/architecture.md §5).

The rule family (:mod:`strgm.models.rule_phonology`) answers a held-out word when its
cascade reproduces *every* training word that shares a morpheme with it — a complete
account of all the evidence about that word's morphemes; the trained edit phonology
answers the others. Probabilities: the edit phonology's own for its words; for a word
the rules answer, p(y) = (1 − ε)·[y = rules' form] + ε·p_edit(y), with ε = 1/(c + 2)
for the c training words that vouch for it (Laplace's rule of succession for "the
account fails on the next word").

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
    ``rules`` and ``edit`` predictions, ``neg_logp``; the learned rules in ``rules``."""

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
    """The per-word choice (module docstring) from a rule run and the edit phonology's
    held-out records (key → {"gold", "predicted", "p_gold"}, as
    :class:`strgm.models.scoring.HoldoutScores` ``per_word``)."""
    pred = rules.predictions()
    vouch = rules.vouchers()
    out = {}
    for key, w in edit_words.items():
        v = vouch.get(key)
        p_edit = float(w.get("p_gold") or 0.0)
        if v:
            eps = 1.0 / (len(v) + 2)
            p = (1 - eps) * (pred[key] == w["gold"]) + eps * p_edit
        else:
            p = p_edit
        out[key] = {"gold": w["gold"], "family": "rules" if v else "edit",
                    "predicted": pred[key] if v else w["predicted"],
                    "rules": pred.get(key), "edit": w["predicted"],
                    "vouching_words": len(v or []),
                    "neg_logp": float(-np.log(p)) if p > 0 else float("inf")}
    return FamilyChoice(rules, out)


def choose_family(run, progress=None, **rule_opts) -> FamilyChoice:
    """Learn the rule family on ``run``'s training words (the same held-out words) and
    combine it with ``run``'s edit phonology (a :class:`strgm.workflows.training.
    TrainRun` with held-out scores)."""
    rules = train_rule_phonology(run.paradigm, sorted(run.held_out), progress=progress,
                                 **rule_opts)
    return combine(rules, run.scores.per_word if run.scores is not None else {})
