"""Deterministic estimators sharing one inside–outside chart: EM, MAP-EM, VB and CVB.

With E_r = E[f_r | w, θ⁽ᵗ⁾] the expected rule counts of the corpus (inside–outside) and
α_r the Dirichlet pseudocounts (Johnson, Griffiths & Goldwater 2007, "Bayesian MAP EM",
"Variational Bayes for PCFGs"; Wang & Blunsom 2013 §2.2, Fig. 3):

* EM        θ_r ∝ E_r                                   (never decreases P(w | θ))
* MAP-EM    θ_r ∝ max(0, E_r + α_r − 1)                 (rules can be driven to 0)
* VB        θ̃_r = exp ψ(E_r + α_r) / exp ψ(Σ_{r'∈R_A} E_r' + α_r')   (Kurihara & Sato 2006)
* CVB       for each sentence i in turn: θ^CVB_r ∝ E[f_r(t₋ᵢ)] + α_r from the expected
            counts of all *other* sentences, recompute sentence i's expected counts with
            θ^CVB and put them back into the global counts (Wang & Blunsom Fig. 3, §3.2).

Each iteration costs one inside–outside pass over the corpus (Σ_i O(n_i³ R)); CVB does it
sentence by sentence.

Every estimator is a deterministic kernel with the samplers' interface
(:mod:`strgm.grammars.driver`): ``state = kernel.init(theta0)`` runs the first E-step and
gives trace row 0, ``state = kernel.sample(state)`` one update (M-step, then the E-step
and trace row under the new θ; CVB: one sweep), a new
:class:`~strgm.grammars.estimator_state.EstimatorState` each time.  The trace rows hold
−log P(w | θ) (nats), bits/token, rules above 1e-7, unparsable sentences and, with a
held-out corpus, held-out perplexity; no wall-clock time, so that resumed runs are exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma

from strgm.errors import GrammarError, InputError
from strgm.grammars.cfg import Grammar, normalise_per_lhs
from strgm.grammars.chart import corpus_inside_outside, inside
from strgm.chains.codec import chain_fingerprint
from strgm.grammars.driver import chain_inputs
from strgm.grammars.estimator_state import EstimatorState
from strgm.grammars.evaluation import bits_per_token, heldout_perplexity, rules_above
from strgm.validate import check_float, check_int

__all__ = ["FitResult", "posterior_mean", "unparsable_corpus_error", "EMKernel", "MAPKernel",
           "VBKernel", "CVBKernel", "describe"]


@dataclass
class FitResult:
    """θ (per-LHS normalised point estimate), the grammar carrying it, and the trace."""

    method: str
    theta: np.ndarray
    grammar: Grammar
    trace: list = field(default_factory=list)
    unparsable: list = field(default_factory=list)
    counts: np.ndarray | None = None
    notes: list = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"FitResult(method={self.method!r}, rules={np.size(self.theta)}, "
                f"iterations={len(self.trace)}, unparsable={len(self.unparsable)})")


def posterior_mean(counts, alpha, lhs, n_lhs):
    """E[θ | counts] = (f + α) / Σ_{R_A} (f + α)."""
    return normalise_per_lhs(np.asarray(counts) + alpha, lhs, n_lhs)


def unparsable_corpus_error(n: int) -> GrammarError:
    """The error for a corpus none of whose ``n`` sentences parses (estimators and
    samplers alike); flagged so that the command line can name the corpus file."""
    e = GrammarError(f"none of the {n} sentence(s) of the corpus has a parse under the "
                     "grammar; check that the corpus uses the grammar's terminals")
    e.corpus_unparsable = True  # the command line names the corpus file
    return e


class _Estimator:
    """Shared set-up of the four kernels: compiled grammar, corpus, pseudocounts α_r,
    held-out corpus, fingerprint; the trace row of an estimate."""

    kind = "?"

    def __init__(self, grammar: Grammar, corpus, alpha=None, heldout=None, max_memory=None):
        if alpha is not None:
            check_float("alpha", alpha, min=0, min_open=True)
        self.grammar = grammar
        self.cg, self.corpus = chain_inputs(grammar, corpus, max_memory)
        self.heldout = heldout
        self.alpha = grammar.pseudocounts(alpha)
        self.lhs, self.n_lhs, self.nR = grammar.lhs_index, grammar.n_lhs, len(grammar.rules)
        self.ntok = sum(len(s) for s in self.corpus)
        extra = self.kind + "\n" + " ".join(map(repr, self.alpha.tolist())) + "\n"
        if heldout is not None:
            extra += "".join(" ".join(s) + "\n" for s in heldout)
        self.fingerprint = chain_fingerprint(grammar, self.corpus, extra)

    def _theta0(self, theta0):
        theta = self.grammar.probabilities() if theta0 is None else np.asarray(theta0, dtype=float)
        if theta.shape != (self.nR,) or not np.all(np.isfinite(theta)) or np.any(theta < 0):
            raise InputError(f"theta0 must hold {self.nR} finite weights ≥ 0")
        return theta

    def row(self, it, logZ, theta, eval_theta=None) -> dict:
        """Trace row t: −log P(w | θ) over parsable sentences, bits/token, rules above 1e-7,
        unparsable sentences, held-out perplexity under ``eval_theta`` (default θ)."""
        f = np.isfinite(logZ)
        nlp = float(-logZ[f].sum())
        r = {"iteration": it, "neg_log_prob": nlp, "bits_per_token": bits_per_token(nlp, self.ntok),
             "rules_above_1e-7": rules_above(theta), "unparsable": int((~f).sum())}
        if self.heldout is not None:
            hp = heldout_perplexity(self.cg, self.heldout, theta if eval_theta is None else eval_theta)
            r["heldout_perplexity"] = hp["per_word"]
            r["heldout_unparsable"] = hp["unparsable"]
        return r

    def check(self, state: EstimatorState, deep: bool = False) -> None:
        """InputError unless ``state`` belongs to this estimator, grammar and corpus."""
        if state.kind != self.kind:
            raise InputError(f"checkpoint is for the {state.kind} estimator, not {self.kind}")
        if state.fingerprint and state.fingerprint != self.fingerprint:
            raise InputError("checkpoint was made with a different grammar, corpus, α or "
                             "held-out corpus")
        if deep and (state.theta.shape != (self.nR,) or any(
                i >= len(self.corpus) for i in state.unparsable) or (
                state.per_sentence is not None and len(state.per_sentence) != len(self.corpus))):
            raise InputError(f"checkpoint does not fit a grammar of {self.nR} rules and a "
                             f"corpus of {len(self.corpus)} sentences")

    def final_theta(self, state: EstimatorState) -> np.ndarray:
        return state.theta

    def result(self, state: EstimatorState) -> FitResult:
        """The :class:`FitResult` of a state (trace rows without wall-clock seconds)."""
        th = self.final_theta(state)
        return FitResult(self.kind, th, self.grammar.with_weights(th), list(state.trace),
                         list(state.unparsable), state.counts, list(state.notes))


def describe(state: EstimatorState, r: dict) -> str:
    """The progress line of trace row ``r`` (the driver appends the seconds)."""
    msg = (f"[{state.kind}] iter {r['iteration']:4d}  -logP {r['neg_log_prob']:.4f}  "
           f"bits/tok {r['bits_per_token']:.4f}  rules>1e-7 {r['rules_above_1e-7']}  "
           f"unparsable {r['unparsable']}")
    if "heldout_perplexity" in r:
        msg += f"  heldout ppl {r['heldout_perplexity']:.4f}"
    return msg


class EMKernel(_Estimator):
    """Inside–outside EM: θ_r ∝ E[f_r | w, θ⁽ᵗ⁾].  With ``tol``, the run stops once an
    update lowers −log P(w | θ) by less than tol · max(1, |−log P|)."""

    kind = "em"

    def __init__(self, grammar, corpus, tol=None, heldout=None, max_memory=None):
        if tol is not None:
            check_float("tol", tol, min=0)
        super().__init__(grammar, corpus, None, heldout, max_memory)
        self.tol = tol

    def mstep(self, counts) -> np.ndarray:
        return normalise_per_lhs(counts, self.lhs, self.n_lhs)

    def _estep(self, theta):
        return corpus_inside_outside(self.cg, self.corpus, theta,
                                     per_sentence=(self.kind == "map"))

    def _eval_theta(self, res, theta):
        return theta

    def init(self, theta0=None) -> EstimatorState:
        """E-step under θ0 (default: the grammar's probabilities); row 0 of the trace."""
        theta = self._theta0(theta0)
        res = self._estep(theta)
        bad = sorted(res.unparsable)
        if len(bad) == len(self.corpus):
            raise unparsable_corpus_error(len(self.corpus))
        notes = [f"{len(bad)} sentence(s) unparsable under the initial grammar: {bad[:20]}"] \
            if bad else []
        row = self.row(0, res.logZ, theta, self._eval_theta(res, theta))
        return EstimatorState(self.kind, 0, theta, res.counts, bad, notes,
                              fingerprint=self.fingerprint, trace=[row])

    def sample(self, state: EstimatorState) -> EstimatorState:
        """One update: θ⁽ᵗ⁺¹⁾ = M-step(E_t), then the E-step and trace row under it."""
        self.check(state)
        it = state.iteration + 1
        notes = list(state.notes)
        theta = self.mstep(state.counts)
        if self.kind == "map":
            z = np.flatnonzero((theta == 0) & (state.theta > 0))
            if len(z):
                notes.append(f"iteration {it}: {len(z)} rule(s) driven to zero")
        res = self._estep(theta)
        new_bad = set(res.unparsable) - set(state.unparsable)
        if new_bad and self.kind == "map":
            notes.append(f"iteration {it}: MAP-EM drove rules to zero and made "
                         f"{len(new_bad)} sentence(s) unparsable: {sorted(new_bad)[:20]}")
        row = self.row(it, res.logZ, theta, self._eval_theta(res, theta))
        trace = state.trace + [row]
        converged = False
        if self.tol is not None and self.kind == "em":
            a, b = trace[-2]["neg_log_prob"], trace[-1]["neg_log_prob"]
            converged = a - b < self.tol * max(1.0, abs(a))
        return EstimatorState(self.kind, it, theta, res.counts, sorted(res.unparsable), notes,
                              converged=converged, fingerprint=state.fingerprint, trace=trace,
                              settings=dict(state.settings))


class MAPKernel(EMKernel):
    """MAP-EM: θ_r ∝ max(0, E_r + α_r − 1).  Rules driven to zero and sentences that become
    unparsable are reported in ``notes`` / ``unparsable`` / the trace (never raised)."""

    kind = "map"

    def __init__(self, grammar, corpus, alpha=None, heldout=None, max_memory=None):
        _Estimator.__init__(self, grammar, corpus, alpha, heldout, max_memory)
        self.tol = None

    def mstep(self, counts) -> np.ndarray:
        return normalise_per_lhs(np.maximum(0.0, counts + self.alpha - 1.0), self.lhs,
                                 self.n_lhs)


class VBKernel(MAPKernel):
    """Mean-field VB (Kurihara & Sato 2006): E-step with θ̃_r = exp ψ(E_r+α_r)/exp ψ(Σ_A).

    The trace's −log P is under the sub-normalised θ̃ used in the E-step; held-out
    perplexity and the returned θ are the posterior mean of q(θ) = Dir(E + α)."""

    kind = "vb"

    def mstep(self, counts) -> np.ndarray:
        a = counts + self.alpha
        tot = np.bincount(self.lhs, weights=a, minlength=self.n_lhs)
        return np.exp(digamma(a) - digamma(tot[self.lhs]))

    def _eval_theta(self, res, theta):
        return posterior_mean(res.counts, self.alpha, self.lhs, self.n_lhs)

    def final_theta(self, state):
        return posterior_mean(state.counts, self.alpha, self.lhs, self.n_lhs)


class CVBKernel(_Estimator):
    """Collapsed VB for PCFGs (Wang & Blunsom 2013, Fig. 3).

    Keeps per-sentence expected counts c_i and their sum C.  For each sentence i (random
    order per sweep, seeded): θ^CVB = (C − c_i + α) normalised per LHS, then
    c_i ← E[f | w_i, θ^CVB] and C ← C − c_i(old) + c_i(new).  Initial counts come from one
    E-step under θ0.  The trace reports −log P(w | θ̄) with θ̄ = (C + α)/Σ (posterior mean).
    Cost per sweep: one inside–outside per sentence plus O(|R|) to form θ^CVB.
    """

    kind = "cvb"

    def init(self, theta0=None, seed=0) -> EstimatorState:
        """One E-step under θ0 gives C and every c_i; the RNG is seeded for the sweeps."""
        rng = np.random.default_rng(check_int("seed", seed, min=0))
        theta = self._theta0(theta0)
        res = corpus_inside_outside(self.cg, self.corpus, theta, per_sentence=True)
        if len(res.unparsable) == len(self.corpus):
            raise unparsable_corpus_error(len(self.corpus))
        per = [p if p is not None else (np.zeros(0, np.int64), np.zeros(0))
               for p in res.per_sentence]
        notes = [f"{len(res.unparsable)} sentence(s) unparsable: {res.unparsable[:20]}"] \
            if res.unparsable else []
        return EstimatorState("cvb", 0, theta, res.counts.copy(), list(res.unparsable), notes,
                              per_sentence=per, rng_state=rng.bit_generator.state,
                              fingerprint=self.fingerprint, trace=[self.row(0, res.logZ, theta)])

    def sample(self, state: EstimatorState) -> EstimatorState:
        """One sweep over the parsable sentences in a random order (module docstring)."""
        self.check(state)
        lhs, nl, al = self.lhs, self.n_lhs, self.alpha
        rng = state.rng()
        per, C = list(state.per_sentence), state.counts
        bad = set(state.unparsable)
        parsable = [i for i in range(len(self.corpus)) if i not in bad]
        base_tot = np.bincount(lhs, weights=al, minlength=nl)
        for i in rng.permutation(parsable):
            idx, val = per[i]
            rest = C.copy()
            rest[idx] -= val
            np.maximum(rest, 0.0, out=rest)
            tot = np.bincount(lhs, weights=rest, minlength=nl) + base_tot
            th = (rest + al) / tot[lhs]
            c = inside(self.cg, [self.corpus[i]], th).expected_counts()
            nz = np.flatnonzero(c)
            C = rest
            C[nz] += c[nz]
            per[i] = (nz, c[nz])
        mean = posterior_mean(C, al, lhs, nl)
        lz = corpus_inside_outside(self.cg, self.corpus, mean, counts=False).logZ
        it = state.iteration + 1
        return EstimatorState("cvb", it, mean, C, list(state.unparsable), list(state.notes),
                              per_sentence=per, rng_state=rng.bit_generator.state,
                              fingerprint=state.fingerprint,
                              trace=state.trace + [self.row(it, lz, mean)],
                              settings=dict(state.settings))

    def final_theta(self, state):
        return posterior_mean(state.counts, self.alpha, self.lhs, self.n_lhs)
