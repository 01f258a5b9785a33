"""Estimates of the head-driven lexicalised grammar, and the scorer a parser uses.

:func:`fit_lexicalized` reads cleaned treebank trees, maps words seen at most
``threshold`` times to their signatures (:func:`strgm.grammars.unknown_words.signature`),
lexicalises them (:mod:`~strgm.grammars.lexicalized.heads`), counts their events
(:mod:`~strgm.grammars.lexicalized.events`) and estimates every event distribution along
its backoff chain by one of (Dawson 2015, "How should we choose λs?" to "A true HDP
model"):

* ``"none"``: no smoothing: the relative frequency of the outcome in the finest context
  of its chain that saw it (ε when none did; :func:`~strgm.grammars.lexicalized.tables.
  strict_backoff`).  No mass is taken from seen outcomes, so this is a score, not a
  distribution (a context's scores can sum to more than 1), but every tree gets a
  positive score and can be parsed;
* ``"collins"``: π_u = λ_u p̂_u + (1 − λ_u) π_parent(u), λ_u = c_u / (c_u + b u_u), with
  pooled counts c and diversities u (Collins 2003 §7.1);
* ``"hdp"``: the hierarchical Dirichlet process predictive (eq. 59, λ_u = m_u / (m_u +
  α_K)) averaged over Gibbs samples of the table counts and concentrations (eqs. 60-61,
  :mod:`strgm.grammars.smoothing.hdp`, the same sampler as the PCFG smoothing).

:class:`LexicalizedGrammar` implements :class:`~strgm.grammars.lexicalized.scorer.
LexScorer`: every query is evaluated by :func:`~strgm.grammars.lexicalized.tables.
backoff_predictive` on the stored state(s), one per kept HDP sample (one for the
others).  O(queries × depth × states) per call.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from strgm.grammars.lexicalized.events import head_chain, mod_chain, top_chain, \
    top_word_chain, tree_events, word_chain
from strgm.grammars.lexicalized.heads import lexicalize
from strgm.grammars.lexicalized.scorer import STOP
from strgm.grammars.lexicalized.tables import EventTables, backoff_predictive, \
    build_tables, strict_backoff
from strgm.grammars.smoothing.hdp import gibbs_sweeps
from strgm.grammars.unknown_words import is_signature, known_words, signature, \
    word_counts
from strgm.validate import check_choice, check_float, check_int

__all__ = ["SMOOTHINGS", "DEFAULT_B", "LexicalizedGrammar", "fit_lexicalized",
           "hdp_states"]

SMOOTHINGS = ("none", "collins", "hdp")
#: Collins's b, chosen on the development split by the summed held-out log-likelihood of
#: all events (``python -m benchmarks.grammars.lexicalized_smoothing --split dev``;
#: docs/decisions/grammar_smoothing_defaults.md).
DEFAULT_B = 2.0


class LexicalizedGrammar:
    """The fitted model: event tables, the word map and tag dictionary, and the
    estimator's state(s) (arrays S × cells, S × nodes, S × nodes)."""

    def __init__(self, tables: EventTables, known, tagdict: dict, states: tuple,
                 smoothing: str, info: dict):
        self.tables = tables
        self.known = frozenset(known)
        self.tagdict = {w: tuple(sorted(ts)) for w, ts in tagdict.items()}
        self.open_tags = tuple(sorted({t for w, ts in self.tagdict.items()
                                       if is_signature(w) for t in ts}))
        self.cell_count, self.node_total, self.node_conc = states
        self.smoothing = smoothing
        self.info = dict(info)
        self.labels = tuple(sorted({k[1] for k in tables.node_keys if k[0] == "h"}))
        self._tokens: dict = {}

    def token(self, word: str, position: int = 1) -> str:
        """The model's token for ``word``: itself when known or already a signature,
        else its signature (remembered per word and position)."""
        key = (word, position != 0)
        tok = self._tokens.get(key)
        if tok is None:
            tok = word if word in self.known or is_signature(word) else \
                signature(word, position, self.known)
            self._tokens[key] = tok
        return tok

    def tags(self, words) -> list:
        """Candidate tags of each word: those seen with its token, else the tags seen
        with any signature (open classes)."""
        return [list(self.tagdict.get(self.token(w, i), self.open_tags))
                for i, w in enumerate(words)]

    def _logp(self, chains, outcomes, family: str) -> np.ndarray:
        nodes, cells = self.tables.locate(chains, outcomes)
        size = self.tables.family_size[family]
        pi = strict_backoff(nodes, cells, size, self.cell_count, self.node_total) \
            if self.smoothing == "none" else \
            backoff_predictive(nodes, cells, size, self.cell_count, self.node_total,
                               self.node_conc)
        with np.errstate(divide="ignore"):
            return np.log(pi.mean(axis=0))

    def log_top(self, rows) -> np.ndarray:
        """log P(root label and tag) + log P(root word | label, tag)."""
        a = self._logp([top_chain()] * len(rows), [(x, t) for x, t, _ in rows], "top")
        b = self._logp([top_word_chain(x, t) for x, t, _ in rows],
                       [self.token(w) for _, _, w in rows], "word")
        return a + b

    def log_head(self, rows) -> np.ndarray:
        """log P(H | P, t, w)."""
        return self._logp([head_chain(p, t, self.token(w)) for p, _, t, w in rows],
                          [h for _, h, _, _ in rows], "head")

    def log_mod(self, rows) -> np.ndarray:
        """log P(M, mt | side, adj, P, H, t, w) + log P(mw | side, M, mt, P, H, t, w)
        (the second term absent for STOP)."""
        mapped = [(s, a, p, h, t, self.token(w), m, mt, mw) for s, a, p, h, t, w, m, mt, mw
                  in rows]
        out = self._logp([mod_chain(*r[:6]) for r in mapped],
                         [(STOP,) if r[6] == STOP else (r[6], r[7]) for r in mapped], "mod")
        words = [i for i, r in enumerate(mapped) if r[6] != STOP]
        if words:
            out[words] += self._logp(
                [word_chain(r[0], r[6], r[7], *r[2:6]) for r in (mapped[i] for i in words)],
                [self.token(mapped[i][8]) for i in words], "word")
        return out

    def event_logprobs(self, trees) -> dict:
        """family -> log-probabilities of the events of cleaned ``trees`` (held-out
        evaluation), with the training word map."""
        by: dict = defaultdict(lambda: ([], []))
        for t in trees:
            for family, chain, out in tree_events(lexicalize(t, self.token)):
                by[family][0].append(chain)
                by[family][1].append(out)
        return {f: self._logp(ch, out, f) for f, (ch, out) in by.items()}


def _training(trees, threshold: int) -> tuple:
    known = known_words(word_counts(trees), threshold)

    def word_map(w, i):
        return w if w in known else signature(w, i, known)
    lex = [lexicalize(t, word_map) for t in trees]
    tagdict: dict = defaultdict(set)
    for lt in lex:
        stack = [lt]
        while stack:
            n = stack.pop()
            if n.children is None:
                tagdict[n.word].add(n.tag)
            else:
                stack.extend(n.children)
    events = [e for lt in lex for e in tree_events(lt)]
    return known, tagdict, events


def hdp_states(tables: EventTables, iters: int, seed: int, keep: int) -> tuple:
    """(states, trace): ``keep`` samples spaced evenly over the second half of ``iters``
    Gibbs sweeps of the Chinese restaurant franchise and its concentrations
    (:func:`strgm.grammars.smoothing.hdp.gibbs_sweeps`); a state is (customers per
    cell, per node, α per node)."""
    h = tables.hierarchy()
    burn = iters // 2
    at = set(np.linspace(burn, iters - 1, min(keep, iters - burn)).round().astype(int))
    cells, totals, conc, trace = [], [], [], {"alpha": [], "tables": []}
    for it, s in gibbs_sweeps(h, iters, seed):
        trace["alpha"].append(s.alpha.tolist())
        trace["tables"].append(int(s.ntables.sum()))
        if it in at:
            cells.append(s.ccount.copy())
            totals.append(s.ncust.copy())
            conc.append(s.alpha[h.node_level].copy())
    return (np.array(cells), np.array(totals), np.array(conc)), trace


def fit_lexicalized(trees, smoothing: str = "hdp", threshold: int = 1,
                    collins_b: float = DEFAULT_B, iters: int = 200, seed: int = 0,
                    keep: int = 10) -> LexicalizedGrammar:
    """The lexicalised grammar of cleaned ``trees`` (module docstring); ``threshold``:
    words seen at most this often become signatures; ``collins_b``: b (collins);
    ``iters``, ``seed``, ``keep``: Gibbs sweeps (half burn-in), seed and kept samples
    (hdp)."""
    check_choice("smoothing", smoothing, SMOOTHINGS)
    threshold = check_int("threshold", threshold, min=0)
    known, tagdict, events = _training(list(trees), threshold)
    tables = build_tables(events)
    info: dict = {"smoothing": smoothing, "events": len(events),
                  "contexts": len(tables.node_keys), "cells": len(tables.cells)}
    pooled, total, distinct = tables.pooled()
    if smoothing == "none":
        states = (pooled[None], total[None], np.zeros((1, len(total))))
    elif smoothing == "collins":
        b = check_float("collins b", collins_b, min=0, min_open=True)
        states = (pooled[None], total[None], (b * distinct)[None])
        info["collins_b"] = b
    else:
        iters = check_int("iters", iters, min=2)
        keep = check_int("keep", keep, min=1)
        states, trace = hdp_states(tables, iters, check_int("seed", seed, min=0), keep)
        info.update(iters=iters, seed=seed, kept=int(states[0].shape[0]),
                    tables=trace["tables"][-1],
                    alpha={k: round(float(a), 4)
                           for k, a in zip(tables.levels, trace["alpha"][-1])})
    return LexicalizedGrammar(tables, known, tagdict, states, smoothing, info)
