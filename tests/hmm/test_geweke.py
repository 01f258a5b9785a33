"""Geweke joint-distribution tests of the infinite-HMM Gibbs kernel (all three models),
each with a deliberately broken kernel shown to fail."""

import warnings

import numpy as np
import pytest

import strgm.hmm.kernel as kernel_module
from tests.hmm.geweke import chain_draws, prior_draws, z_scores
from strgm.errors import TruncationWarning
from strgm.hmm import Categorical, HMMSettings

LENGTHS = [3, 3, 2]
LIMIT = 4.0  # |z| for ~17 statistics; the correct kernels stay below 2.5 at these seeds


def _settings(model, hypers=True):
    return HMMSettings(model=model, L=3, model_length=False, sample_hypers=hypers,
                       alpha=2.0, gamma=1.5, kappa=1.0 if model == "sticky" else 0.0,
                       a_alpha=2, b_alpha=1, a_gamma=2, b_gamma=1, a_kappa=2, b_kappa=1,
                       a_lam=2, b_lam=2)


def _geweke(model, n, hypers=True):
    st, em = _settings(model, hypers), Categorical(2, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        a = prior_draws(st, em, LENGTHS, n, np.random.default_rng(1), hypers)
        b = chain_draws(st, em, LENGTHS, n, np.random.default_rng(2), hypers)
    return z_scores(a, b)


@pytest.mark.parametrize("model,hypers,n", [
    ("lt", True, 10000), ("lt", False, 6000),
    # about 20 s each; the LT kernel above shares their code (test_hdp_limit.py ties
    # the LT kernel with a unit kernel to the HDP-HMM's)
    pytest.param("sticky", True, 10000, marks=pytest.mark.slow),
    pytest.param("hdp", True, 10000, marks=pytest.mark.slow)])
def test_kernel_leaves_the_joint_invariant(model, hypers, n):
    z = _geweke(model, n, hypers)
    bad = {k: round(v, 2) for k, v in z.items() if abs(v) > LIMIT}
    assert not bad, bad


def test_negative_control_wrong_pi_rate(monkeypatch):
    """π drawn with rate 0.5 + u_k instead of 1 + u_k (eq. 47) must fail."""
    monkeypatch.setattr(kernel_module, "draw_pi", lambda c, N, u, rng: np.maximum(
        rng.gamma(c + N) / (0.5 + u)[:, None], 1e-100))
    z = _geweke("lt", 1000)  # max |z| 23 at 1000 draws (5x fewer than before)
    assert max(abs(v) for v in z.values()) > 2 * LIMIT


def test_negative_control_failed_jumps_ignored(monkeypatch):
    """Dropping the failed jumps (treating the LT model as conjugate) must fail on the
    statistics of z and π, not only on q itself."""
    monkeypatch.setattr(kernel_module, "failed_jumps",
                        lambda pi, phi, u, rng: np.zeros(pi.shape))
    z = _geweke("lt", 5000, hypers=False)
    assert max(abs(z[k]) for k in ("self_jumps", "distinct", "row0_above_1")) > 2 * LIMIT


@pytest.mark.slow  # 41.7 s in a loaded full run: runs with its oracle (sticky, slow above);
# the default suite keeps the LT oracles with their controls and the sticky model's
# end-to-end run (test_hmm_cli.py)
def test_negative_control_sticky_overrides(monkeypatch):
    """Splitting the sticky diagonal tables with a fixed probability 1/2 must fail."""
    import strgm.hmm.transitions as tr

    def half(m, alpha, beta, kappa, rng):
        L = len(beta)
        diag = m[np.arange(L), np.arange(L)].astype(np.int64)
        w = rng.binomial(diag, 0.5)
        mb = m.copy()
        mb[np.arange(L), np.arange(L)] -= w
        return mb, w
    monkeypatch.setattr(tr, "sticky_overrides", half)
    z = _geweke("sticky", 5000)
    assert max(abs(v) for v in z.values()) > LIMIT


def test_negative_control_location_prior_dropped(monkeypatch):
    """Location moves that forget the N(0, I) prior of ℓ must fail (on ‖ℓ_0‖²)."""
    import strgm.hmm.locations as loc
    from strgm.hmm.transitions import log_jump_likelihood, similarity
    monkeypatch.setattr(loc, "_log_target", lambda n, pi, ell, lam: log_jump_likelihood(
        n, pi, similarity(ell, lam, True)))
    z = _geweke("lt", 1500, hypers=False)  # |z| 9.0 at 1500 draws
    assert abs(z["ell0_sq"]) > LIMIT
