"""Oracle tests for the inside–outside chart: brute-force enumeration, finite differences."""

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.grammars.pcfg_oracles import R, brute_force, enumerate_trees, tree_logweight
from strgm.errors import GrammarError, MessageTooLargeError
from strgm.grammars.cfg import Grammar, compile_grammar, tree_rules, tree_yield
from strgm.grammars.chart import corpus_inside_outside, inside

CANDIDATES = [
    R("S", "A", "B"), R("S", "B", "A"), R("S", "A"), R("S", "A", "B", "A"),
    R("S", "S", "A"), R("S", "a", "B"), R("S", "A", "b"),
    R("A", "a"), R("A", "b"), R("A", "A", "B"), R("A", "B"), R("A", "a", "b"),
    R("B", "b"), R("B", "a"), R("B", "B", "B"), R("B", "a", "a", "b"), R("B", "A", "A", "B"),
]


@st.composite
def grammars(draw):
    mask = draw(st.lists(st.booleans(), min_size=len(CANDIDATES), max_size=len(CANDIDATES)))
    rules = [r for r, m in zip(CANDIDATES, mask) if m]
    # always keep the lexical basics and one S rule so that many sentences parse
    for must in (CANDIDATES[0], CANDIDATES[7], CANDIDATES[12]):
        if must not in rules:
            rules.append(must)
    rules.sort(key=lambda r: r.lhs != "S")
    ws = draw(st.lists(st.floats(0.05, 2.0), min_size=len(rules), max_size=len(rules)))
    return Grammar([R(r.lhs, *r.rhs, w=w) for r, w in zip(rules, ws)])


sentences = st.lists(st.sampled_from("ab"), min_size=1, max_size=5).map(tuple)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars(), st.lists(sentences, min_size=1, max_size=3))
def test_partition_and_counts_equal_brute_force(g, sents):
    theta = g.probabilities()
    cg = compile_grammar(g)
    n = len(sents[0])
    sents = [s[:n] + ("a",) * (n - len(s)) for s in sents]  # equal length batch
    ch = inside(cg, sents, theta)
    lz = ch.log_partition()
    counts = ch.expected_counts(per_sentence=True)
    for b, s in enumerate(sents):
        bz, bc, trees, _ = brute_force(g, s, theta)
        if bz == -math.inf:
            assert lz[b] == -math.inf
            assert np.all(counts[b] == 0)
        else:
            assert lz[b] == pytest.approx(bz, rel=1e-9, abs=1e-9)
            np.testing.assert_allclose(counts[b], bc, rtol=1e-7, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(grammars(), sentences)
def test_viterbi_equals_best_enumerated_tree(g, s):
    theta = g.probabilities()
    bz, _, trees, lw = brute_force(g, s, theta)
    res = inside(compile_grammar(g), [s], theta).viterbi()[0]
    if not trees:
        assert res is None
        return
    tree, score = res
    assert score == pytest.approx(lw.max(), abs=1e-9)
    assert tree in trees
    assert tree_logweight(g, tree, theta) == pytest.approx(lw.max(), abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(grammars(), sentences)
def test_maxrule_returns_a_tree_of_the_sentence(g, s):
    theta = g.probabilities()
    trees = enumerate_trees(g, s)
    res = inside(compile_grammar(g), [s], theta).maxrule()[0]
    if not trees:
        assert res is None
    else:
        assert res[0] in trees
        assert tree_yield(res[0]) == s


def test_maxrule_prefers_high_posterior_rules():
    # Two parses of "a a": S -> A A (A -> a) vs S -> B B.  Brute force the max-rule-product
    g = Grammar([R("S", "A", "A", w=0.5), R("S", "B", "B", w=0.5), R("A", "a"),
                 R("B", "a", w=0.5), R("B", "b", w=0.5)])
    res = inside(compile_grammar(g), [("a", "a")]).maxrule()[0][0]
    assert res == ("S", ("A", "a"), ("A", "a"))


def test_finite_difference_gradient():
    g = Grammar([R("S", "A", "B"), R("S", "S", "A", w=0.3), R("S", "A", w=0.2),
                 R("A", "a"), R("A", "A", "B", w=0.4), R("A", "B", w=0.3), R("B", "b"),
                 R("B", "a", "b", w=0.5), R("B", "B", "a", "A", w=0.2)])
    cg = compile_grammar(g)
    s = tuple("abab")
    w = g.weights * 0.7
    counts = inside(cg, [s], w).expected_counts()
    eps = 1e-6
    for r in range(len(w)):
        up, dn = w.copy(), w.copy()
        up[r] *= math.exp(eps)
        dn[r] *= math.exp(-eps)
        fd = (inside(cg, [s], up).logZ[0] - inside(cg, [s], dn).logZ[0]) / (2 * eps)
        assert fd == pytest.approx(counts[r], rel=1e-5, abs=1e-8)


def test_unary_cycle_matches_truncated_enumeration():
    g = Grammar([R("S", "A", w=0.3), R("S", "S", "S", w=0.3), R("S", "a", w=0.4),
                 R("A", "S", w=0.5), R("A", "b", w=0.5)])
    theta = g.probabilities()
    s = ("a", "b")
    bz, bc, _, _ = brute_force(g, s, theta, max_depth=40)
    ch = inside(compile_grammar(g), [s], theta)
    assert ch.logZ[0] == pytest.approx(bz, rel=1e-6)
    np.testing.assert_allclose(ch.expected_counts(), bc, rtol=1e-5, atol=1e-8)


def test_divergent_unary_cycle_is_reported():
    g = Grammar([R("S", "A"), R("S", "a"), R("A", "S", w=1.0), R("A", "b")])
    with pytest.raises(GrammarError, match="spectral radius"):
        inside(compile_grammar(g), [("a",)], g.weights)


def _sampler_case():
    """A tiny ambiguous grammar, a sentence, its trees and their exact posterior."""
    g = Grammar([R("S", "S", "S", w=0.4), R("S", "A", w=0.2), R("S", "a", w=0.4),
                 R("A", "a", w=0.5), R("A", "a", "a", w=0.5)])
    theta = g.probabilities()
    s = tuple("aaa")
    _, _, trees, lw = brute_force(g, s, theta)
    p = np.exp(lw - lw.max())
    p /= p.sum()
    return g, theta, s, trees, p


def test_sampler_matches_exact_posterior():
    g, theta, s, trees, p = _sampler_case()
    rng = np.random.default_rng(0)
    draws = inside(compile_grammar(g), [s], theta).sample(rng, k=4000)[0]
    c = Counter(t for t, _ in draws)
    assert set(c) <= set(trees)
    emp = np.array([c[t] for t in trees]) / len(draws)
    # chi-square with len(trees)-1 dof; 99.99% quantile is generous
    chi2 = ((emp - p) ** 2 / p).sum() * len(draws)
    assert chi2 < 40, (chi2, len(trees))
    for t, rl in draws[:50]:
        assert rl == tree_rules(g, t)


def test_sampler_detects_wrong_distribution():
    """The same chi-square statistic rejects a sampler run with the wrong θ."""
    g, theta, s, trees, p = _sampler_case()
    wrong = theta.copy()
    wrong[3], wrong[4] = 0.8, 0.2
    draws = inside(compile_grammar(g), [s], wrong).sample(np.random.default_rng(0), k=4000)[0]
    c = Counter(t for t, _ in draws)
    emp = np.array([c[t] for t in trees]) / len(draws)
    assert ((emp - p) ** 2 / p).sum() * len(draws) > 40


def test_unparsable_sentences_are_reported_not_raised():
    g = Grammar([R("S", "A", "A"), R("A", "a")])
    res = corpus_inside_outside(compile_grammar(g), [("a", "a"), ("a",), ("a", "zzz"), ("a", "a")])
    assert res.unparsable == [1, 2]
    assert res.logZ[0] == pytest.approx(0.0)
    np.testing.assert_allclose(res.counts, [2, 4])
    assert inside(compile_grammar(g), [("a",)]).viterbi() == [None]


def test_long_sentence_underflow_is_handled():
    g = Grammar([R("S", "S", "S", w=0.5), R("S", "a", w=0.001), R("S", "b", w=0.499)])
    s = tuple("ab" * 150)
    ch = inside(compile_grammar(g), [s])
    n = len(s)  # Z = Catalan(n-1) 0.5^(n-1) 0.001^150 0.499^150, far below float64's range
    exact = (math.lgamma(2 * n - 1) - math.lgamma(n) - math.lgamma(n + 1)
             + (n - 1) * math.log(0.5) + 150 * math.log(0.001) + 150 * math.log(0.499))
    assert exact < -745
    assert ch.logZ[0] == pytest.approx(exact, rel=1e-10)
    c = ch.expected_counts()
    assert c[0] == pytest.approx(len(s) - 1) and c[1] + c[2] == pytest.approx(len(s))


def test_memory_guard():
    g = Grammar([R("S", "S", "S"), R("S", "a")])
    with pytest.raises(MessageTooLargeError, match="max_chart_bytes"):
        inside(compile_grammar(g), [tuple("a" * 50)], max_chart_bytes=1000)


def test_chunked_temporaries_agree():
    g = Grammar([R("S", "S", "S", w=0.5), R("S", "A", "S", w=0.2), R("S", "a", w=0.3),
                 R("A", "a")])
    cg = compile_grammar(g)
    s = [tuple("aaaaaaa"), tuple("aaaaaaa")]
    a = inside(cg, s)
    b = inside(cg, s, max_temp_bytes=1)
    np.testing.assert_allclose(a.logZ, b.logZ)
    np.testing.assert_allclose(a.expected_counts(), b.expected_counts())


def test_batched_equals_single():
    g = Grammar([R("S", "A", "B"), R("S", "S", "B"), R("A", "a"), R("A", "b"),
                 R("B", "b"), R("B", "a", "a")])
    cg = compile_grammar(g)
    sents = [tuple("abb"), tuple("aab"), tuple("bbb"), tuple("baa")]
    batch = inside(cg, sents)
    cb = batch.expected_counts(per_sentence=True)
    for i, s in enumerate(sents):
        one = inside(cg, [s])
        assert one.logZ[0] == pytest.approx(batch.logZ[i])
        np.testing.assert_allclose(one.expected_counts(), cb[i], atol=1e-12)
