"""Strings scored through the product with their trie (strgm.wfsa.trie_product), the
route score_strings takes when the memory guard refuses the composition with the marker
trie, against that composition, on random cyclic transducers with ε-outputs; a product
that lets ε-outputs advance the trie is shown to fail."""

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import strgm.wfsa.measure as M
import strgm.wfsa.trie_product as TP
from strgm.errors import MessageTooLargeError
from strgm.wfsa import core, guard
from strgm.wfsa.pair_product import arc_bound
from strgm.wfsa.paths import candidate_strings


def machine(rng, n, max_out, labels, transducer):
    """A random sub-stochastic log64 machine (normalisable: every state's arcs and final
    weight sum to < 1), with ε on either tape and cycles."""
    f = core.new_fst()
    f.add_states(n)
    f.set_start(0)
    for s in range(n):
        k = int(rng.integers(0, max_out + 1))
        for _ in range(k):
            i = int(rng.integers(0, labels + 1))
            o = int(rng.integers(0, labels + 1)) if transducer else i
            w = np.log(k + 2) + rng.exponential()
            f.add_arc(s, pynini.Arc(i, o, core.weight(w), int(rng.integers(n))))
        if rng.random() < 0.6:
            f.set_final(s, core.weight(np.log(k + 2) + rng.exponential()))
    return f


def by_product(f, strings):
    """score_strings with the composition refused, as the guard refuses a large one."""
    def refused(*a, **k):
        raise MessageTooLargeError("refused for the test")

    saved = M.compose
    M.compose = refused
    try:
        return M.score_strings(f, strings)
    finally:
        M.compose = saved


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(0, 4), st.integers(1, 4),
       st.booleans())
def test_product_scores_equal_the_composition(seed, n, max_out, labels, transducer):
    rng = np.random.default_rng(seed)
    f = machine(rng, n, max_out, labels, transducer)
    cands = candidate_strings(f, 6) if f.num_states() and core.num_arcs(f) else []
    strings = list(dict.fromkeys([tuple(c) for c in cands] + [
        tuple(int(a) for a in rng.integers(1, labels + 2, int(rng.integers(0, 4))))
        for _ in range(4)]))
    got = by_product(f, strings)
    want = M.score_strings(f, strings)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_where_the_guard_refuses_the_composition_the_product_scores():
    """One ε-output among many arcs and a trie of many strings: the composition's bound
    counts every arc of the machine as a possible ε against every trie state, the
    product's pairs arcs label by label, so a memory limit between the two admits only
    the product."""
    rng = np.random.default_rng(4)
    f = core.new_fst()
    f.add_states(300)
    f.set_start(0)
    for s in range(299):
        for a in (1, 2, 3):
            f.add_arc(s, pynini.Arc(a, a, core.weight(np.log(5.0)), s + 1))
        f.set_final(s, core.weight(np.log(5.0)))
    f.add_arc(0, pynini.Arc(1, 0, core.weight(np.log(5.0)), 1))
    strings = list(dict.fromkeys(tuple(int(a) for a in rng.integers(1, 4, 6))
                                 for _ in range(40)))
    want = M.score_strings(f, strings)
    trie = M.weighted_strings([(s, 0.0) for s in strings], markers=True)
    need = guard.predicted_bytes(*guard.compose_bound(f, trie))
    tt, _ = TP.trie_table(strings)
    t = core.arc_table(f)
    on_output = core.ArcTable(t.num_states, t.start, t.src, t.dst, t.olabel, t.olabel,
                              t.weight, t.final)
    small = guard.predicted_bytes(t.num_states * tt.num_states,
                                  arc_bound(on_output, tt))
    assert small < need / 4, (small, need)
    with guard.limits(max_memory=guard.resident_memory() + int((small + need) / 2)):
        with pytest.raises(MessageTooLargeError):
            guard.compose(f, trie)
        got = M.score_strings(f, strings)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(got))


def test_a_refused_product_raises_the_guards_error():
    f = machine(np.random.default_rng(3), 6, 3, 2, True)
    saved = M.trie_product
    M.trie_product = lambda *a: None
    try:
        with pytest.raises(MessageTooLargeError):
            by_product(f, [(1,)])
    finally:
        M.trie_product = saved


def test_the_trie_and_markers():
    trie, ends = TP.trie_table([(1, 2), (1,), (), (2, 2, 1)])
    assert trie.num_states == 6 and list(ends[[0, 1, 2]]) == [2, 1, 0]
    nostart = core.new_fst()
    nostart.add_states(2)  # states but no start: nothing is accepted
    t = TP.trie_product(core.arc_table(nostart), [(1,)])
    assert t.num_arcs == 0 and list(M.score_strings(nostart, [(1,), ()])) == [-np.inf] * 2
    with pytest.raises(ValueError):
        TP.trie_product(core.arc_table(machine(np.random.default_rng(0), 3, 2, 2, False)),
                        [(0, 1)])


def test_control_epsilon_outputs_that_advance_the_trie_are_caught():
    """Broken on purpose: an ε-output arc treated as reading the next label."""
    rng = np.random.default_rng(11)
    wrong = 0
    real = TP.pair_product

    def broken(c, w, *a, **k):
        lab = np.where(c.olabel == 0, 1, c.olabel)
        return real(core.ArcTable(c.num_states, c.start, c.src, c.dst, lab, lab, c.weight,
                                  c.final), w, *a, **k)

    for _ in range(20):
        f = machine(rng, 6, 3, 2, True)
        strings = [(1,), (1, 1), (2, 1), ()]
        want = M.score_strings(f, strings)
        TP.pair_product = broken
        try:
            got = by_product(f, strings)
        finally:
            TP.pair_product = real
        wrong += not np.allclose(got, want, rtol=1e-10, atol=1e-10)
    assert wrong > 0


def test_acyclicity_of_a_table():
    for seed in range(30):
        f = machine(np.random.default_rng(seed), 6, 2, 2, False)
        assert TP.is_acyclic_table(core.arc_table(f)) == core.is_acyclic(f)
