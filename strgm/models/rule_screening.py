"""The screening's check of one candidate rule (:func:`strgm.models.rule_proposals.
screen`), compiled: which rows of the search (:meth:`strgm.models.rule_search._Search.
set_urs`) are right with the rule placed last in the cascade and placed first, and the
search's estimate of the training words right after each (:meth:`strgm.models.
rule_search._Search.estimate`). The references are ``_Search.rows_ok_after`` and
``_Search.estimate``; :class:`CandidateScorer` returns exactly what they return.

Incremental: the cascade's output on every row is known (``rows_out``, right as
``ok_out``). Placed last, the rule is applied to that output; placed first, to the
row's underlying form, and only when it rewrites a cell is the rest of the cascade
applied after it — a row the rule leaves alone keeps its output and its right-ness.
Only rows holding one of the rule's targets (for an insertion, a label of a context
without the edge) can change, found through an index label → rows. A row is right when
its cells equal its gold row's (the same length and labels). Cost per candidate:
O(rows holding a target × length), plus × cascade length for the rows the rule
rewrites when placed first.
"""

from __future__ import annotations

import numpy as np

from strgm.models.rule_kernels import (EDGE, INSERT, SPREAD_LEFT, SPREAD_RIGHT, TIER_LEFT,
                                       TIER_RIGHT, RuleBank, load_rule, row_cells,
                                       rule_on_rows, rules_on_work)
from strgm.compiled import njit


@njit(cache=True, inline="always")
def _same(buf, br, m, gold, gr, gm):  # pragma: no cover - compiled
    """Whether row ``br`` of ``buf`` (m cells) is row ``gr`` of ``gold`` (gm cells)."""
    if m != gm:
        return False
    for j in range(m):
        if buf[br, j] != gold[gr, j]:
            return False
    return True


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


@njit(cache=True, inline="always")
def _holding(labels, ptr, idx, mark, need):  # pragma: no cover - compiled
    """Mark (``need``: keep only) the rows holding one of ``labels`` (index ``ptr``/
    ``idx``: label → rows); a set holding the edge (EDGE) constrains nothing."""
    for a in labels:
        if a == EDGE:
            return
    seen = np.zeros(mark.shape[0], dtype=np.bool_)
    for a in labels:
        for p in range(ptr[a], ptr[a + 1]):
            seen[idx[p]] = True
    for r in range(mark.shape[0]):
        mark[r] = seen[r] and (mark[r] or not need)


@njit(cache=True)
def _touched(kind, mapping, spread, contexts, none, ptr, idx, rows):  # pragma: no cover
    """Which rows the rule can rewrite: those holding a target (for a spread rule,
    also a neighbour it reads) and a label of each context it reads on the input
    (contexts holding the edge, and the tier context, constrain nothing)."""
    mark = np.ones(rows, dtype=np.bool_)
    if kind == SPREAD_RIGHT or kind == SPREAD_LEFT:
        _holding(spread[:, 0], ptr, idx, mark, True)
        _holding(spread[:, 1], ptr, idx, mark, True)
    elif kind != INSERT:
        _holding(mapping[:, 0], ptr, idx, mark, True)
    for k in range(4):
        if (none >> k) & 1 == 0 and not (k == 0 and kind == TIER_LEFT) and \
                not (k == 1 and kind == TIER_RIGHT):
            _holding(contexts[k], ptr, idx, mark, True)
    return mark


@njit(cache=True)
def _rows_ok(bank, slot, mat, cells, mark, ok_out, gold, gold_m, then):
    # pragma: no cover - compiled
    """Right-ness of every row of ``mat`` after bank rule ``slot`` and then rules
    0..slot−1 if ``then``, checked on the rows ``mark``ed that it rewrites (the others
    keep ``ok_out``)."""
    meta, tables, masks, spreads = bank
    ok = ok_out.copy()
    picks = np.flatnonzero(mark)
    k = picks.shape[0]
    work = np.empty((2 * k, 2 * mat.shape[1] + 2), dtype=np.int64)
    side = np.ones(k, dtype=np.int64)  # the rule writes row 2q + 1
    hits = np.zeros(k, dtype=np.bool_)
    live = np.ones(k, dtype=np.bool_)
    sub = cells[picks]
    rule_on_rows(meta, tables, masks, spreads, slot, mat, picks, work,
                 2 * np.arange(k) + 1, sub, live, hits)
    if then:
        work = rules_on_work(meta, tables, masks, spreads, 0, slot, work, side, sub, hits)
    for q in range(k):
        if hits[q]:
            ok[picks[q]] = _same(work, 2 * q + side[q], sub[q], gold, picks[q],
                                 gold_m[picks[q]])
    return ok


@njit(cache=True)
def score_kernel(bank, slot, kind, ins, mapping, spread, contexts, none, tier, data,
                 index, est):  # pragma: no cover - compiled
    """Load the candidate into bank slot ``slot`` (after the cascade's rules) and
    check it last and first: (covered, larger estimate, rows right last, first)."""
    meta, tables, masks, spreads = bank
    rows, rows_m, outs, outs_m, ok_out, gold, gold_m = data
    ptr_out, idx_out, ptr_in, idx_in = index
    if not load_rule(meta, tables, masks, spreads, slot, kind, ins, mapping, spread,
                     contexts, none, tier):
        return False, 0.0, ok_out, ok_out
    n_rows = rows.shape[0]
    mark = _touched(kind, mapping, spread, contexts, none, ptr_out, idx_out, n_rows)
    ok_last = _rows_ok(bank, slot, outs, outs_m, mark, ok_out, gold, gold_m, False)
    ok_first = ok_last
    if slot > 0:
        mark = _touched(kind, mapping, spread, contexts, none, ptr_in, idx_in, n_rows)
        ok_first = _rows_ok(bank, slot, rows, rows_m, mark, ok_out, gold, gold_m, True)
    base_rows, pair_word, pair_morph, alt_rows, alt_slot, k, slots = est
    e_first = estimate_kernel(ok_first, base_rows, pair_word, pair_morph, alt_rows,
                              alt_slot, k, slots)
    e_last = estimate_kernel(ok_last, base_rows, pair_word, pair_morph, alt_rows,
                             alt_slot, k, slots)
    return True, max(e_first, e_last), ok_last, ok_first


def label_index(mat: np.ndarray, n: int) -> tuple:
    """(ptr, idx): the rows holding label a are idx[ptr[a]:ptr[a + 1]], labels 0..n+1."""
    has = np.zeros((n + 2, len(mat)), dtype=bool)
    has[mat, np.arange(len(mat))[:, None]] = True
    labels, rows = np.nonzero(has)
    ptr = np.zeros(n + 3, dtype=np.int64)
    np.cumsum(np.bincount(labels, minlength=n + 2), out=ptr[1:])
    return ptr, rows.astype(np.int64)


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
        self.index = (*label_index(outs, s.n), *label_index(rows, s.n))
        v = np.flatnonzero(s.row_morph >= 0)
        self.est = (np.flatnonzero(s.row_morph < 0), s.pair_word, s.pair_morph, v,
                    (s.row_morph[v] * slots + s.row_cand[v]).astype(np.int64),
                    len(s.morphs), slots)

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
