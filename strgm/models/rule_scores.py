"""The screen's table of scored candidate rules (:func:`strgm.models.rule_proposals.
screen`): for each candidate, its estimated DL decrease, its cost and which rows of the
search it gets right placed last and placed first; memoised, and ranked best first with
one candidate per effect on the rows.

A rule's gain is λ · (estimate − base) − cost(r), the estimate being the larger of the
search's estimates (:meth:`strgm.models.rule_search._Search.estimate`) with the rule
placed first and placed last in the cascade. The candidates of one change (a target and
its feature change) differ only in their contexts, so they are scored a batch at a time
by one compiled call (:meth:`strgm.models.rule_screening.CandidateScorer.score_many`);
a candidate is kept as its parts (the change and its contexts as natural classes) and
made a :class:`strgm.models.rule_apply.SegmentRule` only when the ranking reaches it.
Rules the kernels do not cover are scored by the search's reference
(:meth:`strgm.models.rule_search._Search.rows_ok_after`). Cost per candidate: one
compiled check (:mod:`strgm.models.rule_screening`); ranking: O(C log C) for C
candidates, rules built only for the ranked prefix.
"""

from __future__ import annotations

import numpy as np

from strgm.models.rule_apply import SegmentRule
from strgm.models.rule_classes import NaturalClass
from strgm.models.rule_kernels import INSERT, NONE_BITS, SIM, TIER_LEFT, TIER_RIGHT

#: an unrestricted context (no class)
ANY = NaturalClass(frozenset(), "", 0.0)
_NONE_BITS = np.array(NONE_BITS, dtype=np.int64)


def rule_text(change: str, lc: NaturalClass, rc: NaturalClass, tier: str = "",
              lc2: NaturalClass = ANY, rc2: NaturalClass = ANY) -> str:
    """``x → y / L2 L _ R R2``; a tier context is written ``L …_`` or ``_… R`` (any
    consonants between)."""
    if not lc.text and not rc.text:
        return change
    gap_l = " …" if tier == "left" else ""
    gap_r = "… " if tier == "right" else ""
    return f"{change} / {lc2.text}{lc.text}{gap_l}_{gap_r}{rc.text}{rc2.text}"


def extent(rule: SegmentRule, n: int) -> int:
    """How many segments the rule's target and contexts admit. Among rules that do
    the same to every training row, the narrowest is kept (the subset principle: the
    most restrictive hypothesis the data allow — [+ant stop], not [+ant −cont], for
    English ə-epenthesis, whose training words have no /n+d/)."""
    if rule.spread:
        return len({t[0] for t in rule.spread}) + len({t[1] for t in rule.spread})
    return len(rule.mapping) + sum(n + 2 if c is None else len(c) for c in (
        rule.left, rule.right, rule.left2, rule.right2))


def presence(mat: np.ndarray, n: int) -> np.ndarray:
    """rows × labels (0..n+1): whether the label occurs in the row."""
    has = np.zeros((len(mat), n + 2), dtype=bool)
    has[np.arange(len(mat))[:, None], mat] = True
    return has


class ScoreTable:
    """The candidates scored against the cascade ``rules`` of the search ``s`` (rows
    set by :meth:`strgm.models.rule_search._Search.set_urs`; ``base`` training words
    right without a new rule). :meth:`score_change` and :meth:`score_rule` return
    gains; :meth:`ranked` the candidates best first."""

    def __init__(self, s, rules: list, rows_out: np.ndarray, base: int):
        self.s, self.rules, self.rows_out, self.base = s, rules, rows_out, base
        self.ok_out = s.correct(rows_out, gold=s.row_gold)
        self.compiled = s.candidate_scorer(rules, rows_out, self.ok_out)
        self._at: dict = {}  # a candidate's key -> its entry
        self.gains: list = []
        self.costs: list = []
        self._made: list = []  # a SegmentRule, or the parts to make it from
        self._sigs: list = []  # bytes, or (packed rows right last, first, index)
        self._has = None

    def _add(self, key, made, gain: float, cost: float, sig) -> None:
        self._at[key] = len(self.gains)
        self.gains.append(gain)
        self.costs.append(cost)
        self._made.append(made)
        self._sigs.append(sig)

    def _gain(self, est: float, cost: float) -> float:
        return self.s.word_cost * (est - self.base) - cost

    def _reference(self, rule: SegmentRule) -> tuple:
        """(rows right last, first, the larger estimate) by the search's reference."""
        s = self.s
        if self._has is None:
            self._has = (presence(self.rows_out, s.n), presence(s.rows, s.n))
        ok_last = s.rows_ok_after(rule, self.rows_out, self._has[0], self.ok_out)
        ok_first = s.rows_ok_after(rule, s.rows, self._has[1], self.ok_out,
                                   self.rules) if self.rules else ok_last
        return ok_last, ok_first, max(s.estimate(ok_first), s.estimate(ok_last))

    def _score_one(self, key, made, rule: SegmentRule, cost: float) -> None:
        got = self.compiled(rule)
        ok_last, ok_first, est = got if got is not None else self._reference(rule)
        self._add(key, made, self._gain(est, cost), cost,
                  np.packbits(ok_last).tobytes() + b"|" + np.packbits(ok_first).tobytes())

    def score_rule(self, rule: SegmentRule, cost: float) -> float:
        """The gain of ``rule`` (its cost ``cost`` when first scored)."""
        if rule not in self._at:
            self._score_one(rule, rule, rule, cost)
        return self.gains[self._at[rule]]

    def score_change(self, change: tuple, cands: list) -> list:
        """The gains of the candidates ``cands`` — (left, right, tier side or "", left2,
        right2), contexts as natural classes (:data:`ANY`: none) — of ``change``
        (mapping, inserted label, notation, cost); an insertion with no context: −∞."""
        mp, ins, text, cost = change
        at, fresh, keys = self._at, {}, []
        for cand in cands:
            lc, rc, tier, lc2, rc2 = cand
            if ins and lc is ANY and rc is ANY:
                keys.append(None)
                continue
            key = (mp, ins, text, lc.members, lc.text, rc.members, rc.text, tier,
                   lc2.members, lc2.text, rc2.members, rc2.text)
            keys.append(key)
            if key not in at and key not in fresh:
                fresh[key] = cand
        if fresh:
            self._score_fresh(change, fresh)
        gains = self.gains
        return [-np.inf if key is None else gains[at[key]] for key in keys]

    def _score_fresh(self, change: tuple, fresh: dict) -> None:
        """Score the new candidates of one change by one compiled call (or each by
        the reference when the kernels do not cover the cascade or a candidate)."""
        mp, ins, text, cost = change
        parts = list(fresh.values())
        costs = [cost + lc.cost + rc.cost + float(bool(tier)) + lc2.cost + rc2.cost +
                 float(lc2 is not ANY) + float(rc2 is not ANY)
                 for lc, rc, tier, lc2, rc2 in parts]
        ctx = np.array(self.compiled.context_ids(
            [c.members for p in parts for c in (p[0], p[1], p[3], p[4])]),
            dtype=np.int64).reshape(-1, 4)
        none = (ctx == self.compiled.context_ids([frozenset()])[0]) @ _NONE_BITS
        side = np.array([p[2] for p in parts])
        tiers = side != ""
        kinds = np.where(side == "right", TIER_RIGHT, np.where(
            tiers, TIER_LEFT, INSERT if ins else SIM)).astype(np.int64)
        got = self.compiled.score_many(kinds, ins, mp, ctx, none, tiers, self.s.vowels)
        if got is None:
            got = (np.zeros(len(parts), dtype=bool), None, None, None)
        covered, ests, last, first = got
        packed = None if ests is None else \
            (np.packbits(last, axis=1), np.packbits(first, axis=1))
        for b, (key, p) in enumerate(fresh.items()):
            made = (change, p)
            if covered[b]:
                self._add(key, made, self._gain(float(ests[b]), costs[b]), costs[b],
                          (*packed, b))
            else:
                self._score_one(key, made, self._rule(made), costs[b])

    def _rule(self, made) -> SegmentRule:
        if isinstance(made, SegmentRule):
            return made
        (mp, ins, text, _), (lc, rc, tier, lc2, rc2) = made
        return SegmentRule(mp, ins, lc.members or None, rc.members or None,
                           rule_text(text, lc, rc, tier, lc2, rc2),
                           self.s.vowels if tier else None, tier or "left",
                           lc2.members or None, rc2.members or None)

    def _sig(self, i: int) -> bytes:
        sig = self._sigs[i]
        if not isinstance(sig, bytes):
            last, first, b = sig
            sig = self._sigs[i] = last[b].tobytes() + b"|" + first[b].tobytes()
        return sig

    def ranked(self, limit=None) -> list:
        """(gain, cost, rule) best first: by −gain, then cost, then
        :func:`extent`, then the rule's repr (never hash order); of rules with the
        same effect on every row (the rows right in either place), only the first,
        so the exact checks go to different analyses. ``limit``: only the first
        ``limit``."""
        out, effects = [], set()
        for i, rule in self._order():
            if limit is not None and len(out) >= limit:
                break
            sig = self._sig(i)
            if sig not in effects:
                effects.add(sig)
                out.append((self.gains[i], self.costs[i], rule))
        return out

    def _order(self):
        """(entry, rule) in the ranking's order, as a generator: entries are sorted by
        (−gain, cost); extents, reprs and the rules themselves are only made within a
        run of equal keys, when the run is reached."""
        gains, costs = np.array(self.gains), np.array(self.costs)
        order = np.lexsort((costs, -gains))  # stable
        i, n = 0, len(order)
        while i < n:
            j = i + 1
            while j < n and gains[order[j]] == gains[order[i]] and \
                    costs[order[j]] == costs[order[i]]:
                j += 1
            run = [(extent(r, self.s.n), k, r) for k in order[i:j]
                   for r in (self._rule(self._made[k]),)]
            if len(run) > 1:
                run.sort(key=lambda t: t[0])
                run = _by_repr(run)
            yield from ((k, r) for _, k, r in run)
            i = j


def _by_repr(run: list) -> list:
    """Within runs of equal extent, the rules in order of their repr."""
    out, i = [], 0
    while i < len(run):
        j = i + 1
        while j < len(run) and run[j][0] == run[i][0]:
            j += 1
        out += run[i:j] if j == i + 1 else sorted(run[i:j], key=lambda t: repr(t[2]))
        i = j
    return out
