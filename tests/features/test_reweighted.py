"""The re-weighting route of p̂ moments (:mod:`fst_factors.wfsa.reweighted`) against the
reference (:func:`fst_factors.wfsa.expectations.table_arc_counts`, ``REWEIGHTED = False``).

A sequence of θ on one composition exercises what the route carries from one weighting
to the next: the normalisability certificate, the warm-started sweeps and the summed
matrix. Random cyclic messages (ε-arcs, dead and unreachable states, labels outside the
alphabet); divergent weightings must raise exactly as before, also right after a
certificate was carried from a convergent one.
"""

import numpy as np
import pynini
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import strgm.features.moments as moments
import fst_factors.wfsa.reweighted as rw
from strgm.errors import DivergenceError, InconsistentEvidenceError
from strgm.features import FeatureSet, Theta, ngram_features, p_moments
from strgm.features.moments import CompositionCache
from fst_factors.wfsa.core import new_fst, weight
from tests.features.test_compiled_paths import N
from tests.features.test_compiled_paths import assert_same_moments, random_message, random_theta


@pytest.fixture(autouse=True)
def composition_route(monkeypatch):
    """These tests are about the composition route: the compiled p̂ by components
    (tried first by p_moments, tests in test_fused_block.py) is switched off."""
    monkeypatch.setattr(moments, "FAST_P_HAT", False)


def thetas(seed: int, steps: int = 4):
    """θ₀ and small then large moves from it (a PEP-like sequence of cavities)."""
    rng = np.random.default_rng(seed + 1)
    th = random_theta(seed)
    out = [th]
    for scale in [0.01] * (steps - 2) + [0.5]:
        out.append(Theta(th.features, th.values + scale * rng.normal(size=len(th))))
    return out


def both_routes(p, seq, monkeypatch):
    """Moments of p ⊙ ENCODE(θ) for every θ of ``seq`` on one cache per route, and the
    composition the fast route used."""
    fast_cache, ref_cache = CompositionCache(), CompositionCache()
    fast = [p_moments(p, th.features, th, compositions=fast_cache) for th in seq]
    with monkeypatch.context() as m:
        m.setattr(moments, "REWEIGHTED", False)
        ref = [p_moments(p, th.features, th, compositions=ref_cache) for th in seq]
    comp = fast_cache.get(p, seq[0].features, "p")
    return fast, ref, comp


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_reweighted_moments_equal_the_reference(seed):
    p = random_message(seed, cyclic=True)
    mp = pytest.MonkeyPatch()
    try:
        fast, ref, comp = both_routes(p, thetas(seed), mp)
    except DivergenceError:  # a divergent weighting in the sequence: the reference too
        with pytest.raises(DivergenceError):
            with mp.context() as m:
                m.setattr(moments, "REWEIGHTED", False)
                cache = CompositionCache()
                for th in thetas(seed):
                    p_moments(p, th.features, th, compositions=cache)
        return
    except InconsistentEvidenceError:  # no accepted string: both routes must say so
        with pytest.raises(InconsistentEvidenceError):
            with mp.context() as m:
                m.setattr(moments, "REWEIGHTED", False)
                p_moments(p, random_theta(seed).features, random_theta(seed),
                          compositions=CompositionCache())
        return
    for f, r in zip(fast, ref):
        assert_same_moments(f, r)
    if comp.levels is None and comp.topology is not None:
        assert "reweighted" in comp.__dict__  # the route under test was taken


def test_the_route_is_taken_and_carries_its_certificate():
    seen = 0
    for seed in range(30):
        p = random_message(seed, cyclic=True)
        cache = CompositionCache()
        try:
            for th in thetas(seed, steps=6):
                p_moments(p, th.features, th, compositions=cache)
        except InconsistentEvidenceError:
            continue
        comp = cache.get(p, random_theta(seed).features, "p")
        if comp.levels is None and "reweighted" in comp.__dict__:
            seen += comp.reweighted.carried
    assert seen >= 20


def divergent(seed: int) -> tuple:
    """A cyclic message and θ₀, θ₁ on one feature set: θ₀ leaves it normalisable, θ₁
    weighs the unigram 1 by e⁹, which makes the added loop on label 1 diverge (Z = ∞)."""
    p = random_message(seed, cyclic=True)
    p.add_arc(0, pynini.Arc(1, 1, weight(4.0), 0))
    th = random_theta(seed)
    bad = th.values.copy()
    bad[th.features.index[(1,)]] += 9.0
    return p, th, Theta(th.features, bad)


@pytest.mark.parametrize("seed", [3, 11, 29, 40])
def test_a_divergent_weighting_raises_after_a_carried_certificate(seed, monkeypatch):
    p, good, bad = divergent(seed)
    cache = CompositionCache()
    p_moments(p, good.features, good, compositions=cache)
    with pytest.raises(DivergenceError, match="infinite total weight"):
        p_moments(p, bad.features, bad, compositions=cache)
    monkeypatch.setattr(moments, "REWEIGHTED", False)
    with pytest.raises(DivergenceError, match="infinite total weight"):
        p_moments(p, bad.features, bad, compositions=CompositionCache())


def test_a_certificate_is_carried_only_when_it_proves_the_bound(monkeypatch):
    """Negative control: with a Collatz–Wielandt bound that accepts anything, the
    divergent weighting is 'certified' by the carried vector (its sweeps then fail and
    the reference answers, but the certificate logic is wrong, and this test sees it)."""
    def carried_on_divergent():
        p, good, bad = divergent(3)
        cache = CompositionCache()
        p_moments(p, good.features, good, compositions=cache)
        comp = cache.get(p, good.features, "p")
        before = comp.reweighted.carried
        with pytest.raises(DivergenceError):
            p_moments(p, bad.features, bad, compositions=cache)
        assert comp.reweighted.certificate is None or comp.reweighted.carried > before
        return comp.reweighted.carried - before

    assert carried_on_divergent() == 0
    monkeypatch.setattr(rw, "_bound", lambda m, y: 0.0)
    assert carried_on_divergent() == 1


def test_a_broken_count_kernel_is_caught(monkeypatch):
    """Negative control: the comparison fails when the per-label counts skip the arcs
    out of the start state."""
    seed = 7
    p = random_message(seed, cyclic=True)
    fast, ref, _ = both_routes(p, thetas(seed), monkeypatch)
    for f, r in zip(fast, ref):
        assert_same_moments(f, r)
    real = rw._label_counts

    def broken(indptr, indices, vals, lab, alpha, beta, z, ncell):
        a = alpha.copy()
        a[0] = 0.0
        return real(indptr, indices, vals, lab, a, beta, z, ncell)

    monkeypatch.setattr(rw, "_label_counts", broken)
    bad, _, _ = both_routes(p, thetas(seed), monkeypatch)
    with pytest.raises(AssertionError):
        assert_same_moments(bad[0], ref[0])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_summed_matrix_and_its_transpose(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 9))
    m = int(rng.integers(0, 40))
    rows = np.sort(rng.integers(0, k, size=m))
    cols = rng.integers(0, k, size=m)
    vals = rng.random(m)
    indptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=k), out=indptr[1:])
    cell, mp, mi, tp, ti, perm = rw._cells(indptr, cols.astype(np.int64), k)
    summed = np.zeros(len(mi))
    np.add.at(summed, cell, vals)
    want = sp.csr_matrix((vals, cols, indptr), shape=(k, k)).toarray()
    got = sp.csr_matrix((summed, mi, mp), shape=(k, k))
    assert got.nnz == len(mi) == np.count_nonzero(want)  # one entry per cell
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-14)
    np.testing.assert_allclose(sp.csr_matrix((summed[perm], ti, tp), shape=(k, k))
                               .toarray(), want.T, rtol=1e-14)


def live_message(seed: int) -> pynini.Fst:
    """A random cyclic log64 acceptor over 1..N whose every state is accessible and
    co-accessible (a chain 0 → 1 → … with extra forward arcs, ε-arcs and light loops
    back), so that its products keep every state."""
    rng = np.random.default_rng(seed)
    n_states = int(rng.integers(2, 6))
    f = new_fst()
    f.add_states(n_states)
    f.set_start(0)
    for s in range(n_states):
        if s + 1 < n_states:
            a = int(rng.integers(1, N + 1))
            f.add_arc(s, pynini.Arc(a, a, weight(round(rng.exponential(), 4)), s + 1))
        for d in range(s + 1, n_states):
            for a in range(0, N + 1):
                if rng.random() < 0.3:
                    f.add_arc(s, pynini.Arc(a, a, weight(round(rng.exponential(), 4)), d))
        d = int(rng.integers(0, s + 1))
        a = int(rng.integers(1, N + 1))
        f.add_arc(s, pynini.Arc(a, a, weight(4.0 + round(rng.exponential(), 4)), d))
    f.set_final(n_states - 1, weight(round(rng.exponential(), 4)))
    return f


def regrown(seed: int, monkeypatch=None):
    """(lifted β, solved β, carried count, fast moments, reference moments) for one θ
    first solved on the bigram cover, then on a cover grown by trigram contexts."""
    p = live_message(seed)
    small = FeatureSet(ngram_features(2, N), N)
    big = small.union(FeatureSet(ngram_features(3, N), N))
    th = Theta(small, np.random.default_rng(seed).normal(size=len(small)) * 0.3 - 0.3)
    cache = CompositionCache()
    p_moments(p, small, th, compositions=cache)
    comp = cache.get(p, big, "p")  # rebuilt on the finer cover, solutions carried over
    lifted = comp.reweighted._warm.get(True)
    lifted = None if lifted is None else lifted.copy()
    fast = p_moments(p, big, th.align(big), compositions=cache)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(moments, "REWEIGHTED", False)
        ref = p_moments(p, big, th.align(big), compositions=CompositionCache())
    return lifted, comp.reweighted._warm[True], comp.reweighted.carried, fast, ref


@pytest.mark.parametrize("seed", range(8))
def test_solutions_carry_over_to_a_finer_cover(seed):
    lifted, beta, carried, fast, ref = regrown(seed)
    assert_same_moments(fast, ref)
    assert carried == 1  # the lifted certificate proved the bound
    np.testing.assert_allclose(lifted, beta, rtol=1e-10)  # a lumping: β itself


def test_a_wrong_state_map_is_caught(monkeypatch):
    """Negative control: refined states matched to the wrong coarse states (shifted by
    one) lift a β that is not the new one; the moments stay right (β̃ is only where the
    sweeps start, and the certificate is checked)."""
    import strgm.features.carry as carry

    real = carry.lifted_states

    def shifted(old, new):
        rows = real(old, new)
        rows[:-1] = np.roll(rows[:-1], 1)
        return rows

    monkeypatch.setattr(carry, "lifted_states", shifted)
    lifted, beta, _, fast, ref = regrown(3)
    assert_same_moments(fast, ref)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(lifted, beta, rtol=1e-10)


def _permuted_cycle(seed: int, n: int, radius: float):
    rng = np.random.default_rng(seed)
    a = np.zeros((n, n))
    perm = rng.permutation(n)
    for i in range(n):
        a[perm[i], perm[(i + 1) % n]] = rng.uniform(0.2, 3.0)
    a *= radius / max(abs(np.linalg.eigvals(a)))
    return a


def test_partial_sums_continued_certify_where_four_sweeps_do_not():
    """A permuted cycle (ρ = 0.92) that 4 Gauss–Seidel sweeps of Σ mᵏ 1 do not certify;
    continued to 16 they do, and the vector is a valid Collatz–Wielandt certificate
    (checked densely). A cycle with ρ = 1.02 is never certified, at any length."""
    def cert(a, stages):
        m = sp.csr_matrix(a)
        return rw.partial_sum_certificate(m.indptr.astype(np.int64),
                                          m.indices.astype(np.int64), m, stages)

    a = _permuted_cycle(0, 8, 0.92)
    assert cert(a, (4,)) is None
    y = cert(a, (4, 16))
    assert y is not None and np.all(y > 0)
    assert np.max((a @ y) / y) <= rw.MAX_BOUND
    for seed in range(5):
        assert cert(_permuted_cycle(seed, 8, 1.02), (4, 16, 64, 256)) is None


def _gs(m: sp.csr_matrix, b: np.ndarray, y0: np.ndarray, rtol: float):
    from fst_factors.wfsa.fixed_point import _gauss_seidel_steps

    y = y0.astype(np.float64, copy=True)
    _, y, k, status = _gauss_seidel_steps(m.indptr.astype(np.int64),
                                          m.indices.astype(np.int64), m.data, b, y, 1,
                                          10_000, False, True, rtol)
    assert status == 0
    return y, k


@pytest.mark.parametrize("seed", range(5))
def test_warm_sweeps_stop_at_the_relative_tolerance_near_the_exact_answer(seed):
    """A warm start (the last weighting's answer) ends at ``WARM_RTOL``: within 1e-12 of
    the exact fixed point of the new weighting swept from b. Control: a loose tolerance
    (1e-6) ends measurably off, so the comparison can fail."""
    rng = np.random.default_rng(seed)
    n = 60
    m = sp.random(n, n, density=0.2, random_state=seed, format="csr")
    m = m.multiply(0.95 / np.abs(np.linalg.eigvals(m.toarray())).max()).tocsr()
    b = rng.random(n) * (rng.random(n) < 0.3)
    b[0] = 1.0
    old, _ = _gs(m, b, b, 0.0)
    m2 = m.multiply(1.0 + 0.02 * rng.random(m.shape)).tocsr()
    m2 = m2.multiply(0.95 / np.abs(np.linalg.eigvals(m2.toarray())).max()).tocsr()
    exact, _ = _gs(m2, b, b, 0.0)
    warm, _ = _gs(m2, b, old, rw.WARM_RTOL)
    scale = np.maximum(np.abs(exact), 1e-300)
    assert np.max(np.abs(warm - exact) / scale) < 1e-12
    loose, _ = _gs(m2, b, old, 1e-6)
    assert np.max(np.abs(loose - exact) / scale) > 1e-10
