"""p̂'s moments for levelled messages (:mod:`strgm.features.p_hat_levels`) against the
general component kernel (:mod:`strgm.features.p_hat`) and the composition route, on
random levelled messages whose state numbers are shuffled (so the level order must be
found), with self-loops, labels outside the alphabet and divergent levels. Each check
has a broken variant that it catches."""

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import strgm.features.p_hat as ph
from strgm.errors import DivergenceError
from strgm.features import FeatureSet, Theta, ngram_features, p_moments
from strgm.features.moments import CompositionCache
from strgm.features.p_hat_levels import (DIVERGED, OK, TOO_BIG, level_order,
                                         p_hat_levels_kernel)
from strgm.features.product import message_arrays
from fst_factors.wfsa.core import arc_table, new_fst, weight
from tests.projection.test_fused_block import reference_p_moments

N = 3


def levelled_message(seed: int, states: int, loop_weight: float = 2.0) -> pynini.Fst:
    """Arcs from each level to itself (self-loops) and to later levels on random labels
    1..N+1 (N+1 matches no DFA arc), every state final; state numbers shuffled."""
    rng = np.random.default_rng(seed)
    name = rng.permutation(states)
    f = new_fst()
    f.add_states(states)
    f.set_start(int(name[0]))
    for q in range(states):
        for d in range(q, states):
            for a in range(1, N + 2):
                if rng.random() < 0.5:
                    w = (loop_weight if d == q else 1.0) + rng.exponential()
                    f.add_arc(int(name[q]), pynini.Arc(a, a, weight(round(w, 4)),
                                                       int(name[d])))
        f.set_final(int(name[q]), weight(round(0.5 + rng.exponential(), 4)))
    return f


def feature_set(seed: int) -> FeatureSet:
    extra = [(1, 2, 3), (2, 1, 1), (3, 3, 1)][: seed % 4]
    return FeatureSet(ngram_features(2, N) + extra, N)


def both_kernels(p: pynini.Fst, fs: FeatureSet, values: np.ndarray):
    dfa = fs.dfa
    indptr, dst, lab, w, final, start = message_arrays(arc_table(p))
    goto = np.ascontiguousarray(dfa.goto, dtype=np.int64)
    a = dfa.arc_logweights(values, fs)
    order = level_order(indptr, dst, lab, final, N)
    levels = p_hat_levels_kernel(order, indptr, dst, lab, w, final, start, goto, dfa.start,
                                 np.exp(a), 10**4)
    general = ph.p_hat_kernel(indptr, dst, lab, w, final, start, goto, dfa.start, a, 10**6)
    return order, levels, general, (indptr, dst, lab, w, final, start, goto, dfa.start, a)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.floats(0.0, 1.0))
def test_levels_equal_the_component_kernel(seed, states, scale):
    p = levelled_message(seed, states)
    fs = feature_set(seed)
    values = np.random.default_rng(seed).normal(size=len(fs)) * scale - 0.3
    order, levels, general, _ = both_kernels(p, fs, values)
    assert len(order) == p.num_states()
    assert levels[0] == general[0]
    if levels[0] == OK:
        assert levels[1] == pytest.approx(general[1], abs=1e-10)
        np.testing.assert_allclose(levels[2], general[2], rtol=1e-10, atol=1e-12)


def test_p_moments_take_the_levels_route_and_equal_the_composition(monkeypatch):
    calls = []
    kernel = ph.p_hat_levels_kernel
    monkeypatch.setattr(ph, "p_hat_levels_kernel",
                        lambda *a: calls.append(1) or kernel(*a))
    p = levelled_message(7, 5)
    fs = feature_set(3)
    th = Theta(fs, np.linspace(-0.8, 0.4, len(fs)))
    fast = p_moments(p, fs, th, compositions=CompositionCache())
    assert calls, "the levelled message did not take the levels route"
    ref = reference_p_moments(p, th)
    assert fast.log_z == pytest.approx(ref.log_z, abs=1e-10)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-10, atol=1e-10)


def test_a_divergent_level_is_refused_like_the_reference():
    p = levelled_message(11, 4, loop_weight=-2.0)  # self-loops heavier than 1
    fs = feature_set(0)
    th = Theta(fs, np.zeros(len(fs)))
    _, levels, general, _ = both_kernels(p, fs, th.values)
    assert levels[0] == DIVERGED and general[0] == ph.DIVERGED
    with pytest.raises(DivergenceError):
        p_moments(p, fs, th, compositions=CompositionCache())


def test_messages_that_are_not_levelled_have_no_order():
    ok = levelled_message(3, 4)
    t = arc_table(ok)
    assert len(level_order(*message_arrays(t)[:3], t.final, N)) == 4
    cyclic = ok.copy()
    s = [q for q in range(4) if q != cyclic.start()][0]
    cyclic.add_arc(s, pynini.Arc(1, 1, weight(3.0), cyclic.start()))
    cyclic.add_arc(cyclic.start(), pynini.Arc(2, 2, weight(3.0), s))
    eps = ok.copy()
    eps.add_arc(0, pynini.Arc(0, 0, weight(3.0), 0))
    unfinal = ok.copy()
    unfinal.set_final(0, pynini.Weight.zero("log64"))
    for f in (cyclic, eps, unfinal):
        t = arc_table(f)
        assert len(level_order(*message_arrays(t)[:3], t.final, N)) == 0


def test_levels_out_of_order_are_caught():
    """Negative control: the same kernel given the levels in reverse order (not a level
    order) answers wrongly."""
    p = levelled_message(5, 5)
    fs = feature_set(2)
    values = np.linspace(-0.5, 0.2, len(fs))
    order, levels, general, args = both_kernels(p, fs, values)
    np.testing.assert_allclose(levels[2], general[2], rtol=1e-10, atol=1e-12)
    indptr, dst, lab, w, final, start, goto, h0, a = args
    wrong = p_hat_levels_kernel(order[::-1].copy(), indptr, dst, lab, w, final, start, goto,
                                h0, np.exp(a), 10**4)
    assert wrong[0] != OK or not np.allclose(wrong[2], general[2], rtol=1e-6)


def test_a_level_above_the_bound_goes_to_the_component_kernel(monkeypatch):
    """A level with more reachable DFA states than MAX_COMPONENT is refused by the levels
    kernel (TOO_BIG), and p_hat_counts answers with the component kernel instead."""
    p = levelled_message(7, 5)
    fs = feature_set(3)
    th = Theta(fs, np.linspace(-0.8, 0.4, len(fs)))
    order, levels, general, args = both_kernels(p, fs, th.values)
    indptr, dst, lab, w, final, start, goto, h0, a = args
    assert p_hat_levels_kernel(order, indptr, dst, lab, w, final, start, goto, h0,
                               np.exp(a), 1)[0] == TOO_BIG
    monkeypatch.setattr(ph, "MAX_COMPONENT", 1)
    general_calls = []
    kernel = ph.p_hat_kernel
    monkeypatch.setattr(ph, "p_hat_kernel", lambda *x: general_calls.append(1) or kernel(*x))
    dfa = fs.dfa
    out = ph.p_hat_counts(arc_table(p), dfa.goto, dfa.start, a)
    assert general_calls
    assert out is None or np.allclose(out[1], general[2], rtol=1e-10, atol=1e-12)
