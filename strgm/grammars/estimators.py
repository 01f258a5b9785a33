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
sentence by sentence.  Every estimator returns a :class:`FitResult` with the trace of
−log P(w | θ) (nats), bits/token, rules above 1e-7, unparsable sentences and, when a held-out
corpus is given, held-out perplexity.  Row t of the trace describes the estimate after t
updates (row 0: the initial θ).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma

from strgm.errors import GrammarError, InputError
from strgm.grammars.cfg import Grammar, compile_grammar, normalise_per_lhs
from strgm.grammars.chart import corpus_inside_outside, inside
from strgm.grammars.evaluation import bits_per_token, heldout_perplexity, rules_above
from strgm.validate import check_choice, check_float, check_int, check_size

__all__ = ["FitResult", "em", "map_em", "vb", "cvb", "fit", "posterior_mean"]


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


def posterior_mean(counts, alpha, lhs, n_lhs):
    """E[θ | counts] = (f + α) / Σ_{R_A} (f + α)."""
    return normalise_per_lhs(np.asarray(counts) + alpha, lhs, n_lhs)


class _Tracer:
    def __init__(self, cg, corpus, heldout, progress, method, log):
        self.cg, self.corpus, self.heldout = cg, corpus, heldout
        self.ntok = sum(len(s) for s in corpus)
        self.progress, self.method, self.log = progress, method, log
        self.t0 = time.perf_counter()
        self.rows: list = []

    def row(self, it, logZ, theta, eval_theta=None, **extra):
        f = np.isfinite(logZ)
        nlp = float(-logZ[f].sum())
        r = {"iteration": it, "neg_log_prob": nlp, "bits_per_token": bits_per_token(nlp, self.ntok),
             "rules_above_1e-7": rules_above(theta), "unparsable": int((~f).sum()),
             "seconds": time.perf_counter() - self.t0}
        if self.heldout is not None:
            hp = heldout_perplexity(self.cg, self.heldout, theta if eval_theta is None else eval_theta)
            r["heldout_perplexity"] = hp["per_word"]
            r["heldout_unparsable"] = hp["unparsable"]
        r.update(extra)
        self.rows.append(r)
        if self.progress:
            msg = (f"[{self.method}] iter {it:4d}  -logP {nlp:.4f}  bits/tok {r['bits_per_token']:.4f}"
                   f"  rules>1e-7 {r['rules_above_1e-7']}  unparsable {r['unparsable']}")
            if "heldout_perplexity" in r:
                msg += f"  heldout ppl {r['heldout_perplexity']:.4f}"
            print(msg + f"  {r['seconds']:.1f}s", file=self.log, flush=True)
        return r


def _check_args(iters, alpha=None, seed=None, tol=None):
    """The keyword arguments every estimator shares, checked like the command line's."""
    check_int("iters", iters, min=1)
    if alpha is not None:
        check_float("alpha", alpha, min=0, min_open=True)
    if seed is not None:
        check_int("seed", seed, min=0)
    if tol is not None:
        check_float("tol", tol, min=0)


def unparsable_corpus_error(n: int) -> GrammarError:
    """The error for a corpus none of whose ``n`` sentences parses (estimators and
    samplers alike); flagged so that the command line can name the corpus file."""
    e = GrammarError(f"none of the {n} sentence(s) of the corpus has a parse under the "
                     "grammar; check that the corpus uses the grammar's terminals")
    e.corpus_unparsable = True  # the command line names the corpus file
    return e


def _setup(grammar, corpus, theta0, alpha, max_memory=None):
    cg = compile_grammar(grammar)
    if max_memory is not None:  # bytes of one chart (batches are sized to fit)
        cg.max_chart_bytes = check_size("max_memory", max_memory)
    corpus = [tuple(s) for s in corpus]
    if not corpus:
        raise InputError("the corpus is empty (no sentences to estimate from)")
    if any(len(s) == 0 for s in corpus):
        raise InputError("the corpus holds an empty sentence")
    theta = grammar.probabilities() if theta0 is None else np.asarray(theta0, dtype=float)
    if theta.shape != (len(grammar.rules),) or not np.all(np.isfinite(theta)) \
            or np.any(theta < 0):
        raise InputError(f"theta0 must hold {len(grammar.rules)} finite weights ≥ 0")
    al = grammar.pseudocounts(alpha)
    return cg, corpus, theta, al


def _em_family(method, grammar, corpus, alpha, iters, theta0, tol, heldout, progress, log, mstep,
               max_memory=None):
    cg, corpus, theta, al = _setup(grammar, corpus, theta0, alpha, max_memory)
    tr = _Tracer(cg, corpus, heldout, progress, method, log)
    notes = []
    prev_bad: set = set()
    res = None
    for it in range(iters + 1):
        res = corpus_inside_outside(cg, corpus, theta, per_sentence=(method == "map"))
        bad = set(res.unparsable)
        if it == 0 and len(bad) == len(corpus):
            raise unparsable_corpus_error(len(corpus))
        if it == 0 and bad:
            notes.append(f"{len(bad)} sentence(s) unparsable under the initial grammar: "
                         f"{sorted(bad)[:20]}")
        new_bad = bad - prev_bad
        if it > 0 and new_bad and method == "map":
            notes.append(f"iteration {it}: MAP-EM drove rules to zero and made "
                         f"{len(new_bad)} sentence(s) unparsable: {sorted(new_bad)[:20]}")
        prev_bad = bad
        ev = theta if method != "vb" else posterior_mean(res.counts, al, grammar.lhs_index, grammar.n_lhs)
        tr.row(it, res.logZ, theta, ev)
        if it == iters:
            break
        if tol is not None and it > 0 and method == "em":
            a, b = tr.rows[-2]["neg_log_prob"], tr.rows[-1]["neg_log_prob"]
            if a - b < tol * max(1.0, abs(a)):
                break
        new = mstep(res.counts, al)
        if method == "map":
            z = np.flatnonzero((new == 0) & (theta > 0))
            if len(z):
                notes.append(f"iteration {it + 1}: {len(z)} rule(s) driven to zero")
        theta = new
    final = theta if method != "vb" else posterior_mean(res.counts, al, grammar.lhs_index,
                                                       grammar.n_lhs)
    return FitResult(method, final, grammar.with_weights(final), tr.rows,
                     sorted(prev_bad), res.counts, notes)


def em(grammar, corpus, iters=50, theta0=None, tol=None, heldout=None, progress=False,
       log=sys.stderr, max_memory=None) -> FitResult:
    """Inside–outside EM: θ_r ∝ E[f_r | w, θ⁽ᵗ⁾]."""
    _check_args(iters, tol=tol)
    g = grammar
    return _em_family("em", g, corpus, None, iters, theta0, tol, heldout, progress, log,
                      lambda c, al: normalise_per_lhs(c, g.lhs_index, g.n_lhs), max_memory)


def map_em(grammar, corpus, alpha=None, iters=50, theta0=None, heldout=None, progress=False,
           log=sys.stderr, max_memory=None) -> FitResult:
    """MAP-EM: θ_r ∝ max(0, E_r + α_r − 1).  Rules driven to zero and sentences that become
    unparsable are reported in ``notes`` / ``unparsable`` / the trace (never raised)."""
    _check_args(iters, alpha)
    g = grammar
    return _em_family("map", g, corpus, alpha, iters, theta0, None, heldout, progress, log,
                      lambda c, al: normalise_per_lhs(np.maximum(0.0, c + al - 1.0),
                                                      g.lhs_index, g.n_lhs), max_memory)


def _vb_weights(counts, al, lhs, n_lhs):
    a = counts + al
    tot = np.bincount(lhs, weights=a, minlength=n_lhs)
    return np.exp(digamma(a) - digamma(tot[lhs]))


def vb(grammar, corpus, alpha=None, iters=50, theta0=None, heldout=None, progress=False,
       log=sys.stderr, max_memory=None) -> FitResult:
    """Mean-field VB (Kurihara & Sato 2006): E-step with θ̃_r = exp ψ(E_r+α_r)/exp ψ(Σ_A).

    The trace's −log P is under the sub-normalised θ̃ used in the E-step; the returned θ is
    the posterior mean of q(θ) = Dir(E + α)."""
    _check_args(iters, alpha)
    g = grammar
    return _em_family("vb", g, corpus, alpha, iters, theta0, None, heldout, progress, log,
                      lambda c, al: _vb_weights(c, al, g.lhs_index, g.n_lhs), max_memory)


def cvb(grammar, corpus, alpha=None, iters=20, theta0=None, seed=0, heldout=None,
        progress=False, log=sys.stderr, callback=None, max_memory=None) -> FitResult:
    """Collapsed VB for PCFGs (Wang & Blunsom 2013, Fig. 3).

    Keeps per-sentence expected counts c_i and their sum C.  For each sentence i (random
    order per sweep, seeded): θ^CVB = (C − c_i + α) normalised per LHS, then
    c_i ← E[f | w_i, θ^CVB] and C ← C − c_i(old) + c_i(new).  Initial counts come from one
    E-step under θ0.  The trace reports −log P(w | θ̄) with θ̄ = (C + α)/Σ (posterior mean).
    Cost per sweep: one inside–outside per sentence plus O(|R|) to form θ^CVB.
    """
    _check_args(iters, alpha, seed)
    cg, corpus, theta, al = _setup(grammar, corpus, theta0, alpha, max_memory)
    lhs, nl = grammar.lhs_index, grammar.n_lhs
    rng = np.random.default_rng(seed)
    tr = _Tracer(cg, corpus, heldout, progress, "cvb", log)
    res = corpus_inside_outside(cg, corpus, theta, per_sentence=True)
    if len(res.unparsable) == len(corpus):
        raise unparsable_corpus_error(len(corpus))
    per = [p if p is not None else (np.zeros(0, np.int64), np.zeros(0)) for p in res.per_sentence]
    C = res.counts.copy()
    tr.row(0, res.logZ, theta)
    notes = []
    if res.unparsable:
        notes.append(f"{len(res.unparsable)} sentence(s) unparsable: {res.unparsable[:20]}")
    parsable = [i for i in range(len(corpus)) if np.isfinite(res.logZ[i])]
    base_tot = np.bincount(lhs, weights=al, minlength=nl)
    for it in range(1, iters + 1):
        for i in rng.permutation(parsable):
            idx, val = per[i]
            rest = C.copy()
            rest[idx] -= val
            np.maximum(rest, 0.0, out=rest)
            a = rest + al
            tot = np.bincount(lhs, weights=rest, minlength=nl) + base_tot
            th = a / tot[lhs]
            c = inside(cg, [corpus[i]], th).expected_counts()
            nz = np.flatnonzero(c)
            C = rest
            C[nz] += c[nz]
            per[i] = (nz, c[nz])
        mean = posterior_mean(C, al, lhs, nl)
        lz = corpus_inside_outside(cg, corpus, mean, counts=False).logZ
        tr.row(it, lz, mean)
        if callback is not None:
            callback(it, mean, tr.rows[-1])
    mean = posterior_mean(C, al, lhs, nl)
    return FitResult("cvb", mean, grammar.with_weights(mean), tr.rows, res.unparsable, C, notes)


def fit(method: str, grammar, corpus, **kw) -> FitResult:
    """Dispatch on ``method`` in {em, map, vb, cvb}.  Every keyword is checked as the
    command line checks its option (``iters`` ≥ 1, ``alpha`` finite and > 0, ``seed`` ≥ 0);
    an empty corpus is an :class:`InputError`, a corpus none of whose sentences parses a
    :class:`GrammarError`."""
    fns = {"em": em, "map": map_em, "vb": vb, "cvb": cvb}
    check_choice("method", method, sorted(fns))
    return fns[method](grammar, corpus, **kw)
