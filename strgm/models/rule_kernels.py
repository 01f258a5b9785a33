"""Compiled application of rewrite rules to one word at a time (numba), the array form
of :func:`strgm.models.rule_apply.apply_rule`, which stays as its reference (the tests
hold these kernels to it on random rules and words).

A word is a row ``[EDGE, x_1 … x_n, EDGE]`` of :func:`strgm.models.rule_apply.pack`
(edge label n + 1) held in the first ``m`` cells of a row of a matrix; every cell from
``m`` on reads as 0 (padding), whatever the matrix holds there. Rules are held in a
*bank* (:class:`RuleBank`): rule i is ``meta[i]`` = (kind, inserted label), the
replacement table ``tables[i, x]`` (−1: x is not a target), five masks over labels
0..n+1 ``masks[i]`` — left and right context (:func:`strgm.models.rule_apply.
_context`), the segment beyond each (all true when the rule has none), the tier — and
the spread table ``spreads[i, x, c]``. Kinds: :data:`SIM` (substitution or deletion),
:data:`INSERT`, :data:`TIER_LEFT`, :data:`TIER_RIGHT`, :data:`SPREAD_RIGHT`,
:data:`SPREAD_LEFT`. Each kernel does per row what the reference does per column of the
whole matrix: a substitution or deletion reads both contexts on the input and then
closes the holes of its deletions; an insertion fills each gap between two labels whose
left one is in L and right one in R; a tier rule walks left to right (right to left)
carrying the nearest output tier segment; a spread rule reads the input neighbour on
its side.

The reference's result on a row depends only on that row (not on the matrix width or
the other rows) as long as no row holds a 0 between its edges; such holes could only
come from a tier or spread rule that writes 0, which :func:`load_rule` refuses (the
search never proposes one; the caller then uses the reference), as it refuses any
label outside 1..n (contexts may hold :data:`EDGE`).
"""

from __future__ import annotations

import numpy as np

from strgm.models.rule_apply import EDGE, SegmentRule, apply_rules
from strgm.compiled import njit

SIM, INSERT, TIER_LEFT, TIER_RIGHT, SPREAD_RIGHT, SPREAD_LEFT = range(6)
#: bit k of a rule's ``none`` flags: context k (left, right, left2, right2) is absent
NONE_BITS = (1, 2, 4, 8)


@njit(cache=True, inline="always")
def _copy(src, sr, m, dst, dr):  # pragma: no cover - compiled
    for j in range(m):
        dst[dr, j] = src[sr, j]


@njit(cache=True, inline="always")
def _sim_row(tables, masks, i, src, sr, m, dst, dr):  # pragma: no cover - compiled
    """x → table[x] / L2 L _ R R2 on the input, then deletions' holes closed:
    (cells, whether any cell was rewritten). The row is copied at the first hit."""
    hit, deleted = False, False
    for j in range(1, m):
        x = src[sr, j]
        if x <= 0 or tables[i, x] < 0 or not masks[i, 0, src[sr, j - 1]]:
            continue
        b = src[sr, j + 1] if j + 1 < m else 0
        a2 = src[sr, j - 2] if j >= 2 else 0
        b2 = src[sr, j + 2] if j + 2 < m else 0
        if masks[i, 1, b] and masks[i, 2, a2] and masks[i, 3, b2]:
            if not hit:
                _copy(src, sr, m, dst, dr)
            dst[dr, j] = tables[i, x]
            hit = True
            deleted = deleted or tables[i, x] == 0
    if not deleted:
        return m, hit
    k = 0
    for j in range(m):
        if dst[dr, j] != 0:
            dst[dr, k] = dst[dr, j]
            k += 1
    return k, hit


@njit(cache=True, inline="always")
def _insert_row(label, masks, i, src, sr, m, dst, dr):  # pragma: no cover - compiled
    """∅ → label in every gap a_b with a ∈ L, b ∈ R (both labels, not padding)."""
    k, hit = 0, False
    for j in range(m):
        a = src[sr, j]
        b = src[sr, j + 1] if j + 1 < m else 0
        if hit:
            dst[dr, k] = a
        k += 1
        if a > 0 and b > 0 and masks[i, 0, a] and masks[i, 1, b]:
            if not hit:
                _copy(src, sr, k, dst, dr)
            dst[dr, k] = label
            k += 1
            hit = True
    return k, hit


@njit(cache=True, inline="always")
def _tier_row(tables, masks, i, right_side, src, sr, m, dst, dr):  # pragma: no cover
    """A tier rule: left to right with ``near`` the nearest preceding output tier
    segment read by L (``right_side``: right to left, the nearest following one read by
    R); the other context is read on the input."""
    edge = tables.shape[1] - 1
    hit = False
    near = edge
    for step in range(1, m):
        j = m - step if right_side else step
        cur = src[sr, j]
        if right_side:
            ok = cur > 0 and cur != edge and masks[i, 1, near] and \
                masks[i, 0, src[sr, j - 1]]
        else:
            ok = cur > 0 and masks[i, 0, near] and \
                masks[i, 1, src[sr, j + 1] if j + 1 < m else 0]
        out = cur
        if ok and tables[i, cur] >= 0:
            if not hit:
                _copy(src, sr, m, dst, dr)
            out = tables[i, cur]
            dst[dr, j] = out
            hit = True
        if masks[i, 4, out]:
            near = out
        elif right_side and cur == edge:
            near = edge
    return m, hit


@njit(cache=True, inline="always")
def _spread_row(spreads, masks, i, right_side, src, sr, m, dst, dr):  # pragma: no cover
    """x → spread[x, c] for c the input neighbour on the rule's side, x's left
    neighbour in L."""
    hit = False
    for j in range(1, m):
        c = (src[sr, j + 1] if j + 1 < m else 0) if right_side else src[sr, j - 1]
        y = spreads[i, src[sr, j], c]
        if y >= 0 and masks[i, 0, src[sr, j - 1]]:
            if not hit:
                _copy(src, sr, m, dst, dr)
            dst[dr, j] = y
            hit = True
    return m, hit


@njit(cache=True)
def rule_on_rows(meta, tables, masks, spreads, i, src, srow, dst, drow, cells, live,
                 hits):  # pragma: no cover - compiled
    """Rule i of the bank on each ``live`` row q: row ``srow[q]`` of ``src`` (``cells[q]``
    cells) into row ``drow[q]`` of ``dst`` (room for 2·cells + 2). Sets ``hits[q]``
    (and ``cells[q]``) where the rule rewrote a cell; elsewhere ``dst`` is left as it
    was and the result is the source row itself. The kind is read once, not per row."""
    kind = meta[i, 0]
    for q in range(srow.shape[0]):
        if not live[q]:
            continue
        if kind == SIM:
            m, h = _sim_row(tables, masks, i, src, srow[q], cells[q], dst, drow[q])
        elif kind == INSERT:
            m, h = _insert_row(meta[i, 1], masks, i, src, srow[q], cells[q], dst, drow[q])
        elif kind == TIER_LEFT or kind == TIER_RIGHT:
            m, h = _tier_row(tables, masks, i, kind == TIER_RIGHT, src, srow[q], cells[q],
                             dst, drow[q])
        else:
            m, h = _spread_row(spreads, masks, i, kind == SPREAD_RIGHT, src, srow[q],
                               cells[q], dst, drow[q])
        if h:
            hits[q] = True
            cells[q] = m


@njit(cache=True)
def rules_on_work(meta, tables, masks, spreads, lo, hi, work, side, cells, live):
    # pragma: no cover - compiled
    """Rules lo..hi−1 of the bank, in order, on each ``live`` word q of the work matrix,
    held in row 2q + ``side[q]`` (the other row of the pair is scratch; a rule that
    rewrites the word flips its side). Returns the work matrix, widened when an
    insertion may not fit."""
    hits = np.zeros(side.shape[0], dtype=np.bool_)
    srow = np.zeros(side.shape[0], dtype=np.int64)
    drow = np.zeros(side.shape[0], dtype=np.int64)
    for i in range(lo, hi):
        need = 2 * cells.max() + 2 if cells.shape[0] else 0
        if work.shape[1] < need:
            grown = np.zeros((work.shape[0], 2 * need), dtype=np.int64)
            grown[:, :work.shape[1]] = work
            work = grown
        for q in range(side.shape[0]):
            srow[q] = 2 * q + side[q]
            drow[q] = 2 * q + 1 - side[q]
        hits[:] = False
        rule_on_rows(meta, tables, masks, spreads, i, work, srow, work, drow, cells,
                     live, hits)
        for q in range(side.shape[0]):
            if hits[q]:
                side[q] = 1 - side[q]
    return work


@njit(cache=True)
def _fill_mask(mask, labels, absent, edge):  # pragma: no cover - compiled
    """A context mask: ``absent``: every label but padding (0); else ``labels`` (EDGE:
    the edge label). False if a label is neither EDGE nor a segment."""
    mask[:] = absent
    mask[0] = False
    for a in labels:
        if a != EDGE and not 1 <= a < edge:
            return False
        mask[edge if a == EDGE else a] = True
    return True


@njit(cache=True)
def load_rule(meta, tables, masks, spreads, i, kind, ins, mapping, spread, contexts,
              none, tier):  # pragma: no cover - compiled
    """Encode a rule into slot i of the bank (module docstring): ``mapping`` (k × 2:
    x, y), ``spread`` (k × 3: x, c, y), ``contexts`` (left, right, left2, right2
    label arrays, each absent where its bit of ``none`` is set), ``tier`` labels.
    False (slot unusable) for a label the kernels do not cover."""
    edge = tables.shape[1] - 1
    meta[i, 0], meta[i, 1] = kind, ins
    tables[i, :] = -1
    ok = kind != INSERT or 1 <= ins < edge
    for r in range(mapping.shape[0]):
        x, y = mapping[r, 0], mapping[r, 1]
        ok = ok and 1 <= x < edge and (1 if kind != SIM else 0) <= y < edge
        tables[i, x if 1 <= x < edge else 0] = y
    for k in range(4):
        absent = (none >> k) & 1 == 1
        ok = _fill_mask(masks[i, k], contexts[k], absent, edge) and ok
        if absent and k >= 2:
            masks[i, k, 0] = True  # no segment beyond: nothing to check
    ok = _fill_mask(masks[i, 4], tier, False, edge) and not masks[i, 4, edge] and ok
    if kind == SPREAD_RIGHT or kind == SPREAD_LEFT:
        spreads[i] = -1
        for r in range(spread.shape[0]):
            x, c, y = spread[r, 0], spread[r, 1], spread[r, 2]
            ok = ok and 1 <= x < edge and 1 <= c < edge and 1 <= y < edge
            if ok:
                spreads[i, x, c] = y
    return ok


def rule_kind(rule: SegmentRule) -> int:
    if rule.spread:
        return SPREAD_RIGHT if rule.spread_side == "right" else SPREAD_LEFT
    if rule.tier is not None:
        return TIER_RIGHT if rule.tier_side == "right" else TIER_LEFT
    return INSERT if rule.insert else SIM


class RuleBank:
    """Arrays holding ``size`` encoded rules over labels 1..n (module docstring), and
    :meth:`load` to encode a :class:`SegmentRule` into a slot; label arrays of
    contexts, mappings and spreads are cached."""

    def __init__(self, n: int, size: int, spreads: bool = True):
        self.n = n
        self.meta = np.zeros((size, 2), dtype=np.int64)
        self.tables = np.full((size, n + 2), -1, dtype=np.int64)
        self.masks = np.zeros((size, 5, n + 2), dtype=bool)
        side = n + 2 if spreads else 1
        self.spreads = np.full((size, side, side), -1, dtype=np.int64)
        self._cache: dict = {}
        self._empty = np.zeros(0, dtype=np.int64)

    def arrays(self) -> tuple:
        return self.meta, self.tables, self.masks, self.spreads

    def _labels(self, key, make):
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = make()
        return got

    def parts(self, rule: SegmentRule) -> tuple:
        """The arguments of :func:`load_rule` after the slot: (kind, insert, mapping,
        spread, contexts, none flags, tier)."""
        ctx, none = [], 0
        for k, c in enumerate((rule.left, rule.right, rule.left2, rule.right2)):
            if c is None:
                none |= NONE_BITS[k]
                ctx.append(self._empty)
            else:
                ctx.append(self._labels(c, lambda: np.array(sorted(c), dtype=np.int64)))
        tier = self._empty if rule.tier is None else \
            self._labels(rule.tier, lambda: np.array(sorted(rule.tier), dtype=np.int64))
        mp = self._labels(("map", rule.mapping), lambda: np.array(
            rule.mapping, dtype=np.int64).reshape(-1, 2))
        sp = self._labels(("spread", rule.spread), lambda: np.array(
            rule.spread, dtype=np.int64).reshape(-1, 3))
        return rule_kind(rule), int(rule.insert), mp, sp, tuple(ctx), none, tier

    def load(self, i: int, rule: SegmentRule) -> bool:
        """Encode ``rule`` into slot i; False if the kernels do not cover it."""
        if rule.spread and self.spreads.shape[1] == 1:
            return False
        return bool(load_rule(*self.arrays(), i, *self.parts(rule)))


@njit(cache=True)
def _apply_all(meta, tables, masks, spreads, mat, cells):  # pragma: no cover
    """Every rule of the bank, in order, on every row of ``mat``: (the rows, zero-padded
    to one more cell than the longest, and each row's cells)."""
    rows = mat.shape[0]
    work = np.zeros((2 * rows, 2 * mat.shape[1] + 2), dtype=np.int64)
    for r in range(rows):
        work[2 * r, :cells[r]] = mat[r, :cells[r]]
    side = np.zeros(rows, dtype=np.int64)
    out_m = cells.copy()
    work = rules_on_work(meta, tables, masks, spreads, 0, meta.shape[0], work, side,
                         out_m, np.ones(rows, dtype=np.bool_))
    out = np.zeros((rows, out_m.max() + 1 if rows else 1), dtype=np.int64)
    for r in range(rows):
        out[r, :out_m[r]] = work[2 * r + side[r], :out_m[r]]
    return out, out_m


def row_cells(mat: np.ndarray) -> np.ndarray:
    """Each row's cells: one past its last nonzero label."""
    nz = mat != 0
    return np.where(nz.any(axis=1), mat.shape[1] - np.argmax(nz[:, ::-1], axis=1),
                    0).astype(np.int64)


class CascadeCache:
    """:func:`strgm.models.rule_apply.apply_rules` by the kernels, with the encoded
    cascades kept (up to ``size``, then forgotten) for the next call; a cascade the
    kernels do not cover goes to the reference. The rows equal the reference's up to
    trailing padding."""

    def __init__(self, n: int, size: int = 512):
        self.n, self.size = n, size
        self._banks: dict = {}

    def bank(self, rules):
        """The encoded cascade ``rules`` (a :class:`RuleBank`), or None when the
        kernels do not cover it."""
        key = tuple(rules)
        if key not in self._banks:
            if len(self._banks) >= self.size:
                self._banks.clear()
            bank = RuleBank(self.n, len(rules), spreads=any(r.spread for r in rules))
            ok = all(bank.load(i, r) for i, r in enumerate(rules))
            self._banks[key] = bank if ok else None
        return self._banks[key]

    def apply(self, rules, mat: np.ndarray) -> np.ndarray:
        if not rules:
            return mat
        bank = self.bank(rules)
        if bank is None:
            return apply_rules(rules, mat, self.n)
        mat = np.ascontiguousarray(mat, dtype=np.int64)
        return _apply_all(*bank.arrays(), mat, row_cells(mat))[0]


def apply_compiled(rules, mat: np.ndarray, n: int) -> np.ndarray:
    """The cascade ``rules`` on the rows of ``mat`` (:func:`strgm.models.rule_apply.
    pack`), by the kernels: the rows :func:`strgm.models.rule_apply.apply_rules` gives
    (up to trailing padding). ValueError for a rule the kernels do not cover."""
    bank = RuleBank(n, len(rules), spreads=any(r.spread for r in rules))
    for i, rule in enumerate(rules):
        if not bank.load(i, rule):
            raise ValueError(f"rule {rule.text or rule!r} is not covered by the kernels")
    mat = np.ascontiguousarray(mat, dtype=np.int64)
    return _apply_all(*bank.arrays(), mat, row_cells(mat))[0]
