"""The sparse-LU unary closure (used above DENSE_UNARY_MAX unary nonterminals) against
the dense path (itself tested against brute-force enumeration in test_chart.py), and the block-wise spectral radius against numpy's
eigenvalues of the whole matrix; a closure solved without the transpose in the outside
pass (a plausible slip) is shown to change the expected counts (negative control)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import strgm.grammars.chart_ops as chart_ops
from tests.grammars.pcfg_oracles import R
from strgm.errors import GrammarError
from strgm.grammars.cfg import Grammar, compile_grammar
from strgm.grammars.chart import inside

UNARY_GRAMMAR = [R("S", "A", w=0.3), R("S", "S", "S", w=0.3), R("S", "a", w=0.4),
                 R("A", "S", w=0.5), R("A", "B", w=0.2), R("A", "b", w=0.3),
                 R("B", "A", w=0.4), R("B", "b", w=0.3), R("B", "A", "S", w=0.3),
                 R("S", "B", w=0.1)]


def _both(monkeypatch, g, sentences):
    """(dense chart, sparse-LU chart), outside passes done (they run lazily)."""
    theta = g.probabilities()
    dense = inside(compile_grammar(g), sentences, theta)
    assert dense.ops.lu is None
    monkeypatch.setattr(chart_ops, "DENSE_UNARY_MAX", 0)
    sparse = inside(compile_grammar(g), sentences, theta)
    assert sparse.ops.lu is not None
    dense.expected_counts(), sparse.expected_counts()
    return dense, sparse


def test_sparse_closure_equals_dense(monkeypatch):
    g = Grammar(UNARY_GRAMMAR)
    sents = [("a", "b"), ("b", "b"), ("b", "a")]
    dense, sparse = _both(monkeypatch, g, sents)
    np.testing.assert_allclose(sparse.logZ, dense.logZ, rtol=1e-12)
    np.testing.assert_allclose(sparse.expected_counts(), dense.expected_counts(),
                               rtol=1e-9, atol=1e-12)
    assert [t for t, _ in sparse.viterbi()] == [t for t, _ in dense.viterbi()]


def test_untransposed_outside_closure_is_caught(monkeypatch):
    g = Grammar(UNARY_GRAMMAR)
    sents = [("a", "b")]
    dense, _ = _both(monkeypatch, g, sents)
    monkeypatch.setattr(chart_ops._Operators, "close_out",
                        lambda self, val: self._close(val, trans=False))
    broken = inside(compile_grammar(g), sents, g.probabilities())
    assert not np.allclose(broken.expected_counts(), dense.expected_counts(),
                           rtol=1e-6, atol=1e-9)


def test_sparse_path_refuses_divergence(monkeypatch):
    monkeypatch.setattr(chart_ops, "DENSE_UNARY_MAX", 0)
    g = Grammar([R("S", "A"), R("S", "a"), R("A", "S", w=1.0), R("A", "b")])
    with pytest.raises(GrammarError, match="spectral radius"):
        inside(compile_grammar(g), [("a",)], g.weights)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 12), st.floats(0.05, 0.6), st.integers(0, 2 ** 31 - 1))
def test_blockwise_spectral_radius(n, density, seed):
    rng = np.random.default_rng(seed)
    dense = rng.random((n, n)) * (rng.random((n, n)) < density)
    got = chart_ops.unary_spectral_radius(sp.csr_matrix(dense))
    assert got == pytest.approx(float(np.max(np.abs(np.linalg.eigvals(dense)))),
                                rel=1e-7, abs=1e-9)
