"""Oracle tests of the PCFG factor: moments of n-gram features under
P_G ⊙ μ against brute-force enumeration of strings (P_G by enumerating trees, μ by scoring
the string with the WFSA, f_w by counting substrings of BOS·v·EOS directly), against a
closed-form generating function for a cyclic grammar, and the sampling estimate against
the exact value within 4 standard errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pynini
import pytest

from tests.grammars.pcfg_oracles import R, brute_force
from strgm.errors import (DivergenceError, GraphError, InconsistentEvidenceError, InputError,
                          MessageTooLargeError, UnknownSymbolError)
from strgm.features import FeatureSet, Theta, encode, ngram_features, q_moments
from strgm.grammars.cfg import Grammar
from strgm.grammars.factor import (PCFGFactor, exact_message, pcfg_moments, sampled_moments,
                                   string_features)
from strgm.projection.closed_form import closed_form_from_expectations
from fst_factors.wfsa.construct import weighted_strings
from fst_factors.wfsa.operations import intersect
from fst_factors.wfsa.measure import log_partition, score_strings

LABELS = {"a": 1, "b": 2}
N = 2


def finite_grammar():
    """Finite language (|v| ≤ 5) with a unary rule, a 2-terminal lexical rule and a mixed
    terminal/nonterminal right-hand side."""
    return Grammar([R("S", "A", "B", w=0.5), R("S", "X", w=0.3), R("S", "a", w=0.2),
                    R("A", "a", w=0.6), R("A", "b", "a", w=0.4),
                    R("B", "b", w=0.5), R("B", "A", "b", w=0.5), R("X", "a", "b", w=1.0)])


def count_features(fs: FeatureSet, labs: tuple) -> np.ndarray:
    x = (N + 1,) + labs + (N + 2,)
    return np.array([sum(1 for i in range(len(x) - len(w) + 1) if x[i:i + len(w)] == w)
                     for w in fs.features], dtype=float)


def brute_moments(g, fs, mu, max_len, theta=None):
    """(log Z, E[f], E[rule counts]) by enumerating every string up to max_len."""
    theta = g.probabilities() if theta is None else theta
    terms = sorted(LABELS, key=LABELS.get)
    z, ef, er = 0.0, np.zeros(len(fs)), np.zeros(len(g.rules))
    for n in range(1, max_len + 1):
        for v in itertools.product(terms, repeat=n):
            lp, rc, _, _ = brute_force(g, v, theta, max_depth=2 * max_len + 2)
            if not np.isfinite(lp):
                continue
            labs = tuple(LABELS[t] for t in v)
            lm = 0.0 if mu is None else score_strings(mu, [labs])[0]
            w = math.exp(lp + lm)
            z += w
            ef += w * count_features(fs, labs)
            er += w * rc
    return math.log(z), ef / z, er / z


def random_theta(fs, seed, scale=0.6):
    return Theta(fs, np.random.default_rng(seed).normal(size=len(fs)) * scale)


def nondeterministic_message():
    """Σ of two different ENCODE(θ) acceptors: a non-deterministic μ."""
    fs = FeatureSet(ngram_features(2, N), N)
    return pynini.union(encode(random_theta(fs, 11)), encode(random_theta(fs, 12)))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_exact_moments_equal_enumeration_finite_language(order):
    g = finite_grammar()
    fs = FeatureSet(ngram_features(order, N), N)
    mu = encode(random_theta(FeatureSet(ngram_features(2, N), N), 3))
    m = pcfg_moments(g, LABELS, fs, mu)
    lz, ef, er = brute_moments(g, fs, mu, 5)
    assert m.log_z == pytest.approx(lz, abs=1e-10)
    np.testing.assert_allclose(m.expectations, ef, atol=1e-10)
    np.testing.assert_allclose(m.rule_counts, er, atol=1e-10)
    # a sanity check that the oracle is informative: μ changes the moments
    assert np.abs(pcfg_moments(g, LABELS, fs, None).expectations - ef).max() > 1e-2


def test_nondeterministic_message_and_no_message():
    g = finite_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    mu = nondeterministic_message()
    m = pcfg_moments(g, LABELS, fs, mu)
    lz, ef, _ = brute_moments(g, fs, mu, 5)
    assert m.log_z == pytest.approx(lz, abs=1e-10)
    np.testing.assert_allclose(m.expectations, ef, atol=1e-10)
    m0 = pcfg_moments(g, LABELS, fs, None)  # P_G alone: consistent grammar, Z = 1
    lz0, ef0, _ = brute_moments(g, fs, None, 5)
    assert m0.log_z == pytest.approx(0.0, abs=1e-12) and lz0 == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(m0.expectations, ef0, atol=1e-10)


def cyclic_grammar(p_ss=0.2, p_sa=0.15, p_a=0.4):
    return Grammar([R("S", "S", "S", w=p_ss), R("S", "S", "a", w=p_sa), R("S", "a", w=p_a),
                    R("S", "b", w=1 - p_ss - p_sa - p_a)])


def test_length_bounded_cyclic_grammar_equals_enumeration():
    g = cyclic_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    mu = encode(random_theta(fs, 5))
    m = pcfg_moments(g, LABELS, fs, mu, max_len=5)
    lz, ef, er = brute_moments(g, fs, mu, 5)
    assert m.log_z == pytest.approx(lz, abs=1e-10)
    np.testing.assert_allclose(m.expectations, ef, atol=1e-10)
    np.testing.assert_allclose(m.rule_counts, er, atol=1e-10)


def test_unbounded_cyclic_grammar_equals_generating_function():
    """S → S S (p) | a (q) | b (r), μ(v) = x^{#a} y^{#b}: Z = least root of
    p Z² − Z + (q x + r y) = 0, i.e. Z = (1 − √D) / (2p), D = 1 − 4p(qx + ry), and
    E[#a] = x ∂ log Z / ∂x = x q / (√D · Z) (likewise #b); E[#S→SS] = (Z − qx − ry)/Z."""
    p, q, r = 0.3, 0.45, 0.25
    g = Grammar([R("S", "S", "S", w=p), R("S", "a", w=q), R("S", "b", w=r)])
    x, y = 1.3, 0.6
    fs = FeatureSet(ngram_features(1, N), N)
    th = Theta.from_dict({(1,): math.log(x), (2,): math.log(y)}, N).align(fs)
    m = pcfg_moments(g, LABELS, fs, encode(th))
    s = q * x + r * y
    D = 1 - 4 * p * s
    Z = (1 - math.sqrt(D)) / (2 * p)
    assert m.log_z == pytest.approx(math.log(Z), abs=1e-10)
    assert m.expectations[fs.index[(1,)]] == pytest.approx(x * q / (math.sqrt(D) * Z), rel=1e-9)
    assert m.expectations[fs.index[(2,)]] == pytest.approx(y * r / (math.sqrt(D) * Z), rel=1e-9)
    assert m.expectations[fs.index[(N + 2,)]] == pytest.approx(1.0, abs=1e-12)
    # #binary nodes = #leaves − 1
    assert m.rule_counts[0] == pytest.approx(m.rule_counts[1] + m.rule_counts[2] - 1, abs=1e-9)


def test_supercritical_product_diverges_and_zero_evidence():
    g = Grammar([R("S", "S", "S", w=0.7), R("S", "a", w=0.3)])
    fs = FeatureSet(ngram_features(1, N), N)
    th = Theta.from_dict({(1,): math.log(3.0)}, N).align(fs)  # 4·0.7·0.9 > 1: Z = ∞
    with pytest.raises(DivergenceError):
        pcfg_moments(g, LABELS, fs, encode(th), max_iters=2000)
    # with a length bound the same product is finite and exact
    m = pcfg_moments(g, LABELS, fs, encode(th), max_len=4)
    lz, ef, _ = brute_moments(g, fs, encode(th), 4)
    assert m.log_z == pytest.approx(lz, abs=1e-10)
    np.testing.assert_allclose(m.expectations, ef, atol=1e-10)
    # a message that only accepts a string the finite grammar cannot generate
    only_bbb = weighted_strings({(2, 2, 2): 0.0})
    with pytest.raises(InconsistentEvidenceError):
        pcfg_moments(finite_grammar(), LABELS, fs, only_bbb)


def test_sampling_estimate_within_four_standard_errors():
    g = finite_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    mu = encode(random_theta(fs, 7))
    exact = pcfg_moments(g, LABELS, fs, mu).expectations
    est = sampled_moments(g, LABELS, fs, mu, n_samples=4000, seed=2)
    var = est.stderr > 1e-9
    assert var.sum() >= len(fs) // 2
    z = np.abs(est.expectations - exact)[var] / est.stderr[var]
    assert z.max() < 4.0
    # features that never vary (constants, impossible n-grams) are estimated exactly
    np.testing.assert_allclose(est.expectations[~var], exact[~var], atol=1e-9)
    # power: the same check rejects the moments of a different message
    wrong = pcfg_moments(g, LABELS, fs, encode(random_theta(fs, 8, scale=1.0))).expectations
    assert (np.abs(est.expectations - wrong)[var] / est.stderr[var]).max() > 4.0


def test_sampling_on_cyclic_grammar_with_length_bound():
    g = cyclic_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    mu = encode(random_theta(fs, 9, scale=0.3))
    exact = pcfg_moments(g, LABELS, fs, mu, max_len=6).expectations
    est = sampled_moments(g, LABELS, fs, mu, n_samples=4000, seed=4, max_len=6)
    assert est.n_truncated > 0
    var = est.stderr > 1e-9
    assert (np.abs(est.expectations - exact)[var] / est.stderr[var]).max() < 4.0


def test_string_features_match_direct_counting():
    fs = FeatureSet(ngram_features(3, N), N)
    strs = [(1,), (2, 1, 1, 2), (1, 1, 1), (2, 2, 1, 2, 1)]
    got = string_features(fs, strs)
    np.testing.assert_array_equal(got, np.array([count_features(fs, s) for s in strs]))


def test_projection_of_factor_moments_matches_moments():
    """EP's projection step: the closed-form θ on a complete family reproduces E_p[f]."""
    g = cyclic_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    th = random_theta(fs, 13, scale=0.3) + Theta.from_dict({(1,): -1.0, (2,): -1.0}, N)
    m = pcfg_moments(g, LABELS, fs, encode(th))  # unbounded: the per-symbol cost keeps Z finite
    th = closed_form_from_expectations(fs, m.expectations)
    np.testing.assert_allclose(q_moments(th).expectations, m.expectations, atol=1e-8)


def test_factor_interface_message_and_moments():
    g = finite_grammar()
    fs = FeatureSet(ngram_features(2, N), N)
    f = PCFGFactor("G", var="U", grammar=g, labels=LABELS, num_labels=N, max_len=5)
    msg = f.message_to("U", {}, N)
    strs = [tuple(LABELS[t] for t in v) for n in range(1, 6)
            for v in itertools.product("ab", repeat=n)]
    want = np.array([brute_force(g, [("a", "b")[x - 1] for x in s], g.probabilities())[0]
                     for s in strs])
    np.testing.assert_allclose(score_strings(msg, strs), want, atol=1e-10)
    assert log_partition(msg) == pytest.approx(0.0, abs=1e-10)
    # moments via the factor with θ_context equal those with the encoded message
    tc = random_theta(fs, 21)
    a = f.moments(None, fs, theta_context=tc)
    b = pcfg_moments(g, LABELS, fs, encode(tc), max_len=5)
    np.testing.assert_allclose(a.expectations, b.expectations, atol=1e-12)
    # ... and moments of the exact WFSA message ⊙ μ (p_moments) agree with the grammar's
    from strgm.features.moments import p_moments
    pm = p_moments(intersect(msg, encode(tc)), fs)
    np.testing.assert_allclose(pm.expectations, a.expectations, atol=1e-9)
    assert pm.log_z == pytest.approx(a.log_z, abs=1e-9)
    with pytest.raises(InputError):
        f.moments(None, fs, method="nope")


def test_errors():
    g = finite_grammar()
    fs = FeatureSet(ngram_features(1, N), N)
    with pytest.raises(UnknownSymbolError):
        pcfg_moments(g, {"a": 1}, fs)
    f = PCFGFactor("G", var="U", grammar=g, labels=LABELS, num_labels=N)
    with pytest.raises(GraphError):
        f.message_to("U", {}, N)
    with pytest.raises(GraphError):
        f.message_to("W", {}, N)
    with pytest.raises(MessageTooLargeError):
        exact_message(g, LABELS, 12, max_strings=1000)
    with pytest.raises(MessageTooLargeError):
        pcfg_moments(g, LABELS, FeatureSet(ngram_features(4, N), N), max_states=10)


def test_factor_sampling_method_uses_length_bound():
    g = cyclic_grammar()
    fs = FeatureSet(ngram_features(1, N), N)
    f = PCFGFactor("G", var="U", grammar=g, labels=LABELS, num_labels=N, max_len=4)
    exact = f.moments(None, fs)
    est = f.moments(None, fs, method="sample", n_samples=3000, seed=5)
    assert est.n_truncated > 0
    var = est.stderr > 1e-9
    assert (np.abs(est.expectations - exact.expectations)[var] / est.stderr[var]).max() < 4.0
