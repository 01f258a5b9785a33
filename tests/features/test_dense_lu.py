"""The dense LU of the q and p̂ kernels (:mod:`strgm.features.dense_lu`): the compiled
loop and LAPACK's getrf give the solutions numpy gives, in both directions, on systems
I − P of every size; the dispatcher takes LAPACK from ``LAPACK_FROM`` states; whole p̂
and q computations whose systems are that large equal their references. Each check has
a broken variant that it catches."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strgm.features.moments as moments
from strgm.features import FeatureSet, Theta, ngram_features, p_moments
from strgm.features import dense_lu as d
from strgm.features.moments import CompositionCache, q_moments
from strgm.features.p_hat import p_hat_counts
from fst_factors.wfsa.core import arc_table, new_fst, weight
from tests.projection.test_fused_block import reference_p_moments

import pynini

ROUTES = {"loop": (d._lu_loop, d._lu_solve_loop),
          "lapack": (d._lu_lapack, d._lu_solve_lapack),
          "dispatch": (d._lu, d._lu_solve)}


def system(k: int, seed: int, density: float, general: bool = False) -> np.ndarray:
    """I − P with P ≥ 0 sparse and row sums < 1 (the systems the kernels solve), or with
    ``general`` a dense normal matrix plus a permuted diagonal, whose factorisation must
    pivot."""
    rng = np.random.default_rng(seed)
    if general:
        m = rng.normal(size=(k, k)) * (rng.random((k, k)) < density)
        m[np.arange(k), rng.permutation(k)] += 3.0 + k ** 0.5
        return m
    p = rng.random((k, k)) * (rng.random((k, k)) < density)
    p /= np.maximum(p.sum(axis=1, keepdims=True), 1e-300) / rng.uniform(0.1, 0.95, (k, 1))
    return np.eye(k) - p


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 90), st.integers(0, 2**32 - 1), st.floats(0.02, 1.0),
       st.sampled_from(sorted(ROUTES)), st.booleans())
def test_solves_equal_numpy_both_ways(k, seed, density, route, general):
    m = system(k, seed, density, general)
    b = np.random.default_rng(seed + 1).normal(size=k)
    lu, solve = ROUTES[route]
    f = m.copy()
    piv = np.empty(k, np.int64)
    assert lu(f, piv)
    np.testing.assert_allclose(solve(f, piv, b, False), np.linalg.solve(m, b),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(solve(f, piv, b, True), np.linalg.solve(m.T, b),
                               rtol=1e-10, atol=1e-10)


def test_the_dispatcher_takes_lapack_from_its_threshold():
    assert d.LAPACK, "numba's LAPACK binding is expected on supported platforms"
    assert not d._by_lapack(d.LAPACK_FROM - 1) and d._by_lapack(d.LAPACK_FROM)
    k = d.LAPACK_FROM + 5
    m = system(k, 3, 0.5)
    a, b = m.copy(), m.copy()
    pa, pb = np.empty(k, np.int64), np.empty(k, np.int64)
    d._lu(a, pa)
    d._lu_lapack(b, pb)
    np.testing.assert_array_equal(a, b)  # the LAPACK layout, not the loop's


@pytest.mark.parametrize("lu", [d._lu_loop, d._lu_lapack])
def test_a_zero_pivot_fails_in_both_routes(lu):
    k = 40
    m = system(k, 5, 0.5)
    m[:, 7] = 0.0
    assert not lu(m, np.empty(k, np.int64))


def test_reading_lapack_factors_as_the_loops_is_caught():
    """Negative controls: the loop's solve on LAPACK's factors, and LAPACK's swaps
    applied in the wrong order, give wrong answers."""
    k = 50
    m = system(k, 9, 0.6, general=True)
    b = np.linspace(-1.0, 2.0, k)
    f = m.copy()
    piv = np.empty(k, np.int64)
    d._lu_lapack(f, piv)
    assert not np.allclose(d._lu_solve_loop(f, piv, b, False), np.linalg.solve(m, b))
    assert (piv != np.arange(k)).any()
    swapped = d._lu_solve_lapack(f, piv[::-1].copy(), b, False)
    assert not np.allclose(swapped, np.linalg.solve(m, b))


def dense_message(states: int, n: int, seed: int) -> pynini.Fst:
    """A cyclic acceptor where every state reaches every state on every label, so its
    product with a feature DFA is one large strongly connected component."""
    rng = np.random.default_rng(seed)
    f = new_fst()
    f.add_states(states)
    f.set_start(0)
    for s in range(states):
        for t in range(states):
            for a in range(1, n + 1):
                f.add_arc(s, pynini.Arc(a, a, weight(3.0 + rng.exponential()), t))
        f.set_final(s, weight(1.0 + rng.exponential()))
    return f


def test_p_hat_through_lapack_sized_components_equals_the_composition_route():
    n = 3
    p = dense_message(6, n, 0)
    fs = FeatureSet(ngram_features(2, n) + [(1, 2, 3), (2, 1, 1), (3, 3, 1)], n)
    th = Theta(fs, np.linspace(-0.9, 0.3, len(fs)))
    dfa = fs.dfa
    assert 6 * dfa.num_states >= d.LAPACK_FROM  # one component of that size
    out = p_hat_counts(arc_table(p), dfa.goto, dfa.start,
                       dfa.arc_logweights(th.values, th.features))
    assert out is not None  # the compiled route answered
    fast = p_moments(p, fs, th, compositions=CompositionCache())
    ref = reference_p_moments(p, th)
    assert fast.log_z == pytest.approx(ref.log_z, abs=1e-10)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-10, atol=1e-10)


def test_q_moments_on_a_lapack_sized_dfa_equal_the_numpy_route(monkeypatch):
    n = 5
    fs = FeatureSet(ngram_features(3, n), n)
    assert fs.dfa.num_states >= d.LAPACK_FROM
    th = Theta(fs, np.random.default_rng(2).normal(size=len(fs)) * 0.3 - 1.2)
    fast = q_moments(th)
    monkeypatch.setattr(moments, "FAST_Q", False)
    ref = q_moments(th)
    assert fast.log_z == pytest.approx(ref.log_z, abs=1e-10)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-9, atol=1e-10)
