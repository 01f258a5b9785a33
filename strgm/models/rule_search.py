"""Learning an ordered cascade of rewrite rules and the underlying forms, by greedy
search under a description-length prior (the second phonology family of
docs/architecture.md §5).

Given, for every morpheme, a short list of candidate underlying forms (best first, e.g.
the k-best list of a trained edit phonology's beliefs) and the training words, find URs u
and rules R (:mod:`strgm.models.rule_apply`) that minimise

    DL(R, u) = Σ_{r ∈ R} cost(r) + λ · #{training words w : R(u_w) ≠ w},

u_w being the concatenation of the URs of w's morphemes. cost(r) counts feature units
(:mod:`strgm.models.rule_classes`): the target class, the changed features (a segment
for an insertion, 1 for a deletion) and each context (0 when unrestricted, 1 for the
word edge ``#``, a class's predicates). λ = ``word_cost``: a rule must fix about
cost/λ more words than it breaks.

Search (:func:`learn_rules`), greedy, from two starts (the first candidates, and the
URs that fit the most words with no rule), keeping the lower DL:

* **UR step**: each morpheme takes the candidate with the most training words right
  under the current rules, the others fixed (ties: keep the current one).
* **Rule step**: from every wrong word's alignment (current output vs truth), the edits
  x→y, x→∅, ∅→y with their neighbours propose rules: the target is x alone or a natural
  class containing x with the same feature change; contexts are classes containing the
  neighbours, or for a vowel the nearest vowel before or after it (a tier rule). Each
  candidate is screened by an estimate of the words right after it and a UR step; the
  best ``exact_checks`` are scored exactly — placed first or last in the cascade, then
  up to ``rounds`` UR steps — and the one with the largest DL decrease is added. Rule
  steps repeat while DL decreases.

Every candidate is scored by :func:`strgm.models.rule_apply.apply_rule` on the
current outputs of all training words at once (numpy). Cost per rule step:
O(candidates × words × length).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from strgm.models.rule_apply import (EDGE, SegmentRule, apply_rule, apply_rules, pack,
                                     unpack)
from strgm.models.rule_classes import SEGMENT_COST, NaturalClass, SegmentFeatures

_MAX_CANDIDATES = 3  # URs tried per morpheme
_ANY = NaturalClass(frozenset(), "", 0.0)  # marker: unrestricted context
_EDGE = NaturalClass(frozenset([EDGE]), "#", 1.0)


@dataclass
class RuleGrammar:
    """Learned URs (morpheme → labels) and rules; ``symbols``: labels 1..n."""

    symbols: list
    urs: dict
    rules: list
    train_correct: int
    train_words: int
    description_length: float
    history: list = field(default_factory=list)

    @property
    def train_exact(self) -> float:
        return self.train_correct / max(1, self.train_words)

    def predict(self, morphemes: Sequence[str]) -> str:
        """The surface of a word made of ``morphemes`` (each with a UR)."""
        n = len(self.symbols)
        ur = [a for m in morphemes for a in self.urs[m]]
        out = unpack(apply_rules(self.rules, pack([ur], n), n), n)[0]
        return "".join(self.symbols[a - 1] for a in out)


def _align(a: tuple, b: tuple) -> list:
    """Levenshtein alignment of a to b as ops ("sub", i, b_j) / ("del", i) / ("ins", i, b_j)
    (insertion before a[i]); substitutions of a segment by itself are left out."""
    n, m = len(a), len(b)
    d = np.zeros((n + 1, m + 1))
    d[:, 0], d[0, :] = np.arange(n + 1), np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1,
                          d[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    ops, i, j = [], n, m
    while i or j:
        if i and j and d[i, j] == d[i - 1, j - 1] + (a[i - 1] != b[j - 1]):
            if a[i - 1] != b[j - 1]:
                ops.append(("sub", i - 1, b[j - 1]))
            i, j = i - 1, j - 1
        elif i and d[i, j] == d[i - 1, j] + 1:
            ops.append(("del", i - 1))
            i -= 1
        else:
            ops.append(("ins", i, b[j - 1]))
            j -= 1
    return ops[::-1]


class _Search:
    """The training words, the rows a rule is scored on (:meth:`set_urs`), and the
    scores: words right (:meth:`correct`) and the estimate after a UR step
    (:meth:`estimate`)."""

    def __init__(self, symbols, words, candidates, word_cost):
        self.sf = SegmentFeatures(symbols)
        self.n = len(symbols)
        self.words = words  # [(morphemes, surface labels)]
        self.cands = {m: [tuple(c) for c in cs[:_MAX_CANDIDATES]]
                      for m, cs in candidates.items()}
        self.morphs = sorted(self.cands)
        self.vowels = frozenset(i + 1 for i, b in enumerate(self.sf.bundles)
                                if b["type"] == "vowel")
        self.word_cost = word_cost
        self.gold = pack([s for _, s in words], self.n)
        pairs = [(i, self.morphs.index(m)) for i, (ms, _) in enumerate(words)
                 for m in set(ms)]
        self.pair_word = np.array([p[0] for p in pairs], dtype=np.int64)
        self.pair_morph = np.array([p[1] for p in pairs], dtype=np.int64)

    def set_urs(self, urs: dict) -> None:
        """The rows scored for a rule: every word under ``urs``, then every word with one
        of its morphemes' URs replaced by another candidate (``row_morph``, ``row_cand``;
        −1 for the rows under ``urs``)."""
        word, morph, cand, mats = [], [], [], []
        def row(i, m, k, labels):
            word.append(i)
            morph.append(m)
            cand.append(k)
            mats.append(labels)
        for i, (ms, _) in enumerate(self.words):
            row(i, -1, -1, [a for m in ms for a in urs[m]])
            for m in set(ms):
                for k, c in enumerate(self.cands[m]):
                    if c != urs[m]:
                        row(i, self.morphs.index(m), k,
                            [a for t in ms for a in (c if t == m else urs[t])])
        self.row_word = np.array(word, dtype=np.int64)
        self.row_morph = np.array(morph, dtype=np.int64)
        self.row_cand = np.array(cand, dtype=np.int64)
        self.rows = pack(mats, self.n)
        self.row_gold = self.gold[self.row_word]

    def outputs(self, urs, rules, rows=None):
        rows = range(len(self.words)) if rows is None else rows
        mat = pack([[a for m in self.words[i][0] for a in urs[m]] for i in rows], self.n)
        return apply_rules(rules, mat, self.n)

    def correct(self, mat, rows=None, gold=None):
        """Which rows of ``mat`` equal their gold rows: the same length and the same
        labels over the narrower width (both are zero-padded after the word)."""
        if gold is None:
            gold = self.gold if rows is None else self.gold[list(rows)]
        w = min(mat.shape[1], gold.shape[1])
        same = (mat[:, :w] == gold[:, :w]).all(axis=1)
        return same & ((mat > 0).sum(axis=1) == (gold > 0).sum(axis=1))

    def estimate(self, rows_out) -> float:
        """Training words right after a rule and a UR step, estimated from the rows of
        :meth:`set_urs`: the words right under the current URs, plus for each morpheme
        the gain of its best other candidate with the rest fixed (gains of morphemes
        sharing a word may overlap, so this can overestimate)."""
        ok = self.correct(rows_out, gold=self.row_gold)
        base = ok[self.row_morph < 0]
        cur = np.zeros(len(self.morphs))
        np.add.at(cur, self.pair_morph, base[self.pair_word])
        alt = np.zeros((len(self.morphs), _MAX_CANDIDATES))
        v = self.row_morph >= 0
        np.add.at(alt, (self.row_morph[v], self.row_cand[v]), ok[v])
        return float(base.sum() + np.maximum(alt.max(axis=1) - cur, 0).sum())

    # ---------------------------------------------------------------- candidates
    def proposals(self, rows_out: np.ndarray, wrong_words: np.ndarray) -> dict:
        """(mapping, insert, text, cost) -> the neighbours seen ("left", "right", both
        as "pairs", and the nearest preceding and following vowels of a vowel's change:
        "tier", "tier_right"), from
        the wrong rows of the words that share a morpheme with a word of
        ``wrong_words`` (a rule may be needed by another UR of a word that is right)."""
        props: dict = {}
        shared = {m for i in wrong_words for m in self.words[int(i)][0]}
        near = [i for i, (ms, _) in enumerate(self.words) if shared & set(ms)]
        pick = np.flatnonzero(np.isin(self.row_word, near)
                              & ~self.correct(rows_out, gold=self.row_gold))
        for r, o in zip(pick, unpack(rows_out[pick], self.n)):
            gold = self.words[int(self.row_word[r])][1]
            for op in _align(o, tuple(gold)):
                i = op[1]
                left = o[i - 1] if i > 0 else EDGE
                if op[0] == "ins":
                    right = o[i] if i < len(o) else EDGE
                    keys = [self._insertion(op[2])]
                else:
                    right = o[i + 1] if i + 1 < len(o) else EDGE
                    keys = self._changes(o[i], op[2] if op[0] == "sub" else 0)
                tiers = self._tier_neighbours(o, i) if op[0] == "sub" else None
                for k in keys:
                    seen = props.setdefault(k, {"left": set(), "right": set(), "tier": set(),
                                                "tier_right": set(), "pairs": set()})
                    seen["left"].add(left)
                    seen["right"].add(right)
                    seen["pairs"].add((left, right))
                    if tiers is not None:
                        seen["tier"].add(tiers[0])
                        seen["tier_right"].add(tiers[1])
        return props

    def _tier_neighbours(self, o: tuple, i: int):
        """The nearest vowels before and after position i (EDGE if none); None if o[i]
        is no vowel."""
        if o[i] not in self.vowels:
            return None
        return (next((o[j] for j in range(i - 1, -1, -1) if o[j] in self.vowels), EDGE),
                next((o[j] for j in range(i + 1, len(o)) if o[j] in self.vowels), EDGE))

    def _insertion(self, y):
        return ((), y, f"∅ → {self.sf.symbols[y - 1]}", SEGMENT_COST)

    def _changes(self, x, y) -> list:
        sym = self.sf.symbols
        if y == 0:
            return [(tuple((c, 0) for c in sorted(cl.members)), 0,
                     f"{cl.text} → ∅", cl.cost + 1.0) for cl in self.sf.classes_of(x)]
        ch = self.sf.change(x, y)
        out = [(((x, y),), 0, f"{sym[x - 1]} → {sym[y - 1]}", 2 * SEGMENT_COST)]
        for cl in self.sf.classes_of(x)[1:]:
            mp = tuple((c, self.sf.apply_change(c, ch)) for c in sorted(cl.members))
            mp = tuple((c, d) for c, d in mp if d is not None)
            out.append((mp, 0, f"{cl.text} → {self.sf.change_text(ch)}", cl.cost + len(ch)))
        return out

    def _contexts(self, labels: set) -> list:
        opts = {_ANY.members: _ANY}
        for a in labels:
            for c in ([_EDGE] if a == EDGE else self.sf.classes_of(a)):
                if c.members not in opts or opts[c.members].cost > c.cost:
                    opts[c.members] = c
        return list(opts.values())

    def screen(self, rules: list, wrong_words: np.ndarray, base: int) -> list:
        """Candidate rules with their estimated DL decrease (:meth:`estimate`), placed
        first or last in the cascade ``rules``, best first: each (target, change) with
        every left context alone, every right context alone, every tier context (the
        nearest vowel before or after), and
        pairs — the best five of each side combined, and for an insertion every pair of
        classes of the neighbours seen around one site."""
        rows_out = apply_rules(rules, self.rows, self.n)
        scored: dict = {}
        for (mp, ins, text, cost), seen in self.proposals(rows_out, wrong_words).items():
            def score(lc, rc, tier=""):
                if ins and lc is _ANY and rc is _ANY:
                    return -np.inf
                rule = SegmentRule(mp, ins, lc.members or None, rc.members or None,
                                   _rule_text(text, lc, rc, tier),
                                   self.vowels if tier else None, tier or "left")
                if rule not in scored:
                    rcost = cost + lc.cost + rc.cost + float(bool(tier))
                    last = self.estimate(apply_rule(rule, rows_out, self.n))
                    first = self.estimate(apply_rules(rules, apply_rule(
                        rule, self.rows, self.n), self.n)) if rules else last
                    scored[rule] = (self.word_cost * (max(first, last) - base) - rcost,
                                    rcost)
                return scored[rule][0]
            for tc in self._contexts(seen["tier"])[1:]:  # tier contexts (not unrestricted)
                score(tc, _ANY, tier="left")
            for tc in self._contexts(seen["tier_right"])[1:]:
                score(_ANY, tc, tier="right")
            lcs, rcs = self._contexts(seen["left"]), self._contexts(seen["right"])
            top_l = sorted(lcs, key=lambda c: -score(c, _ANY))[:5]
            top_r = sorted(rcs, key=lambda c: -score(_ANY, c))[:5]
            pairs = {(lc, rc) for lc in top_l for rc in top_r}
            if ins:
                for l, r in seen["pairs"]:
                    pairs |= {(lc, rc) for lc in self._contexts({l})[1:]
                              for rc in self._contexts({r})[1:]}
            for lc, rc in pairs:
                score(lc, rc)
        return sorted(((g, c, r) for r, (g, c) in scored.items()), key=lambda t: -t[0])


def _rule_text(change: str, lc: NaturalClass, rc: NaturalClass, tier: str = "") -> str:
    """``x → y / L _ R``; a tier context is written ``L …_`` or ``_… R`` (any
    consonants between)."""
    if not lc.text and not rc.text:
        return change
    gap_l = " …" if tier == "left" else ""
    gap_r = "… " if tier == "right" else ""
    return f"{change} / {lc.text}{gap_l}_{gap_r}{rc.text}"


def learn_rules(symbols: Sequence[str], words: Sequence, candidates: dict, *,
                word_cost: float = 4.0, max_rules: int = 12, rounds: int = 4,
                exact_checks: int = 20, progress=None) -> RuleGrammar:
    """URs and a rule cascade for ``words`` ([(morphemes, surface labels)]) from
    ``candidates`` (morpheme → [UR labels, ...], best first): module docstring. Each
    rule step screens candidates by an estimate (:meth:`_Search.estimate`) and scores
    the best ``exact_checks`` exactly (UR steps after adding the rule). Two starts —
    the first candidates, and the URs that fit the most words with no rule — and the
    grammar of lower DL is kept (greedy search from the surface-true URs alone misses
    analyses whose rules only pay once the URs move together). ``progress``: called
    with a message as each rule is found."""
    s = _Search(list(symbols), list(words), candidates, word_cost)
    runs = []
    for start, fit_first in enumerate((True, False)):
        urs = {m: c[0] for m, c in s.cands.items()}
        if fit_first:
            _ur_step(s, urs, [])
        tell = None if progress is None else \
            (lambda msg, i=start: progress(f"rule search, start {i + 1}/2: {msg}"))
        runs.append(_greedy(s, urs, max_rules, rounds, exact_checks, tell))
    return min(runs, key=lambda g: g.description_length)


def _greedy(s: "_Search", urs: dict, max_rules: int, rounds: int, exact_checks: int,
            progress=None) -> RuleGrammar:
    """Add the best rule, first or last in the cascade (with its UR steps), while DL
    decreases."""
    rules: list = []
    history: list = []
    while len(rules) < max_rules:
        ok = s.correct(s.outputs(urs, rules))
        base = int(ok.sum())
        if base == len(s.words):
            break
        s.set_urs(urs)
        best = None
        screened = s.screen(rules, np.flatnonzero(~ok), base)[:exact_checks]
        for i, (_, cost, rule) in enumerate(screened):
            if progress is not None:
                progress(f"{len(rules)} rule(s); scoring candidate {i + 1}/{len(screened)}")
            for cascade in ([rule] + rules, rules + [rule]) if rules else ([rule],):
                trial = dict(urs)
                for _ in range(rounds):
                    if not _ur_step(s, trial, cascade):
                        break
                right = int(s.correct(s.outputs(trial, cascade)).sum())
                gain = s.word_cost * (right - base) - cost
                if best is None or gain > best[0]:
                    best = (gain, cost, rule, trial, cascade)
        if best is None or best[0] <= 0:
            break
        gain, cost, rule, urs, rules = best
        history.append({"rule": rule.text, "dl_decrease": float(gain), "cost": float(cost)})
        if progress is not None:
            progress(f"{len(rules)} rule(s), latest {rule.text}")
    right = int(s.correct(s.outputs(urs, rules)).sum())
    dl = sum(h["cost"] for h in history) + s.word_cost * (len(s.words) - right)
    return RuleGrammar(s.sf.symbols, urs, rules, right, len(s.words), float(dl), history)


def _ur_step(s: _Search, urs: dict, rules: list) -> bool:
    """Each morpheme's best candidate UR given the others (module docstring); ``urs``
    is updated in place. Whether any UR changed."""
    changed = False
    for m, cands in s.cands.items():
        if len(cands) < 2:
            continue
        rows = [i for i, (ms, _) in enumerate(s.words) if m in ms]
        if not rows:
            continue
        scores = [int(s.correct(s.outputs({**urs, m: c}, rules, rows), rows).sum())
                  for c in cands]
        best = cands[int(np.argmax(scores))]
        if best != urs[m] and max(scores) > scores[cands.index(urs[m])]:
            urs[m], changed = best, True
    return changed
