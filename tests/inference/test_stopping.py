"""EP/PEP's stopping rule: the symmetric KL test against enumeration, and anytime stops."""

import warnings

import numpy as np
import pytest

from tests.features.feature_oracles import all_strings, feature_matrix
from strgm.errors import ConvergenceWarning, OptionError
from strgm.features import FeatureSet, Theta, ngram_features
from strgm.inference import infer
from strgm.inference.ep import EPSide
from strgm.inference.methods import EP_TOL, PEP_TOL
from tests.inference.test_ep import tree_graph

N = 2


def _theta(feats, seed, shift=-2.3):
    rng = np.random.default_rng(seed)
    return Theta(FeatureSet(feats, N), rng.normal(size=len(feats)) * 0.3 + shift)


def _log_q(theta, strings):
    s = feature_matrix(theta.features.features, strings, N) @ theta.values
    return s - np.logaddexp.reduce(s)


def _brute_symmetric_kl(a, b, max_len=16):
    """Σ_v (q_a(v) − q_b(v)) (log q_a(v) − log q_b(v)) over strings up to ``max_len``
    (both θ put mass ≈ 2e^{−2.3} per symbol, so longer strings carry < 1e-12)."""
    strings = all_strings(N, max_len)
    la, lb = _log_q(a, strings), _log_q(b, strings)
    return float(np.sum((np.exp(la) - np.exp(lb)) * (la - lb)))


def _side():
    return EPSide(tree_graph("ab"), "pep", relay=False)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_symmetric_kl_equals_enumeration_on_different_feature_sets(seed):
    # different supports: the measure aligns both θ on the union of their features
    a = _theta(ngram_features(1, N) + [(1, 2)], seed)
    b = _theta(ngram_features(1, N) + [(2, 2, 1), (3, 1)], seed + 10)
    side = _side()
    got = side.convergence_change(a, b)
    want = _brute_symmetric_kl(a, b)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert side.convergence_change(b, a) == pytest.approx(got, rel=1e-12)
    # negative control: one direction of the KL divergence alone is a different number
    strings = all_strings(N, 16)
    la, lb = _log_q(a, strings), _log_q(b, strings)
    one_way = float(np.sum(np.exp(la) * (la - lb)))
    assert abs(one_way - want) > 1e-3 * want


def test_symmetric_kl_is_zero_for_the_same_belief_and_inf_at_the_start():
    a = _theta(ngram_features(2, N), 3)
    side = _side()
    assert side.convergence_change(a, Theta(a.features, a.values.copy())) == 0.0
    assert side.convergence_change(None, a) == np.inf
    unigrams = FeatureSet(ngram_features(1, N), N)
    not_normalisable = Theta(unigrams, np.zeros(len(unigrams)))  # Σ_v 1 = ∞
    assert side.convergence_change(not_normalisable, a) == np.inf


def test_ep_converges_by_the_kl_test_on_a_tree_and_reports_it():
    g = tree_graph("ab")
    r = infer(g, "pep", relay=False, max_iters=30)
    assert r.converged and r.extra["stop_reason"] == "converged"
    assert r.settings["tol"] == PEP_TOL
    assert r.deltas[-1] <= PEP_TOL < max(r.deltas[1:])
    assert infer(g, "ep", relay=False, max_iters=1).settings["tol"] == EP_TOL
    assert r.iterations < 30
    # a tolerance of 0 cannot be met: the run goes to max_iters and says so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r0 = infer(g, "pep", relay=False, max_iters=4, tol=0.0)
    assert not r0.converged and r0.extra["stop_reason"] == "max_iters"
    assert r0.iterations == 4


def test_anytime_stop_after_max_seconds_reports_where_it_stood():
    g = tree_graph("aba")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = infer(g, "pep", relay=False, max_iters=50, tol=0.0, max_seconds=0.0)
    assert r.iterations == 1 and r.extra["stop_reason"] == "max_seconds"
    assert r.settings["max_seconds"] == 0.0
    assert any(issubclass(w.category, ConvergenceWarning) and "time limit" in str(w.message)
               for w in caught)
    # beliefs are usable where the run stood
    assert 0.0 < r.belief("M1").prob((1,)) < 1.0


def test_bp_keeps_its_top5_test_and_bad_stopping_options_are_refused():
    g = tree_graph("ab")
    r = infer(g, "pruned")
    assert r.settings["tol"] == 1e-4 and r.extra["stop_reason"] == "converged"
    with pytest.raises(OptionError, match="max_seconds"):
        infer(g, "pep", max_seconds=-1.0)
    with pytest.raises(OptionError, match="tol"):
        infer(g, "pep", tol=float("nan"))
