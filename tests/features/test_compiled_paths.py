"""Compiled hot paths of EP/PEP against their reference implementations.

* the product of a message with a feature DFA (:mod:`strgm.features.product`) against
  OpenFst's concatenation, composition and connection
  (:func:`strgm.features.moments.compose_counting_reference`);

on random machines: cyclic or not, with ε-arcs, unreachable and dead states, labels
outside the alphabet, and divergent weights (which must raise on both routes).
"""

import dataclasses

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import strgm.features.moments as moments
from strgm.errors import DivergenceError, InconsistentEvidenceError
from strgm.features import FeatureSet, Theta, ngram_features, p_moments
from strgm.features.moments import CompositionCache
from strgm.features.product import counting_product
from fst_factors.wfsa.core import new_fst, weight

N = 3


@pytest.fixture(autouse=True)
def composition_route(monkeypatch):
    """These tests are about the composition route: the compiled p̂ by components
    (tried first by p_moments, tests in test_fused_block.py) is switched off."""
    monkeypatch.setattr(moments, "FAST_P_HAT", False)


def random_message(seed: int, cyclic: bool, loop_weight: float = 4.0) -> pynini.Fst:
    """A random log64 acceptor over labels 0..N+1 (0 = ε; N+1 is outside the alphabet
    and matches no DFA arc), with a dead state and an unreachable one. Cyclic machines
    get arcs back to earlier states of weight ≥ ``loop_weight`` (−log), and the dead
    state's loop weighs 3, so that they stay far from divergence after ENCODE(θ)'s
    re-weighting (a machine near ρ = 1 sends forward–backward to OpenFst's log-space
    iteration, which can take minutes)."""
    rng = np.random.default_rng(seed)
    n_states = int(rng.integers(2, 7))
    f = new_fst()
    f.add_states(n_states + 2)  # + a dead state and an unreachable one
    f.set_start(0)
    dead, unreachable = n_states, n_states + 1
    for s in range(n_states):
        for d in range(s + 1, n_states):
            for a in range(0, N + 2):
                if rng.random() < 0.35:
                    f.add_arc(s, pynini.Arc(a, a, weight(round(rng.exponential(), 4)), d))
        if cyclic and rng.random() < 0.6:
            d = int(rng.integers(0, s + 1))
            a = int(rng.integers(1, N + 1))
            f.add_arc(s, pynini.Arc(a, a, weight(loop_weight + round(rng.exponential(), 4)),
                                    d))
        if rng.random() < 0.5 or s == n_states - 1:
            f.set_final(s, weight(round(rng.exponential(), 4)))
    f.add_arc(0, pynini.Arc(1, 1, weight(0.3), dead))
    f.add_arc(dead, pynini.Arc(2, 2, weight(3.0), dead))  # a cycle that reaches no final
    f.add_arc(unreachable, pynini.Arc(1, 1, weight(0.2), 0))
    f.set_final(unreachable, weight(0.0))
    return f


def random_theta(seed: int) -> Theta:
    rng = np.random.default_rng(seed)
    feats = ngram_features(2, N) + [(1, 2, 3), (4, 1, 1), (2, 2, 5)]
    fs = FeatureSet(feats, N)
    return Theta(fs, rng.normal(size=len(fs)) * 0.5 - 0.5)


def moments_both_ways(p, theta, monkeypatch):
    """(compiled product, OpenFst composition): both through the composition route
    (the compiled p̂ by components has its own tests, test_fused_block.py)."""
    with monkeypatch.context() as m:
        m.setattr(moments, "FAST_P_HAT", False)
        fast = p_moments(p, theta.features, theta, compositions=CompositionCache())
        m.setattr(moments, "_compose_counting", moments.compose_counting_reference)
        ref = p_moments(p, theta.features, theta, compositions=CompositionCache())
    return fast, ref


def assert_same_moments(fast, ref):
    assert fast.log_z == pytest.approx(ref.log_z, abs=1e-10)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fast.arc_counts, ref.arc_counts, rtol=1e-10, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_compiled_product_gives_the_moments_of_the_openfst_composition(seed, cyclic):
    p = random_message(seed, cyclic)
    theta = random_theta(seed)
    mp = pytest.MonkeyPatch()
    try:
        fast, ref = moments_both_ways(p, theta, mp)
    except InconsistentEvidenceError:  # no accepted string: both routes must agree
        with pytest.raises(InconsistentEvidenceError):
            with mp.context() as m:
                m.setattr(moments, "_compose_counting", moments.compose_counting_reference)
                p_moments(p, theta.features, theta, compositions=CompositionCache())
        with pytest.raises(InconsistentEvidenceError):
            p_moments(p, theta.features, theta, compositions=CompositionCache())
        return
    assert_same_moments(fast, ref)


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_divergent_messages_raise_on_both_routes(seed, monkeypatch):
    p = random_message(seed, cyclic=True)
    p.add_arc(0, pynini.Arc(1, 1, weight(-3.0), 0))  # a loop of weight e³: Z = ∞
    theta = random_theta(seed)
    with pytest.raises(DivergenceError):
        p_moments(p, theta.features, theta, compositions=CompositionCache())
    monkeypatch.setattr(moments, "_compose_counting", moments.compose_counting_reference)
    with pytest.raises(DivergenceError):
        p_moments(p, theta.features, theta, compositions=CompositionCache())


def test_a_product_with_misplaced_eos_arcs_is_caught(monkeypatch):
    """Negative control: the same comparison fails when the product's EOS arcs carry the
    id of the previous DFA arc (an off-by-one in the id arithmetic)."""
    p = random_message(5, cyclic=True)
    theta = random_theta(5)

    def broken(t, goto, start, n, what="automaton", with_pairs=False):
        out, pq, ph = counting_product(t, goto, start, n, what, with_pairs=True)
        ol = out.olabel.copy()
        ol[out.ilabel == n + 2] -= 1
        out = dataclasses.replace(out, olabel=ol)
        return (out, pq, ph) if with_pairs else out

    fast, ref = moments_both_ways(p, theta, monkeypatch)
    assert_same_moments(fast, ref)
    monkeypatch.setattr(moments, "counting_product", broken)
    bad = p_moments(p, theta.features, theta, compositions=CompositionCache())
    with pytest.raises(AssertionError):
        assert_same_moments(bad, ref)


def test_empty_and_rejecting_messages_are_inconsistent_evidence():
    empty = new_fst()
    fs = FeatureSet(ngram_features(1, N), N)
    with pytest.raises(InconsistentEvidenceError):
        p_moments(empty, fs, compositions=CompositionCache())
    f = new_fst()
    f.add_states(2)
    f.set_start(0)
    f.add_arc(0, pynini.Arc(N + 1, N + 1, weight(0.0), 1))  # only a label outside Σ
    f.set_final(1, weight(0.0))
    with pytest.raises(InconsistentEvidenceError):
        p_moments(f, fs, compositions=CompositionCache())


def test_a_product_too_large_for_the_pair_index_takes_the_openfst_route(monkeypatch):
    import strgm.features.product as product

    p = random_message(8, cyclic=True)
    theta = random_theta(8)
    fast, ref = moments_both_ways(p, theta, monkeypatch)
    monkeypatch.setattr(product, "MAX_PAIRS", 1)
    t = moments.arc_table(p)
    assert counting_product(t, theta.features.dfa.goto, theta.features.dfa.start, N) is None
    big = p_moments(p, theta.features, theta, compositions=CompositionCache())
    assert_same_moments(big, ref)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_product_trimming_equals_the_general_trimming(seed, connected):
    """The product's shortcut trimming keeps the same states and arcs as
    trimmed_topology: on connected messages (the shortcut) and on messages with dead
    states (the fallback)."""
    from strgm.features.product import product_topology
    from fst_factors.wfsa.measure import trimmed_topology

    p = random_message(seed, cyclic=True)
    if connected:
        p = p.copy().connect()
    theta = random_theta(seed)
    try:
        t = counting_product(moments.arc_table(p), theta.features.dfa.goto,
                             theta.features.dfa.start, N)
    except InconsistentEvidenceError:
        return
    fast, ref = product_topology(t), trimmed_topology(t)
    if ref is None:
        assert fast is None
        return
    np.testing.assert_array_equal(fast.keep, ref.keep)
    np.testing.assert_array_equal(fast.arcs, ref.arcs)
    np.testing.assert_array_equal(fast.indptr, ref.indptr)
    np.testing.assert_array_equal(fast.indices, ref.indices)
    assert fast.start_row == ref.start_row


def test_trimming_shortcut_applies_to_a_trimmed_message_only():
    from strgm.features.product import _all_coaccessible

    theta = random_theta(1)
    dfa = theta.features.dfa
    p = random_message(1, cyclic=False)  # has a dead state
    t = counting_product(moments.arc_table(p), dfa.goto, dfa.start, N)
    assert not _all_coaccessible(t.src, t.dst, t.num_states, t.num_states - 1)
    q = p.copy().connect()
    t2 = counting_product(moments.arc_table(q), dfa.goto, dfa.start, N)
    assert _all_coaccessible(t2.src, t2.dst, t2.num_states, t2.num_states - 1)
