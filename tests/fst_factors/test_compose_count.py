"""The dry run that counts what a composition can reach (fst_factors.wfsa.compose_count), the
memory guard's second opinion: never below what OpenFst builds (random machines with ε
on either tape, cycles), far below the operands' bound for a small machine against a
large transducer, and a count that forgets B's ε-moves is caught."""

from __future__ import annotations

import numpy as np
import pynini
import pytest
from hypothesis import given, settings

import fst_factors.wfsa.compose_count as CC
from fst_factors.errors import MessageTooLargeError
from fst_factors.wfsa import guard
from fst_factors.wfsa.core import arc_table, from_arc_table
from tests.fst_factors.test_memory_guard import FIXED, compose_violations, machine


def dry(a, b):
    return CC.reachable_size(arc_table(a), arc_table(b), 10 ** 9)


@settings(max_examples=80, deadline=None)
@given(a=machine, b=machine)
def test_the_count_is_never_below_the_built_size(a, b):
    assert compose_violations(dry, [(a, b)]) == []


def test_control_forgetting_b_epsilon_moves_undercounts():
    def no_b_eps(a, b):
        t = arc_table(b)
        keep = t.ilabel != 0
        tb = type(t)(t.num_states, t.start, t.src[keep], t.dst[keep], t.ilabel[keep],
                     t.olabel[keep], t.weight[keep], t.final)
        return CC.reachable_size(arc_table(a), tb, 10 ** 9)

    cases = [(a, b) for a in FIXED for b in FIXED]
    assert compose_violations(dry, cases) == []
    assert compose_violations(no_b_eps, cases)


def word_and_transducer():
    """A 7-letter string acceptor and a context transducer (state = the last two input
    labels; every substitution x:y, and insertions ε:y as loops) of 37 states: a word
    reaches one context per position, the bound counts every pair."""
    from fst_factors.wfsa.construct import string_acceptor

    n = 6
    ctx = {(p, q): 1 + p * n + q for p in range(n) for q in range(n)}
    src, dst, il, ol = [], [], [], []
    for (p, q), s in list(ctx.items()) + [((0, 0), 0)]:
        for x in range(n):
            for y in range(1, n + 1):
                src.append(s), dst.append(ctx[(q, x)]), il.append(x + 1), ol.append(y)
        for y in range(1, n + 1):
            src.append(s), dst.append(s), il.append(0), ol.append(y)
    m = len(src)
    big = from_arc_table(len(ctx) + 1, 0, src, dst, il, ol, np.full(m, 4.0),
                         np.full(len(ctx) + 1, 1.0))
    return string_acceptor((3, 1, 4, 1, 5, 2, 6)), big


def test_far_below_the_operands_bound_and_the_guard_uses_it():
    a, b = word_and_transducer()
    states, arcs = dry(a, b)
    bound = guard.compose_bound(a, b)
    assert states * 5 < bound[0] and arcs * 3 < bound[1]
    need, loose = guard.predicted_bytes(states, arcs), guard.predicted_bytes(*bound)
    want = pynini.compose(pynini.arcsort(a.copy(), "olabel"), pynini.arcsort(b.copy(), "ilabel"))
    with guard.limits(max_memory=guard.resident_memory() + int((need + loose) / 2)):
        got = guard.compose(a, b)  # the operands' bound alone would refuse
    assert pynini.equal(got, want)
    with guard.limits(max_memory=guard.resident_memory() + int(need / 4)):
        with pytest.raises(MessageTooLargeError):
            guard.compose(a, b)


def test_counting_stops_past_its_cap_and_declines():
    a, b = word_and_transducer()
    states, arcs = dry(a, b)
    assert CC.reachable_size(arc_table(a), arc_table(b), arcs // 2) is None
    assert CC.reachable_size(arc_table(a), arc_table(b), arcs) == (states, arcs)


def test_a_large_machine_with_epsilon_outputs_is_scored_under_a_tight_budget():
    """Held-out scoring's case: a machine with ε-outputs (deletions) against a small
    marker trie, which the operands' bound alone refused."""
    from fst_factors.wfsa.construct import weighted_strings
    from fst_factors.wfsa.measure import score_strings

    _, big = word_and_transducer()
    t = arc_table(big)
    deletions = np.arange(0, t.num_arcs, 7)
    ol = t.olabel.copy()
    ol[deletions] = 0
    m = from_arc_table(t.num_states, t.start, t.src, t.dst, t.ilabel, ol, t.weight, t.final)
    strings = [(1, 2), (3,), (2, 2, 5), (6, 1, 1, 4)]
    want = score_strings(m, strings)
    trie = weighted_strings([(s, 0.0) for s in strings], markers=True)
    states, arcs = dry(m, trie)
    need, loose = guard.predicted_bytes(states, arcs), guard.predicted_bytes(
        *guard.compose_bound(m, trie))
    assert 3 * need < loose
    with guard.limits(max_memory=guard.resident_memory() + int((need + loose) / 2)):
        got = score_strings(m, strings)
        real = guard.reachable_size
        guard.reachable_size = lambda *a: None  # without the second opinion: refused
        try:
            with pytest.raises(MessageTooLargeError):
                score_strings(m, strings)
        finally:
            guard.reachable_size = real
    np.testing.assert_array_equal(got, want)
    assert np.all(np.isfinite(got))
