"""The component-by-component solve of the intersection grammar's inside and outside
systems (strgm/grammars/scc_solve.py) against the reference Kleene / Neumann iteration
over all nonterminals (factor_moments' ``solver="kleene"``): the syllable grammar (a
linear tail-recursive component, direct solve), a self-embedding grammar (a linear
component with left and right products: Kronecker solve), a genuinely nonlinear grammar
(S → S S: iterated component), and unary cycles (stacked solve), on random small product
automata; plus negative controls (a wrong component order, a dropped term) and the
divergence of a supercritical linear component."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R
from strgm.errors import DivergenceError
from strgm.features import FeatureSet, Theta, encode, ngram_features
from strgm.grammars import scc_solve
from strgm.grammars.cfg import Grammar, compile_grammar
from strgm.grammars.factor_moments import (_inside_matrices, _outside_matrices,
                                           pcfg_moments)
from strgm.models.grammar_prior import syllable_grammar

SEGS = ["p", "t", "a", "i"]
SYL_LABELS = {s: i + 1 for i, s in enumerate(SEGS)}
AB = {"a": 1, "b": 2}


def self_embedding():
    """S → a S b | a b | a: linear in S, with S between two known factors."""
    return Grammar([R("S", "a", "S", "b", w=0.3), R("S", "a", "b", w=0.4),
                    R("S", "a", w=0.3)])


def nonlinear():
    """S → S S | a | b: two members of the component on one right-hand side."""
    return Grammar([R("S", "S", "S", w=0.25), R("S", "a", w=0.45), R("S", "b", w=0.3)])


def unary_chains():
    """A unary cycle S → A → B → S inside a component with binary tails."""
    return Grammar([R("S", "A", w=0.3), R("S", "B", "b", w=0.4), R("S", "a", w=0.3),
                    R("A", "B", w=0.5), R("A", "a", "b", w=0.5),
                    R("B", "S", w=0.4), R("B", "b", w=0.6)])


CASES = [(syllable_grammar(SEGS), SYL_LABELS), (self_embedding(), AB), (nonlinear(), AB),
         (unary_chains(), AB)]


def message(n_labels, order, seed, scale=0.4):
    fs = FeatureSet(ngram_features(order, n_labels), n_labels)
    return fs, encode(Theta(fs, np.random.default_rng(seed).normal(size=len(fs)) * scale))


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scc_moments_equal_kleene_reference(case, seed):
    g, labels = CASES[case]
    fs, mu = message(len(labels), 2, seed)
    ref = pcfg_moments(g, labels, fs, mu, solver="kleene")
    got = pcfg_moments(g, labels, fs, mu)
    assert got.log_z == pytest.approx(ref.log_z, abs=1e-10)
    np.testing.assert_allclose(got.expectations, ref.expectations, atol=1e-10)
    np.testing.assert_allclose(got.rule_counts, ref.rule_counts, atol=1e-10)
    assert np.abs(got.rule_counts).max() > 1e-2  # the counts compared are not all 0


def random_system(g, K=6, seed=0, scale=0.35):
    """Compiled grammar, event weights and lexical terms L_X on random non-negative K×K
    label matrices (a random product automaton), and the outside seed."""
    rng = np.random.default_rng(seed)
    cg = compile_grammar(g)
    w = cg.event_weights(g.probabilities())
    mats = {t: rng.uniform(0, scale, (K, K)) * (rng.uniform(size=(K, K)) < 0.6)
            for t in g.terminals}
    base = np.zeros((cg.n_nts, K, K))
    for e, rhs in enumerate(cg.lex_rhs):
        p = np.eye(K)
        for t in rhs:
            p = p @ mats[t]
        base[cg.lex_parent[e]] += w[2][e] * p
    G = np.zeros_like(base)
    G[cg.start, 0, :] = rng.uniform(0.5, 1.0, K)
    return cg, w, base, G


def solve_both(g, seed, comps=None):
    cg, w, base, G = random_system(g, seed=seed)
    comps = scc_solve.components(cg) if comps is None else comps(cg)
    Zr, _ = _inside_matrices(cg, w, base, 20000, 1e-14)
    Or, _ = _outside_matrices(cg, w, Zr, G, 20000, 1e-14)
    Z, n_in = scc_solve.scc_inside(cg, w, base, comps, 20000, 1e-14)
    O, n_out = scc_solve.scc_outside(cg, w, Z, G, comps, 20000, 1e-14)
    return (Z, O, n_in, n_out), (Zr, Or), len(comps)


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", [3, 4])
def test_scc_matrices_equal_kleene_on_random_automata(case, seed):
    (Z, O, n_in, n_out), (Zr, Or), n_comp = solve_both(CASES[case][0], seed)
    assert Zr.max() > 1e-3 and Or.max() > 1e-3
    np.testing.assert_allclose(Z, Zr, atol=1e-10 * Zr.max(), rtol=0)
    np.testing.assert_allclose(O, Or, atol=1e-10 * Or.max(), rtol=0)
    if CASES[case][0] is not CASES[2][0]:  # all but S → S S are solved without iterating
        assert n_in == n_out == n_comp


def test_syllable_grammar_components():
    """Word → Piece Word | Piece is the only recursive component; the rest are acyclic."""
    cg = compile_grammar(syllable_grammar(SEGS))
    comps = scc_solve.components(cg)
    assert [len(c) for c in comps] == [1] * cg.n_nts
    order = [cg.nts[c[0]] for c in comps]
    assert order[-1] == "Word" and order.index("C") < order.index("Ons") < order.index("Syl")


def test_negative_control_wrong_order():
    """Parents before children: Z of a parent is built from children still at 0."""
    (Z, O, *_), (Zr, Or), _ = solve_both(
        syllable_grammar(SEGS), 3, comps=lambda cg: scc_solve.components(cg)[::-1])
    assert np.abs(Z - Zr).max() > 1e-3 * Zr.max()


@pytest.mark.parametrize("case", [0, 1, 3])
def test_negative_control_dropped_term(case, monkeypatch):
    """A linear component's system missing one term solves to something else."""
    real = scc_solve._inside_terms

    def drop_last(*a):
        t = real(*a)
        return t[:-1] if t else t
    monkeypatch.setattr(scc_solve, "_inside_terms", drop_last)
    (Z, *_), (Zr, _), _ = solve_both(CASES[case][0], 3)
    assert np.abs(Z - Zr).max() > 1e-6 * Zr.max()


def test_supercritical_linear_component_diverges():
    """S → a S | a, μ(v) = x^{#a}: Z = Σ_n (0.6x)ⁿ 0.4x = ∞ for 0.6x ≥ 1; finite below,
    Z = 0.4x / (1 − 0.6x), from the direct solve (no iteration)."""
    g = Grammar([R("S", "a", "S", w=0.6), R("S", "a", w=0.4)])
    fs = FeatureSet(ngram_features(1, 2), 2)
    for x, finite in ((1.5, True), (1.8, False), (3.0, False)):
        th = Theta.from_dict({(1,): math.log(x)}, 2).align(fs)
        if finite:
            m = pcfg_moments(g, AB, fs, encode(th))
            assert m.log_z == pytest.approx(math.log(0.4 * x / (1 - 0.6 * x)), abs=1e-10)
            assert m.iterations == (len(scc_solve.components(compile_grammar(g))),) * 2
        else:
            with pytest.raises(DivergenceError):
                pcfg_moments(g, AB, fs, encode(th))
            with pytest.raises(DivergenceError):
                pcfg_moments(g, AB, fs, encode(th), solver="kleene", max_iters=2000)


@pytest.mark.parametrize("case,limit", [(0, "BLOCK_MAX"), (1, "KRON_MAX"), (3, "BLOCK_MAX")])
def test_components_too_large_for_a_direct_solve_are_iterated(case, limit, monkeypatch):
    """Above the size guard a linear component falls back to its own fixed point."""
    monkeypatch.setattr(scc_solve, limit, 1)
    (Z, O, n_in, n_out), (Zr, Or), n_comp = solve_both(CASES[case][0], 4)
    assert n_in > n_comp and n_out > n_comp  # iterated, not solved
    np.testing.assert_allclose(Z, Zr, atol=1e-10 * Zr.max(), rtol=0)
    np.testing.assert_allclose(O, Or, atol=1e-10 * Or.max(), rtol=0)
