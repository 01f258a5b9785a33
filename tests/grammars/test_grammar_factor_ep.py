"""Grammar factors inside the factor graph (``FactorGraph.add_grammar``): EP and PEP read
their messages as moment oracles, with no enumeration of strings.

Oracles: (1) a right-linear PCFG is a finite-state distribution, so EP with the grammar
factor must give the same belief as exact BP with the equivalent WFSA as a unary factor,
when the bigram family represents the product exactly; (2) the oracle's moments for a
context-free grammar (aⁿbⁿ) under a random cavity equal those of the enumerated WFSA;
(3) sampled moments lie within 4 standard errors of the exact ones, visit after visit;
(4) learning the rule probabilities inside the graph raises the evidence. Each has a
deliberately broken variant shown to fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R, observed_words
from fst_factors.alphabet import Alphabet
from strgm.errors import GrammarError, GraphError
from strgm.features import FeatureSet, Theta, ngram_features
from strgm.features.moments import p_moments
from strgm.grammars.cfg import Grammar
from strgm.grammars.factor import exact_message, pcfg_moments
from strgm.grammars.factor_message import GrammarMessage, GrammarParameters
from strgm.graph import FactorGraph
from strgm.inference import infer
from fst_factors.wfsa.construct import weighted_strings

AB = Alphabet(["a", "b"])


def right_linear(pa=0.5, stop=0.4):
    """S → a S | b S | a | b: i.i.d. letters (P(a) = pa) with stopping probability
    ``stop`` after each — a finite-state distribution a bigram family represents."""
    go = 1 - stop
    return Grammar([R("S", "a", "S", w=pa * go), R("S", "b", "S", w=(1 - pa) * go),
                    R("S", "a", w=pa * stop), R("S", "b", w=(1 - pa) * stop)])


def machine(arcs, finals) -> "pynini.Fst":
    """A log64 acceptor from (src, label, -log weight, dst) arcs and {state: -log final}."""
    import pynini
    f = pynini.Fst(arc_type="log64")
    n = 1 + max([max(a[0], a[3]) for a in arcs] + list(finals))
    for _ in range(n):
        f.add_state()
    f.set_start(0)
    for src, lab, w, dst in arcs:
        f.add_arc(src, pynini.Arc(lab, lab, pynini.Weight("log64", w), dst))
    for q, w in finals.items():
        f.set_final(q, pynini.Weight("log64", w))
    return f


def right_linear_wfsa(pa=0.5, stop=0.4):
    """The same distribution as a two-state WFSA (exact, unbounded length)."""
    lp, lq, go = -math.log(pa), -math.log(1 - pa), -math.log(1 - stop)
    return machine([(0, 1, lp, 1), (0, 2, lq, 1), (1, 1, lp + go, 1), (1, 2, lq + go, 1)],
                   {1: -math.log(stop)})


def channel():
    """A unary factor preferring a's (one state: a costs 0.3, b 1.0 nats), unbounded, so
    that the product with the grammar stays in the bigram family."""
    return machine([(0, 1, 0.3, 0), (0, 2, 1.0, 0)], {0: 0.0})


def graph_with(prior) -> FactorGraph:
    g = FactorGraph(AB)
    g.add_variable("V")
    if isinstance(prior, Grammar):
        g.add_grammar("G", "V", prior)
    else:
        g.add_unary("G", "V", prior)
    g.add_unary("C", "V", channel())
    return g


def belief_probs(res, var="V"):
    b = res.belief(var)
    return np.array([b.prob(s) for s in ("a", "b", "ab", "ba", "aab", "bbb")])


def test_ep_with_a_grammar_factor_equals_exact_bp_with_its_wfsa():
    """Closed-form EP on the bigram family is exact here (the product is a unigram model
    with stopping); with any projection, the grammar's oracle gives EP and PEP exactly the
    numbers the equivalent WFSA message gives."""
    gram, wfsa = right_linear(0.6, 0.4), right_linear_wfsa(0.6, 0.4)
    exact = belief_probs(infer(graph_with(wfsa), "bp"))
    ep = infer(graph_with(gram), "ep", order=2, projection="closed", max_iters=8, tol=1e-12)
    np.testing.assert_allclose(belief_probs(ep), exact, rtol=1e-7)
    for method, kw in (("ep", {"order": 2}), ("pep", {})):
        via_wfsa = infer(graph_with(wfsa), method, max_iters=4, tol=0, relay=False, **kw)
        via_grammar = infer(graph_with(gram), method, max_iters=4, tol=0, **kw)
        np.testing.assert_allclose(belief_probs(via_grammar), belief_probs(via_wfsa),
                                   rtol=1e-7, atol=1e-12)
    # negative control: another grammar (P(a) = 0.3) is told apart
    other = infer(graph_with(right_linear(0.3, 0.4)), "ep", order=2, projection="closed",
                  max_iters=8, tol=1e-12)
    assert np.abs(belief_probs(other) - exact).max() > 0.02


def anbn(p=0.35):
    return Grammar([R("S", "a", "S", "b", w=p), R("S", "a", "b", w=1 - p)])


def test_oracle_moments_equal_the_enumerated_message_under_a_cavity():
    fs = FeatureSet(ngram_features(2, 2), 2)
    cav = Theta(fs, np.random.default_rng(3).normal(size=len(fs)) * 0.5)
    msg = GrammarMessage(GrammarParameters(anbn()), AB, max_len=12)
    got = p_moments(msg, fs, cav)  # the engine's entry point dispatches to the oracle
    want = p_moments(exact_message(anbn(), AB, 12), fs, cav)
    np.testing.assert_allclose(got.expectations, want.expectations, rtol=1e-8, atol=1e-10)
    assert got.log_z == pytest.approx(want.log_z, abs=1e-8)
    # negative control: the cavity dropped (what a broken dispatch would do) differs
    plain = p_moments(msg, fs, None)
    assert np.abs(plain.expectations - want.expectations).max() > 1e-2


def test_sampled_moments_within_four_standard_errors_across_visits():
    g = right_linear(0.6, 0.5)
    fs = FeatureSet(ngram_features(2, 2), 2)
    exact_m = GrammarMessage(GrammarParameters(g), AB)
    msg = GrammarMessage(GrammarParameters(g), AB, "sample", n_samples=3000, seed=5)
    rng = np.random.default_rng(0)
    for visit in range(3):  # the pool persists and grows; each cavity re-weights it
        cav = Theta(fs, -np.abs(rng.normal(size=len(fs))) * 0.4)  # ≤ 1: never divergent
        want = exact_m.moments(fs, cav).expectations
        got = msg.moments(fs, cav).expectations
        z = np.abs(got - want) / np.maximum(msg.last_stderr, 1e-12)
        assert z.max() < 4, (visit, z)
    assert len(msg.pool) > 3000 * 2.5
    # negative control: ignoring the importance weights is many standard errors off
    cav = Theta(fs, np.where(np.arange(len(fs)) % 2 == 0, 0.0, -1.5))
    want = exact_m.moments(fs, cav).expectations
    unweighted = msg.moments(fs, None).expectations
    msg.moments(fs, cav)
    assert (np.abs(unweighted - want) / np.maximum(msg.last_stderr, 1e-12)).max() > 4


def evidence(params, words):
    obs = [weighted_strings([(tuple(AB.label(c) for c in w), 0.0)]) for w in words]
    fs = FeatureSet(ngram_features(1, 2), 2)
    return sum(pcfg_moments(params.grammar, AB, fs, o, params.theta).log_z for o in obs)


@pytest.mark.parametrize("estimator", ["em", pytest.param("vb", marks=pytest.mark.slow)])
def test_learning_rule_probabilities_in_the_graph_raises_the_evidence(estimator):
    """EM/VB with the E-step done by EP: four words that are mostly a's, the rule
    probabilities shared by the four grammar factors and learned from uniform."""
    words = ["aaab", "aa", "aaaa", "ab"]
    g0 = right_linear(0.5, 0.5)
    learned = GrammarParameters(g0, estimator, alpha=1.0)
    before = evidence(learned, words)
    infer(observed_words(words, learned, AB), "ep", order=2, max_iters=3, tol=0)
    assert learned.updates == 2  # once per iteration after the first, not per factor
    infer(observed_words(words, learned, AB), "ep", order=2, max_iters=1, tol=0)
    assert len(learned.counts) == len(words)  # a rebuilt graph (EM) replaces, not adds
    assert evidence(learned, words) > before + 1.0
    pa = learned.theta[0] / (learned.theta[0] + learned.theta[1])
    assert pa > 0.75  # 10 of the 12 letters are a's
    # negative control: fixed parameters do not move
    fixed = GrammarParameters(g0, "fixed")
    infer(observed_words(words[:2], fixed, AB), "ep", order=2, max_iters=2, tol=0)
    assert fixed.updates == 0 and evidence(fixed, words) == pytest.approx(before)


def test_bad_grammars_are_refused_naming_the_rule():
    g = FactorGraph(AB)
    g.add_variable("V")
    with pytest.raises(GrammarError, match=r"rule 1 .*'c'"):
        g.add_grammar("G", "V", Grammar([R("S", "a", w=0.5), R("S", "c", w=0.5)]))
    divergent = Grammar([R("S", "S", "S", w=0.6), R("S", "a", w=0.4)])
    with pytest.raises(GrammarError, match=r"rule 0 .*spectral radius 1.2"):
        g.add_grammar("G", "V", divergent)
    with pytest.raises(GraphError, match="expected a grammar"):
        g.add_grammar("G", "V", "S --> a")
    assert "G" not in g.factors


def test_bp_asks_for_a_length_bound_and_ep_needs_none():
    g = graph_with(anbn())
    with pytest.raises(GraphError, match="EP moments"):
        infer(g, "bp")
    res = infer(graph_with(anbn()), "pep", max_iters=3)
    assert res.belief("V").kbest(1)[0][0] == "ab"
