"""Exact EP moments of the PCFG factor on the Bar-Hillel intersection grammar.

Exact moments (:func:`pcfg_moments`) — the Bar-Hillel intersection grammar
--------------------------------------------------------------------------
M = μ × D (× a length counter) is the product automaton of
:mod:`strgm.grammars.factor_product`: states k, one K×K matrix M_a per label, final
weights φ, and the feature-DFA context h(k) of every state.

The intersection grammar has nonterminals (k, X, k') ("X derives a substring read by M
from k to k'") and rules (k,X,k'') → (k,B,k')(k',C,k''), (k,X,k') → (k,B,k'),
(k,X,k') → t_1…t_m (weight θ_r · (M_{t_1}…M_{t_m})[k, k']). Its inside values form one
K×K matrix Z_X per (compiled) nonterminal X and are the least solution of

    Z_X = Σ_{X→t_1..t_m} θ_r M_{t_1}⋯M_{t_m} + Σ_{X→B} θ_r Z_B + Σ_{X→B C} θ_r Z_B Z_C,

solved strongly connected component by component of the nonterminals' dependency graph
(:mod:`strgm.grammars.scc_solve`: a non-recursive nonterminal is one evaluation, a
linear recursive component such as Word → Piece Word | Piece one direct linear solve,
only a nonlinear one such as S → S S is iterated), and

    Z = e_sᵀ Z_S φ.

The outside matrices O_X = ∂Z / ∂Z_X solve the linear fixed point

    O_S ∋ e_s φᵀ,   O_B += θ_r O_X Z_Cᵀ,   O_C += θ_r Z_Bᵀ O_X   (X → B C),
    O_B += θ_r O_X                                                  (X → B),

(the same components, parents first, each a direct linear solve where it fits, else the
Neumann series of the Jacobian, whose spectral radius is < 1 when Z is finite and the
system is subcritical). ``solver="kleene"`` keeps the reference: Kleene iteration of the
inside system from Z = 0 over all nonterminals at once (monotone convergence to the least
solution; exact after finitely many steps for a finite language or with ``max_len``) and
the Neumann iteration of the outside. The expected count of the intersected
lexical rule (k, X, k') → t_1…t_m at position i, arc k_1 →t_i→ k_2, is

    θ_r · M_{t_i}[k_1, k_2] · (P_iᵀ O_X S_iᵀ)[k_1, k_2] / Z,
    P_i = M_{t_1}⋯M_{t_{i−1}},  S_i = M_{t_{i+1}}⋯M_{t_m}

(∂ tr(O_Xᵀ P M S) / ∂M = Pᵀ O Sᵀ), and the expected count of stopping in k is
(e_sᵀ Z_S)_k φ_k / Z. Summing these per DFA arc (h(k_1), t_i) and (h(k), EOS) gives the
expected DFA arc counts c(h, a); E_p[f_w] follows by accumulating c up D's failure tree
(:meth:`~strgm.features.dfa.FeatureDFA.accumulate`), as for WFSAs in
:func:`strgm.features.moments.p_moments`: f_w counts n-grams, and every occurrence of w
ends on exactly one DFA arc whose feature chain contains w. Expected user-rule counts of
the intersection come out of the same pass (``rule_counts``).

The ordinary span charts (:mod:`strgm.grammars.chart`) need a fixed string; here the
string is summed over, so the "chart" is indexed by automaton states instead of spans.
Cost O(R_bin K³ + R_un K²) per sweep, plus O((n K)³) per direct solve of an n-member
component; memory O(N_X K²). Meant for small K (a few
hundred product states): μ of small order and a small feature set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pynini

from strgm.errors import InconsistentEvidenceError, InputError
from strgm.features.moments import Moments
from strgm.features.theta import FeatureSet
from strgm.grammars.cfg import CompiledGrammar, Grammar, compile_grammar
from strgm.grammars.factor_product import product_automaton, terminal_labels
from strgm.grammars.scc_solve import components, fixed_point, scc_inside, scc_outside
from strgm.validate import check_choice

__all__ = ["GrammarMoments", "pcfg_moments", "MAX_ITERS", "TOL", "SOLVERS"]

#: default Kleene/Neumann iteration cap and tolerance
MAX_ITERS = 20000
TOL = 1e-14
#: ``solver`` of :func:`pcfg_moments`
SOLVERS = ("scc", "kleene")


def _event_weights(cg: CompiledGrammar, theta):
    return cg.event_weights(np.asarray(theta, dtype=float))


def _lexical_products(cg: CompiledGrammar, term_label: dict, mats: np.ndarray):
    """Per lexical event: list of label indices and the product M_{t1}…M_{tm}."""
    K = mats.shape[1]
    labs, prods = [], []
    for rhs in cg.lex_rhs:
        ls = [term_label[t] - 1 for t in rhs]
        p = np.eye(K)
        for a in ls:
            p = p @ mats[a]
        labs.append(ls)
        prods.append(p)
    return labs, np.array(prods).reshape(len(prods), K, K)


@dataclass(frozen=True)
class GrammarMoments(Moments):
    """:class:`~strgm.features.moments.Moments` plus expected user-rule counts under p and
    the sweeps (inside, outside): with ``solver="scc"`` the sum over the dependency
    graph's SCCs of 1 per direct evaluation or direct linear solve and of the iterations
    of every SCC that had to be iterated (:mod:`strgm.grammars.scc_solve`), so N_SCC when
    no SCC was iterated; with ``"kleene"`` the iterations over all nonterminals."""

    rule_counts: np.ndarray = field(default=None)
    iterations: tuple = (0, 0)


def pcfg_moments(grammar: Grammar, labels, features: FeatureSet,
                 mu: Optional[pynini.Fst] = None, theta=None, *, max_len: Optional[int] = None,
                 max_states: int = 4000, max_iters: int = MAX_ITERS, tol: float = TOL,
                 solver: str = "scc") -> GrammarMoments:
    """Exact E_p[f_w] (w ∈ ``features``) and log Z for p ∝ P_G ⊙ μ (module docstring).

    ``theta``: rule weights (default the grammar's normalised probabilities); ``mu``: a
    log64 acceptor over labels 1..N (None = 1); ``max_len``: restrict to |v| ≤ max_len;
    ``solver``: "scc" (component by component, :mod:`strgm.grammars.scc_solve`) or
    "kleene" (the reference: Kleene / Neumann iteration over all nonterminals at once).
    Raises :class:`~strgm.errors.DivergenceError` when Z = ∞ (or the iteration does not converge),
    :class:`InconsistentEvidenceError` when Z = 0.
    """
    check_choice("solver", solver, SOLVERS)
    if theta is None:
        theta = grammar.probabilities()
    term_label = terminal_labels(grammar, labels)
    if any(a > features.num_labels for a in term_label.values()):
        raise InputError(f"a terminal's label exceeds N = {features.num_labels}")
    cg = compile_grammar(grammar)
    pa = product_automaton(mu, features, max_len=max_len, max_states=max_states)
    w = _event_weights(cg, theta)
    labs, lexprod = _lexical_products(cg, term_label, pa.mats)
    base = _lexical_base(cg, w, lexprod, pa.K)
    comps = components(cg) if solver == "scc" else None
    if comps is None:
        Z, it_in = _inside_matrices(cg, w, base, max_iters, tol)
    else:
        Z, it_in = scc_inside(cg, w, base, comps, max_iters, tol)
    zrow = Z[cg.start][pa.start]  # e_sᵀ Z_S
    total = float(zrow @ pa.final)
    if not total > 0:
        raise InconsistentEvidenceError("PCFG factor: P_G ⊙ μ gives every string weight 0")
    G = np.zeros(Z.shape)
    G[cg.start, pa.start, :] = pa.final
    if comps is None:
        O, it_out = _outside_matrices(cg, w, Z, G, max_iters, tol)
    else:
        O, it_out = scc_outside(cg, w, Z, G, comps, max_iters, tol)
    counts = _arc_counts(cg, w[2], pa, labs, O, zrow, total, features)
    rc = _rule_counts(cg, w, Z, O, lexprod, total, len(grammar.rules))
    return GrammarMoments(features, float(np.log(total)), features.dfa.accumulate(counts),
                          counts, rule_counts=rc, iterations=(it_in, it_out))


def _lexical_base(cg, w, lexprod, K: int) -> np.ndarray:
    """L_X = Σ_{X→t_1..t_m} θ_r M_{t_1}⋯M_{t_m}, (N_X, K, K)."""
    base = np.zeros((cg.n_nts, K, K))
    np.add.at(base, cg.lex_parent, w[2][:, None, None] * lexprod)
    return base


def _inside_matrices(cg, w, base, max_iters: int, tol: float):
    """Reference: Kleene iteration of Z_X = L_X + Σ_{X→B} θ_r Z_B + Σ_{X→BC} θ_r Z_B Z_C
    over all nonterminals at once, from Z = L."""
    wb, wu, _ = w

    def inside_step(Z):
        Y = base.copy()
        if len(cg.un_parent):
            np.add.at(Y, cg.un_parent, wu[:, None, None] * Z[cg.un_child])
        if len(cg.bin_parent):
            np.add.at(Y, cg.bin_parent,
                      wb[:, None, None] * np.matmul(Z[cg.bin_left], Z[cg.bin_right]))
        return Y
    return fixed_point(inside_step, base.copy(), "the intersection grammar's inside "
                       "fixed point", max_iters, tol)


def _outside_matrices(cg, w, Z, G, max_iters: int, tol: float):
    """Reference: O_X = ∂Z/∂Z_X by Neumann iteration of the linear fixed point seeded by
    G (O_S ∋ e_s φᵀ), over all nonterminals at once."""
    wb, wu, _ = w

    def outside_step(O):
        Y = G.copy()
        if len(cg.un_parent):
            np.add.at(Y, cg.un_child, wu[:, None, None] * O[cg.un_parent])
        if len(cg.bin_parent):
            Op = O[cg.bin_parent] * wb[:, None, None]
            np.add.at(Y, cg.bin_left, np.matmul(Op, np.swapaxes(Z[cg.bin_right], 1, 2)))
            np.add.at(Y, cg.bin_right, np.matmul(np.swapaxes(Z[cg.bin_left], 1, 2), Op))
        return Y
    return fixed_point(outside_step, G.copy(), "the intersection grammar's outside "
                       "fixed point", max_iters, tol)


def _arc_counts(cg, wl, pa, labs, O, zrow, total, features):
    """Expected DFA arc counts c(h, a) (a = N + 1: EOS) from the lexical positions
    θ_r M_{t_i}[k₁,k₂] (P_iᵀ O_X S_iᵀ)[k₁,k₂] / Z and the stops (e_sᵀ Z_S)_k φ_k / Z."""
    mats, K, n = pa.mats, pa.K, features.num_labels
    counts = np.zeros((features.dfa.num_states, n + 1))
    np.add.at(counts[:, n], pa.dfa_state, zrow * pa.final / total)
    for e, ls in enumerate(labs):
        if wl[e] == 0:
            continue
        Ox = O[cg.lex_parent[e]]
        pre = np.eye(K)
        suf = [np.eye(K)]
        for a in reversed(ls[1:]):
            suf.append(mats[a] @ suf[-1])
        suf = suf[::-1]  # suf[i] = M_{t_{i+1}}…M_{t_m}
        for i, a in enumerate(ls):
            c = wl[e] * mats[a] * (pre.T @ Ox @ suf[i].T) / total
            np.add.at(counts[:, a], pa.dfa_state, c.sum(axis=1))
            pre = pre @ mats[a]
    return counts


def _rule_counts(cg, w, Z, O, lexprod, total, n_rules: int) -> np.ndarray:
    """Expected user-rule counts of the intersection: θ_r ⟨O_X, (rule's inside)⟩ / Z."""
    wb, wu, wl = w
    rc = np.zeros(n_rules)
    lexc = wl * np.einsum("eij,eij->e", O[cg.lex_parent], lexprod) / total
    parts = [(cg.lex_rule, lexc)]
    if len(cg.un_parent):
        parts.append((cg.un_rule, wu * np.einsum("eij,eij->e", O[cg.un_parent],
                                                 Z[cg.un_child]) / total))
    if len(cg.bin_parent):
        parts.append((cg.bin_rule, wb * np.einsum(
            "eij,eij->e", O[cg.bin_parent], np.matmul(Z[cg.bin_left], Z[cg.bin_right])) / total))
    for rule, val in parts:
        m = rule >= 0
        np.add.at(rc, rule[m], val[m])
    return rc
