"""Learning an ordered cascade of rewrite rules and the underlying forms, by greedy
search under a description-length prior (the second phonology family of
docs/phonology.md).

Given, for every morpheme, a short list of candidate underlying forms (best first, e.g.
the k-best list of a trained edit phonology's beliefs) and the training words, find URs u
and rules R (:mod:`strgm.models.rule_apply`) that minimise

    DL(R, u) = Σ_{r ∈ R} cost(r) + μ · Σ_m |u_m| + λ · #{training words w : R(u_w) ≠ w},

u_w being the concatenation of the URs of w's morphemes, μ = ``ur_cost`` the price of
one UR segment (the lexicon's part of the description length: an analysis that
lengthens URs to spare a rule pays for it). cost(r) counts feature units
(:mod:`strgm.models.rule_classes`): the target class, the changed features (a segment
for an insertion, 1 for a deletion) and each context (0 when unrestricted, 1 for the
word edge ``#``, a class's predicates; 1 more for a tier, and for each context of
width 2); an assimilation ``T → [α F] / _C[α F]`` costs T's, 1 for F, 1 for the
agreement and C's (``[nasal] → [α place] / _[α place]``: 3, as much as the single
place it replaces, ``[nasal] → [lab] / _[lab]``). λ = ``word_cost``: a rule must fix about
cost/λ more words than it breaks.

Search (:func:`learn_rules`), a beam search from two starts (the first candidates, and
the URs that fit the most words with no rule), keeping the lowest DL seen:

* **UR step**: each morpheme takes the candidate with the most training words right
  under the current rules, the others fixed (ties: keep the current one).
* **Rule step**: candidate rules are read off the errors of the current cascade and
  screened (:mod:`strgm.models.rule_proposals`: natural-class targets, contexts of
  width 1 or 2 on each side, vowel tiers); the best ``exact_checks`` are scored
  exactly — placed first or last in the cascade, then up to ``rounds`` UR steps.
* **Narrowing**: the best grammar's contexts are narrowed by one predicate, and rules
  this makes redundant dropped, while that lowers the DL
  (:mod:`strgm.models.rule_narrowing`).
* **Beam**: every grammar in the beam takes each checked rule that lowers its DL; of
  the successors, one per set of training words got right (rivals that fix the same
  words are one analysis), the ``beam`` of lowest DL are kept. With ``beam`` = 1 this
  is greedy: the rule of largest DL decrease is added while DL decreases. A beam keeps
  an analysis whose first rule gains less than a rival's but enables more (Zoque
  nasal prefixes: post-nasal voicing first, then place assimilation, rather than a
  cheaper rule that fits two words by moving their URs).

Every candidate is scored on the rows of the training words it can change by the
compiled check of :mod:`strgm.models.rule_screening` (the cascade's outputs are kept;
placed first, only the rows the rule rewrites go through the rest of the cascade),
whose reference is :func:`strgm.models.rule_apply.apply_rule`. Cost per rule step and
beam entry: O(candidates × words × length).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from strgm.models.rule_apply import (EDGE, SegmentRule, apply_rule, apply_rules, pack,
                                     unpack)
from strgm.models.rule_classes import SegmentFeatures
from strgm.models.rule_kernels import CascadeCache, row_cells
from strgm.models.rule_narrowing import narrow_contexts
from strgm.models.rule_screening import CandidateScorer
from strgm.models.rule_ur_step import URStep
from strgm.progress import tagged
from strgm.models.rule_proposals import screen
from strgm.models.rule_scores import extent

_MAX_CANDIDATES = 3  # URs tried per morpheme


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

    def __repr__(self) -> str:
        return (f"RuleGrammar(rules={len(self.rules)}, morphemes={len(self.urs)}, "
                f"symbols={len(self.symbols)}, train_correct={self.train_correct}/"
                f"{self.train_words})")

    def predict(self, morphemes: Sequence[str]) -> str:
        """The surface of a word made of ``morphemes`` (each with a UR)."""
        n = len(self.symbols)
        ur = [a for m in morphemes for a in self.urs[m]]
        out = unpack(apply_rules(self.rules, pack([ur], n), n), n)[0]
        return "".join(self.symbols[a - 1] for a in out)


class _Search:
    """The training words, the rows a rule is scored on (:meth:`set_urs`), and the
    scores: words right (:meth:`correct`) and the estimate after a UR step
    (:meth:`estimate`)."""

    def __init__(self, symbols, words, candidates, word_cost, ur_cost=0.0, window=2):
        self.sf = SegmentFeatures(symbols)
        self.n = len(symbols)
        self.words = words  # [(morphemes, surface labels)]
        self.cands = {m: [tuple(c) for c in cs[:_MAX_CANDIDATES]]
                      for m, cs in candidates.items()}
        self.morphs = sorted(self.cands)
        self.vowels = frozenset(i + 1 for i, b in enumerate(self.sf.bundles)
                                if b["type"] == "vowel")
        self.word_cost = word_cost
        self.ur_cost = ur_cost
        self.window = window  # context reach on each side (rule_proposals)
        self.gold = pack([s for _, s in words], self.n)
        pairs = [(i, self.morphs.index(m)) for i, (ms, _) in enumerate(words)
                 for m in sorted(set(ms))]
        self.pair_word = np.array([p[0] for p in pairs], dtype=np.int64)
        self.pair_morph = np.array([p[1] for p in pairs], dtype=np.int64)
        self.cascades = CascadeCache(self.n)
        self.ur_step = URStep(self.words, self.cands, self.gold, row_cells(self.gold))
        self._screened: dict = {}  # (rules, URs, …) -> the screen's list (screen())
        self._urs_key: tuple = ()

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
            for m in sorted(set(ms)):
                for k, c in enumerate(self.cands[m]):
                    if c != urs[m]:
                        row(i, self.morphs.index(m), k,
                            [a for t in ms for a in (c if t == m else urs[t])])
        self.row_word = np.array(word, dtype=np.int64)
        self.row_morph = np.array(morph, dtype=np.int64)
        self.row_cand = np.array(cand, dtype=np.int64)
        self.rows = pack(mats, self.n)
        self.row_gold = self.gold[self.row_word]
        self._urs_key = tuple(sorted((m, tuple(u)) for m, u in urs.items()))

    def residual(self, mat: np.ndarray) -> int:
        """Segments where the rows of ``mat`` (the training words' outputs) and their
        gold rows differ, position by position (a tie-breaker, not an edit distance)."""
        w = max(mat.shape[1], self.gold.shape[1])
        a = np.pad(mat, ((0, 0), (0, w - mat.shape[1])))
        b = np.pad(self.gold, ((0, 0), (0, w - self.gold.shape[1])))
        return int((a != b).sum())

    def lexicon(self, urs: dict) -> float:
        """The URs' description length: ``ur_cost`` per segment."""
        return self.ur_cost * sum(len(u) for u in urs.values())

    def outputs(self, urs, rules, rows=None):
        """The training words ``rows`` (all) under ``urs`` rewritten by ``rules``: the
        rows of :func:`strgm.models.rule_apply.apply_rules`, up to trailing padding (by
        the compiled kernels, :class:`strgm.models.rule_kernels.CascadeCache`)."""
        rows = range(len(self.words)) if rows is None else rows
        mat = pack([[a for m in self.words[i][0] for a in urs[m]] for i in rows], self.n)
        return self.cascades.apply(rules, mat)

    def correct(self, mat, rows=None, gold=None):
        """Which rows of ``mat`` equal their gold rows: the same length and the same
        labels over the narrower width (both are zero-padded after the word)."""
        if gold is None:
            gold = self.gold if rows is None else self.gold[list(rows)]
        w = min(mat.shape[1], gold.shape[1])
        same = (mat[:, :w] == gold[:, :w]).all(axis=1)
        return same & ((mat > 0).sum(axis=1) == (gold > 0).sum(axis=1))

    def estimate(self, ok: np.ndarray) -> float:
        """Training words right after a rule and a UR step, estimated from which rows of
        :meth:`set_urs` are right (``ok``): the words right under the current URs, plus
        for each morpheme the gain of its best other candidate with the rest fixed
        (gains of morphemes sharing a word may overlap, so this can overestimate)."""
        base = ok[self.row_morph < 0]
        k = len(self.morphs)
        cur = np.bincount(self.pair_morph, weights=base[self.pair_word], minlength=k)
        v = self.row_morph >= 0
        alt = np.bincount(self.row_morph[v] * _MAX_CANDIDATES + self.row_cand[v],
                          weights=ok[v], minlength=k * _MAX_CANDIDATES)
        gain = alt.reshape(k, _MAX_CANDIDATES).max(axis=1) - cur
        return float(base.sum() + np.maximum(gain, 0).sum())

    def rows_ok_after(self, rule: SegmentRule, mat: np.ndarray, has: np.ndarray,
                      ok: np.ndarray, then: Sequence = ()) -> np.ndarray:
        """Which rows of :meth:`set_urs` are right when ``rule`` and then the cascade
        ``then`` rewrite ``mat`` (whose rows' right-ness is ``ok``): only the rows that
        hold a target and both contexts (``has``: rows × labels,
        :func:`strgm.models.rule_scores.presence`) can change, so only those are
        rewritten and checked."""
        targets = rule.targets()
        need = has[:, targets].any(axis=1) if targets else np.ones(len(mat), dtype=bool)
        for ctx in (rule.left, rule.right) if rule.tier is None else ():
            if ctx is not None and EDGE not in ctx:
                need &= has[:, sorted(ctx)].any(axis=1)
        idx = np.flatnonzero(need)
        out = ok.copy()
        if len(idx):
            sub = apply_rules(then, apply_rule(rule, mat[idx], self.n), self.n)
            out[idx] = self.correct(sub, gold=self.row_gold[idx])
        return out

    def candidate_scorer(self, rules: list, rows_out: np.ndarray,
                         ok_out: np.ndarray) -> CandidateScorer:
        """The compiled form of :meth:`rows_ok_after` and :meth:`estimate` for rules
        placed first or last in ``rules`` (outputs ``rows_out``, right as ``ok_out``)."""
        return CandidateScorer(self, rules, rows_out, ok_out, _MAX_CANDIDATES)

    def screen(self, rules: list, wrong_words: np.ndarray, base: int,
               progress=None, limit=None) -> list:
        """Candidate rules, best first (:func:`strgm.models.rule_proposals.screen`), for
        the URs of the last :meth:`set_urs`. The screen is a function of the cascade and
        those URs, and beam entries often share both: each list is computed once."""
        key = (tuple(rules), self._urs_key, np.asarray(wrong_words).tobytes(), base, limit)
        if key not in self._screened:
            self._screened[key] = tuple(screen(self, rules, wrong_words, base, progress,
                                               limit))
        return list(self._screened[key])


def learn_rules(symbols: Sequence[str], words: Sequence, candidates: dict, *,
                word_cost: float = 4.0, ur_cost: float = 1.0, max_rules: int = 12,
                rounds: int = 4, exact_checks: int = 20, beam: Optional[int] = None,
                window: int = 2, progress=None) -> RuleGrammar:
    """URs and a rule cascade for ``words`` ([(morphemes, surface labels)]) from
    ``candidates`` (morpheme → [UR labels, ...], best first) minimising the DL of the
    module docstring (λ = ``word_cost``, μ = ``ur_cost``). Each rule step screens
    candidates by an estimate (:meth:`_Search.estimate`) and scores the best
    ``exact_checks`` exactly (up to ``rounds`` UR steps after adding the rule). Two
    starts — the first candidates, and the URs that fit the most words with no rule
    (greedy search from the surface-true URs alone misses analyses whose rules only pay
    once the URs move together) — are each searched with a beam of ``beam`` grammars
    (1: greedy; None: :func:`default_beam`), and the grammar of lowest DL is kept.
    ``window``: how far a context reaches on each side (1: the neighbour; 2: also the
    segment beyond it). ``progress``: called with a message as the search goes."""
    s = _Search(list(symbols), list(words), candidates, word_cost, ur_cost, window)
    beam = default_beam(len(s.words)) if beam is None else beam
    runs = []
    for start, fit_first in enumerate((True, False)):
        urs = {m: c[0] for m, c in s.cands.items()}
        if fit_first:
            _ur_step(s, urs, [])
        tell = None if progress is None else \
            (lambda msg, i=start: progress(tagged(msg, f"rule search, start {i + 1}/2")))
        runs.append(_beam_search(s, urs, max_rules, rounds, exact_checks, beam, tell))
    return min(runs, key=lambda g: g.description_length)


#: the largest training set searched with a beam of 2 by default
BEAM_WORDS = 200
#: the largest training set searched with a beam of 4 by default
WIDE_BEAM_WORDS = 25


def default_beam(n_words: int) -> int:
    """4 up to :data:`WIDE_BEAM_WORDS` training words, 2 up to :data:`BEAM_WORDS`, 1
    (greedy) above: a beam of b costs about b times the greedy search, which a
    300-word paradigm cannot afford within the 5-minute training budget of
    docs/phonology.md. On Zoque (22 training words) a beam of 2 drops the
    analysis whose first two rules (nasal deletion before fricatives, post-nasal
    voicing) gain least but enable place assimilation; on Turkish (28 training words)
    a beam of 4 took twice as long as 2 and learned the same rules."""
    if n_words <= WIDE_BEAM_WORDS:
        return 4
    return 2 if n_words <= BEAM_WORDS else 1


@dataclass
class _State:
    """A grammar in the beam: URs, cascade, the rules' history and its DL."""

    urs: dict
    rules: list
    history: list
    dl: float
    seen: bytes = b""  # which training words it gets right (one analysis per value)
    residual: int = 0  # segments of the training words' outputs that differ from gold
    n: int = 0  # alphabet size (for extent)

    def order(self) -> tuple:
        """Lower DL first; ties: the outputs closer to the training words (a rule that
        does part of the job, such as voicing every stop after a nasal before place
        assimilation is found, beats a rival that fixes the same words and leaves
        the rest further off), then the narrower rules (:func:`strgm.models.
        rule_scores.extent`), then the notation (never hash order)."""
        return (self.dl, self.residual, sum(extent(r, self.n) for r in self.rules),
                [repr(r) for r in self.rules])


def _beam_search(s: "_Search", urs: dict, max_rules: int, rounds: int,
                 exact_checks: int, beam: int, progress=None) -> RuleGrammar:
    """Rule steps from ``urs`` with no rule, keeping the ``beam`` grammars of lowest DL
    among the successors of the current ones (each successor: one rule added first or
    last, then its UR steps; only successors that lower their parent's DL), until no
    grammar in the beam can be improved or ``max_rules`` is reached; then the best
    grammar's contexts are narrowed, and redundant rules dropped, while that lowers
    its DL (:mod:`strgm.models.rule_narrowing`). Cost: ``beam`` × one greedy rule step per step."""
    right = int(s.correct(s.outputs(urs, [])).sum())
    best = _State(dict(urs), [], [], s.word_cost * (len(s.words) - right)
                  + s.lexicon(urs), n=s.n)
    states = [best]
    for step in range(max_rules):
        children: dict = {}
        for j, st in enumerate(states):
            tell = None if progress is None else \
                (lambda msg, j=j: progress(f"{msg} (beam {j + 1}/{len(states)})"))
            for child in _successors(s, st, rounds, exact_checks, beam, tell):
                if child.seen not in children or \
                        children[child.seen].order() > child.order():
                    children[child.seen] = child
        if not children:
            break
        states = sorted(children.values(), key=lambda c: c.order())[:beam]
        if states[0].dl < best.dl:
            best = states[0]
        if progress is not None:
            progress(f"{step + 1} rule(s), best {states[0].history[-1]['rule']}")
    if progress is not None:
        progress(f"{len(best.rules)} rule(s); narrowing their contexts")
    cost = {h["rule"]: h["cost"] for h in best.history}
    rules, delta, notes = narrow_contexts(s, best.urs, best.rules,
                                          [cost[r.text] for r in best.rules])
    history = best.history + notes
    ok = int(s.correct(s.outputs(best.urs, rules)).sum())
    return RuleGrammar(s.sf.symbols, best.urs, rules, ok, len(s.words),
                       float(best.dl + delta), history)


def _successors(s: "_Search", st: _State, rounds: int, exact_checks: int, keep: int,
                progress=None) -> list:
    """The ``keep`` best grammars one rule larger than ``st`` that lower its DL (the
    screened candidates of :meth:`_Search.screen`, scored exactly in both places)."""
    urs, rules = st.urs, st.rules
    ok = s.correct(s.outputs(urs, rules))
    base = int(ok.sum())
    if base == len(s.words):
        return []
    s.set_urs(urs)
    out: dict = {}  # words right -> the best grammar getting exactly those right
    tell = None if progress is None else \
        (lambda msg: progress(f"{len(rules)} rule(s); {msg}"))
    limit = exact_checks if exact_checks is None or exact_checks >= 0 else None
    screened = s.screen(rules, np.flatnonzero(~ok), base, tell, limit)[:exact_checks]
    for i, (_, cost, rule) in enumerate(screened):
        if progress is not None:
            progress(f"{len(rules)} rule(s); scoring candidate {i + 1}/{len(screened)}")
        for cascade in ([rule] + rules, rules + [rule]) if rules else ([rule],):
            trial = dict(urs)
            for _ in range(rounds):
                if not _ur_step(s, trial, cascade):
                    break
            mat = s.outputs(trial, cascade)
            now = s.correct(mat)
            gain = s.word_cost * (int(now.sum()) - base) - cost - \
                (s.lexicon(trial) - s.lexicon(urs))
            key = np.packbits(now).tobytes()
            hist = st.history + [{"rule": rule.text, "dl_decrease": float(gain),
                                  "cost": float(cost)}]
            child = _State(trial, cascade, hist, st.dl - gain, key, s.residual(mat), s.n)
            if gain > 0 and (key not in out or out[key].order() > child.order()):
                out[key] = child
    return sorted(out.values(), key=lambda c: c.order())[:keep]


def _ur_step(s: _Search, urs: dict, rules: list) -> bool:
    """Each morpheme's best candidate UR given the others (module docstring); ``urs``
    is updated in place. Whether any UR changed. Compiled
    (:class:`strgm.models.rule_ur_step.URStep`) unless the kernels do not cover the
    cascade; :func:`ur_step_reference` is its reference."""
    bank = s.cascades.bank(rules)
    if bank is not None and s.ur_step.covers(urs):
        return s.ur_step(bank, urs, s.word_cost, s.ur_cost)
    return ur_step_reference(s, urs, rules)


def ur_step_reference(s: _Search, urs: dict, rules: list) -> bool:
    """:func:`_ur_step` one candidate at a time."""
    changed = False
    for m, cands in s.cands.items():
        if len(cands) < 2:
            continue
        rows = [i for i, (ms, _) in enumerate(s.words) if m in ms]
        if not rows:
            continue
        scores = [s.word_cost * int(s.correct(s.outputs({**urs, m: c}, rules, rows),
                                              rows).sum()) - s.ur_cost * len(c)
                  for c in cands]
        best = cands[int(np.argmax(scores))]
        if best != urs[m] and max(scores) > scores[cands.index(urs[m])]:
            urs[m], changed = best, True
    return changed
