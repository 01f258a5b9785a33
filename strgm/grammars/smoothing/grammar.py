"""Smoothed treebank PCFGs: the relative-frequency PCFG of
:func:`strgm.grammars.unknown_words.treebank_pcfg` with its phrasal rule distributions
P(right-hand side | left-hand side) replaced by a backoff estimate.

``smoothing``:

* ``"none"``: relative frequencies (:func:`~strgm.grammars.unknown_words.treebank_pcfg`);
* ``"collins"``: λ_u = c_u / (c_u + b u_u) along the backoff chain
  (:mod:`~strgm.grammars.smoothing.collins`);
* ``"hdp"``: the hierarchical Dirichlet process predictive averaged over Gibbs samples of
  the table counts and concentrations (:mod:`~strgm.grammars.smoothing.hdp`).

Contexts and chains are those of :mod:`~strgm.grammars.smoothing.backoff` (right
factoring, Markov order ``horizontal``, optional parent annotation).  Preterminal rules
(tag -> word, with the signature back-off counts) and ``start`` rules keep their counts.

Support.  A smoothed context gives mass to every outcome of its top context, which can
make the grammar large; the kept right-hand sides of a full context are (1) every one
observed with it and (2) at most ``extra`` others, the most probable under the smoothed
distribution among those it admits (consistent with its label, naming only symbols that
have rules).  The kept probabilities are renormalised: the rule distribution is the
smoothed predictive conditioned on the kept support, so it sums to 1 per left-hand side.
Size: at most (observed phrasal rules + extra × phrasal left-hand sides) phrasal rules.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from strgm.grammars.binarize import binarize
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.smoothing.backoff import check_right, observe
from strgm.grammars.smoothing.collins import DEFAULT_B, collins_predictive
from strgm.grammars.smoothing.hdp import run_hdp
from strgm.grammars.smoothing.hierarchy import build_hierarchy
from strgm.grammars.unknown_words import grammar_info, lexical_counts, prepare_trees, \
    treebank_pcfg
from strgm.validate import check_choice, check_float, check_int

__all__ = ["SMOOTHINGS", "DEFAULT_ITERS", "DEFAULT_EXTRA", "smoothed_pcfg", "select_support"]

SMOOTHINGS = ("none", "collins", "hdp")
#: Default Gibbs sweeps (half burn-in) and extra unseen right-hand sides per context.
DEFAULT_ITERS = 200
DEFAULT_EXTRA = 5


def select_support(lhs: list, observed: np.ndarray, prob: np.ndarray, extra: int) -> np.ndarray:
    """Indices of the kept candidate pairs: all observed ones and, per left-hand side,
    the ``extra`` most probable unobserved ones (ties by position).  O(pairs log pairs)."""
    by_lhs = defaultdict(list)
    for i, a in enumerate(lhs):
        if not observed[i]:
            by_lhs[a].append(i)
    keep = list(np.flatnonzero(observed))
    for idx in by_lhs.values():
        idx.sort(key=lambda i: -prob[i])
        keep.extend(i for i in idx[:extra] if prob[i] > 0)
    return np.array(sorted(keep), dtype=np.int64)


def smoothed_pcfg(trees, smoothing: str = "hdp", horizontal: int | None = 1,
                  parent: bool = False, threshold: int = 1, start: str = "TOP",
                  backoff_weight: float = 0.01, factor: str = "right",
                  iters: int = DEFAULT_ITERS, seed: int = 0, collins_b: float = DEFAULT_B,
                  extra: int = DEFAULT_EXTRA) -> tuple:
    """(PCFG, summary dict) of cleaned treebank trees with smoothed phrasal rules (module
    docstring); the other arguments are those of :func:`~strgm.grammars.unknown_words.
    treebank_pcfg`.  ``iters``/``seed``: Gibbs sweeps and seed (hdp); ``collins_b``: b
    (collins); ``extra``: unseen right-hand sides kept per context."""
    check_choice("smoothing", smoothing, SMOOTHINGS)
    if smoothing == "none":
        g, info = treebank_pcfg(trees, threshold, horizontal, start, backoff_weight, factor,
                                parent)
        return g, {**info, "smoothing": "none"}
    check_right(factor)
    extra = check_int("extra", extra, min=0)
    if horizontal is not None:
        check_int("horizontal", horizontal, min=0)
    renamed, original, known = prepare_trees(trees, threshold, start)
    binary = [binarize(t, horizontal, "right", parent) for t in renamed]
    counts = lexical_counts(binary, original, known, backoff_weight, start)
    phrasal, ctxs = observe(renamed, horizontal, parent)
    h = build_hierarchy(phrasal, ctxs, horizontal, {lhs for lhs, _ in counts})
    extra_info: dict = {"smoothing": smoothing}
    if smoothing == "collins":
        prob = collins_predictive(h, check_float("collins b", collins_b, min=0,
                                                 min_open=True))
        extra_info["collins_b"] = collins_b
    else:
        prob, trace = run_hdp(h, iters=iters, seed=seed)
        extra_info.update(iters=iters, seed=seed,
                          alpha={k: round(float(a), 4)
                                 for k, a in zip(h.levels, trace["alpha"][-1])},
                          tables=trace["tables"][-1])
    g = _assemble(h, prob, counts, ctxs, extra, start)
    info = grammar_info(g, len(renamed))
    info.update(extra_info, unseen_rules=int(len(g.rules) - len(counts)))
    return g, info


def _assemble(h, prob, counts: dict, ctxs: dict, extra: int, start: str) -> Grammar:
    """The grammar: count rules for non-phrasal left-hand sides, the kept smoothed pairs
    (renormalised per left-hand side) for the phrasal ones."""
    keep = select_support(h.pair_lhs, h.pair_observed, prob, extra)
    total: dict = defaultdict(float)
    for i in keep:
        total[h.pair_lhs[i]] += prob[i]
    rules = [Rule(lhs, rhs, w) for (lhs, rhs), w in counts.items() if lhs not in ctxs]
    rules += [Rule(h.pair_lhs[i], h.pair_rhs[i], float(prob[i] / total[h.pair_lhs[i]]))
              for i in keep]
    return Grammar(rules, start=start)
