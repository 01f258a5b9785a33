"""Evaluation measures for PCFG estimation.

* −log P(w | θ) in nats and bits per token (Σ over parsable sentences);
* number of rules with probability above a threshold (1e-7 in Johnson et al. 2007);
* held-out per-word perplexity exp(−Σ_i log P(w_i | θ̂) / #sentences) — "per word" here is
  per *sentence* of the held-out corpus, i.e. per word type in the morphology experiment
  (Wang & Blunsom 2013 §4.1), plus per-token perplexity for reference;
* segmentation precision / recall / F1 over internal boundary positions and exact word match.
"""

from __future__ import annotations

import math

import numpy as np

from strgm.errors import InputError
from strgm.grammars.chart import corpus_inside_outside

__all__ = ["corpus_logprob", "heldout_perplexity", "rules_above", "segmentation_scores",
           "bits_per_token"]


def corpus_logprob(cg, sentences, theta, **kw):
    """(Σ log P(w_i|θ) over parsable sentences, per-sentence array, unparsable indices)."""
    res = corpus_inside_outside(cg, sentences, theta, counts=False, **kw)
    return res.loglik, res.logZ, res.unparsable


def bits_per_token(neg_logprob_nats: float, n_tokens: int) -> float:
    return neg_logprob_nats / math.log(2) / max(1, n_tokens)


def heldout_perplexity(cg, sentences, theta, **kw) -> dict:
    """Per-word (per held-out sentence) and per-token perplexity under point estimate θ.

    An unparsable held-out sentence makes both infinite; they are counted in
    ``unparsable``."""
    ll, lz, bad = corpus_logprob(cg, sentences, theta, **kw)
    n = len(sentences)
    ntok = sum(len(s) for s in sentences)
    if bad:
        return {"per_word": math.inf, "per_token": math.inf, "unparsable": len(bad)}
    return {"per_word": math.exp(-ll / max(1, n)), "per_token": math.exp(-ll / max(1, ntok)),
            "unparsable": 0}


def rules_above(theta, threshold: float = 1e-7) -> int:
    return int(np.sum(np.asarray(theta) > threshold))


def _boundaries(segs) -> set:
    out, pos = set(), 0
    for s in segs[:-1]:
        pos += len(s)
        out.add(pos)
    return out


def segmentation_scores(predicted, gold) -> dict:
    """Boundary precision/recall/F1 and exact match over lists of segmentations.

    Each segmentation is a sequence of segments (strings or token tuples) whose
    concatenation is the word.  Boundaries are the internal cut positions."""
    if len(predicted) != len(gold):
        raise InputError(f"{len(predicted)} predictions for {len(gold)} gold segmentations")
    tp = fp = fn = exact = 0
    for p, g in zip(predicted, gold):
        bp, bg = _boundaries(list(p)), _boundaries(list(g))
        tp += len(bp & bg)
        fp += len(bp - bg)
        fn += len(bg - bp)
        exact += int(bp == bg)
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1,
            "exact": exact / len(gold) if gold else 0.0}
