"""The compiled paths of PEP's block against their numpy references.

* q moments (:func:`strgm.projection.fused_kernels.q_moments_kernel` vs
  :func:`strgm.features.moments.q_moments`), divergent θ included;
* the active set as a mask over a working set (``active_mask_kernel`` vs
  :func:`strgm.projection.prox.active_set`), with the ``closed`` test;
* fused proximal steps (:func:`strgm.projection.fused.fused_steps`) vs the same number
  of reference steps (:func:`strgm.projection.prox.prox_step`);
* p̂'s moments by components (:mod:`strgm.features.p_hat`) vs the composition route, on
  cyclic messages with ε-arcs and dead states;
* whole PEP runs with the fused block on and off.

Every comparison has a deliberately broken variant that it catches.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strgm.features.moments as moments
from strgm.errors import DivergenceError, InconsistentEvidenceError
from strgm.features import FeatureSet, Theta, ngram_features, p_moments
from strgm.features.moments import CompositionCache, q_moments
from strgm.features.p_hat import p_hat_counts
from strgm.inference import infer
from strgm.projection import fused_kernels as fk
from strgm.projection.fused import _active_tables, fused_steps, work_tables
from strgm.projection.prox import active_set, prox_step
from fst_factors.wfsa.core import arc_table
from tests.features.test_compiled_paths import random_message
from tests.projection.test_compiled_sets import random_values
from tests.inference.test_ep import LATENT, max_belief_error, tree_graph
from tests.features.test_feature_codes import feature_sets


@pytest.fixture(autouse=True)
def numpy_q_reference(monkeypatch):
    """q_moments, the reference here, on its numpy/scipy route."""
    monkeypatch.setattr(moments, "FAST_Q", False)


def kernel_q(theta: Theta, fail=None):
    t = work_tables(theta.features)
    node, col, fl, goto, start, reach, pos = t.dfa
    return fk.q_moments_kernel(theta.values, node, col, fl if fail is None else fail,
                               goto, start, reach, pos)


def with_unigrams(fs: FeatureSet) -> FeatureSet:
    return fs.union(FeatureSet(ngram_features(1, fs.num_labels), fs.num_labels))


# --- q moments ----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.floats(0.1, 3.0))
def test_compiled_q_moments_equal_the_reference(fs, seed, scale):
    fs = FeatureSet.from_codes(with_unigrams(fs).codes, fs.num_labels)
    th = Theta(fs, random_values(fs, seed, zeros=0.1) * scale - 1.0)
    if work_tables(fs) is None:
        return
    status, log_z, eq, counts = kernel_q(th)
    try:
        ref = q_moments(th)
    except DivergenceError:
        assert status == fk.DIVERGED  # divergent θ: the kernel says so too
        return
    assert status == fk.OK
    assert log_z == pytest.approx(ref.log_z, rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(eq, ref.expectations, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(counts, ref.arc_counts, rtol=1e-10, atol=1e-10)


def test_divergent_theta_is_refused_by_the_kernel_and_raises_in_the_reference():
    fs = FeatureSet(ngram_features(1, 2), 2)
    th = Theta(fs, [0.5, 0.5, -1.0])  # e^0.5 + e^0.5 > 1: Z = ∞
    with pytest.raises(DivergenceError):
        q_moments(th)
    assert kernel_q(th)[0] == fk.DIVERGED


def test_q_moments_without_the_failure_tree_pass_are_caught():
    """Negative control: arc weights not inherited along failure links."""
    fs = FeatureSet(ngram_features(2, 2) + [(1, 2, 1)], 2)
    th = Theta(fs, random_values(fs, 3, zeros=0.0) * 0.3 - 1.0)
    ref = q_moments(th)
    broken = kernel_q(th, fail=np.zeros(fs.dfa.num_states, dtype=np.int64))
    assert broken[0] == fk.OK
    assert not np.allclose(broken[2], ref.expectations, rtol=1e-10, atol=1e-10)


# --- the active set -------------------------------------------------------------------


def active_both_ways(work: FeatureSet, vals: np.ndarray, max_len, tables=None):
    x = Theta(work, vals)
    ref = active_set(x.restrict(), max_len)
    t = _active_tables(work) if tables is None else tables
    closed, mask = fk.active_mask_kernel(vals, *t, -1 if max_len is None else max_len)
    return ref, closed, mask


@settings(max_examples=150, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 2, 3]))
def test_active_mask_equals_the_active_set(fs, seed, max_len):
    n = fs.num_labels
    base = with_unigrams(fs).union(FeatureSet([(n + 2,)], n))
    vals = random_values(base, seed, zeros=0.4)
    x = Theta(base, vals).restrict()
    work = base.union(active_set(x, max_len)) if seed % 2 else base  # closed or maybe not
    if work.codes.dtype == object:
        return
    vals = x.align(work).values
    ref, closed, mask = active_both_ways(work, vals, max_len)
    inside = ref.positions_in(work)
    assert closed == bool((inside >= 0).all())
    if closed:
        expect = np.zeros(len(work), dtype=bool)
        expect[inside] = True
        np.testing.assert_array_equal(mask, expect)


def test_an_active_mask_that_ignores_the_suffix_test_is_caught():
    """Negative control: extensions w·a kept without the conjunction test on w[1:]·a."""
    n = 2
    work = FeatureSet(ngram_features(2, n) + [(1, 1, 2), (1, 2, 1), (1, 2, 2)], n)
    vals = np.zeros(len(work))
    vals[work.index[(1,)]] = 0.5
    vals[work.index[(1, 2)]] = 0.7
    ref, closed, mask = active_both_ways(work, vals, None)
    expect = np.zeros(len(work), dtype=bool)
    expect[ref.positions_in(work)] = True
    assert closed and np.array_equal(mask, expect)
    assert (1, 2, 1) not in ref  # (2, 1) is zero: the conjunction test excludes it
    t = list(_active_tables(work))
    fk.fill_extension_rows(np.arange(len(work)), t[8], t[2], t[9], t[10], t[11], n, t[3],
                           t[4])
    t[4] = np.full_like(t[4], -3)  # every suffix counted as present
    _, _, broken = active_both_ways(work, vals, None, tables=tuple(t))
    assert not np.array_equal(broken, expect)


# --- fused steps --------------------------------------------------------------------


def block_setup(seed: int):
    """A cyclic message, a cavity and one reference step from θ_{F→V} = 0."""
    p = random_message(seed, cyclic=True, loop_weight=6.0)
    n = 3
    cav_fs = FeatureSet(ngram_features(1, n) + [(1, 2)], n)
    rng = np.random.default_rng(seed)
    cavity = Theta(cav_fs, rng.normal(size=len(cav_fs)) * 0.3 - 1.5)
    x0 = Theta(FeatureSet([], n))
    first = prox_step(p, x0, cavity, 0.01, 0.1, compositions=CompositionCache())
    return p, cavity, first


@pytest.mark.parametrize("seed", range(6))
def test_fused_steps_equal_the_reference_steps(seed):
    p, cavity, first = block_setup(seed)
    k, lam, eta = 12, 0.01, 0.1
    ref = first
    for _ in range(k):  # the reference: one prox_step per pass, p̂ moments reused
        ref = prox_step(p, ref.x, cavity, lam, eta, p_cache=ref.p,
                        q_cache=(ref.theta, ref.q), compositions=CompositionCache())
    done, fused, last = 0, 0, first
    while done < k:  # fused runs, a reference step wherever a run cannot go on
        out = fused_steps(last, last.x, cavity, last.p, k - done, lam, eta, None)
        if out is None:
            last = prox_step(p, last.x, cavity, lam, eta, p_cache=last.p,
                             q_cache=(last.theta, last.q), compositions=CompositionCache())
            done += 1
        else:
            last, d = out
            done += d
            fused += d
    assert fused > 0  # the kernel did run (else the reference is compared with itself)
    fs = ref.theta.features.union(last.theta.features)
    np.testing.assert_allclose(last.theta.align(fs, strict=False).values,
                               ref.theta.align(fs, strict=False).values, atol=1e-10)
    assert last.q.log_z == pytest.approx(ref.q.log_z, abs=1e-10)


def test_fused_steps_with_the_wrong_penalty_are_caught():
    """Negative control: a fused step with λ = 0 (no prox) differs from the reference
    step that the correct fused step reproduces."""
    p, cavity, last = block_setup(1)
    lam, eta = 0.3, 0.1
    for _ in range(10):  # reference steps until the working set stops growing
        if fused_steps(last, last.x, cavity, last.p, 1, lam, eta, None) is not None:
            break
        last = prox_step(p, last.x, cavity, lam, eta, p_cache=last.p,
                         q_cache=(last.theta, last.q), compositions=CompositionCache())
    ref = prox_step(p, last.x, cavity, lam, eta, p_cache=last.p,
                    q_cache=(last.theta, last.q), compositions=CompositionCache())
    fs = ref.theta.features
    good = fused_steps(last, last.x, cavity, last.p, 1, lam, eta, None)[0]
    np.testing.assert_allclose(good.theta.align(fs, strict=False).values,
                               ref.theta.values, atol=1e-10)
    broken = fused_steps(last, last.x, cavity, last.p, 1, 0.0, eta, None)[0]
    assert not np.allclose(broken.theta.align(fs, strict=False).values, ref.theta.values,
                           atol=1e-10)


# --- p̂ by components -----------------------------------------------------------------


def reference_p_moments(p, theta):
    """p̂'s moments by the composition route (the compiled one switched off)."""
    moments.FAST_P_HAT = False
    try:
        return p_moments(p, theta.features, theta, compositions=CompositionCache())
    finally:
        moments.FAST_P_HAT = True


def p_hat_both_ways(p, theta):
    fast = p_moments(p, theta.features, theta, compositions=CompositionCache())
    return fast, reference_p_moments(p, theta)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.floats(0.5, 1.5))
def test_p_hat_by_components_equals_the_composition_route(seed, cyclic, loop):
    # loops of weight ≥ 0.5 nats: a loop near weight 0 (probability near 1) sends the
    # reference's forward–backward to OpenFst's log-space iteration for many minutes
    # (a CI run drew seed 8388607 with loop 1e-9 and did not finish in 9 minutes)
    p = random_message(seed, cyclic, loop_weight=loop)
    n = 3
    rng = np.random.default_rng(seed)
    fs = FeatureSet(ngram_features(2, n) + [(1, 2, 3), (2, 1, 1)], n)
    th = Theta(fs, rng.normal(size=len(fs)) * 0.5 - 0.5)
    try:
        fast = p_moments(p, fs, th, compositions=CompositionCache())
    except (DivergenceError, InconsistentEvidenceError) as err:  # so must the reference
        with pytest.raises(type(err)):
            reference_p_moments(p, th)
        return
    ref = reference_p_moments(p, th)
    assert fast.log_z == pytest.approx(ref.log_z, rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-10,
                               atol=1e-10)


def test_p_hat_answers_for_cyclic_messages():
    """The compiled route really is taken for a cyclic message (else the comparison
    above would compare the composition with itself)."""
    p = random_message(5, True, loop_weight=2.0)
    fs = FeatureSet(ngram_features(2, 3), 3)
    dfa = fs.dfa
    out = p_hat_counts(arc_table(p), dfa.goto, dfa.start,
                       np.zeros((dfa.num_states, 4)))
    assert out is not None and np.isfinite(out[0])


def test_p_hat_with_an_untransposed_alpha_solve_is_caught(monkeypatch):
    """Negative control: the kernel's own code (run as Python) with α solved from
    (I − M) instead of (I − M)ᵀ gives other expectations."""
    import strgm.features.p_hat as ph

    p = random_message(7, True, loop_weight=2.0)
    fs = FeatureSet(ngram_features(2, 3), 3)
    th = Theta(fs, np.full(len(fs), -0.5))
    fast, ref = p_hat_both_ways(p, th)
    np.testing.assert_allclose(fast.expectations, ref.expectations, rtol=1e-10, atol=1e-10)
    dfa = fs.dfa
    args = ph.message_arrays(arc_table(p)) + (dfa.goto, dfa.start,
                                              dfa.arc_logweights(th.values), 10 ** 4)
    as_python = ph.p_hat_kernel.py_func(*args)
    np.testing.assert_allclose(dfa.accumulate(as_python[2]), ref.expectations,
                               rtol=1e-10, atol=1e-10)
    solve = ph._lu_solve
    monkeypatch.setattr(ph, "_alpha_sweep", ph._alpha_sweep.py_func)  # runs as Python ...
    monkeypatch.setattr(ph, "_lu_solve", lambda lu, piv, b, trans: solve(lu, piv, b, False))
    broken = ph.p_hat_kernel.py_func(*args)  # ... with its solve untransposed
    assert not np.allclose(dfa.accumulate(broken[2]), ref.expectations, rtol=1e-6)


def test_moments_read_from_counts_on_a_coarser_set_equal_a_fresh_computation():
    """Moments.on: p̂'s counts on W give the moments of any W' whose contexts W holds
    (as a block's growing working sets read them), equal to a fresh computation; a set
    with a context W lacks gets None; a control that accumulates W's counts on the DFA
    of W' (the wrong states and failure tree) differs."""
    p = random_message(11, True, loop_weight=2.0)
    n = 3
    big = FeatureSet(ngram_features(2, n) + [(1, 2, 3), (2, 1, 1)], n)
    small = FeatureSet(ngram_features(1, n) + [(1, 2), (2, 1, 1)], n)
    cav = Theta(small, np.linspace(-0.8, -0.2, len(small)))
    on_big = p_moments(p, big, cav, compositions=CompositionCache())
    read = on_big.on(small)
    fresh = p_moments(p, small, cav, compositions=CompositionCache())
    assert read.log_z == pytest.approx(fresh.log_z, abs=1e-12)
    np.testing.assert_allclose(read.expectations, fresh.expectations, rtol=1e-10,
                               atol=1e-12)
    assert on_big.on(FeatureSet([(3, 3, 3, 1)], n)) is None
    wrong = small.dfa.accumulate(on_big.arc_counts[:small.dfa.num_states])
    assert not np.allclose(wrong, fresh.expectations, rtol=1e-6)


# --- whole runs ---------------------------------------------------------------------


def test_pep_with_and_without_the_fused_block_agrees():
    g = tree_graph("abab")
    on = infer(g, "pep", relay=False, max_iters=4)
    off = infer(g, "pep", relay=False, max_iters=4, fused=False)
    assert max_belief_error(on, off, LATENT) < 1e-9


def test_fused_option_is_validated():
    from strgm.errors import StrgmError

    with pytest.raises(StrgmError, match="fused"):
        infer(tree_graph(), "pep", fused="yes")
