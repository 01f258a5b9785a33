"""Collapsed variational Bayes for rule probabilities inside the factor graph
(``GrammarParameters(..., "cvb")``): each grammar factor, the "sentence" of Wang &
Blunsom 2013 §3.2, sees the posterior mean of θ given every *other* factor's counts.

Oracles: (1) the leave-one-out weights equal the formula computed by hand from the
recorded counts; (2) after enough sweeps over the factors, every factor's recorded counts
are the exact expected rule counts of its p̂ under its own leave-one-out weights — the
CVB fixed point —, checked with an independent call of the exact moments; (3) learning
inside EP raises the evidence of the observed words. Negative controls: the weights with
the factor's own counts left in (the VB/EM reading) miss the fixed point, and "fixed"
parameters do not move.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R, observed_words
from fst_factors.alphabet import Alphabet
from strgm.errors import OptionError
from strgm.features import FeatureSet, Theta, ngram_features
from strgm.grammars.cfg import Grammar
from strgm.grammars.factor import pcfg_moments
from strgm.grammars.factor_message import GrammarMessage, GrammarParameters
from strgm.inference import infer
from fst_factors.wfsa.construct import weighted_strings

AB = Alphabet(["a", "b"])
WORDS = ["aaab", "aa", "aaaa", "ab"]


def two_routes():
    """S → X S | X, X → Y | Z | b, Y → a, Z → a: every a is an X that goes through Y
    or Z, so the trees of a word — and their expected counts — depend on θ(X → Y)
    against θ(X → Z), unlike a right-linear grammar's single parse."""
    return Grammar([R("S", "X", "S", w=0.5), R("S", "X", w=0.5), R("X", "Y", w=0.45),
                    R("X", "Z", w=0.2), R("X", "b", w=0.35), R("Y", "a", w=1.0),
                    R("Z", "a", w=1.0)])


def word_counts(grammar, word, theta):
    """Exact expected rule counts of P_G(tree | word) under ``theta`` (and log P(word))."""
    fs = FeatureSet(ngram_features(1, 2), 2)
    obs = weighted_strings([(tuple(AB.label(c) for c in word), 0.0)])
    m = pcfg_moments(grammar, AB, fs, obs, theta)
    return m.rule_counts, m.log_z


def normalised(grammar, a):
    tot = np.bincount(grammar.lhs_index, weights=a, minlength=grammar.n_lhs)
    return a / tot[grammar.lhs_index]


def test_leave_one_out_weights_follow_the_formula():
    g = two_routes()
    p = GrammarParameters(g, "cvb", alpha=0.5)
    assert np.array_equal(p.theta_for("G0"), p.theta)  # no counts yet: the start θ
    rng = np.random.default_rng(1)
    c = {k: rng.uniform(0, 3, len(g.rules)) for k in ("G0", "G1", "G2")}
    for k, v in c.items():
        p.record(k, v)
    alpha = np.full(len(g.rules), 0.5)
    for k in c:
        others = sum(v for j, v in c.items() if j != k)
        assert np.allclose(p.theta_for(k), normalised(g, others + alpha), atol=1e-12)
    assert np.allclose(p.theta, normalised(g, sum(c.values()) + alpha))  # posterior mean
    assert np.allclose(p.theta_for("new"), p.theta)  # a factor with no counts yet
    # negative control: leaving one's own counts in is a different (VB/EM-like) θ
    assert np.abs(p.theta_for("G0") - p.theta).max() > 1e-2
    assert p.reestimate() is False  # CVB updates on every visit, not per iteration


def test_sweeps_reach_the_cvb_fixed_point_of_the_factors():
    """Four factors, each with its own cavity (a random bigram θ, as EP would send),
    visited in turn as EP's sweeps visit them, until the counts settle; then every
    factor's recorded counts must be the exact expected rule counts of its p̂ under its
    leave-one-out weights, recomputed here by an independent call of the moments."""
    g = two_routes()
    p = GrammarParameters(g, "cvb", alpha=1.0)
    fs = FeatureSet(ngram_features(2, 2), 2)
    rng = np.random.default_rng(3)
    cavities = [Theta(fs, -np.abs(rng.normal(size=len(fs))) * 0.8) for _ in range(4)]
    msgs = [GrammarMessage(p, AB, key=f"G{i}") for i in range(4)]
    for _ in range(60):
        for m, cav in zip(msgs, cavities):
            m.moments(fs, cav)
    worst, worst_control = 0.0, 0.0
    for i, cav in enumerate(cavities):
        enc = cav.features.dfa.encode(cav.values)
        want = pcfg_moments(g, AB, fs, enc, p.theta_for(f"G{i}")).rule_counts
        worst = max(worst, np.abs(p.counts[f"G{i}"] - want).max())
        control = pcfg_moments(g, AB, fs, enc, p.theta).rule_counts  # own counts left in
        worst_control = max(worst_control, np.abs(p.counts[f"G{i}"] - control).max())
    assert worst < 1e-6
    assert worst_control > 1e-3  # the broken reading is visibly off the fixed point


def test_cvb_learning_raises_the_evidence():
    g = two_routes()
    p = GrammarParameters(g, "cvb", alpha=1.0)
    before = sum(word_counts(g, w, p.theta)[1] for w in WORDS)
    infer(observed_words(WORDS, p, AB), "ep", order=2, max_iters=4, tol=0)
    after = sum(word_counts(g, w, p.theta)[1] for w in WORDS)
    assert after > before + 1.0
    fixed = GrammarParameters(g, "fixed")
    infer(observed_words(WORDS, fixed, AB), "ep", order=2, max_iters=2, tol=0)
    assert fixed.updates == 0 and np.array_equal(fixed.theta, g.probabilities())


def test_unknown_estimator_is_an_option_error():
    with pytest.raises(OptionError, match="estimator"):
        GrammarParameters(two_routes(), "gibbs")
