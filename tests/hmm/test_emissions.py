"""Conjugate emission updates against their exact posteriors."""

import numpy as np
import pytest

from strgm.hmm.emissions import Categorical, Gaussian


def _niw_posterior(em, x):
    n, xbar = len(x), x.mean(axis=0)
    kn, nn = em.kappa0 + n, em.nu0 + n
    d = (xbar - em.mu0)[:, None]
    psi = em.psi0 + (x - xbar).T @ (x - xbar) + em.kappa0 * n / kn * (d @ d.T)
    return (em.kappa0 * em.mu0 + n * xbar) / kn, psi / (nn - em.D - 1)


def _draw_means(em, z, x, draws=1000):
    rng = np.random.default_rng(0)
    out = [em.posterior_draw(z, x, 2, rng) for _ in range(draws)]
    return (np.mean([o["mu"][0] for o in out], axis=0),
            np.mean([o["sigma"][0] for o in out], axis=0))


def test_gaussian_posterior_moments():
    rng = np.random.default_rng(1)
    x = rng.normal([1.0, -2.0], [0.5, 1.5], size=(12, 2))
    z = np.array([0] * 8 + [1] * 4)
    em = Gaussian(np.zeros(2), 0.5, 5.0, np.eye(2))
    mu, sigma = _draw_means(em, z, x)
    want_mu, want_sigma = _niw_posterior(em, x[:8])
    assert np.allclose(mu, want_mu, atol=0.05)
    assert np.allclose(sigma, want_sigma, atol=0.06 * np.abs(want_sigma).max())


def test_gaussian_negative_control_wrong_prior_weight():
    rng = np.random.default_rng(1)
    x = rng.normal([1.0, -2.0], [0.5, 1.5], size=(12, 2))
    z = np.array([0] * 8 + [1] * 4)
    em = Gaussian(np.zeros(2), 0.5, 5.0, np.eye(2))
    wrong = Gaussian(np.zeros(2), 5.0, 5.0, np.eye(2))  # κ0 ten times too large
    mu, _ = _draw_means(wrong, z, x)
    want_mu, _ = _niw_posterior(em, x[:8])
    assert not np.allclose(mu, want_mu, atol=0.05)


def test_gaussian_loglik_is_the_density():
    from scipy.stats import multivariate_normal
    em = Gaussian(np.zeros(2), 1.0, 4.0, np.eye(2))
    p = em.prior_draw(3, np.random.default_rng(2))
    x = np.random.default_rng(3).normal(size=(5, 2))
    ll = em.loglik(p, x)
    for k in range(3):
        assert np.allclose(ll[:, k], multivariate_normal(p["mu"][k], p["sigma"][k]).logpdf(x))


def test_categorical_posterior_mean():
    em = Categorical(3, 0.5)
    z = np.array([0, 0, 0, 1])
    x = np.array([2, 2, 0, 1])
    rng = np.random.default_rng(4)
    th = np.mean([em.posterior_draw(z, x, 2, rng)["theta"] for _ in range(4000)], axis=0)
    assert np.allclose(th[0], np.array([1.5, 0.5, 2.5]) / 4.5, atol=0.01)
