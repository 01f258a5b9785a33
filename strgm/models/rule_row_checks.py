"""Which rows of the rule search are right after a candidate rule, compiled (the
checks of :mod:`strgm.models.rule_screening`). A row is right when its cells equal its
gold row's (the same length and labels).

Only rows holding one of the rule's targets (for an insertion, a label of a context
without the edge) can change, found through an index label → rows
(:func:`label_index`; :func:`touched_rows`). A substitution or deletion finds the cells
it rewrites through the cells holding each target (:func:`site_index`;
:func:`sim_fired`), and placed last in the cascade its rows' right-ness is read off
without writing them (:func:`sim_ok`), as is an insertion's (:func:`insert_ok`): a
right row stays right only if nothing changes, a wrong one is compared label by label
with its gold row. Placed first, a rewritten row goes through the rest of the cascade
(:func:`rows_ok`); within one change (a target and its feature change, or an inserted
segment) the rewritten row is fixed by which cells the rule rewrites, so
:func:`first_ok` keeps each (row, cells) result for the change's next candidate. Cost
per candidate: O(target cells + rewritten rows × length), plus × cascade length for
the rows rewritten when placed first and not seen before in the change.
"""

from __future__ import annotations

import numpy as np

from strgm.compiled import njit
from strgm.models.rule_kernels import (EDGE, INSERT, SIM, SPREAD_LEFT, SPREAD_RIGHT,
                                       TIER_LEFT, TIER_RIGHT, rule_on_rows,
                                       rules_on_work)


@njit(cache=True, inline="always")
def _same(buf, br, m, gold, gr, gm):  # pragma: no cover - compiled
    """Whether row ``br`` of ``buf`` (m cells) is row ``gr`` of ``gold`` (gm cells)."""
    if m != gm:
        return False
    for j in range(m):
        if buf[br, j] != gold[gr, j]:
            return False
    return True


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
def touched_rows(kind, mapping, spread, contexts, none, ptr, idx, rows):  # pragma: no cover
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
def rows_ok(bank, slot, mat, cells, mark, ok_out, gold, gold_m, then):
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
def sim_fired(tables, masks, i, mat, cells, sites):  # pragma: no cover - compiled
    """The cells of ``mat`` that bank rule i, a substitution or deletion, rewrites (a
    target whose contexts hold, as in :func:`strgm.models.rule_kernels._sim_row`),
    found through the cells holding each target (``sites``: label → (row, column)),
    and the rows holding one: (fired cells, rows rewritten)."""
    ptr, site_row, site_col = sites
    fired = np.zeros(mat.shape, dtype=np.bool_)
    hit = np.zeros(mat.shape[0], dtype=np.bool_)
    for x in range(1, tables.shape[1] - 1):
        if tables[i, x] < 0:
            continue
        for p in range(ptr[x], ptr[x + 1]):
            r, j = site_row[p], site_col[p]
            m = cells[r]
            if not masks[i, 0, mat[r, j - 1]]:
                continue
            b = mat[r, j + 1] if j + 1 < m else 0
            a2 = mat[r, j - 2] if j >= 2 else 0
            b2 = mat[r, j + 2] if j + 2 < m else 0
            if masks[i, 1, b] and masks[i, 2, a2] and masks[i, 3, b2]:
                fired[r, j] = True
                hit[r] = True
    return fired, hit


@njit(cache=True, inline="always")
def _next(gold, r, k, gm, v):  # pragma: no cover - compiled
    """The next cell to compare, k + 1, if cell k of gold row r (``gm`` cells) is v;
    else −1 (the row differs)."""
    return k + 1 if k < gm and gold[r, k] == v else -1


@njit(cache=True)
def sim_ok(tables, i, mat, cells, fired, hit, ok_out, gold, gold_m):
    # pragma: no cover - compiled
    """Right-ness of every row after the ``fired`` cells of the rows ``hit`` are
    rewritten by rule i (0: deleted), read off without writing the rows: each output
    label in turn against the gold row's (the others keep ``ok_out``)."""
    ok = ok_out.copy()
    for r in range(mat.shape[0]):
        if not hit[r]:
            continue
        k = 0
        for j in range(cells[r]):
            v = tables[i, mat[r, j]] if fired[r, j] else mat[r, j]
            if v != 0:
                k = _next(gold, r, k, gold_m[r], v)
                if k < 0:
                    break
        ok[r] = k == gold_m[r]
    return ok


@njit(cache=True)
def insert_ok(meta, masks, i, mat, cells, mark, ok_out, gold, gold_m):
    # pragma: no cover - compiled
    """Right-ness of every row after bank rule i, an insertion, on the rows ``mark``ed
    (the others keep ``ok_out``), read off without writing the rows. A right row stays
    right only if the rule inserts nothing; a wrong row can become right only if its
    gold row is longer: each output label in turn against the gold row's."""
    ok = ok_out.copy()
    y = meta[i, 1]
    for r in range(mat.shape[0]):
        m, gm = cells[r], gold_m[r]
        if not mark[r] or (not ok_out[r] and gm <= m):
            continue
        if ok_out[r]:
            for j in range(m - 1):
                if masks[i, 0, mat[r, j]] and masks[i, 1, mat[r, j + 1]]:
                    ok[r] = False
                    break
            continue
        k = 0
        for j in range(m):
            k = _next(gold, r, k, gm, mat[r, j])
            if k >= 0 and j + 1 < m and masks[i, 0, mat[r, j]] and \
                    masks[i, 1, mat[r, j + 1]]:
                k = _next(gold, r, k, gm, y)
            if k < 0:
                break
        ok[r] = k == gm
    return ok


@njit(cache=True)
def first_ok(bank, slot, kind, rows, rows_m, mark, fired, ok_out, gold, gold_m,
             cache):  # pragma: no cover - compiled
    """:func:`rows_ok` with the cascade after bank rule ``slot`` (a substitution or
    deletion whose ``fired`` cells are known, or an insertion), on the rows ``mark``ed,
    through ``cache``: within one change a row's rewritten form, and so its right-ness
    after the cascade, is fixed by which cells (gaps) the rule rewrites, so the
    right-ness is kept per (row, bit set of those cells) for the next candidate of the
    change (rows of more than 62 cells are always checked)."""
    keys_of, right_of = cache
    meta, tables, masks, spreads = bank
    size = keys_of.shape[1]
    ok = ok_out.copy()
    need = np.zeros(rows.shape[0], dtype=np.bool_)
    keys = np.zeros(rows.shape[0], dtype=np.int64)
    for r in range(rows.shape[0]):
        m = rows_m[r]
        if not mark[r]:
            continue
        if m > 62:
            need[r] = True
            continue
        key = 0
        for j in range(m - 1):
            if fired[r, j] if kind == SIM else (masks[slot, 0, rows[r, j]] and
                                                 masks[slot, 1, rows[r, j + 1]]):
                key |= 1 << j
        if key == 0:  # not rewritten: keeps its right-ness
            continue
        keys[r] = key
        h = (key ^ (key >> 6) ^ (key >> 12) ^ (key >> 24)) % size
        if keys_of[r, h] == key:
            ok[r] = right_of[r, h]
        else:
            need[r] = True
    if need.any():
        got = rows_ok(bank, slot, rows, rows_m, need, ok_out, gold, gold_m, True)
        for r in np.flatnonzero(need):
            ok[r] = got[r]
            key = keys[r]
            if key != 0:
                h = (key ^ (key >> 6) ^ (key >> 12) ^ (key >> 24)) % size
                keys_of[r, h], right_of[r, h] = key, got[r]
    return ok


@njit(cache=True)
def new_cache(rows):  # pragma: no cover - compiled
    """An empty :func:`first_ok` cache: 64 (bit set, right-ness) entries per row."""
    return np.zeros((rows, 64), dtype=np.int64), np.zeros((rows, 64), dtype=np.bool_)


def site_index(mat: np.ndarray, n: int) -> tuple:
    """(ptr, row, col): the cells holding segment a are (row[p], col[p]) for p in
    ptr[a]:ptr[a + 1], labels 0..n+1 (only segments 1..n have cells)."""
    r, c = np.nonzero((mat >= 1) & (mat <= n))
    labels = mat[r, c]
    order = np.argsort(labels, kind="stable")
    ptr = np.zeros(n + 3, dtype=np.int64)
    np.cumsum(np.bincount(labels, minlength=n + 2), out=ptr[1:])
    return ptr, r[order].astype(np.int64), c[order].astype(np.int64)


def label_index(mat: np.ndarray, n: int) -> tuple:
    """(ptr, idx): the rows holding label a are idx[ptr[a]:ptr[a + 1]], labels 0..n+1."""
    has = np.zeros((n + 2, len(mat)), dtype=bool)
    has[mat, np.arange(len(mat))[:, None]] = True
    labels, rows = np.nonzero(has)
    ptr = np.zeros(n + 3, dtype=np.int64)
    np.cumsum(np.bincount(labels, minlength=n + 2), out=ptr[1:])
    return ptr, rows.astype(np.int64)
