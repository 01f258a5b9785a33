"""A PCFG factor on one string variable: EP moments of n-gram features under PCFG ⊙ μ.

A PCFG G with rule probabilities θ_G defines P_G(v) = Σ_{t:
yield(t)=v} Π_{r∈t} θ_r over strings v of its terminals; the terminals are labels 1..N of a
string variable V (a mapping ``labels`` terminal → label, e.g. an
:class:`~fst_factors.alphabet.Alphabet`). The factor F(v) = P_G(v) joins G to the factor graph.
Given the incoming message μ = μ_{V→F} (any log64 acceptor, e.g. ENCODE(θ_{V→F})), EP needs
the moments of the substring features f_w (w over Σ ∪ {BOS, EOS}, see
:mod:`strgm.features.symbols`) under

    p(v) = P_G(v) · μ(v) / Z,        Z = Σ_v P_G(v) μ(v),

i.e. E_p[f_w] for w in a :class:`~strgm.features.theta.FeatureSet` W (EP then projects them
onto θ with :mod:`strgm.projection`, exactly as for a WFSA p̂_V).

The pieces (docs/grammars.md):

* :mod:`strgm.grammars.factor_product` — the product automaton M = μ × feature DFA
  (× length counter) and the terminal → label map;
* :mod:`strgm.grammars.factor_moments` — exact moments on the Bar-Hillel intersection
  grammar (:func:`pcfg_moments`, Kleene / Neumann fixed points over K×K matrices);
* :mod:`strgm.grammars.factor_sampling` — self-normalised importance sampling with the
  PCFG as proposal (:func:`sampled_moments`);
* this module — the exact WFSA message for a length bound (:func:`exact_message`) and the
  factor itself (:class:`PCFGFactor`).

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
from typing import Optional

import numpy as np
import pynini

from strgm.errors import GrammarError, GraphError, InconsistentEvidenceError, InputError, \
    MessageTooLargeError
from strgm.factors import Factor, register_factor_builder
from strgm.features.theta import FeatureSet, Theta
from strgm.grammars.cfg import Grammar, compile_grammar
from strgm.grammars.chart import corpus_inside_outside
from strgm.grammars.factor_message import GrammarMessage, GrammarParameters
from strgm.grammars.factor_moments import MAX_ITERS, TOL, GrammarMoments, pcfg_moments
from strgm.grammars.factor_product import ProductAutomaton, product_automaton, \
    terminal_labels
from strgm.grammars.factor_sampling import SampledMoments, sample_strings, sampled_moments, \
    string_features
from fst_factors.wfsa.operations import intersect
from fst_factors.wfsa.construct import weighted_strings

__all__ = ["PCFGFactor", "pcfg_moments", "sampled_moments", "SampledMoments",
           "ProductAutomaton", "product_automaton", "sample_strings", "string_features",
           "exact_message", "terminal_labels", "GrammarMoments", "MAX_ITERS", "TOL",
           "grammar_factor", "check_subcritical", "GrammarMessage", "GrammarParameters"]


def exact_message(grammar: Grammar, labels, max_len: int, theta=None,
                  max_strings: int = 200000) -> pynini.Fst:
    """The WFSA {v : 1 ≤ |v| ≤ max_len} ↦ P_G(v): every string over the grammar's terminals
    up to ``max_len`` is scored with the inside chart (batched by length); strings with
    P_G(v) = 0 are left out. Raises :class:`MessageTooLargeError` beyond ``max_strings``."""
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
    params: Optional[GrammarParameters] = None
    inference: str = "exact"
    options: dict = field(default_factory=dict)  # GrammarMessage keywords

    @property
    def variables(self) -> tuple:
        return (self.var,)

    @cached_property
    def _message(self) -> GrammarMessage:
        params = self.params or GrammarParameters(self.grammar, theta=self.theta)
        return GrammarMessage(params, self.labels, self.inference, max_len=self.max_len,
                              key=self.name, **self.options)

    def moment_message(self, var: str) -> GrammarMessage:
        """EP's message: the grammar as a moment oracle
        (:mod:`strgm.grammars.factor_message`); no string is enumerated."""
        if var != self.var:
            raise GraphError(f"factor {self.name!r} is not attached to {var!r}")
        return self._message

    @property
    def kind(self) -> str:
        return "pcfg"

    @property
    def _theta(self) -> np.ndarray:
        """The rule weights now (shared parameters may be learned during a run)."""
        if self.params is not None:
            return self.params.theta
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


def check_subcritical(grammar: Grammar, theta) -> None:
    """Refuse rule weights under which derivations need not terminate: the spectral radius
    ρ of the mean matrix M[X, Y] = Σ_{r = X → α} θ_r · #Y(α) (expected Y children of an X)
    must be < 1, else P_G has infinite expected size and P_G ⊙ μ can diverge. The error
    names the recursive rule with the largest θ_r · #nonterminals(α)."""
    n = grammar.n_lhs
    M = np.zeros((n, n))
    for r, th in zip(grammar.rules, theta):
        for y in r.rhs:
            if y in grammar.nt_index:
                M[grammar.nt_index[r.lhs], grammar.nt_index[y]] += th
    rho = float(max(abs(np.linalg.eigvals(M)))) if n else 0.0
    if rho < 1 - 1e-12:
        return
    worst = max(range(len(grammar.rules)), key=lambda i: theta[i] * sum(
        y in grammar.nt_index for y in grammar.rules[i].rhs))
    raise GrammarError(f"rule {worst} ({grammar.rules[worst]}, weight {theta[worst]:.3g}) "
                       f"makes the grammar divergent: the mean matrix has spectral radius "
                       f"{rho:.4g} >= 1 (derivations need not terminate); lower its weight")


def grammar_factor(grammar: Grammar, name: str, var: str, alphabet, *,
                   inference: str = "exact", estimator: str = "fixed", alpha=None,
                   params: Optional[GrammarParameters] = None, theta=None,
                   max_len: Optional[int] = None, **options) -> PCFGFactor:
    """The factor F(v) = P_G(v) on ``var``, checked before any inference: every terminal
    is a symbol of ``alphabet`` (else the error names the first rule using it) and the
    weights are subcritical (:func:`check_subcritical`). ``params`` shares learned rule
    weights between factors (else a :class:`GrammarParameters` with ``estimator``,
    ``alpha``, ``theta``); ``options`` go to :class:`GrammarMessage` (``n_samples``,
    ``pool``, ``seed``, ``max_states``)."""
    for i, r in enumerate(grammar.rules):
        for t in r.rhs:
            if t not in grammar.nt_index and t not in alphabet:
                raise GrammarError(f"rule {i} ({r}): terminal {t!r} is not a symbol of the "
                                   f"variable's alphabet")
    if params is None:
        params = GrammarParameters(grammar, estimator, alpha, theta)
    elif params.grammar is not grammar:
        raise GraphError(f"factor {name!r}: params belong to another grammar")
    check_subcritical(grammar, params.theta)
    f = PCFGFactor(name, var=var, grammar=grammar, labels=alphabet,
                   num_labels=alphabet.size, max_len=max_len, params=params,
                   inference=inference, options=dict(options))
    f.moment_message(var)  # builds the message now: bad options fail here, not mid-run
    return f


register_factor_builder(Grammar, grammar_factor)  # FactorGraph.add_grammar(…, Grammar)
