"""The screening's check of one candidate rule (:func:`strgm.models.rule_proposals.
screen`), compiled: which rows of the search (:meth:`strgm.models.rule_search._Search.
set_urs`) are right with the rule placed last in the cascade and placed first, and the
search's estimate of the training words right after each (:meth:`strgm.models.
rule_search._Search.estimate`). The references are ``_Search.rows_ok_after`` and
``_Search.estimate``; :class:`CandidateScorer` returns exactly what they return.

Incremental: the cascade's output on every row is known (``rows_out``, right as
``ok_out``). Placed last, the rule is applied to that output; placed first, to the
row's underlying form, and only when it rewrites a cell is the rest of the cascade
applied after it — a row the rule leaves alone keeps its output and its right-ness
(the row checks of :mod:`strgm.models.rule_row_checks`). The candidates of one change
are checked in one compiled call (:func:`score_batch`). Cost per candidate: that of
the row checks, plus O(rows) for the estimate.
"""

from __future__ import annotations

import numpy as np

from strgm.compiled import njit
from strgm.models.rule_kernels import INSERT, SIM, RuleBank, load_rule, row_cells
from strgm.models.rule_row_checks import (first_ok, insert_ok, label_index, new_cache,
                                          rows_ok, sim_fired, sim_ok, site_index,
                                          touched_rows)


@njit(cache=True)
def estimate_kernel(ok, base_rows, pair_word, pair_morph, alt_rows, alt_slot, k,
                    slots):  # pragma: no cover - compiled
    """Σ_w base_w + Σ_m max(0, max_c alt[m, c] − cur[m]): base_w whether word w's row
    under the current URs (``base_rows[w]``) is right, cur[m] the words of morpheme m
    right (pairs (word, morph)), alt[m, c] the rows with m's UR replaced by candidate c
    that are right (``alt_rows``, slot m·slots + c in ``alt_slot``)."""
    cur = np.zeros(k)
    for p in range(pair_word.shape[0]):
        if ok[base_rows[pair_word[p]]]:
            cur[pair_morph[p]] += 1.0
    alt = np.zeros(k * slots)
    for i in range(alt_rows.shape[0]):
        if ok[alt_rows[i]]:
            alt[alt_slot[i]] += 1.0
    total = 0.0
    for w in range(base_rows.shape[0]):
        if ok[base_rows[w]]:
            total += 1.0
    for m in range(k):
        best = alt[m * slots]
        for c in range(1, slots):
            best = max(best, alt[m * slots + c])
        if best - cur[m] > 0:
            total += best - cur[m]
    return total


@njit(cache=True)
def score_kernel(bank, slot, kind, ins, mapping, spread, contexts, none, tier, data,
                 index, est):  # pragma: no cover - compiled
    """Load the candidate into bank slot ``slot`` (after the cascade's rules) and
    check it last and first: (covered, larger estimate, rows right last, first)."""
    return _score(bank, slot, kind, ins, mapping, spread, contexts, none, tier, data,
                  index, est, new_cache(data[0].shape[0]))


@njit(cache=True)
def _score(bank, slot, kind, ins, mapping, spread, contexts, none, tier, data, index,
           est, cache):  # pragma: no cover - compiled
    """:func:`score_kernel` with the :func:`first_ok` cache of the candidate's
    change."""
    meta, tables, masks, spreads = bank
    rows, rows_m, outs, outs_m, ok_out, gold, gold_m = data
    ptr_out, idx_out, ptr_in, idx_in, sites_out, sites_in = index
    if not load_rule(meta, tables, masks, spreads, slot, kind, ins, mapping, spread,
                     contexts, none, tier):
        return False, 0.0, ok_out, ok_out
    n_rows = rows.shape[0]
    if kind == SIM:  # the rewritten cells found through the targets' cells
        fired, mark = sim_fired(tables, masks, slot, outs, outs_m, sites_out)
        ok_last = sim_ok(tables, slot, outs, outs_m, fired, mark, ok_out, gold, gold_m)
    else:
        mark = touched_rows(kind, mapping, spread, contexts, none, ptr_out, idx_out,
                            n_rows)
        ok_last = insert_ok(meta, masks, slot, outs, outs_m, mark, ok_out, gold,
                            gold_m) if kind == INSERT else \
            rows_ok(bank, slot, outs, outs_m, mark, ok_out, gold, gold_m, False)
    ok_first = ok_last
    if slot > 0 and kind == SIM:
        fired, mark = sim_fired(tables, masks, slot, rows, rows_m, sites_in)
        ok_first = first_ok(bank, slot, kind, rows, rows_m, mark, fired, ok_out, gold,
                            gold_m, cache)
    elif slot > 0:
        mark = touched_rows(kind, mapping, spread, contexts, none, ptr_in, idx_in, n_rows)
        no_cells = np.zeros((0, 0), dtype=np.bool_)  # an insertion's gaps: read there
        ok_first = first_ok(bank, slot, kind, rows, rows_m, mark, no_cells, ok_out,
                            gold, gold_m, cache) if kind == INSERT else \
            rows_ok(bank, slot, rows, rows_m, mark, ok_out, gold, gold_m, True)
    base_rows, pair_word, pair_morph, alt_rows, alt_slot, k, slots = est
    e_first = estimate_kernel(ok_first, base_rows, pair_word, pair_morph, alt_rows,
                              alt_slot, k, slots)
    e_last = estimate_kernel(ok_last, base_rows, pair_word, pair_morph, alt_rows,
                             alt_slot, k, slots)
    return True, max(e_first, e_last), ok_last, ok_first


@njit(cache=True)
def score_batch(bank, slot, kinds, ins, mapping, spread, pool, ptr, ctx, none, tiers,
                vowels, data, index, est):  # pragma: no cover - compiled
    """:func:`score_kernel` for each candidate b of one change (``mapping``, ``spread``,
    ``ins``): kind ``kinds[b]``, context k the labels ``pool[ptr[c]:ptr[c + 1]]`` for
    c = ``ctx[b, k]`` (absent where bit k of ``none[b]`` is set), the tier ``vowels``
    if ``tiers[b]``. Returns (covered, estimate, rows right last, first) per
    candidate, one call for the batch."""
    size, rows = ctx.shape[0], data[0].shape[0]
    covered = np.zeros(size, dtype=np.bool_)
    ests = np.zeros(size)
    last = np.empty((size, rows), dtype=np.bool_)
    first = np.empty((size, rows), dtype=np.bool_)
    cache = new_cache(rows)
    for b in range(size):
        c = ctx[b]
        contexts = (pool[ptr[c[0]]:ptr[c[0] + 1]], pool[ptr[c[1]]:ptr[c[1] + 1]],
                    pool[ptr[c[2]]:ptr[c[2] + 1]], pool[ptr[c[3]]:ptr[c[3] + 1]])
        tier = vowels if tiers[b] else vowels[:0]
        covered[b], ests[b], last[b], first[b] = _score(
            bank, slot, kinds[b], ins, mapping, spread, contexts, none[b], tier, data,
            index, est, cache)
    return covered, ests, last, first


class CandidateScorer:
    """Scores candidate rules against the cascade ``rules`` of the search ``s`` (whose
    rows are set: :meth:`strgm.models.rule_search._Search.set_urs`) with outputs
    ``rows_out`` right as ``ok_out``; ``slots``: candidate URs per morpheme."""

    def __init__(self, s, rules: list, rows_out: np.ndarray, ok_out: np.ndarray,
                 slots: int):
        self.bank = RuleBank(s.n, len(rules) + 1)
        self.usable = all(self.bank.load(i, r) for i, r in enumerate(rules))
        self.slot = len(rules)
        rows = np.ascontiguousarray(s.rows, dtype=np.int64)
        outs = np.ascontiguousarray(rows_out, dtype=np.int64)
        gold = np.ascontiguousarray(s.row_gold, dtype=np.int64)
        self.data = (rows, row_cells(rows), outs, row_cells(outs),
                     np.ascontiguousarray(ok_out, dtype=bool), gold, row_cells(gold))
        self.index = (*label_index(outs, s.n), *label_index(rows, s.n),
                      site_index(outs, s.n), site_index(rows, s.n))
        v = np.flatnonzero(s.row_morph >= 0)
        self.est = (np.flatnonzero(s.row_morph < 0), s.pair_word, s.pair_morph, v,
                    (s.row_morph[v] * slots + s.row_cand[v]).astype(np.int64),
                    len(s.morphs), slots)
        self._ids: dict = {}
        self._pool: list = []
        self._packed = None

    def context_ids(self, contexts: list) -> list:
        """The pool ids of contexts' labels (``score_many``'s ``ctx``)."""
        ids = self._ids
        for labels in contexts:
            if labels not in ids:
                ids[labels] = len(ids)
                self._pool.append(np.array(sorted(labels), dtype=np.int64))
                self._packed = None
        return [ids[labels] for labels in contexts]

    def score_many(self, kinds, ins: int, mapping: tuple, ctx, none, tiers,
                   vowels: frozenset):
        """:func:`score_batch` for candidates that share one change (``mapping``,
        ``ins``), their contexts given as :meth:`context_ids` (any id where absent);
        None when the kernels do not cover the cascade."""
        if not self.usable:
            return None
        if self._packed is None:
            ptr = np.zeros(len(self._pool) + 1, dtype=np.int64)
            np.cumsum([len(a) for a in self._pool], out=ptr[1:])
            self._packed = (np.concatenate(self._pool + [np.zeros(0, np.int64)]), ptr)
        mp = np.array(mapping, dtype=np.int64).reshape(-1, 2)
        return score_batch(self.bank.arrays(), self.slot, kinds, int(ins), mp,
                           np.zeros((0, 3), dtype=np.int64), *self._packed, ctx, none,
                           tiers, np.array(sorted(vowels), dtype=np.int64), self.data,
                           self.index, self.est)

    def __call__(self, rule):
        """(rows right with ``rule`` last, with it first, the larger estimate), or None
        when the kernels do not cover the rule or the cascade (then use the
        reference)."""
        if not self.usable:
            return None
        ok, est, ok_last, ok_first = score_kernel(
            self.bank.arrays(), self.slot, *self.bank.parts(rule), self.data,
            self.index, self.est)
        return (ok_last, ok_first, est) if ok else None
