"""The EP message of a grammar factor: a moment oracle, not an automaton.

A grammar factor F(v) = P_G(v) has no finite-state message (its language is context-free),
but EP never needs one. At a variable V, EP fits θ_V to the moments of

    p̂(v) ∝ μ_{F→V}(v) · exp(θ_{V→F}·f(v))                      (PEP eq. 5)

and the variable side reads those moments through
:func:`strgm.features.moments.p_moments`, which hands any message that is not a
``pynini.Fst`` to its ``moments(features, theta, what)``. For a grammar factor that method
is this module's :meth:`GrammarMessage.moments`:

* ``inference="exact"``: :func:`strgm.grammars.factor_moments.pcfg_moments` on the
  Bar-Hillel intersection of G with ENCODE(θ_{V→F}) — no string is enumerated; the cost
  is that of the inside/outside fixed points over K×K matrices, K the states of the
  cavity's n-gram DFA × the feature DFA (a few dozen for bigrams);
* ``inference="sample"``: self-normalised importance sampling with G as proposal
  (:func:`strgm.grammars.factor_sampling`), where the *sample pool persists across
  visits*: the proposal does not depend on the cavity, so the strings drawn on earlier
  visits stay valid and are only re-weighted by the new exp(θ_{V→F}·f(v)); each visit
  adds ``n_samples`` fresh strings to a pool of at most ``pool`` strings (oldest dropped).
  The standard errors of the latest moments are kept in ``last_stderr``.

Rule probabilities learned in the graph. The exact route also yields the expected rule
counts c_r under p̂ (``GrammarMoments.rule_counts``). When the factor shares a
:class:`GrammarParameters` with ``estimator`` "em" or "vb", each message records the
counts of its latest p̂ and, at the start of every EP iteration after the first, the
parameters are re-estimated from the sum over the factors that share them (the sampled
route records no rule counts, so its weights stay as they are):

    EM (MAP, Dirichlet α):   θ_r ∝ c_r + α_r − 1   (floored at 0), per left-hand side;
    VB (mean field):         θ̃_r = exp(ψ(c_r + α_r) − ψ(Σ_{r': lhs} c_{r'} + α_{r'}))

(Kurihara & Sato 2004; the VB weights are sub-normalised, as in
:func:`strgm.grammars.estimators.vb`). This is EM/VB with the E-step done by the factor
graph (the expectations of p̂ at each grammar factor), so the scheduler visits the
grammar like any other factor.

``estimator="cvb"`` is collapsed variational Bayes with the factor in the role of the
sentence (Wang & Blunsom 2013 §3.2, Fig. 3, its zeroth-order form): θ is integrated out,
and the factor f being visited sees the posterior mean given every *other* factor's
latest expected counts,

    θ^{−f}_r = (C_r − c^f_r + α_r) / Σ_{r': lhs(r') = lhs(r)} (C_{r'} − c^f_{r'} + α_{r'}),
    C = Σ_g c^g,

and its new counts replace its old ones in C at once (no waiting for the next
iteration): one EP sweep over the grammar factors is one CVB sweep. ``theta`` is then
the posterior mean (C + α) normalised per left-hand side, what a saved model keeps and
what the sampled route draws its pool from (that route records no counts). O(|R|) per
visit on top of the moments.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from scipy.special import digamma

from strgm.errors import OptionError
from strgm.features.theta import FeatureSet, Theta
from strgm.grammars.cfg import Grammar
from strgm.grammars.factor_moments import pcfg_moments
from strgm.grammars.factor_product import terminal_labels
from strgm.grammars.factor_sampling import sample_strings, string_features, \
    weighted_estimate
from strgm.validate import check_choice, check_float, check_int

__all__ = ["GrammarParameters", "GrammarMessage", "ESTIMATORS"]

#: How shared rule probabilities are re-estimated inside the graph (module docstring).
ESTIMATORS = ("fixed", "em", "vb", "cvb")


class GrammarParameters:
    """Rule weights θ_G shared by one or more grammar factors, and how they are learned.

    ``theta`` starts at the grammar's normalised probabilities (or the given array);
    ``estimator`` is "fixed" (default), "em", "vb" or "cvb" with Dirichlet pseudocounts
    ``alpha`` (default: the grammar's own, :meth:`Grammar.pseudocounts`). A factor reads
    its weights with :meth:`theta_for` (the leave-one-out weights under "cvb")."""

    def __init__(self, grammar: Grammar, estimator: str = "fixed",
                 alpha: Optional[float] = None, theta=None):
        self.grammar = grammar
        self.estimator = check_choice("estimator", estimator, ESTIMATORS)
        self.alpha = grammar.pseudocounts(alpha)
        th = grammar.probabilities() if theta is None else np.asarray(theta, dtype=float)
        if th.shape != (len(grammar.rules),) or not np.all(np.isfinite(th)) or (th < 0).any():
            raise OptionError("theta", "array", f"needs {len(grammar.rules)} finite "
                                                "non-negative rule weights")
        self.theta = th
        self.counts: dict = {}  # factor name -> expected rule counts of its latest p̂
        # (by name, so that a graph rebuilt with the same factors, as EM does, replaces
        # the counts of the graph before instead of adding to them)
        self.updates = 0
        self.last_iteration: Optional[int] = None  # of the last re-estimation

    def record(self, key, counts: np.ndarray) -> None:
        if self.estimator != "fixed" and counts is not None:
            self.counts[key] = np.asarray(counts, dtype=float)
            if self.estimator == "cvb":
                self.theta = self._posterior_mean(sum(self.counts.values()))
                self.updates += 1

    def theta_for(self, key) -> np.ndarray:
        """The weights factor ``key`` uses now: θ^{−f} (module docstring) under "cvb",
        the shared θ otherwise."""
        if self.estimator != "cvb" or not self.counts:
            return self.theta
        own = self.counts.get(key)
        total = sum(self.counts.values())
        return self._posterior_mean(total if own is None else total - own)

    def _posterior_mean(self, counts: np.ndarray) -> np.ndarray:
        """(counts + α) normalised per left-hand side (negative rounding residue of a
        leave-one-out difference clipped at 0)."""
        a = np.maximum(counts, 0.0) + self.alpha
        g = self.grammar
        tot = np.bincount(g.lhs_index, weights=a, minlength=g.n_lhs)[g.lhs_index]
        return a / tot

    def reestimate(self) -> bool:
        """θ from the recorded counts (module docstring); False when nothing changes
        (always under "fixed", and under "cvb", which updates on every visit)."""
        if self.estimator in ("fixed", "cvb") or not self.counts:
            return False
        c = sum(self.counts.values())
        g = self.grammar
        if self.estimator == "em":
            num = np.maximum(c + self.alpha - 1.0, 0.0)
            den = np.bincount(g.lhs_index, weights=num, minlength=g.n_lhs)[g.lhs_index]
            self.theta = np.where(den > 0, num / np.where(den > 0, den, 1.0), self.theta)
        else:
            a = c + self.alpha
            tot = np.bincount(g.lhs_index, weights=a, minlength=g.n_lhs)[g.lhs_index]
            self.theta = np.exp(digamma(a) - digamma(tot))
        self.updates += 1
        return True


class GrammarMessage:
    """μ_{F→V} of a grammar factor under EP (module docstring): ``moments(features,
    theta)`` gives E_p̂[f] and log Z for p̂ ∝ P_G ⊙ ENCODE(θ)."""

    def __init__(self, params: GrammarParameters, labels, inference: str = "exact", *,
                 max_len: Optional[int] = None, max_states: int = 4000,
                 n_samples: int = 2000, pool: int = 20000, seed: int = 0,
                 sample_max_len: int = 200, empty: float = 0.0, key=None):
        self.params = params
        self.key = id(self) if key is None else key  # whose rule counts these are
        self.labels = labels
        self.term_label = terminal_labels(params.grammar, labels)
        self.inference = check_choice("inference", inference, ("exact", "sample"))
        self.max_len = None if max_len is None else check_int("max_len", max_len, 1)
        self.max_states = check_int("max_states", max_states, 1)
        self.n_samples = check_int("n_samples", n_samples, 1)
        self.pool_size = check_int("pool", pool, self.n_samples)
        self.sample_max_len = max_len or check_int("sample_max_len", sample_max_len, 1)
        self.empty = check_float("empty", empty, min=0, max=1, max_open=True)
        self.rng = np.random.default_rng(seed)
        self.pool: list = []  # label tuples drawn from P_G, oldest first
        self._pool_theta = None  # the θ_G the pool was drawn under
        self.last_stderr: Optional[np.ndarray] = None
        self.calls = 0

    def num_states(self) -> int:
        """Messages report their size to the scheduler; a grammar has no states."""
        return 0

    def moments(self, features: FeatureSet, theta: Optional[Theta] = None,
                what: str = "grammar factor"):
        """E_p̂[f_w] for w ∈ ``features`` and log Z, p̂ ∝ P_G ⊙ ENCODE(θ) (θ = None: 1).
        Raises DivergenceError when Z = ∞, InconsistentEvidenceError when Z = 0."""
        self.calls += 1
        mu = None if theta is None or not theta.nnz else \
            theta.features.dfa.encode(theta.values)
        if self.inference == "exact":
            m = pcfg_moments(self.params.grammar, self.labels, features, mu,
                             self.params.theta_for(self.key), max_len=self.max_len,
                             max_states=self.max_states)
        else:
            m = self._sampled(features, theta, what)
        if self.empty > 0:
            m = self._with_empty(m, features, theta)
        self.params.record(self.key, getattr(m, "rule_counts", None))
        return m

    def _with_empty(self, m, features: FeatureSet, theta: Optional[Theta]):
        """Moments of the mixture e·δ_ε + (1 − e)·P_G (an affix's UR may be empty; a CFG
        without ε-rules never derives ε): with a = e·exp(θ·f(ε)), b = (1 − e)·Z_G,
        Z = a + b and E[f] = (a·f(ε) + b·E_G[f]) / Z; rule counts and standard errors
        scale by b / Z."""
        import dataclasses

        f0 = string_features(features, [()])[0]
        s0 = 0.0 if theta is None or not theta.nnz else \
            float(string_features(theta.features, [()])[0] @ theta.values)
        la, lb = np.log(self.empty) + s0, np.log1p(-self.empty) + m.log_z
        top = max(la, lb)
        a, b = np.exp(la - top), np.exp(lb - top)
        share = b / (a + b)
        out = dataclasses.replace(m, log_z=float(top + np.log(a + b)),
                                  expectations=(1 - share) * f0 + share * m.expectations)
        if getattr(m, "rule_counts", None) is not None:
            out = dataclasses.replace(out, rule_counts=share * m.rule_counts)
        if self.last_stderr is not None and self.inference == "sample":
            self.last_stderr = share * self.last_stderr
        return out

    def _refill(self) -> None:
        """Add ``n_samples`` strings from P_G (θ_G now) to the pool; a pool drawn under
        other rule weights is dropped (its proposal is no longer P_G)."""
        th = self.params.theta
        if self._pool_theta is None or not np.array_equal(self._pool_theta, th):
            self.pool, self._pool_theta = [], th.copy()
        ys = sample_strings(self.params.grammar, self.n_samples, self.rng, th,
                            self.sample_max_len)
        self.pool.extend(tuple(self.term_label[t] for t in y) for y in ys if y is not None)
        del self.pool[:max(0, len(self.pool) - self.pool_size)]

    def _sampled(self, features: FeatureSet, theta: Optional[Theta], what: str):
        from strgm.errors import InconsistentEvidenceError
        from strgm.features.moments import Moments

        self._refill()
        f = string_features(features, self.pool)
        if theta is None or not theta.nnz:
            logw = np.zeros(len(self.pool))
        else:
            logw = string_features(theta.features, self.pool) @ theta.values
        if not len(logw) or not np.isfinite(logw).any():
            raise InconsistentEvidenceError(f"{what}: no sampled string has positive weight")
        est, self.last_stderr, log_z, _ = weighted_estimate(logw, f)
        return Moments(features, log_z, est, np.zeros((0, features.num_labels + 1)))

    def end_iteration(self, iteration: int) -> bool:
        """At the start of EP iteration ``iteration``: re-estimate the shared rule weights
        from the last iteration's p̂ (module docstring), once however many factors share
        them; True when they moved."""
        if self.params.last_iteration == iteration:
            return False
        self.params.last_iteration = iteration
        return self.params.reestimate()
