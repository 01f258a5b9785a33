"""Held-out evaluation of (smoothed) treebank PCFGs: the probabilities of held-out gold
trees' phrasal rules, and the choice of Collins's b on a development split.

The held-out trees are prepared like the training trees: the labels the training trees
had renamed (:func:`~strgm.grammars.ptb.relabel_collisions`) are renamed alike, then
their phrasal rules (those over no word: binarised with the grammar's Markov order and
parent annotation, right factoring) are looked up in the grammar's per-left-hand-side
normalised weights.  Word rules do not depend on the smoothing and are not counted.  A
rule absent from the grammar (or whose left-hand side is absent) has probability 0; such
tokens are counted apart and left out of the log-likelihood.  O(size of the trees).
"""

from __future__ import annotations

import math
import numpy as np

from strgm.grammars.cfg import Grammar
from strgm.grammars.binarize import binarize, is_preterminal
from strgm.grammars.smoothing.grammar import smoothed_pcfg
from strgm.grammars.unknown_words import prepare_trees

__all__ = ["collision_map", "heldout_rule_probs", "loglik_summary", "select_collins_b",
           "B_GRID"]

#: The candidate values of Collins's b.
B_GRID = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


def collision_map(trees, threshold: int = 1) -> dict:
    """label -> renamed label, for the labels the training ``trees`` have renamed."""
    renamed, _, _ = prepare_trees(trees, threshold)
    out: dict = {}

    def walk(a, b):
        if isinstance(a, str):
            return
        if a[0] != b[0]:
            out[a[0]] = b[0]
        for x, y in zip(a[1:], b[1:]):
            walk(x, y)
    for a, b in zip(trees, renamed):
        walk(a, b)
    return out


def _rename(t, ren: dict):
    if isinstance(t, str):
        return t
    return (ren.get(t[0], t[0]),) + tuple(_rename(c, ren) for c in t[1:])


def heldout_rule_probs(g: Grammar, trees, ren: dict, horizontal: int | None,
                       parent: bool) -> tuple:
    """(rule keys ``(lhs, rhs)``, token counts (ones), probabilities under ``g``), one
    entry per phrasal rule token of the held-out ``trees`` in preorder of their
    right-binarised forms (module docstring), so that grammars with and without parent
    annotation line up token by token; ``ren``: :func:`collision_map` of the training
    trees."""
    theta = g.probabilities()
    keys: list = []
    for t in trees:
        _preorder(binarize(_rename(t, ren), horizontal, "right", parent), keys)
    p = np.array([theta[g.rule_index[k]] if k in g.rule_index else 0.0 for k in keys])
    return keys, np.ones(len(keys)), p


def _preorder(b, out: list) -> None:
    if isinstance(b, str) or is_preterminal(b):
        return
    out.append((b[0], tuple(c[0] for c in b[1:])))
    for c in b[1:]:
        _preorder(c, out)


def loglik_summary(n: np.ndarray, p: np.ndarray, mask=None) -> dict:
    """Tokens, zero-probability tokens, and the mean log-probability per token of the
    others (restricted to ``mask`` when given)."""
    m = p > 0 if mask is None else (mask & (p > 0))
    ll = float((n[m] * np.log(p[m])).sum())
    tok = float(n[m].sum())
    return {"tokens": float(n.sum()), "zero_tokens": float(n[p <= 0].sum()),
            "scored_tokens": tok, "loglik": ll,
            "loglik_per_token": ll / tok if tok else math.nan}


def select_collins_b(train, dev, horizontal: int | None = 1, parent: bool = False,
                     grid=B_GRID, **kw) -> tuple:
    """(best b, {b: dev log-likelihood per token}): Collins grammars fitted on ``train``
    scored on the phrasal rules of ``dev`` tokens that every b gives positive
    probability."""
    ren = collision_map(train)
    probs = {}
    for b in grid:
        g, _ = smoothed_pcfg(train, "collins", horizontal, parent, collins_b=b, **kw)
        _, n, probs[b] = heldout_rule_probs(g, dev, ren, horizontal, parent)
    common = np.all([p > 0 for p in probs.values()], axis=0)
    scores = {b: loglik_summary(n, p, common)["loglik_per_token"] for b, p in probs.items()}
    return max(scores, key=lambda b: scores[b]), scores
