"""Oracles for the projections: zero gradient at the closed form, finite differences,
step halving, prox optimality against scipy, PEP(λ→0) = fixed-order fit, growing."""

import numpy as np
import pynini
import pytest
from scipy.optimize import minimize

import fst_factors.transducers as ff
from strgm.features import FeatureSet, Theta, p_moments, q_moments
from strgm.projection import (active_set, closed_form, gradient, gradient_ascent,
                              gradient_step, grow, objective, order_feature_set, penalty,
                              proximal_projection, tree_prox, uniform_theta)
from fst_factors.wfsa import intersect, weighted_strings

N = 2


def target():
    """A cyclic, non-n-gram distribution: prior mixed with a few favoured strings."""
    prior = ff.geometric_unigram_prior(N, mean_length=1.5)
    spikes = intersect(prior, weighted_strings({(1, 2): -2.0, (2, 2, 1): -1.0, (1,): -1.5,
                                                (1, 2, 1, 2): -2.5}))
    return pynini.union(spikes, ff.geometric_unigram_prior(N, mean_length=0.8)).optimize()


@pytest.mark.parametrize("order", [1, 2, 3])
def test_closed_form_has_zero_gradient(order):
    p = target()
    fs = order_feature_set(order, N)
    th, _ = closed_form(p, fs)
    ep = p_moments(p, fs).expectations
    assert np.max(np.abs(gradient(th, ep))) < 1e-7
    # and it beats random perturbations (concavity)
    rng = np.random.default_rng(order)
    best = objective(th, ep)
    for _ in range(5):
        assert objective(th + Theta(fs, rng.normal(size=len(fs)) * 0.05), ep) < best


def test_closed_form_with_context_projects_the_product():
    p = target()
    fs = order_feature_set(2, N)
    ctx = Theta.from_dict({(1, 1): -0.7, (3, 2): 0.4}, N)
    th, _ = closed_form(p, fs, ctx)
    from strgm.features import encode
    ep = p_moments(intersect(p, encode(ctx)), fs).expectations
    assert np.max(np.abs(gradient(th, ep))) < 1e-7


def test_gradient_matches_finite_differences():
    p = target()
    fs = order_feature_set(2, N).with_features([(1, 2, 1), (3, 2, 2)])
    ep = p_moments(p, fs).expectations
    rng = np.random.default_rng(0)
    th = uniform_theta(fs) + Theta(fs, rng.normal(size=len(fs)) * 0.1)
    g = gradient(th, ep)
    eps = 1e-5
    fd = np.empty(len(fs))
    for i in range(len(fs)):
        e = np.zeros(len(fs))
        e[i] = eps
        fd[i] = (objective(Theta(fs, th.values + e), ep)
                 - objective(Theta(fs, th.values - e), ep)) / (2 * eps)
    np.testing.assert_allclose(g, fd, atol=1e-6)


def test_gradient_step_halves_when_z_infinite():
    p = target()
    fs = order_feature_set(1, N)
    ep = p_moments(p, fs).expectations
    th = Theta(fs, [-5.0, -5.0, 0.0])  # E_p[f] > E_q[f]: the gradient pushes weights up
    r = gradient_step(th, ep, eta=1e3)  # ... and a huge step would make Z infinite
    assert r.halvings > 0 and r.eta < 1e3
    q_moments(r.theta)  # normalisable
    assert objective(r.theta, ep) > -np.inf


def test_gradient_ascent_reaches_closed_form():
    p = target()
    fs = order_feature_set(2, N)
    ep = p_moments(p, fs).expectations
    th = gradient_ascent(p, fs, eta=0.5, iters=3000, tol=1e-7)
    assert objective(th, ep) == pytest.approx(objective(closed_form(p, fs)[0], ep), abs=1e-6)


def _prox_objective(x, y, fs, t):
    return 0.5 * np.sum((x - y) ** 2) + t * penalty(Theta(fs, x))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_prox_is_optimal_against_scipy(seed):
    fs = FeatureSet([(1,), (2,), (4,), (1, 2), (1, 1), (1, 2, 1), (1, 2, 2), (2, 1),
                     (3, 1), (3, 1, 2)], N)
    rng = np.random.default_rng(seed)
    y = rng.normal(size=len(fs))
    t = 0.4
    x = tree_prox(Theta(fs, y), t).values
    groups = [[i for i, w in enumerate(fs.features) if w[:len(u)] == u]
              for u in [()] + list(fs.prefixes)]
    k = len(groups)
    # epigraph form: min ½‖x−y‖² + t Σ s_u  s.t.  s_u ≥ ‖x_{G_u}‖  (a convex program)
    m = len(y)

    def fun(z):
        return 0.5 * np.sum((z[:m] - y) ** 2) + t * np.sum(z[m:])

    def jac(z):
        return np.concatenate([z[:m] - y, np.full(k, t)])

    def con(z, g, j):
        return z[m + j] - np.sqrt(np.sum(z[g] ** 2) + 1e-16)

    def con_jac(z, g, j):
        out = np.zeros(m + k)
        out[g] = -z[g] / np.sqrt(np.sum(z[g] ** 2) + 1e-16)
        out[m + j] = 1.0
        return out

    cons = [{"type": "ineq", "fun": con, "jac": con_jac, "args": (g, j)}
            for j, g in enumerate(groups)]
    z0 = np.concatenate([y, [np.linalg.norm(y[g]) + 1 for g in groups]])
    res = minimize(fun, z0, jac=jac, constraints=cons, method="SLSQP",
                   options={"maxiter": 1000, "ftol": 1e-12})
    xs = res.x[:len(y)]
    ours, theirs = _prox_objective(x, y, fs, t), _prox_objective(xs, y, fs, t)
    assert ours <= theirs + 1e-7
    # strong convexity: objective gap δ bounds the distance by sqrt(2δ)
    assert np.linalg.norm(x - xs) < 1e-3 + np.sqrt(2 * max(theirs - ours, 0) + 1e-8)
    # optimality also against random perturbations
    for _ in range(20):
        assert _prox_objective(x + rng.normal(size=len(y)) * 1e-2, y, fs, t) >= ours - 1e-12


def test_prox_zeroes_whole_subtrees_first():
    fs = FeatureSet([(1,), (1, 2), (1, 2, 1)], N)
    out = tree_prox(Theta(fs, [2.0, 0.05, 0.05]), 0.2)
    assert out[(1, 2)] == 0 and out[(1, 2, 1)] == 0 and out[(1,)] > 0


def test_active_set_uses_conjunction_test():
    x = Theta.from_dict({(1,): -1.0, (2,): -1.0, (1, 2): 0.5}, N)
    act = set(active_set(x).features)
    assert {(1,), (2,), (4,), (1, 2)} <= act
    assert (2, 2) in act and (2, 1) in act  # suffixes (2,), (1,) are nonzero
    assert (1, 4) in act  # EOS is constant, so always counts as active
    assert (1, 2, 4) not in act  # needs (2, EOS) nonzero
    # (1,2,x) needs (2,x) nonzero: none are, so no trigram is active
    assert not any(len(w) == 3 and w[0] == 1 for w in act)
    assert (3, 1) in act and (3, 2) in act  # BOS extensions of nonzero unigrams


def test_pep_with_tiny_lambda_matches_fixed_order():
    p = target()
    fs = order_feature_set(2, N)
    ep = p_moments(p, fs).expectations
    x = proximal_projection(p, N, lam=1e-7, eta=0.5, iters=600, max_len=2)
    want = objective(closed_form(p, fs)[0], ep)
    assert objective(x.align(fs), ep) == pytest.approx(want, abs=1e-5)


def test_pep_with_large_lambda_is_sparser():
    p = target()
    small = proximal_projection(p, N, lam=1e-3, eta=0.5, iters=150, max_len=4)
    large = proximal_projection(p, N, lam=0.2, eta=0.5, iters=150, max_len=4)
    assert large.nnz < small.nnz


def test_grow_matches_fixed_order_when_lambda_small_and_is_sparse_otherwise():
    p = target()
    fs3 = order_feature_set(3, N)
    ep = p_moments(p, fs3).expectations
    th = grow(p, N, lam=0.0, max_len=3)
    want = objective(closed_form(p, fs3)[0], ep)
    assert objective(th.align(fs3), ep) == pytest.approx(want, abs=1e-7)
    coarse = grow(p, N, lam=1.0, max_len=3)
    assert len(coarse.features.dfa.contexts) < len(th.features.dfa.contexts)


def test_gradient_step_mask_and_known_moments():
    """A masked step moves only the masked-in features, by exactly η·(E_p − E_q) there;
    passing θ's own moments (as EP does from its previous step) changes nothing."""
    fs = order_feature_set(2, 2)
    th = uniform_theta(fs)
    ep = q_moments(Theta(fs, th.values + 0.3 * np.sin(np.arange(len(fs))))).expectations
    mask = np.arange(len(fs)) % 3 == 0
    full = gradient_step(th, ep, eta=0.1)
    masked = gradient_step(th, ep, eta=0.1, mask=mask)
    reused = gradient_step(th, ep, eta=0.1, mask=mask, q=q_moments(th))
    moved = masked.theta.values - th.values
    assert np.all(moved[~mask] == 0.0) and np.any(moved[mask] != 0.0)
    np.testing.assert_allclose(moved[mask], (full.theta.values - th.values)[mask])
    np.testing.assert_array_equal(reused.theta.values, masked.theta.values)
    np.testing.assert_allclose(masked.q.expectations, q_moments(masked.theta).expectations)
