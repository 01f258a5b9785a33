"""Oracle tests for the solves by strongly connected component (fst_factors.wfsa.components):
dense numpy solves and eigenvalues on small random matrices with a known component
structure, and an exactly known inverse for a badly scaled one."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import fst_factors.wfsa.components as C
from fst_factors.errors import DivergenceError
from fst_factors.wfsa.measure import arcs_to_csr

SEEDS = st.integers(0, 10_000)


def structured(rng, sizes, radius, periodic=False):
    """A nonnegative matrix whose strong components have the given sizes (in a random
    state order) and each spectral radius ``radius``, with arcs from earlier to later
    components only, some of them parallel (duplicate CSR entries, as arc tables give).
    A ``periodic`` block is bipartite (period 2: all arcs between its two halves, with
    random weights). Returns (csr, dense)."""
    n = sum(sizes)
    perm = rng.permutation(n)
    src, dst, val = [], [], []
    start = 0
    for s in sizes:
        members = np.arange(start, start + s)
        block = np.zeros((s, s))
        if s > 1 and periodic:
            half = np.arange(s) < s // 2
            block[np.ix_(half, ~half)] = rng.uniform(0.1, 3.0, (half.sum(), (~half).sum()))
            block[np.ix_(~half, half)] = rng.uniform(0.1, 3.0, ((~half).sum(), half.sum()))
        elif s > 1:
            block[members - start, np.roll(members, -1) - start] = rng.uniform(0.5, 2.0, s)
            block += rng.exponential(size=(s, s)) * (rng.random((s, s)) < 0.3)
        elif rng.random() < 0.5:
            block[0, 0] = 1.0
        r = max(abs(np.linalg.eigvals(block)))
        if r > 0:
            block *= radius / r
        i, j = np.nonzero(block)
        src.append(members[i])
        dst.append(members[j])
        val.append(block[i, j])
        later = np.arange(start + s, n)
        for q in members:
            to = later[rng.random(len(later)) < 0.3]
            src.append(np.full(len(to), q))
            dst.append(to)
            val.append(rng.exponential(size=len(to)) * 3.0)
        start += s
    src, dst, val = np.concatenate(src), np.concatenate(dst), np.concatenate(val)
    dup = rng.random(len(val)) < 0.2  # split some arcs into two parallel halves
    src = np.concatenate([src, src[dup]])
    dst = np.concatenate([dst, dst[dup]])
    val = np.concatenate([np.where(dup, val / 2, val), val[dup] / 2])
    src, dst = perm[src], perm[dst]
    order = np.argsort(src, kind="stable")
    a = arcs_to_csr(src[order], dst[order], val[order], n)
    dense = np.zeros((n, n))
    np.add.at(dense, (src, dst), val)
    return a, dense


def neumann(a, b):
    """Σ_k Aᵏ b for a nonnegative A with ρ(A) < 1, summed until it stops changing: only
    nonnegative terms are added, so it is accurate to a few ulps per step (a dense solve
    of I − A is not: its error grows with the condition number)."""
    y = b.copy()
    for _ in range(200_000):
        yn = a @ y + b
        if np.array_equal(yn, y):
            return y
        y = yn
    raise AssertionError("Neumann series did not converge")


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.lists(st.integers(1, 6), min_size=1, max_size=6),
       st.floats(0.05, 0.995), st.booleans())
def test_component_solves_match_dense_solves(seed, sizes, radius, sparse_blocks):
    """(I − A)⁻¹ b and (I − A)⁻ᵀ b equal the Neumann series, through dense block
    inverses or (``sparse_blocks``) the sparse LU path for large components."""
    rng = np.random.default_rng(seed)
    a, dense = structured(rng, sizes, radius)
    n = a.shape[0]
    old = C.DENSE_COMPONENT_MAX
    C.DENSE_COMPONENT_MAX = 1 if sparse_blocks else old
    try:
        solver = C.factor_by_components(a)
    finally:
        C.DENSE_COMPONENT_MAX = old
    b = rng.random(n)
    np.testing.assert_allclose(solver.solve(b), neumann(dense, b), rtol=1e-10)
    np.testing.assert_allclose(solver.solve_transposed(b), neumann(dense.T, b),
                               rtol=1e-10)
    C.check_components(a)  # the same verdict without inverses


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.lists(st.integers(1, 6), min_size=1, max_size=5),
       st.sampled_from([1.0 + 1e-4, 1.5, 3.0]), st.booleans())
def test_divergent_components_are_reported_with_a_proven_bound(seed, sizes, radius,
                                                                periodic):
    """Some component with ρ ≥ 1: DivergenceError from both entry points, and any bound
    c it carries is proved (1 < c ≤ ρ(A)). The bound is found when ρ ≥ 1.5, and on
    periodic blocks also when ρ = 1 + 1e-4: there plain power iteration oscillates and
    proves nothing, the iteration shifted by I converges."""
    rng = np.random.default_rng(seed)
    if max(sizes) == 1 and not periodic:
        sizes = sizes + [1]  # singletons: the self-loops carry the radius
    a, dense = structured(rng, sizes, radius, periodic=periodic)
    true = max(abs(np.linalg.eigvals(dense)))
    if true < 1.0:  # singleton blocks without a self-loop only
        return
    with pytest.raises(DivergenceError) as err:
        C.factor_by_components(a, what="test machine")
    assert "test machine" in str(err.value)
    c = err.value.radius_at_least
    assert c is None or 1.0 <= c <= true * (1 + 1e-9)
    if radius >= 1.5 or periodic:
        assert c is not None and c > 1.0
    with pytest.raises(DivergenceError):
        C.check_components(a)


def test_singleton_loop_bound_is_its_weight():
    a = sp.csr_matrix(np.array([[0.0, 2.0], [0.0, 1.25]]))
    with pytest.raises(DivergenceError) as err:
        C.factor_by_components(a)
    assert err.value.radius_at_least == 1.25


def test_badly_scaled_component_keeps_small_entries_accurate():
    """A = D A₀ D⁻¹ with D spanning 10^±8 and A₀'s entries spanning e^-40..1, ρ = 0.99
    (the make-up of unnormalised trigram messages). A direct dense solve of I − A loses
    relative accuracy on the small entries of the solution; the component solve, which
    inverts the certificate-scaled block, keeps every entry to 1e-12 against the
    Neumann series."""
    rng = np.random.default_rng(0)
    k = 40
    a0 = np.exp(rng.uniform(-40, 0, (k, k))) * (rng.random((k, k)) < 0.3)
    a0[np.arange(k), np.roll(np.arange(k), -1)] += 0.5  # strongly connected
    a0 *= 0.99 / max(abs(np.linalg.eigvals(a0)))
    d = 10.0 ** rng.uniform(-8, 8, k)
    a = a0 * d[:, None] / d[None, :]
    b = np.zeros(k)
    b[0] = 1.0
    want, want_t = neumann(a, b), neumann(a.T, b)
    direct = np.linalg.solve(np.eye(k) - a, b)
    assert np.max(np.abs(direct - want) / want) > 1e-9  # the naive solve fails here
    solver = C.factor_by_components(sp.csr_matrix(a))
    np.testing.assert_allclose(solver.solve(b), want, rtol=1e-12)
    np.testing.assert_allclose(solver.solve_transposed(b), want_t, rtol=1e-12)


def test_parallel_entries_are_summed_and_do_not_hang():
    """CSR input with duplicate entries (scipy's strong-component search never returns
    on those): the entries are summed."""
    a = sp.csr_matrix((np.array([0.2, 0.2, 0.1, 0.1]), np.array([1, 1, 0, 0]),
                       np.array([0, 2, 4])), shape=(2, 2))
    solver = C.factor_by_components(a)
    m = np.eye(2) - np.array([[0.0, 0.4], [0.2, 0.0]])
    np.testing.assert_allclose(solver.solve(np.ones(2)), np.linalg.solve(m, np.ones(2)),
                               rtol=1e-12)


def test_sweeps_are_bounded_by_the_component_depth():
    """A chain of n singletons with self-loops: exact after depth + 1 = n + 1 sweeps (the
    plain iteration y ← A y + b would need thousands for loops of weight 0.99)."""
    n = 30
    dense = np.diag(np.full(n, 0.99)) + np.diag(np.full(n - 1, 1.0), 1)
    solver = C.factor_by_components(sp.csr_matrix(dense))
    calls = []
    inv = solver.inverse

    class Counting:
        def __matmul__(self, v):
            calls.append(1)
            return inv @ v

    b = np.zeros(n)
    b[-1] = 1.0
    y = solver._sweep(solver.between, Counting(), b, trans=False)
    np.testing.assert_allclose(y, np.linalg.solve(np.eye(n) - dense, b), rtol=1e-12)
    assert len(calls) <= n + 2
