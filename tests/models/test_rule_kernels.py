"""The compiled rule kernels (strgm/models/rule_kernels.py, rule_screening.py) against
their references: cascades of random rules of every kind on random words give the rows
of :func:`strgm.models.rule_apply.apply_rules`, and the screening's compiled check of a
candidate rule gives exactly ``_Search.rows_ok_after`` and ``_Search.estimate`` (rule
last and first, on rows of a search whose gold words some cascade produces). Each
comparison catches a deliberately broken variant."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from strgm.models.rule_apply import EDGE, SegmentRule, apply_rules, pack, unpack
from strgm.models.rule_kernels import (SIM, CascadeCache, RuleBank, _apply_all,
                                       apply_compiled, row_cells)
from strgm.models.rule_scores import presence
from strgm.models.rule_search import _MAX_CANDIDATES, _Search

N = 5
SYMS = list("ptdaiu")  # a search's alphabet: labels 1..6, vowels 4..6


def random_rule(rng: random.Random, n: int = N) -> SegmentRule:
    """A rule of any kind the kernels cover, with contexts that may hold the edge."""
    seg = lambda: rng.randint(1, n)  # noqa: E731
    def ctx(edge=True):
        opts = [None, frozenset(rng.sample(range(1, n + 1), rng.randint(1, 3)))]
        if edge:
            opts += [frozenset([EDGE]), frozenset([EDGE, seg()])]
        return rng.choice(opts)
    kind = rng.choice(["sub", "del", "ins", "tier", "tier_right", "wide", "spread"])
    if kind == "spread":
        side = rng.choice(["left", "right"])
        triples = tuple((seg(), seg(), seg()) for _ in range(rng.randint(1, 4)))
        return SegmentRule(spread=triples, spread_side=side,
                           left=ctx() if side == "right" else None)
    if kind == "ins":
        return SegmentRule(insert=seg(), left=ctx(), right=ctx())
    mapping = tuple((seg(), 0 if kind == "del" else seg())
                    for _ in range(rng.randint(1, 3)))
    if kind in ("tier", "tier_right"):
        tier = frozenset(rng.sample(range(1, n + 1), 3))
        return SegmentRule(mapping, left=ctx(), right=ctx(), tier=tier,
                           tier_side="right" if kind == "tier_right" else "left")
    if kind == "wide":
        left, right = ctx(edge=False), ctx(edge=False)
        return SegmentRule(mapping, left=left, right=right,
                           left2=None if left is None else ctx(),
                           right2=None if right is None else ctx())
    return SegmentRule(mapping, left=ctx(), right=ctx())


def random_words(rng: random.Random, k: int = 6, n: int = N) -> list:
    return [tuple(rng.randint(1, n) for _ in range(rng.randint(0, 7))) for _ in range(k)]


def _disagree(rules, words, run=apply_compiled) -> bool:
    mat = pack(words, N)
    return unpack(run(rules, mat, N), N) != unpack(apply_rules(rules, mat, N), N)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_compiled_cascades_are_apply_rules(seed):
    rng = random.Random(seed)
    rules = [random_rule(rng) for _ in range(rng.randint(1, 4))]
    assert not _disagree(rules, random_words(rng))


def test_the_cascade_cache_is_apply_rules_and_refuses_a_tier_deletion():
    """Same rows through the cache (twice: the kept bank), and a tier rule that writes
    0 — which the kernels do not cover — goes to the reference."""
    rng = random.Random(7)
    cache = CascadeCache(N)
    deleting = SegmentRule(((1, 0),), left=frozenset([2]), tier=frozenset([1, 2]))
    assert not RuleBank(N, 1).load(0, deleting)
    for rules in ([random_rule(rng), random_rule(rng)], [deleting, random_rule(rng)]):
        for _ in range(2):
            mat = pack(random_words(rng), N)
            assert unpack(cache.apply(rules, mat), N) == \
                unpack(apply_rules(rules, mat, N), N)


def _as_simultaneous(rules, mat, n):
    """Broken variant: tier rules applied as simultaneous rules (the nearest vowel
    read as the plain neighbour)."""
    bank = RuleBank(n, len(rules))
    for i, r in enumerate(rules):
        assert bank.load(i, r)
        if r.tier is not None:
            bank.meta[i, 0] = SIM
    mat = np.ascontiguousarray(mat)
    return _apply_all(*bank.arrays(), mat, row_cells(mat))[0]


def test_a_tier_rule_applied_as_a_simultaneous_one_is_caught():
    rng = random.Random(1)
    bad = 0
    for _ in range(300):
        rules = [random_rule(rng) for _ in range(2)]
        bad += _disagree(rules, random_words(rng), _as_simultaneous)
    assert bad > 0


def _search(rng: random.Random):
    """A search over 12 words of 1–3 morphemes (4 stems, 3 suffixes, each with up to
    three candidate URs) whose gold surfaces are the first URs under a random
    cascade; the search's rows are set under random URs."""
    n = len(SYMS)
    morphs = [f"s{i}" for i in range(4)] + [f"x{i}" for i in range(3)]
    cands = {m: list({tuple(rng.randint(1, n) for _ in range(rng.randint(1, 3)))
                      for _ in range(3)})[:_MAX_CANDIDATES] for m in morphs}
    hidden = [random_rule(rng, n) for _ in range(rng.randint(0, 2))]
    words = []
    for _ in range(12):
        ms = [rng.choice(morphs[:4])] + rng.sample(morphs[4:], rng.randint(0, 2))
        ur = [a for m in ms for a in cands[m][0]]
        words.append((ms, unpack(apply_rules(hidden, pack([ur], n), n), n)[0]))
    s = _Search(SYMS, words, cands, word_cost=4.0)
    s.set_urs({m: rng.choice(c) for m, c in cands.items()})
    return s, hidden


def _reference(s, rules, rows_out, ok_out, rule):
    ok_last = s.rows_ok_after(rule, rows_out, presence(rows_out, s.n), ok_out)
    ok_first = s.rows_ok_after(rule, s.rows, presence(s.rows, s.n), ok_out, rules) \
        if rules else ok_last
    return ok_last, ok_first, max(s.estimate(ok_first), s.estimate(ok_last))


def _scorer_mismatches(seed: int, break_it=None) -> int:
    rng = random.Random(seed)
    s, hidden = _search(rng)
    n = len(SYMS)
    rules = (hidden + [random_rule(rng, n)])[:rng.randint(0, 3)]
    rows_out = apply_rules(rules, s.rows, n)
    ok_out = s.correct(rows_out, gold=s.row_gold)
    scorer = s.candidate_scorer(rules, rows_out, ok_out)
    if break_it is not None:
        break_it(scorer)
    bad = 0
    for rule in [random_rule(rng, n) for _ in range(20)] + hidden:
        got, ref = scorer(rule), _reference(s, rules, rows_out, ok_out, rule)
        assert got is not None
        bad += not (np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
                    and got[2] == ref[2])
    return bad


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_the_compiled_candidate_check_is_the_reference(seed):
    assert _scorer_mismatches(seed) == 0


def _no_cascade_after_a_first_rule(scorer):
    """Broken variant: the cascade's rules become rules that change nothing, so a
    candidate placed first is checked without the rules after it."""
    scorer.bank.tables[:scorer.slot] = -1
    scorer.bank.meta[:scorer.slot, 0] = SIM


def test_a_first_place_checked_without_the_cascade_is_caught():
    assert sum(_scorer_mismatches(seed, _no_cascade_after_a_first_rule)
               for seed in range(40)) > 0


def test_the_right_ness_and_estimate_are_kept_for_every_row():
    """The candidate check returns one right-ness per row of the search and an
    estimate no larger than the words plus one gain per morpheme."""
    s, _ = _search(random.Random(3))
    rows_out = apply_rules([], s.rows, s.n)
    ok_out = s.correct(rows_out, gold=s.row_gold)
    ok_last, ok_first, est = s.candidate_scorer([], rows_out, ok_out)(
        SegmentRule(((1, 2),), right=frozenset([EDGE])))
    assert ok_last.shape == ok_first.shape == (len(s.rows),)
    assert 0 <= est <= len(s.words) + len(s.morphs)


@pytest.mark.parametrize("bad", [SegmentRule(((9, 1),)), SegmentRule(insert=9),
                                  SegmentRule(((1, 2),), left=frozenset([9]))])
def test_labels_outside_the_alphabet_are_refused(bad):
    assert not RuleBank(N, 1).load(0, bad)
    with pytest.raises(ValueError, match="not covered"):
        apply_compiled([bad], pack([(1, 2)], N), N)
