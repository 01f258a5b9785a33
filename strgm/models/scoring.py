"""Held-out scoring: the one place where predicted surface forms meet the true ones.

Two measures, as reported by ``strgm infer --holdout`` and ``strgm train --holdout`` and
by the benchmarks (Cotterell, Peng & Eisner 2015, §6 evaluate the same two):

* exact match: the fraction of held-out words whose 1-best predicted surface is the truth;
* mean −log p(true form) in nats under the predicted belief over surfaces.

A true form with a segment seen in no training word cannot be produced by any belief over
the training alphabet: p = 0 (−log p = inf, never an exact match), recorded as an
``unseen`` list of segments, never an error. A word that cannot be predicted at all (a
morpheme seen in no training word, for EM's prediction from morpheme beliefs) has no
belief; it is passed in ``unpredictable`` and also gets p = 0, its entry naming the
``unseen_morphemes``. Either way the mean is infinite, which is the honest figure.

Each true form is segmented once: ``gold`` values may be strings (segmented here) or
:class:`~strgm.datasets.paradigm.ParadigmEntry` objects, whose segments were computed
when the paradigm was read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Union

import numpy as np

from fst_factors.alphabet import Alphabet, segment

__all__ = ["HoldoutScores", "score_words"]

Gold = Union[str, "ParadigmEntry"]  # noqa: F821 - any object with .surface, .segments


@dataclass
class HoldoutScores:
    n: int
    exact_match: float  # fraction of held-out words whose 1-best prediction is the truth
    mean_neg_logp: float  # mean -log p(true form) in nats (inf if any has p = 0)
    per_word: dict  # key -> {"gold", "predicted", "p_gold", "neg_logp", "exact"[, "unseen"]}

    def __repr__(self) -> str:
        return (f"HoldoutScores(n={self.n}, exact_match={self.exact_match:.3g}, "
                f"mean_neg_logp={self.mean_neg_logp:.4g})")

    @property
    def unseen(self) -> list[str]:
        """Held-out words containing a segment seen in no training word (p = 0)."""
        return [k for k, w in self.per_word.items() if w.get("unseen")]

    def to_dict(self) -> dict:
        """The JSON record of ``--holdout`` (``n``, ``exact_match``, ``mean_neg_logp``,
        ``per_word``), as written by :func:`strgm.safe_io.atomic_write_json`."""
        return {"n": self.n, "exact_match": self.exact_match,
                "mean_neg_logp": self.mean_neg_logp, "per_word": self.per_word}


def _text_and_segments(truth: Gold) -> tuple:
    if isinstance(truth, str):
        return truth, segment(truth)
    return truth.surface, truth.segments


def _one(belief, truth: Gold, alphabet: Alphabet) -> dict:
    """The per-word record of one true form under one belief (module docstring)."""
    text, segs = _text_and_segments(truth)
    top = belief.kbest(1)
    pred = top[0][0] if top else None
    unseen = [s for s in segs if s not in alphabet]
    if unseen:
        target, lp, hit = text, -np.inf, False
    else:
        labels = alphabet.encode(segs)
        target = alphabet.join(labels)
        lp = float(belief.logprob(labels))
        hit = pred == target
    rec = {"gold": target, "predicted": pred, "p_gold": float(np.exp(lp)),
           "neg_logp": float(-lp), "exact": bool(hit)}
    if unseen:
        rec["unseen"] = sorted(set(unseen))
    return rec


def score_words(beliefs: Mapping[str, object], gold: Mapping[str, Gold],
                alphabet: Alphabet, unpredictable: Optional[Mapping[str, list]] = None
                ) -> HoldoutScores:
    """Exact match and mean −log p of the true forms ``gold`` (word key -> surface string
    or paradigm entry) under ``beliefs`` (word key -> Belief over surfaces, labels of
    ``alphabet``). ``unpredictable``: word key -> the morphemes that made it impossible
    to predict (no belief; p = 0). ``per_word`` follows the order of ``gold``."""
    unpredictable = unpredictable or {}
    per, hits, nll = {}, 0, []
    for key, truth in gold.items():
        if key in unpredictable:
            per[key] = {"gold": _text_and_segments(truth)[0],
                        "predicted": None, "p_gold": 0.0,
                        "unseen_morphemes": list(unpredictable[key])}
            nll.append(np.inf)
            continue
        rec = per[key] = _one(beliefs[key], truth, alphabet)
        hits += rec["exact"]
        nll.append(rec["neg_logp"])
    n = len(gold)
    return HoldoutScores(n, hits / n if n else float("nan"),
                         float(np.mean(nll)) if n else float("nan"), per)
