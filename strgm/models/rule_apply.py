"""Segmental rewrite rules ``x → y / L _ R``: applied to many words at once (numpy), and
compiled to the same function as an OpenFst transducer with ``pynini.cdrewrite``.

A :class:`SegmentRule` maps each target segment to its replacement (0: deleted), or
inserts one segment (``insert``); L and R are sets of labels the neighbour must be in
(:data:`EDGE` is the word edge, ``#``), None for any neighbour. Application is
*simultaneous* (``cdrewrite(..., direction="sim")``): both contexts are read on the
rule's input, every matching position is rewritten, and a cascade applies the rules in
order (each one's output is the next one's input).

A substitution or deletion may also name the segment beyond each neighbour (``left2``,
``right2``: a window of 2 on that side, e.g. Polish raising o → u / _[+voice −nasal]#);
the neighbour on that side is then not the word edge.

A *tier* rule (``tier``: the set of labels on the tier, e.g. the vowels) is a
substitution whose left context is the nearest preceding tier segment (or the word edge
when there is none), read on the rule's *output*: it applies left to right
(``direction="ltr"``, left context ``L · (Σ − tier)*``), so that harmony spreads through
a chain of suffixes, each vowel agreeing with the one it just produced. With
``tier_side="right"`` it is the mirror image: the nearest *following* tier segment, read
on the output, applied right to left (``direction="rtl"``, right context
``(Σ − tier)* · R``), as in regressive height harmony (Kikuria /siik-er-a/ → seekera).

A *spread* rule (``spread``: triples (x, c, y)) is feature-copying assimilation,
``[nasal] → [α place] / _[α place]``: x becomes y when its neighbour on ``spread_side``
is c (y is x with the spread features of c), read on the rule's input like a
simultaneous rule. The neighbour classes are in the triples; a rule reading its right
neighbour may also have a left context (``#[nasal] → [α place] / _[α place]``: Zoque's
prefix nasal assimilates, a root's [nɡ] does not), the only other context allowed.
Its transducer is built directly (:func:`_spread_fst`): for a right neighbour a
one-segment delay (the state is the pending input segment and whether the one before
it is in the left context), for a left one the state is the previous input segment —
O(n) states, O(n²) arcs.

Batch application (:func:`apply_rule`): the words are rows of an integer matrix
``[EDGE, x_1 … x_n, EDGE, 0 …]`` (0 pads). Substitution and deletion are one vectorised
look-up over all positions (then a stable compaction for deletions), insertion a scatter
after a cumulative count of the insertion gaps: O(words × length) numpy work per rule,
no Python loop over words or positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pynini

from fst_factors.transducers.rewrite import sigma_star_std

EDGE = -1  # the word edge in a context set; a matrix uses label n + 1


@dataclass(frozen=True)
class SegmentRule:
    """x → y / L2 L _ R R2 (module docstring). ``mapping``: ((x, y), ...) with y = 0
    for a deletion; ``insert``: the inserted label (then ``mapping`` is empty); ``left``
    / ``right``: frozensets of labels (may hold :data:`EDGE`) or None; ``left2`` /
    ``right2``: the same for the segment beyond (substitutions and deletions only, and
    only beside a ``left`` / ``right`` without the edge); ``spread``: ((x, c, y), ...)
    for an assimilation read from the neighbour on ``spread_side`` (then nothing
    else is set); ``text``: notation."""

    mapping: tuple = ()
    insert: int = 0
    left: Optional[frozenset] = None
    right: Optional[frozenset] = None
    text: str = ""
    tier: Optional[frozenset] = None
    tier_side: str = "left"
    left2: Optional[frozenset] = None
    right2: Optional[frozenset] = None
    spread: tuple = ()
    spread_side: str = "right"

    def __post_init__(self):
        if self.spread and (self.mapping or self.insert or self.tier is not None
                            or any(c is not None for c in (self.right, self.left2,
                                                           self.right2))
                            or (self.left is not None and self.spread_side == "left")):
            raise ValueError(f"rule {self.text!r}: a spread rule has no other change, "
                             "and no other context than a left one (when it reads its "
                             "right neighbour)")
        if self.spread_side not in ("left", "right"):
            raise ValueError(f"rule {self.text!r}: spread_side {self.spread_side!r} is "
                             "not 'left' or 'right'")
        for far, near in ((self.left2, self.left), (self.right2, self.right)):
            if far is not None and (self.insert or self.tier is not None or near is None
                                    or EDGE in near):
                raise ValueError(f"rule {self.text!r}: a context of width 2 needs a "
                                 "substitution or deletion and a neighbour class that "
                                 "is not the word edge")

    def targets(self) -> list:
        """The labels the rule can rewrite (none for an insertion)."""
        return sorted({t[0] for t in self.spread} | {x for x, _ in self.mapping})


def pack(words: Sequence[Sequence[int]], n: int) -> np.ndarray:
    """Rows ``[n+1, labels…, n+1, 0…]`` (n + 1 is the edge label, 0 pads)."""
    width = max((len(w) for w in words), default=0) + 3
    out = np.zeros((len(words), width), dtype=np.int64)
    for i, w in enumerate(words):
        out[i, :len(w) + 2] = [n + 1, *w, n + 1]
    return out


def unpack(mat: np.ndarray, n: int) -> list:
    """The label tuples of :func:`pack`'s rows."""
    return [tuple(int(a) for a in row if 0 < a <= n) for row in mat]


def _context(ctx: Optional[frozenset], n: int) -> np.ndarray:
    """Which labels 0..n+1 satisfy the context (0, padding, never does)."""
    ok = np.zeros(n + 2, dtype=bool)
    if ctx is None:
        ok[1:] = True
    else:
        for a in ctx:
            ok[n + 1 if a == EDGE else a] = True
    return ok


def apply_rule(rule: SegmentRule, mat: np.ndarray, n: int) -> np.ndarray:
    """The rows of ``mat`` (:func:`pack`) after ``rule``, a new matrix."""
    if rule.spread:
        return _spread(rule, mat, n)
    left, right = _context(rule.left, n), _context(rule.right, n)
    if rule.tier is not None and rule.tier_side == "right":
        return _tier_rtl(rule, left, right, mat, n)
    if rule.tier is not None:
        return _tier_ltr(rule, left, right, mat, n)
    if rule.insert:
        return _insert(rule.insert, left, right, mat)
    table, _ = _tables(rule, n)
    mid = mat[:, 1:-1]
    hit = (table[mid] >= 0) & left[mat[:, :-2]] & right[mat[:, 2:]] & (mid > 0)
    if rule.left2 is not None or rule.right2 is not None:
        hit &= _beyond(rule, mat, n)
    if not hit.any():
        return mat
    out = mat.copy()
    out[:, 1:-1] = np.where(hit, table[mid], mid)
    if (table[mid][hit] == 0).any():  # deletions: move the holes to the end of the row
        order = np.argsort(out == 0, axis=1, kind="stable")
        out = np.take_along_axis(out, order, axis=1)
    return out


def _spread_table(rule: SegmentRule, n: int) -> np.ndarray:
    """table[x, c]: what x becomes beside c (−1: unchanged), labels 0..n+1."""
    table = np.full((n + 2, n + 2), -1, dtype=np.int64)
    for x, c, y in rule.spread:
        table[x, c] = y
    return table


def _spread(rule: SegmentRule, mat: np.ndarray, n: int) -> np.ndarray:
    """A spread rule on every inner column at once, reading the input neighbours."""
    mid = mat[:, 1:-1]
    new = _spread_table(rule, n)[mid, mat[:, 2:] if rule.spread_side == "right"
                                 else mat[:, :-2]]
    hit = (new >= 0) & _context(rule.left, n)[mat[:, :-2]]
    if not hit.any():
        return mat
    out = mat.copy()
    out[:, 1:-1] = np.where(hit, new, mid)
    return out


def _beyond(rule: SegmentRule, mat: np.ndarray, n: int) -> np.ndarray:
    """Whether the segments two to the left and two to the right of each inner column
    are in ``left2`` / ``right2`` (padding outside the row matches nothing)."""
    wide = np.pad(mat, ((0, 0), (1, 1)))  # wide[:, k] = mat[:, k - 1]
    ok = np.ones((len(mat), mat.shape[1] - 2), dtype=bool)
    if rule.left2 is not None:
        ok &= _context(rule.left2, n)[wide[:, :-4]]
    if rule.right2 is not None:
        ok &= _context(rule.right2, n)[wide[:, 4:]]
    return ok


def _insert(label: int, left: np.ndarray, right: np.ndarray, mat: np.ndarray) -> np.ndarray:
    gap = left[mat[:, :-1]] & right[mat[:, 1:]] & (mat[:, :-1] > 0) & (mat[:, 1:] > 0)
    if not gap.any():
        return mat
    rows, width = mat.shape
    before = np.concatenate([np.zeros((rows, 1), dtype=np.int64),
                             np.cumsum(gap, axis=1)], axis=1)  # insertions left of col j
    out = np.zeros((rows, width + int(gap.sum(axis=1).max())), dtype=np.int64)
    r = np.repeat(np.arange(rows), width).reshape(rows, width)
    cols = np.arange(width)[None, :] + before
    out[r, cols] = mat
    gr, gc = np.nonzero(gap)
    out[gr, gc + before[gr, gc] + 1] = label
    return out


def _tables(rule, n: int) -> tuple:
    """(replacement of each label, −1 if not a target; whether each label is on the
    tier), indexed by label 0..n+1."""
    table = np.full(n + 2, -1, dtype=np.int64)
    for x, y in rule.mapping:
        table[x] = y
    on_tier = np.zeros(n + 2, dtype=bool)
    if rule.tier is not None:
        on_tier[sorted(rule.tier)] = True
    return table, on_tier


def _tier_ltr(rule, left, right, mat, n) -> np.ndarray:
    """A tier rule, column by column (vectorised over the words): ``last`` holds each
    word's nearest preceding output tier segment (n + 1, the edge, before the first)."""
    table, on_tier = _tables(rule, n)
    out = mat.copy()
    last = np.full(len(mat), n + 1, dtype=np.int64)
    for j in range(1, mat.shape[1] - 1):
        cur = out[:, j]
        hit = (table[cur] >= 0) & left[last] & right[mat[:, j + 1]] & (cur > 0)
        out[:, j] = np.where(hit, table[cur], cur)
        last = np.where(on_tier[out[:, j]], out[:, j], last)
    return out


def _tier_rtl(rule, left, right, mat, n) -> np.ndarray:
    """A right-tier rule: :func:`_tier_ltr` mirrored (columns right to left, ``nxt`` the
    nearest following output tier segment; the word's end edge before the last)."""
    table, on_tier = _tables(rule, n)
    out = mat.copy()
    nxt = np.full(len(mat), n + 1, dtype=np.int64)
    for j in range(mat.shape[1] - 2, 0, -1):
        cur = out[:, j]
        inside = cur > 0
        hit = (table[cur] >= 0) & right[nxt] & left[mat[:, j - 1]] & inside & \
            (cur != n + 1)
        out[:, j] = np.where(hit, table[cur], cur)
        nxt = np.where(on_tier[out[:, j]], out[:, j], np.where(cur == n + 1, n + 1, nxt))
    return out


def apply_rules(rules: Sequence[SegmentRule], mat: np.ndarray, n: int) -> np.ndarray:
    for rule in rules:
        mat = apply_rule(rule, mat, n)
    return mat


# ---------------------------------------------------------------- OpenFst compilation
def _labels_fsa(labels) -> pynini.Fst:
    f = pynini.Fst(arc_type="standard")
    s, t = f.add_state(), f.add_state()
    f.set_start(s)
    f.set_final(t)
    one = pynini.Weight.one("tropical")
    for a in sorted(labels):
        f.add_arc(s, pynini.Arc(int(a), int(a), one, t))
    return f


def _context_fsa(ctx: Optional[frozenset], start: bool, skip=None) -> pynini.Fst:
    """The context acceptor; ``skip`` (labels off the tier) may come between a tier
    context and the target (after a left one, before a right one)."""
    if skip is not None:  # a tier rule always has its tier context
        gap = _labels_fsa(skip).closure()
        ctx_fsa = _context_fsa(ctx, start)
        return (pynini.concat(ctx_fsa, gap) if start else pynini.concat(gap, ctx_fsa)
                ).optimize()
    if ctx is None:
        return pynini.accep("")
    segs = [a for a in ctx if a != EDGE]
    parts = [_labels_fsa(segs)] if segs else []
    if EDGE in ctx:
        parts.append(pynini.accep("[BOS]" if start else "[EOS]"))
    return pynini.union(*parts).optimize()


def _tau(rule: SegmentRule) -> pynini.Fst:
    f = pynini.Fst(arc_type="standard")
    s, t = f.add_state(), f.add_state()
    f.set_start(s)
    f.set_final(t)
    one = pynini.Weight.one("tropical")
    if rule.insert:
        f.add_arc(s, pynini.Arc(0, int(rule.insert), one, t))
    for x, y in rule.mapping:
        f.add_arc(s, pynini.Arc(int(x), int(y), one, t))
    return f


def _spread_fst(rule: SegmentRule, n: int) -> pynini.Fst:
    """A spread rule as a transducer over labels 1..n (module docstring): for a right
    neighbour, state (b, p) holds the pending input p and whether the input before it
    is in the left context (b), p is emitted on the next input c as table[p, c] (if
    b; else p) and by an ε-input arc at the end; for a left neighbour, state c is the
    previous input and x is emitted at once as table[x, c] (or x)."""
    table = _spread_table(rule, n)
    out = lambda x, c: int(table[x, c]) if table[x, c] >= 0 else x  # noqa: E731
    f = pynini.Fst(arc_type="standard")
    one = pynini.Weight.one("tropical")
    start = f.add_state()
    f.set_start(start)
    f.set_final(start)
    if rule.spread_side == "right":
        ok = _context(rule.left, n)
        state = {(b, p): f.add_state() for b in (False, True) for p in range(1, n + 1)}
        end = f.add_state()
        f.set_final(end)
        for (b, p), q in state.items():
            f.add_arc(q, pynini.Arc(0, p, one, end))
            for c in range(1, n + 1):
                f.add_arc(q, pynini.Arc(c, out(p, c) if b else p, one,
                                        state[(bool(ok[p]), c)]))
        for p in range(1, n + 1):
            f.add_arc(start, pynini.Arc(p, 0, one, state[(bool(ok[n + 1]), p)]))
        return f
    state = {a: f.add_state() for a in range(1, n + 1)}
    for x in range(1, n + 1):
        f.set_final(state[x])
        f.add_arc(start, pynini.Arc(x, x, one, state[x]))
        for c in range(1, n + 1):
            f.add_arc(state[c], pynini.Arc(x, out(x, c), one, state[x]))
    return f


def rules_fst(rules: Sequence[SegmentRule], n: int) -> pynini.Fst:
    """The cascade as one unweighted transducer over labels 1..n (tropical; compose
    with a string acceptor and read the single output path)."""
    sigma = sigma_star_std(n)
    out = sigma.copy()
    for rule in rules:
        if rule.spread:
            out = pynini.compose(out, _spread_fst(rule, n)).optimize()
            continue
        skip = None if rule.tier is None else set(range(1, n + 1)) - set(rule.tier)
        on_right = rule.tier_side == "right"
        left = _context_fsa(rule.left, True, None if on_right else skip)
        right = _context_fsa(rule.right, False, skip if on_right else None)
        if rule.left2 is not None:
            left = pynini.concat(_context_fsa(rule.left2, True), left).optimize()
        if rule.right2 is not None:
            right = pynini.concat(right, _context_fsa(rule.right2, False)).optimize()
        step = pynini.cdrewrite(
            _tau(rule), left, right, sigma,
            direction="sim" if skip is None else ("rtl" if on_right else "ltr"))
        out = pynini.compose(out, step).optimize()
    return out
