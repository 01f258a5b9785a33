"""The compiled fixed-point loop (:func:`strgm.wfsa.fixed_point._fixed_point`) against
its scipy reference, on random nonnegative matrices: convergent, slow, divergent."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from strgm.errors import DivergenceError
from strgm.wfsa import fixed_point as fp


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
       st.booleans(), st.sampled_from([5, 40, 200]))
def test_compiled_steps_equal_the_scipy_loop(seed, radius, watch, max_iter):
    m = random_matrix(seed, radius)
    b = np.random.default_rng(seed + 1).random(m.shape[0])
    got = outcome(fp._fixed_point, m, b, max_iter, watch)
    want = outcome(fp._fixed_point_reference, m, b, max_iter, watch)
    if want is None or isinstance(want, tuple):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0)


def test_a_loop_that_stops_before_the_exact_fixed_point_is_caught():
    """Negative control: the comparison fails for a loop that stops at a relative change
    of 1e-9 instead of an exact fixed point, on a slow chain (a self-loop of 0.99)."""
    m = sp.csr_matrix(np.array([[0.99, 0.5], [0.0, 0.2]]))
    b = np.ones(2)
    want = fp._fixed_point_reference(m, b, 5000)
    np.testing.assert_allclose(fp._fixed_point(m, b, 5000), want, rtol=1e-12, atol=0.0)
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
    for f in (fp._fixed_point, fp._fixed_point_reference):
        with pytest.raises(DivergenceError) as e:
            f(m, np.ones(2), 200, watch=True)
        assert e.value.radius_at_least == pytest.approx(1.2, rel=1e-6)
