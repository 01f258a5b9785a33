"""The compiled Gauss–Seidel loop (:func:`fst_factors.wfsa.fixed_point._fixed_point`) against
the plain scipy iteration, on random nonnegative matrices: convergent, slow, divergent.

Both must end at a solution of y = A y + b (to 1e-10); where the plain iteration proves
divergence, Gauss–Seidel must not return a solution; where the plain iteration reaches
a fixed point, so must Gauss–Seidel (Stein–Rosenberg: it is at least as fast for a
nonnegative A)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fst_factors.errors import DivergenceError
from fst_factors.wfsa import fixed_point as fp


def random_matrix(seed: int, radius: float) -> sp.csr_matrix:
    """A sparse nonnegative matrix: a random DAG plus a few cycles, scaled so that its
    largest row sum is ``radius`` (ρ ≤ radius; ρ ≥ 1 possible when radius ≥ 1)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    dense = np.triu(rng.random((n, n)) < 0.2, 1) * rng.exponential(size=(n, n))
    for _ in range(int(rng.integers(0, 4))):  # back arcs: cycles
        i, j = sorted(rng.integers(0, n, size=2))
        dense[j, i] += rng.exponential()
    if dense.sum(1).max() > 0:
        dense *= radius / dense.sum(1).max()
    return sp.csr_matrix(dense)


def outcome(f, m, b, max_iter, watch):
    try:
        return f(m, b, max_iter, watch)
    except DivergenceError as e:
        return ("diverges", e.radius_at_least)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.3, 0.9, 0.999, 1.0, 1.5]),
       st.booleans(), st.sampled_from([5, 40, 200]), st.sampled_from([None, True, False]))
def test_compiled_loops_agree_with_the_plain_iteration(seed, radius, watch, max_iter,
                                                       backward):
    m = random_matrix(seed, radius)
    b = np.random.default_rng(seed + 1).random(m.shape[0])
    got = outcome(lambda *a: fp._fixed_point(*a, backward=backward), m, b, max_iter,
                  watch)
    want = outcome(fp._fixed_point_reference, m, b, max_iter, watch)
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=0.0)
    elif isinstance(want, tuple):  # divergence proved: no solution may come back
        assert not isinstance(got, np.ndarray)
    if isinstance(got, np.ndarray):  # whatever the reference did, got solves it
        np.testing.assert_allclose(m @ got + b, got, rtol=1e-12, atol=0.0)
    if backward is None:  # the compiled plain iteration: the reference's outcome exactly
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)
        else:
            assert got == want


def test_a_loop_that_stops_before_the_exact_fixed_point_is_caught():
    """Negative control: the comparison fails for a loop that stops at a relative change
    of 1e-9 instead of an exact fixed point, on a slow chain (a self-loop of 0.99)."""
    m = sp.csr_matrix(np.array([[0.99, 0.5], [0.0, 0.2]]))
    b = np.ones(2)
    want = fp._fixed_point_reference(m, b, 5000)
    np.testing.assert_allclose(fp._fixed_point(m, b, 5000), want, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(fp._fixed_point(m, b, 5000, backward=True), want,
                               rtol=1e-12, atol=0.0)
    y = b.copy()
    while True:
        yn = m @ y + b
        if np.max(np.abs(yn - y) / yn) < 1e-9:
            break
        y = yn
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(yn, want, rtol=1e-12, atol=0.0)


def test_divergence_is_proved_with_a_radius_bound():
    m = sp.csr_matrix(np.array([[1.2, 0.0], [1.0, 0.5]]))  # ρ = 1.2
    with pytest.raises(DivergenceError) as e:
        fp._fixed_point_reference(m, np.ones(2), 200, watch=True)
    assert e.value.radius_at_least == pytest.approx(1.2, rel=1e-6)
    with pytest.raises(DivergenceError) as e:  # Gauss–Seidel's increments: a weaker bound
        fp._fixed_point(m, np.ones(2), 200, watch=True)
    assert 1.0 < e.value.radius_at_least <= 1.2 + 1e-9


def test_gauss_seidel_settles_a_chain_in_one_sweep_against_its_length():
    """On an acyclic chain numbered in topological order, one backward sweep is exact
    (plus one to see nothing change), where the plain iteration needs its length."""
    n = 50
    m = sp.csr_matrix((np.full(n - 1, 0.5), (np.arange(n - 1), np.arange(1, n))),
                      shape=(n, n))
    b = np.ones(n)
    want = fp._fixed_point_reference(m, b, 200)
    assert fp._fixed_point(m, b, 2, backward=True) is not None
    np.testing.assert_allclose(fp._fixed_point(m, b, 2, backward=True), want, rtol=1e-14)
    assert fp._fixed_point(m, b, 2, backward=False) is None  # the wrong order is slow
    assert fp._fixed_point_reference(m, b, 40) is None


def test_iterative_solves_keep_the_sharp_divergence_bound():
    """Gauss–Seidel's increments bound ρ only loosely (1.08 above); iterative_solves
    then re-runs the plain iteration, whose bound (1.2) lets EP's damping skip more
    hopeless tries."""
    m = sp.csr_matrix(np.array([[1.2, 0.0], [1.0, 0.5]]))
    with pytest.raises(DivergenceError) as e:
        fp.iterative_solves(m, np.ones(2), np.array([1.0, 0.0]))
    assert e.value.radius_at_least == pytest.approx(1.2, rel=1e-6)
