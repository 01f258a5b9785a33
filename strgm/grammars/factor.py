"""A PCFG factor on one string variable: EP moments of n-gram features under PCFG ⊙ μ.

Setting (issue 5, item 6). A PCFG G with rule probabilities θ_G defines P_G(v) = Σ_{t:
yield(t)=v} Π_{r∈t} θ_r over strings v of its terminals; the terminals are labels 1..N of a
string variable V (a mapping ``labels`` terminal → label, e.g. an
:class:`~strgm.alphabet.Alphabet`). The factor F(v) = P_G(v) joins G to the factor graph.
Given the incoming message μ = μ_{V→F} (any log64 acceptor, e.g. ENCODE(θ_{V→F})), EP needs
the moments of the substring features f_w (w over Σ ∪ {BOS, EOS}, see
:mod:`strgm.features.symbols`) under

    p(v) = P_G(v) · μ(v) / Z,        Z = Σ_v P_G(v) μ(v),

i.e. E_p[f_w] for w in a :class:`~strgm.features.theta.FeatureSet` W (EP then projects them
onto θ with :mod:`strgm.projection`, exactly as for a WFSA p̂_V).

Exact moments (:func:`pcfg_moments`) — the Bar-Hillel intersection grammar
--------------------------------------------------------------------------
Let D be the feature DFA of W (states = contexts h ∈ C, ``goto``) and M = μ × D (× a length
counter 0..L when ``max_len`` = L is given): an ε-free weighted automaton with states
k = (q, h[, ℓ]), one K×K matrix M_a per label a (M_a[k, k'] = μ's arc weight when
k →a→ k') and final weights φ_k = μ_final(q) (the counter allows ℓ ≤ L only). M gives every
string the weight μ(v) (D is deterministic and complete and carries weight 1) and
remembers D's state, so the DFA arc taken at each position is known.

The intersection grammar has nonterminals (k, X, k') ("X derives a substring read by M
from k to k'") and rules (k,X,k'') → (k,B,k')(k',C,k''), (k,X,k') → (k,B,k'),
(k,X,k') → t_1…t_m (weight θ_r · (M_{t_1}…M_{t_m})[k, k']). Its inside values form one
K×K matrix Z_X per (compiled) nonterminal X and are the least solution of

    Z_X = Σ_{X→t_1..t_m} θ_r M_{t_1}⋯M_{t_m} + Σ_{X→B} θ_r Z_B + Σ_{X→B C} θ_r Z_B Z_C,

computed by Kleene (fixed-point) iteration from Z = 0 (monotone convergence to the least
solution; exact after finitely many steps for a finite language or with ``max_len``), and

    Z = e_sᵀ Z_S φ.

The outside matrices O_X = ∂Z / ∂Z_X solve the linear fixed point

    O_S ∋ e_s φᵀ,   O_B += θ_r O_X Z_Cᵀ,   O_C += θ_r Z_Bᵀ O_X   (X → B C),
    O_B += θ_r O_X                                                  (X → B),

(iterated to convergence: the Neumann series of the Jacobian, whose spectral radius is < 1
when Z is finite and the system is subcritical). The expected count of the intersected
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
Cost per iteration O(R_bin K³ + R_un K²); memory O(N_X K²). Meant for small K (a few
hundred product states): μ of small order and a small feature set.

Sampling estimate (:func:`sampled_moments`)
-------------------------------------------
Self-normalised importance sampling with the PCFG as proposal: v_i ~ P_G (top-down
generation), weights w_i = μ(v_i), Ê[f] = Σ w_i f(v_i) / Σ w_i, and the delta-method standard
error se = sqrt(Σ w_i² (f(v_i) − Ê)²) / Σ w_i; Ẑ = mean(w_i) estimates Z/Z_G. Strings longer
than ``max_len`` are discarded (counted in ``n_truncated``; the estimate then refers to
p restricted to |v| ≤ max_len, exactly what :func:`pcfg_moments` computes with the same
``max_len``).

BP messages
-----------
μ_{F→V}(v) = P_G(v) is not finite-state in general (a context-free language, e.g. aⁿbⁿ), so
the factor's natural interface is EP: :meth:`PCFGFactor.moments`. For a finite language or
with a length bound L, :meth:`PCFGFactor.message_to` returns the exact WFSA of
{v : |v| ≤ L} ↦ P_G(v), built by enumerating every string over the grammar's terminals up
to length L and scoring them with the chart code (guarded by ``max_strings``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Optional

import numpy as np
import pynini

from strgm.errors import (DivergenceError, GraphError, InconsistentEvidenceError, InputError,
                          MessageTooLargeError, UnknownSymbolError)
from strgm.factors import Factor
from strgm.features.moments import Moments
from strgm.features.theta import FeatureSet, Theta
from strgm.grammars.cfg import CompiledGrammar, Grammar, compile_grammar
from strgm.wfsa import guard
from strgm.wfsa.core import arc_table, intersect
from strgm.wfsa.measure import score_strings

__all__ = ["PCFGFactor", "pcfg_moments", "sampled_moments", "SampledMoments",
           "ProductAutomaton", "product_automaton", "sample_strings", "string_features",
           "exact_message", "terminal_labels"]

#: default Kleene/Neumann iteration cap and tolerance
MAX_ITERS = 20000
TOL = 1e-14


def terminal_labels(grammar: Grammar, labels) -> dict:
    """terminal → label for every terminal of ``grammar``; ``labels`` is a mapping or an
    object with ``label(sym)`` (an :class:`~strgm.alphabet.Alphabet`)."""
    out = {}
    for t in grammar.terminals:
        if isinstance(labels, Mapping):
            if t not in labels:
                raise UnknownSymbolError(t, "the PCFG factor's terminal alphabet")
            out[t] = int(labels[t])
        else:
            out[t] = int(labels.label(t, "the PCFG factor's terminal alphabet"))
    return out


# ---------------------------------------------------------------------------------------
# the product automaton M = μ × D (× length counter)
# ---------------------------------------------------------------------------------------
@dataclass
class ProductAutomaton:
    """Dense view of M = μ × feature DFA (× length counter); see the module docstring.

    ``mats`` (N, K, K) linear weights M_a; ``final`` (K,) φ; ``start``; ``dfa_state`` (K,)
    the feature-DFA context h of each state.
    """

    mats: np.ndarray
    final: np.ndarray
    start: int
    dfa_state: np.ndarray
    num_labels: int

    @property
    def K(self) -> int:
        return self.final.shape[0]


def _mu_arrays(mu: pynini.Fst, n: int):
    f = mu
    t = arc_table(f)
    if t.num_arcs and (t.olabel == 0).any():
        f = guard.rmepsilon(pynini.project(mu.copy(), "output"),
                            "ε-removal of a message to a PCFG factor", delta=1e-6)
        t = arc_table(f)
    if t.start < 0:
        raise InconsistentEvidenceError("the incoming message accepts no string")
    if t.num_arcs and (t.olabel.min() < 1 or t.olabel.max() > n):
        raise InputError(f"message has labels outside 1..{n}")
    return t


def product_automaton(mu: Optional[pynini.Fst], features: FeatureSet,
                      max_len: Optional[int] = None, max_states: int = 4000
                      ) -> ProductAutomaton:
    """Reachable part of μ × D(features) (× {0..max_len}); μ = None means weight 1 on Σ*.

    Breadth-first over product states, vectorised per frontier. Raises
    :class:`MessageTooLargeError` beyond ``max_states`` states (dense K×K matrices).
    """
    n = features.num_labels
    dfa = features.dfa
    if mu is None:
        src = np.zeros(n, dtype=np.int64)
        dst = np.zeros(n, dtype=np.int64)
        lab = np.arange(1, n + 1)
        wt = np.ones(n)
        mstart, mfinal = 0, np.ones(1)
    else:
        t = _mu_arrays(mu, n)
        src, dst, lab = t.src, t.dst, t.olabel
        wt = np.exp(-t.weight)
        mstart = t.start
        mfinal = np.exp(-t.final)
    nq = int(max(src.max(initial=0), dst.max(initial=0), mstart, len(mfinal) - 1)) + 1
    nh = dfa.num_states
    L = -1 if max_len is None else int(max_len)
    nl = 1 if L < 0 else L + 1
    order = np.argsort(src, kind="stable")
    src, dst, lab, wt = src[order], dst[order], lab[order], wt[order]
    first = np.searchsorted(src, np.arange(nq + 1))

    def key(q, h, l):
        return (q * nh + h) * nl + l
    index: dict = {}
    states = []
    s0 = key(mstart, dfa.start, 0)
    index[s0] = 0
    states.append((mstart, dfa.start, 0))
    frontier = np.array([[mstart, dfa.start, 0]], dtype=np.int64)
    e_src, e_dst, e_lab, e_w = [], [], [], []
    while len(frontier):
        q, h, l = frontier[:, 0], frontier[:, 1], frontier[:, 2]
        cnt = first[q + 1] - first[q]
        rep = np.repeat(np.arange(len(frontier)), cnt)
        arcs = np.repeat(first[q], cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        q2 = dst[arcs]
        a = lab[arcs]
        h2 = dfa.goto[h[rep], a - 1]
        l2 = l[rep] + (1 if L >= 0 else 0)
        ok = (l2 <= L) if L >= 0 else np.ones(len(arcs), dtype=bool)
        rep, arcs, q2, a, h2, l2 = rep[ok], arcs[ok], q2[ok], a[ok], h2[ok], l2[ok]
        keys = key(q2, h2, l2)
        new = []
        ids = np.empty(len(keys), dtype=np.int64)
        for j, kk in enumerate(keys.tolist()):
            i = index.get(kk)
            if i is None:
                i = index[kk] = len(states)
                states.append((int(q2[j]), int(h2[j]), int(l2[j])))
                new.append(states[-1])
            ids[j] = i
        if len(states) > max_states:
            raise MessageTooLargeError(
                f"PCFG factor: the product of the message and the feature DFA has more than "
                f"{max_states} states; use sampled_moments or a smaller feature set")
        srcid = np.array([index[kk] for kk in key(q[rep], h[rep], l[rep]).tolist()],
                         dtype=np.int64)
        e_src.append(srcid)
        e_dst.append(ids)
        e_lab.append(a)
        e_w.append(wt[arcs])
        frontier = np.array(new, dtype=np.int64).reshape(-1, 3)
    K = len(states)
    st = np.array(states, dtype=np.int64)
    mats = np.zeros((n, K, K))
    if e_src:
        es, ed, el, ew = (np.concatenate(x) for x in (e_src, e_dst, e_lab, e_w))
        np.add.at(mats, (el - 1, es, ed), ew)
    final = mfinal[st[:, 0]]
    final = np.where(np.isfinite(final), final, 0.0)
    if not (np.all(np.isfinite(mats)) and np.all(np.isfinite(final))):
        raise DivergenceError("PCFG factor: message weights overflow (exp of a huge θ)")
    return ProductAutomaton(mats, final, 0, st[:, 1].copy(), n)


# ---------------------------------------------------------------------------------------
# exact moments on the intersection grammar
# ---------------------------------------------------------------------------------------
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


def _fixed_point(step, x0, what: str, max_iters: int, tol: float):
    x = x0
    for it in range(max_iters):
        with np.errstate(over="ignore", invalid="ignore"):
            y = step(x)
        if not np.all(np.isfinite(y)) or y.max(initial=0.0) > 1e250:
            raise DivergenceError(f"PCFG factor: {what} diverges (P_G ⊙ μ has infinite "
                                  "total weight); give a length bound (max_len)")
        d = np.abs(y - x).max(initial=0.0)
        x = y
        if d <= tol * max(1.0, np.abs(y).max(initial=0.0)):
            return x, it + 1
    raise DivergenceError(f"PCFG factor: {what} did not converge in {max_iters} iterations "
                          "(critical or supercritical grammar ⊙ message); give a length "
                          "bound (max_len)")


@dataclass(frozen=True)
class GrammarMoments(Moments):
    """:class:`~strgm.features.moments.Moments` plus expected user-rule counts under p and
    the number of fixed-point iterations (inside, outside)."""

    rule_counts: np.ndarray = field(default=None)
    iterations: tuple = (0, 0)


def pcfg_moments(grammar: Grammar, labels, features: FeatureSet,
                 mu: Optional[pynini.Fst] = None, theta=None, *, max_len: Optional[int] = None,
                 max_states: int = 4000, max_iters: int = MAX_ITERS, tol: float = TOL
                 ) -> GrammarMoments:
    """Exact E_p[f_w] (w ∈ ``features``) and log Z for p ∝ P_G ⊙ μ (module docstring).

    ``theta``: rule weights (default the grammar's normalised probabilities); ``mu``: a
    log64 acceptor over labels 1..N (None = 1); ``max_len``: restrict to |v| ≤ max_len.
    Raises :class:`DivergenceError` when Z = ∞ (or the iteration does not converge),
    :class:`InconsistentEvidenceError` when Z = 0.
    """
    if theta is None:
        theta = grammar.probabilities()
    term_label = terminal_labels(grammar, labels)
    if any(a > features.num_labels for a in term_label.values()):
        raise InputError(f"a terminal's label exceeds N = {features.num_labels}")
    cg = compile_grammar(grammar)
    pa = product_automaton(mu, features, max_len=max_len, max_states=max_states)
    mats, K, n = pa.mats, pa.K, features.num_labels
    wb, wu, wl = _event_weights(cg, theta)
    labs, lexprod = _lexical_products(cg, term_label, mats)
    NX = cg.n_nts
    base = np.zeros((NX, K, K))
    np.add.at(base, cg.lex_parent, wl[:, None, None] * lexprod)

    def inside_step(Z):
        Y = base.copy()
        if len(cg.un_parent):
            np.add.at(Y, cg.un_parent, wu[:, None, None] * Z[cg.un_child])
        if len(cg.bin_parent):
            np.add.at(Y, cg.bin_parent,
                      wb[:, None, None] * np.matmul(Z[cg.bin_left], Z[cg.bin_right]))
        return Y
    Z, it_in = _fixed_point(inside_step, base.copy(), "the intersection grammar's inside "
                            "fixed point", max_iters, tol)
    s, phi = pa.start, pa.final
    zrow = Z[cg.start][s]  # e_sᵀ Z_S
    total = float(zrow @ phi)
    if not total > 0:
        raise InconsistentEvidenceError("PCFG factor: P_G ⊙ μ gives every string weight 0")
    G = np.zeros((NX, K, K))
    G[cg.start, s, :] = phi

    def outside_step(O):
        Y = G.copy()
        if len(cg.un_parent):
            np.add.at(Y, cg.un_child, wu[:, None, None] * O[cg.un_parent])
        if len(cg.bin_parent):
            Op = O[cg.bin_parent] * wb[:, None, None]
            np.add.at(Y, cg.bin_left, np.matmul(Op, np.swapaxes(Z[cg.bin_right], 1, 2)))
            np.add.at(Y, cg.bin_right, np.matmul(np.swapaxes(Z[cg.bin_left], 1, 2), Op))
        return Y
    O, it_out = _fixed_point(outside_step, G.copy(), "the intersection grammar's outside "
                             "fixed point", max_iters, tol)
    # expected DFA arc counts
    nc = features.dfa.num_states
    counts = np.zeros((nc, n + 1))
    np.add.at(counts[:, n], pa.dfa_state, zrow * phi / total)
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
    # expected user-rule counts of the intersection
    rc = np.zeros(len(grammar.rules))
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
    return GrammarMoments(features, float(np.log(total)), features.dfa.accumulate(counts),
                          counts, rule_counts=rc, iterations=(it_in, it_out))


# ---------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------
def sample_strings(grammar: Grammar, n: int, rng: np.random.Generator, theta=None,
                   max_len: int = 200):
    """n yields of top-down samples from P_G; returns (list of terminal tuples or None for
    a sample abandoned past ``max_len`` terminals).  Rule choice: θ normalised per lhs."""
    if theta is None:
        theta = grammar.probabilities()
    theta = np.asarray(theta, dtype=float)
    by_lhs: dict = {}
    for i, r in enumerate(grammar.rules):
        by_lhs.setdefault(r.lhs, []).append(i)
    cum = {}
    for x, idx in by_lhs.items():
        w = theta[idx]
        if w.sum() <= 0:
            continue
        cum[x] = (np.array(idx), np.cumsum(w / w.sum()))
    rules = grammar.rules
    out = []
    for _ in range(n):
        stack = [grammar.start]
        y: list = []
        ok = True
        steps = 0
        while stack:
            x = stack.pop()
            if x not in grammar.nt_index:
                y.append(x)
                if len(y) > max_len:
                    ok = False
                    break
                continue
            steps += 1
            if x not in cum or steps > 50 * max_len + 1000 or len(stack) + len(y) > max_len:
                ok = False  # every nonterminal yields ≥ 1 terminal (no ε-rules)
                break
            idx, c = cum[x]
            r = rules[idx[min(np.searchsorted(c, rng.random(), side="right"), len(c) - 1)]]
            stack.extend(reversed(r.rhs))
        out.append(tuple(y) if ok else None)
    return out


def string_features(features: FeatureSet, strings) -> np.ndarray:
    """f_w(v) for every string (label tuples) and w ∈ features: (n, |W|), by running the
    feature DFA on the padded label matrix (one numpy step per position) and accumulating
    arc counts up the failure tree (batched)."""
    dfa = features.dfa
    n, nc = features.num_labels, dfa.num_states
    S = len(strings)
    Lmax = max((len(v) for v in strings), default=0)
    lab = np.zeros((S, max(Lmax, 1)), dtype=np.int64)
    lens = np.array([len(v) for v in strings], dtype=np.int64)
    for i, v in enumerate(strings):
        lab[i, :len(v)] = v
    A = nc * (n + 1)
    cnt = np.zeros((S, A))
    st = np.full(S, dfa.start, dtype=np.int64)
    rows = np.arange(S)
    for j in range(Lmax):
        live = lens > j
        a = lab[live, j]
        np.add.at(cnt, (rows[live], st[live] * (n + 1) + a - 1), 1.0)
        st[live] = dfa.goto[st[live], a - 1]
    np.add.at(cnt, (rows, st * (n + 1) + n), 1.0)
    s = cnt.reshape(S, nc, n + 1)
    for lev in reversed(dfa.levels):
        np.add.at(s, (slice(None), dfa.fail[lev]), s[:, lev])
    ok = dfa.feat_node >= 0
    out = np.empty((S, len(features)))
    out[:, ok] = s[:, dfa.feat_node[ok], dfa.feat_col[ok]]
    out[:, ~ok] = 1.0
    return out


@dataclass
class SampledMoments:
    """Importance-sampling estimate: ``expectations`` ± ``stderr`` (per feature),
    ``log_z`` ≈ log E_{P_G}[μ(v)] (log of the mean weight), ``ess`` (effective sample size
    (Σw)²/Σw²), ``n_samples``, ``n_truncated`` (samples past max_len, weight 0)."""

    features: FeatureSet
    expectations: np.ndarray
    stderr: np.ndarray
    log_z: float
    ess: float
    n_samples: int
    n_truncated: int


def sampled_moments(grammar: Grammar, labels, features: FeatureSet,
                    mu: Optional[pynini.Fst] = None, theta=None, *, n_samples: int = 2000,
                    seed=0, max_len: int = 200) -> SampledMoments:
    """Self-normalised importance sampling of E_p[f] with proposal P_G (module docstring)."""
    rng = np.random.default_rng(seed)
    term_label = terminal_labels(grammar, labels)
    ys = sample_strings(grammar, n_samples, rng, theta, max_len)
    keep = [i for i, y in enumerate(ys) if y is not None]
    strings = [tuple(term_label[t] for t in ys[i]) for i in keep]
    if mu is None:
        logw = np.zeros(len(strings))
    else:
        logw = score_strings(mu, strings)
    if not strings or not np.isfinite(logw).any():
        raise InconsistentEvidenceError("PCFG factor: no sample has positive weight under "
                                        "the message; use pcfg_moments or more samples")
    m = logw.max()
    w = np.exp(logw - m)
    f = string_features(features, strings)
    sw = w.sum()
    est = (w @ f) / sw
    se = np.sqrt((w ** 2) @ (f - est) ** 2) / sw
    return SampledMoments(features, est, se, float(m + np.log(sw / n_samples)),
                          float(sw ** 2 / (w ** 2).sum()), n_samples, n_samples - len(keep))


# ---------------------------------------------------------------------------------------
# exact WFSA message for a finite language / length bound
# ---------------------------------------------------------------------------------------
def exact_message(grammar: Grammar, labels, max_len: int, theta=None,
                  max_strings: int = 200000) -> pynini.Fst:
    """The WFSA {v : 1 ≤ |v| ≤ max_len} ↦ P_G(v): every string over the grammar's terminals
    up to ``max_len`` is scored with the inside chart (batched by length); strings with
    P_G(v) = 0 are left out. Raises :class:`MessageTooLargeError` beyond ``max_strings``."""
    from strgm.grammars.chart import corpus_inside_outside
    from strgm.wfsa.construct import weighted_strings
    term_label = terminal_labels(grammar, labels)
    terms = sorted(term_label, key=term_label.get)
    T = len(terms)
    total = sum(T ** k for k in range(1, max_len + 1))
    if total > max_strings:
        raise MessageTooLargeError(f"PCFG factor: {total} strings up to length {max_len} "
                                   f"exceed max_strings={max_strings}")
    cands = [c for k in range(1, max_len + 1) for c in itertools.product(terms, repeat=k)]
    cg = compile_grammar(grammar)
    res = corpus_inside_outside(cg, cands, theta, counts=False, batch_size=4096)
    items = [(tuple(term_label[t] for t in c), -float(lz))
             for c, lz in zip(cands, res.logZ) if np.isfinite(lz)]
    if not items:
        raise InconsistentEvidenceError(f"the grammar generates no string of length ≤ {max_len}")
    return weighted_strings(items)


# ---------------------------------------------------------------------------------------
# the factor
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PCFGFactor(Factor):
    """F(v) = P_G(v) on one string variable (module docstring).

    ``labels``: terminal → label (mapping or Alphabet); ``num_labels``: N of the variable;
    ``theta``: rule weights (default: the grammar's normalised probabilities);
    ``max_len``: optional length bound (makes the factor's language finite).
    """

    var: str = ""
    grammar: Optional[Grammar] = None
    labels: object = None
    num_labels: int = 0
    theta: Optional[np.ndarray] = None
    max_len: Optional[int] = None

    @property
    def variables(self) -> tuple:
        return (self.var,)

    @property
    def kind(self) -> str:
        return "pcfg"

    @cached_property
    def _theta(self) -> np.ndarray:
        return self.grammar.probabilities() if self.theta is None else np.asarray(self.theta)

    @cached_property
    def terminal_labels(self) -> dict:
        return terminal_labels(self.grammar, self.labels)

    def moments(self, incoming: Optional[pynini.Fst], features: FeatureSet,
                theta_context: Optional[Theta] = None, method: str = "exact",
                **kw):
        """E_p[f] on ``features`` for p ∝ P_G ⊙ μ (⊙ ENCODE(θ_context) if given).

        ``method='exact'`` → :func:`pcfg_moments` (a :class:`GrammarMoments`);
        ``'sample'`` → :func:`sampled_moments` (a :class:`SampledMoments`)."""
        mu = incoming
        if theta_context is not None:
            enc = theta_context.features.dfa.encode(theta_context.values)
            mu = enc if mu is None else intersect(mu, enc)
        if method == "exact":
            return pcfg_moments(self.grammar, self.labels, features, mu, self._theta,
                                max_len=self.max_len, **kw)
        if method == "sample":
            if self.max_len is not None:
                kw.setdefault("max_len", self.max_len)
            return sampled_moments(self.grammar, self.labels, features, mu, self._theta, **kw)
        raise InputError(f"method must be 'exact' or 'sample', got {method!r}")

    def message_to(self, var, incoming, num_labels):
        """Exact WFSA P_G restricted to |v| ≤ max_len (see :func:`exact_message`)."""
        if var != self.var:
            raise GraphError(f"factor {self.name!r} is not attached to {var!r}")
        if self.max_len is None:
            raise GraphError(
                f"PCFG factor {self.name!r}: P_G(v) is context-free, not finite-state, so it "
                "has no WFSA message; use EP moments (PCFGFactor.moments) or set max_len")
        return exact_message(self.grammar, self.labels, self.max_len, self._theta)
