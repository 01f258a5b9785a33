"""The screen's batched candidate checks, its ranking and the compiled UR step
(strgm/models/rule_screening.py, rule_row_checks.py, rule_scores.py, rule_ur_step.py)
against their references, each comparison with a deliberately broken variant that it
catches: a batch of one change's candidates gives, for every candidate, exactly what the
search's reference gives for that rule alone (``_Search.rows_ok_after`` and
``_Search.estimate``); a right-ness cache left over from another change is caught; the
ranking is the full sort by (−gain, cost, extent, repr) with one rule per effect; the
compiled UR step moves the URs exactly as the one-candidate-at-a-time loop."""

import random

import numpy as np
from hypothesis import given, settings, strategies as st

from strgm.models.rule_apply import EDGE, SegmentRule, apply_rules
from strgm.models.rule_kernels import INSERT, SIM, TIER_LEFT, TIER_RIGHT
from strgm.models.rule_row_checks import new_cache
from strgm.models.rule_scores import ScoreTable, extent
from strgm.models.rule_screening import _score
from strgm.models.rule_search import _ur_step, ur_step_reference
from strgm.models.rule_ur_step import URStep
from tests.models.test_rule_kernels import _reference, _search, random_rule


def _context(rng, n, edge=True):
    opts = [None, frozenset(rng.sample(range(1, n + 1), rng.randint(1, n)))]
    if edge:
        opts += [frozenset([EDGE]), frozenset([EDGE, rng.randint(1, n)])]
    return rng.choice(opts)


def _change(rng, n):
    """A random change and a batch of its candidates: (kind, left, right, left2,
    right2); contexts often repeat their rewritten cells, so the cache is used."""
    ins = rng.randint(1, n) if rng.random() < 0.4 else 0
    mapping = () if ins else tuple((rng.randint(1, n), rng.choice([0, rng.randint(1, n)]))
                                   for _ in range(rng.randint(1, 3)))
    cands = []
    for _ in range(rng.randint(5, 25)):
        left, right = _context(rng, n), _context(rng, n)
        kind = INSERT if ins else rng.choice([SIM, SIM, SIM, TIER_LEFT, TIER_RIGHT])
        if ins and left is None and right is None:
            left = frozenset([EDGE])
        wide = kind == SIM and rng.random() < 0.3
        left2 = _context(rng, n) if wide and left is not None and EDGE not in left \
            else None
        right2 = _context(rng, n) if wide and right is not None and \
            EDGE not in right else None
        cands.append((kind, left, right, left2, right2))
    return ins, mapping, cands


def _rule(s, ins, mapping, cand):
    kind, left, right, left2, right2 = cand
    tier = s.vowels if kind in (TIER_LEFT, TIER_RIGHT) else None
    return SegmentRule(mapping, ins, left, right, "", tier,
                       "right" if kind == TIER_RIGHT else "left", left2, right2)


def _scorer(rng):
    s, hidden = _search(rng)
    rules = (hidden + [random_rule(rng, s.n)])[:rng.randint(0, 3)]
    rules = [r for r in rules if not r.spread]
    rows_out = apply_rules(rules, s.rows, s.n)
    ok_out = s.correct(rows_out, gold=s.row_gold)
    return s, rules, rows_out, ok_out, s.candidate_scorer(rules, rows_out, ok_out)


def _batch_mismatches(seed: int) -> int:
    rng = random.Random(seed)
    s, rules, rows_out, ok_out, scorer = _scorer(rng)
    ins, mapping, cands = _change(rng, s.n)
    ctx = np.array(scorer.context_ids([c if c is not None else frozenset()
                                       for cand in cands for c in cand[1:]]),
                   dtype=np.int64).reshape(-1, 4)
    none = np.array([sum(1 << k for k, c in enumerate(cand[1:]) if c is None)
                     for cand in cands], dtype=np.int64)
    kinds = np.array([c[0] for c in cands], dtype=np.int64)
    covered, ests, last, first = scorer.score_many(
        kinds, ins, mapping, ctx, none, kinds >= TIER_LEFT, s.vowels)
    bad = 0
    for b, cand in enumerate(cands):
        rule = _rule(s, ins, mapping, cand)
        if not covered[b]:  # e.g. a tier deletion: the kernels refuse it alone too
            bad += scorer(rule) is not None
            continue
        ref = _reference(s, rules, rows_out, ok_out, rule)
        bad += not (np.array_equal(last[b], ref[0]) and
                    np.array_equal(first[b], ref[1]) and ests[b] == ref[2])
    return bad


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_a_batch_of_one_change_is_each_candidate_checked_alone(seed):
    assert _batch_mismatches(seed) == 0


def _stale_cache_mismatches(seed: int) -> int:
    """Broken variant: the first-place right-ness cache of one change is used for
    another change (the same target and contexts, another output segment)."""
    rng = random.Random(seed)
    s, rules, rows_out, ok_out, scorer = _scorer(rng)
    if not rules:
        return 0
    x, y, z = rng.sample(range(1, s.n + 1), 3)
    left, right = _context(rng, s.n), _context(rng, s.n)
    cache = new_cache(len(s.rows))
    bad = 0
    for out in (y, z):
        rule = SegmentRule(((x, out),), 0, left, right)
        got = _score(scorer.bank.arrays(), scorer.slot, *scorer.bank.parts(rule),
                     scorer.data, scorer.index, scorer.est, cache)
        ref = _reference(s, rules, rows_out, ok_out, rule)
        bad += not np.array_equal(got[3], ref[1])
    return bad


def test_a_cache_left_from_another_change_is_caught():
    assert sum(_stale_cache_mismatches(seed) for seed in range(200)) > 0


def _ranking(table, key):
    """The reference ranking: every entry sorted by ``key``, one per effect."""
    rules = [table._rule(m) for m in table._made]
    order = sorted(range(len(rules)), key=lambda i: key(table, i, rules[i]))
    out, seen = [], set()
    for i in order:
        if table._sig(i) not in seen:
            seen.add(table._sig(i))
            out.append((table.gains[i], table.costs[i], rules[i]))
    return out


def _full_key(table, i, rule):
    return (-table.gains[i], table.costs[i], extent(rule, table.s.n), repr(rule))


def _without_extent(table, i, rule):
    return (-table.gains[i], table.costs[i], repr(rule))


def _table(seed: int):
    rng = random.Random(seed)
    s, rules, rows_out, ok_out, _ = _scorer(rng)
    table = ScoreTable(s, rules, rows_out, base=0)
    for _ in range(40):
        table.score_rule(random_rule(rng, s.n), float(rng.randint(1, 3)))
    return table


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_the_ranking_is_the_full_sort_with_one_rule_per_effect(seed):
    table = _table(seed)
    assert [(g, c, r) for g, c, r in table.ranked()] == _ranking(table, _full_key)
    assert table.ranked(limit=3) == _ranking(table, _full_key)[:3]


def test_a_ranking_without_the_extent_tie_break_is_caught():
    assert any(_ranking(t, _full_key) != _ranking(t, _without_extent)
               for t in map(_table, range(60)))


def _ur_mismatches(seed: int, reverse: bool = False) -> int:
    rng = random.Random(seed)
    s, rules, _, _, _ = _scorer(rng)
    if reverse:  # broken variant: the morphemes stepped in the other order
        cands = dict(reversed(list(s.cands.items())))
        s.ur_step = URStep(s.words, cands, s.gold, s.ur_step.gold_m)
    assert s.cascades.bank(rules) is not None  # the compiled step runs
    bad = 0
    for _ in range(3):
        urs = {m: rng.choice(c) for m, c in s.cands.items()}
        got, ref = dict(urs), dict(urs)
        moved = _ur_step(s, got, rules)
        bad += (moved, got) != (ur_step_reference(s, ref, rules), ref)
    return bad


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_the_compiled_ur_step_is_the_reference(seed):
    assert _ur_mismatches(seed) == 0


def test_a_ur_step_in_another_morpheme_order_is_caught():
    assert sum(_ur_mismatches(seed, reverse=True) for seed in range(60)) > 0
