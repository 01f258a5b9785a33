"""MCMC for Bayesian PCFGs (Johnson, Griffiths & Goldwater 2007): numpyro-style kernels.

Model: θ_A ~ Dir(α_A) for every nonterminal A, t_i ~ PCFG(θ) conditioned on yield w_i.

* :class:`GibbsPCFG` — blocked Gibbs over (t, θ): θ_A | t ~ Dir(f_A(t) + α_A), then every
  t_i | w_i, θ drawn exactly from the inside chart (top-down sampling; sentences batched by
  length, each drawing from its own stream seeded by one draw of the chain's, so that the
  trees can be drawn on sentence shards with the same result,
  :mod:`strgm.distributed.pcfg_trees`).  Cost per sweep: one inside pass over the corpus.
* :class:`CollapsedMH` — θ integrated out, P(t | α) = Π_A B(f_A(t) + α_A) / B(α_A).  For
  each sentence i (random order per sweep): proposal t'_i ~ P(t | w_i, θ̃) with
  θ̃_r = (f_r(t₋ᵢ) + α_r) / Σ_{r'∈R_A}(f_r'(t₋ᵢ) + α_r'), accepted with probability
  min{1, P(t'_i | t₋ᵢ, α) P(t_i | w_i, θ̃) / (P(t_i | t₋ᵢ, α) P(t'_i | w_i, θ̃))}, where the
  collapsed ratio is a ratio of Γ functions (computed with log-Γ over touched rules only)
  and the proposal's partition functions cancel.  Cost per sentence: one inside pass.
  A proposal t'_i = t_i is "accepted" whatever the coin says but moves nothing; with a
  sparse prior it is most proposals, so each sweep reports it apart from the accepted
  real moves t'_i ≠ t_i (:func:`mh_sweep_stats`).

Both follow the kernel protocol ``state = kernel.init(seed)``, ``state = kernel.sample(state)``
(one sweep, returns a new state; the input state is not modified), with the whole chain
state — trees, counts, θ, α, RNG state, acceptance counters, running averages — in a
:class:`SamplerState` (:mod:`strgm.grammars.sampler_state`) that is saved to and loaded
from atomic JSON or ``.npz`` checkpoints.  :func:`run`
adds burn-in, thinning, Rao–Blackwellised averaging of E[θ | t, α], traces, progress and
periodic checkpoints.  Optional α resampling: one shared α, slice-sampled on log α under a
Gamma(1, 1) prior from P(t | α) (θ collapsed), valid inside both samplers.
"""

from __future__ import annotations

import copy
import math
import sys
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln

from strgm.errors import GrammarError, InputError
from strgm.grammars.cfg import Grammar, normalise_per_lhs
from strgm.grammars.chart import batches_by_length, chart_limit, corpus_inside_outside, \
    inside
from strgm.chains.codec import chain_fingerprint
from strgm.chains.driver import drive
from strgm.grammars.driver import chain_inputs
from strgm.grammars.estimator_kernels import unparsable_corpus_error
from strgm.grammars.evaluation import bits_per_token, heldout_perplexity, rules_above
from strgm.grammars.sampler_state import SamplerState, check_state
from strgm.validate import check_float, check_int

__all__ = ["SamplerState", "GibbsPCFG", "CollapsedMH", "run", "RunResult", "sample_dirichlet",
           "collapsed_log_prob", "generate", "mh_sweep_stats"]


def sample_dirichlet(rng, a, lhs, n_lhs):
    """θ_A ~ Dir(a_A) for every A, stable for tiny a via log G = log G(a+1) + log U / a."""
    a = np.asarray(a, dtype=float)
    lg = np.log(rng.gamma(a + 1.0)) + np.log(rng.random(len(a))) / a
    mx = np.full(n_lhs, -np.inf)
    np.maximum.at(mx, lhs, lg)
    return normalise_per_lhs(np.exp(lg - mx[lhs]), lhs, n_lhs)


def collapsed_log_prob(counts, alpha, lhs, n_lhs) -> float:
    """log P(t | α) = Σ_A [log B(f_A + α_A) − log B(α_A)],  log B(x) = Σ log Γ(x_r) − log Γ(Σ x_r)."""
    f = np.asarray(counts, dtype=float)
    tot_fa = np.bincount(lhs, weights=f + alpha, minlength=n_lhs)
    tot_a = np.bincount(lhs, weights=alpha, minlength=n_lhs)
    return float(gammaln(f + alpha).sum() - gammaln(alpha).sum()
                 - gammaln(tot_fa).sum() + gammaln(tot_a).sum())


def generate(grammar: Grammar, theta, rng, max_nodes: int = 10000):
    """Draw a tree top-down from the PCFG θ (user rules); returns (tree, rule ids)."""
    by = {}
    for i, r in enumerate(grammar.rules):
        by.setdefault(r.lhs, []).append(i)
    by = {k: np.array(v) for k, v in by.items()}
    rules: list = []

    def go(x):
        if len(rules) > max_nodes:
            raise GrammarError("generated tree exceeds max_nodes (is the PCFG supercritical?)")
        ids = by[x]
        p = theta[ids] / theta[ids].sum()
        r = int(ids[rng.choice(len(ids), p=p)])
        rules.append(r)
        return (x,) + tuple(go(c) if c in grammar.nt_index else c for c in grammar.rules[r].rhs)
    return go(grammar.start), rules


def sample_trees(cg, sentences, keys, theta, base: int, batch_size: int = 64) -> list:
    """One tree per sentence from P(t | w, θ) (rule ids in preorder; None: no parse),
    sentence ``sentences[j]`` drawing from ``default_rng([base, keys[j]])``. Inside
    charts are batched by length; cost that of the charts plus O(n · R_X) per node."""
    out: list = [None] * len(sentences)
    for b in batches_by_length(sentences, batch_size, cg.n_nts, chart_limit(cg)):
        ch = inside(cg, [sentences[j] for j in b], theta)
        rngs = [np.random.default_rng([base, int(keys[j])]) for j in b]
        for j, draws in zip(b, ch.sample(rngs, 1)):
            out[j] = None if draws is None else tuple(draws[0][1])
    return out


class _Kernel:
    kind = "?"

    def __init__(self, grammar: Grammar, corpus, alpha=None, resample_alpha: bool = False,
                 compiled=None, batch_size: int = 64, max_memory=None):
        if alpha is not None:
            alpha = check_float("alpha", alpha, min=0, min_open=True)
        self.batch_size = check_int("batch_size", batch_size, min=1)
        self.grammar = grammar
        self.cg, self.corpus = chain_inputs(grammar, corpus, max_memory, compiled,
                                            "sample trees for")
        self.alpha0 = grammar.pseudocounts(alpha)
        self.resample_alpha = resample_alpha
        self.lhs, self.n_lhs = grammar.lhs_index, grammar.n_lhs
        self.nR = len(grammar.rules)
        self.fingerprint = chain_fingerprint(grammar, self.corpus)

    def _f(self, tree):
        return np.bincount(np.asarray(tree, dtype=np.int64), minlength=self.nR).astype(float)

    #: Where the trees of a sweep are drawn: None here, or a callable
    #: ``(theta, base, idx) → {i: tree}`` drawing the same trees elsewhere (sentence
    #: shards on Dask workers, :class:`strgm.distributed.pcfg_trees.ShardedTrees`).
    tree_sampler = None

    def _sample_trees(self, theta, rng, idx=None):
        """t_i ~ P(t | w_i, θ) for sentences ``idx``: sentence i draws from its own stream
        ``default_rng([base, i])``, ``base`` one draw of the chain's stream, so that its
        tree depends neither on how sentences are batched by length nor on how they are
        split over workers (:func:`sample_trees`)."""
        idx = list(range(len(self.corpus)) if idx is None else idx)
        base = int(rng.integers(2 ** 63))
        if self.tree_sampler is not None:
            return self.tree_sampler(theta, base, idx)
        got = sample_trees(self.cg, [self.corpus[i] for i in idx], idx, theta, base,
                           self.batch_size)
        return dict(zip(idx, got))

    def init(self, seed=0, theta0=None) -> SamplerState:
        """Initial trees drawn from P(t | w, θ0) (default: the grammar's probabilities)."""
        rng = np.random.default_rng(check_int("seed", seed, min=0))
        theta = self.grammar.probabilities() if theta0 is None else np.asarray(theta0, float)
        if theta.shape != (self.nR,) or not np.all(np.isfinite(theta)) or np.any(theta < 0):
            raise InputError(f"theta0 must hold {self.nR} finite weights ≥ 0")
        got = self._sample_trees(theta, rng, list(range(len(self.corpus))))
        trees = [got[i] for i in range(len(self.corpus))]
        if all(t is None for t in trees):
            raise unparsable_corpus_error(len(trees))
        counts = np.zeros(self.nR)
        for t in trees:
            if t is not None:
                counts += self._f(t)
        return SamplerState(self.kind, 0, trees, counts, self.alpha0.copy(),
                            theta.copy() if self.kind == "gibbs" else None,
                            rng.bit_generator.state, fingerprint=self.fingerprint)

    def check(self, state: SamplerState, deep: bool = False):
        """InputError unless ``state`` is a state of this chain (see :func:`check_state`)."""
        check_state(self, state, deep)

    def _resample_alpha(self, counts, alpha, rng, steps: int = 3):
        """Slice sampling of one shared α on x = log α, prior α ~ Gamma(1, 1)."""
        a = float(np.exp(np.mean(np.log(alpha))))

        def logp(x):
            al = np.full(self.nR, math.exp(x))
            return collapsed_log_prob(counts, al, self.lhs, self.n_lhs) - math.exp(x) + x

        x = math.log(a)
        for _ in range(steps):
            y = logp(x) + math.log(rng.random())
            lo = x - rng.random()
            hi = lo + 1.0
            while logp(lo) > y and lo > -30:
                lo -= 1.0
            while logp(hi) > y and hi < 10:
                hi += 1.0
            while True:
                x1 = lo + rng.random() * (hi - lo)
                if logp(x1) > y:
                    x = x1
                    break
                if x1 < x:
                    lo = x1
                else:
                    hi = x1
        return np.full(self.nR, math.exp(x))

    def posterior_mean(self, state) -> np.ndarray:
        return normalise_per_lhs(state.counts + state.alpha, self.lhs, self.n_lhs)


class GibbsPCFG(_Kernel):
    """Blocked Gibbs sampler over (t, θ) (JGG07 "A Gibbs sampler for t and θ")."""

    kind = "gibbs"

    def sample(self, state: SamplerState) -> SamplerState:
        self.check(state)
        rng = state.rng()
        alpha = state.alpha
        if self.resample_alpha:
            alpha = self._resample_alpha(state.counts, alpha, rng)
        theta = sample_dirichlet(rng, state.counts + alpha, self.lhs, self.n_lhs)
        got = self._sample_trees(theta, rng)
        trees = [got[i] if got[i] is not None else state.trees[i] for i in range(len(self.corpus))]
        counts = np.zeros(self.nR)
        for t in trees:
            if t is not None:
                counts += self._f(t)
        new = copy.copy(state)
        new.iteration, new.trees, new.counts, new.theta = state.iteration + 1, trees, counts, theta
        new.alpha, new.rng_state = alpha, rng.bit_generator.state
        return new


class CollapsedMH(_Kernel):
    """Metropolis–Hastings collapsed sampler (JGG07), proposal θ̃ = E[θ | t₋ᵢ, α].

    ``accept_all=True`` skips the correction (every proposal accepted): an approximate
    sampler, kept for comparison (Wang & Blunsom 2013 §3.3 observe acceptance ≈ 100%)."""

    kind = "mh"

    def __init__(self, *a, accept_all: bool = False, **kw):
        super().__init__(*a, **kw)
        self.accept_all = accept_all

    def sample(self, state: SamplerState) -> SamplerState:
        """One sweep. Besides the cumulative ``accepted``/``proposed`` (a proposal identical
        to the current tree counts as accepted, as before), the new state's ``sweep_stats``
        holds this sweep's ``proposed``, ``proposed_same`` (t'_i = t_i, no move whatever
        the coin says) and ``accepted_moved`` (t'_i ≠ t_i accepted): real moves are
        ``accepted_moved`` out of ``proposed − proposed_same``."""
        self.check(state)
        rng = state.rng()
        lhs, nl = self.lhs, self.n_lhs
        alpha = state.alpha
        if self.resample_alpha:
            alpha = self._resample_alpha(state.counts, alpha, rng)
        F = state.counts.copy()
        trees = list(state.trees)
        tot = np.bincount(lhs, weights=F + alpha, minlength=nl)
        prop = same = moved = 0
        for i in rng.permutation(len(self.corpus)):
            t = trees[i]
            if t is None:
                continue
            f = self._f(t)
            Fm = F - f
            totm = tot - np.bincount(lhs, weights=f, minlength=nl)
            th = (Fm + alpha) / totm[lhs]
            draws = inside(self.cg, [self.corpus[i]], th).sample(rng, 1)[0]
            if draws is None:  # cannot happen with α > 0; keep the current tree
                continue
            t2 = tuple(draws[0][1])
            prop += 1
            if t2 == t:
                same += 1
                continue
            f2 = self._f(t2)
            if self.accept_all or self._accept(f, f2, Fm, totm, alpha, th, rng):
                moved += 1
                trees[i] = t2
                F = Fm + f2
                tot = totm + np.bincount(lhs, weights=f2, minlength=nl)
        new = copy.copy(state)
        new.iteration, new.trees, new.counts, new.alpha = state.iteration + 1, trees, F, alpha
        new.rng_state = rng.bit_generator.state
        acc = same + moved
        new.accepted, new.proposed = state.accepted + acc, state.proposed + prop
        new.last_accept = acc / prop if prop else float("nan")
        new.sweep_stats = {"proposed": prop, "proposed_same": same, "accepted_moved": moved}
        return new

    def _accept(self, f, f2, Fm, totm, alpha, th, rng) -> bool:
        """The MH coin for t_i (counts f) → t'_i (counts f2) given f(t₋ᵢ) = Fm."""
        lhs, nl = self.lhs, self.n_lhs
        touched = np.flatnonzero((f > 0) | (f2 > 0))
        A = np.unique(lhs[touched])
        base = Fm[touched] + alpha[touched]
        # log P(t'|t-i) - log P(t|t-i)
        lr = (gammaln(base + f2[touched]).sum() - gammaln(base + f[touched]).sum()
              - gammaln(totm[A] + np.bincount(lhs, weights=f2, minlength=nl)[A]).sum()
              + gammaln(totm[A] + np.bincount(lhs, weights=f, minlength=nl)[A]).sum())
        # + log q(t) - log q(t'), q = PCFG(θ̃) (partition functions cancel)
        lr += float((f[touched] - f2[touched]) @ np.log(th[touched]))
        return lr >= 0 or rng.random() < math.exp(lr)


@dataclass
class RunResult:
    """The final state, the average of E[θ | t, α] after burn-in (the posterior mean of the
    last state when nothing was averaged), the chain's whole trace and collected samples."""

    state: SamplerState
    theta_mean: np.ndarray
    trace: list = field(default_factory=list)
    samples: list = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"RunResult(iterations={self.state.iteration}, "
                f"rules={np.size(self.theta_mean)}, trace={len(self.trace)}, "
                f"samples={len(self.samples)})")


def run(kernel: _Kernel, state: SamplerState, iters: int, burn_in: int = 0, thin: int = 1,
        collect=None, eval_every: int = 0, heldout=None, progress: bool = False,
        log=sys.stderr, checkpoint=None, checkpoint_every: int = 0, callback=None) -> RunResult:
    """Run ``iters`` sweeps from ``state``.

    After ``burn_in`` sweeps (counted from iteration 0 of the chain, so a resumed chain
    continues the same schedule) every ``thin``-th state adds E[θ | t, α] to the running
    average and, if ``collect`` is given, ``collect(state)`` to ``samples``.  Every
    ``eval_every`` sweeps the trace row gets −log P(w | θ̄), bits/token and held-out
    perplexity under θ̄ = the current posterior mean; every row gets log P(t | α),
    acceptance rate and rules above 1e-7.  Rows hold only quantities determined by the
    chain (no wall-clock time, which the progress lines show), and they are kept in the
    state, so a resumed chain's trace equals an uninterrupted one's.  ``checkpoint``
    (path) is written atomically every ``checkpoint_every`` sweeps and at the end."""
    iters = check_int("iters", iters, min=0)
    burn_in = check_int("burn_in", burn_in, min=0)
    thin = check_int("thin", thin, min=1)
    eval_every = check_int("eval_every", eval_every, min=0)
    kernel.check(state, deep=True)
    samples = []

    def step(state):
        state = kernel.sample(state)
        mean = kernel.posterior_mean(state)
        if state.iteration > burn_in and (state.iteration - burn_in) % thin == 0:
            state.sum_theta = mean.copy() if state.sum_theta is None else state.sum_theta + mean
            state.n_avg += 1
            if collect is not None:
                samples.append(collect(state))
        row = _trace_row(kernel, state, mean, eval_every, heldout)
        state.trace = state.trace + [row]  # a new list: earlier states stay unchanged
        return state

    state = drive(step, state, iters, describe=_describe, progress=progress, log=log,
                  checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                  callback=callback)
    theta_mean = (state.sum_theta / state.n_avg) if state.n_avg else kernel.posterior_mean(state)
    return RunResult(state, theta_mean, list(state.trace), samples)


def _trace_row(kernel, state, mean, eval_every, heldout) -> dict:
    """log P(t | α), acceptance, rules above 1e-7, α (MH also the sweep's move counts,
    :func:`mh_sweep_stats`); every ``eval_every`` sweeps also
    −log P(w | θ̄), bits/token and held-out perplexity under θ̄ = ``mean``."""
    row = {"iteration": state.iteration,
           "log_p_trees": collapsed_log_prob(state.counts, state.alpha, kernel.lhs, kernel.n_lhs),
           "rules_above_1e-7": rules_above(mean), "alpha": float(np.mean(state.alpha))}
    if kernel.kind == "mh":
        row["acceptance"] = state.last_accept
        row.update(mh_sweep_stats(state))
    if eval_every and state.iteration % eval_every == 0:
        res = corpus_inside_outside(kernel.cg, kernel.corpus, mean, counts=False)
        f = np.isfinite(res.logZ)
        row["neg_log_prob"] = float(-res.logZ[f].sum())
        row["bits_per_token"] = bits_per_token(row["neg_log_prob"],
                                               sum(len(s) for s in kernel.corpus))
        if heldout is not None:
            row["heldout_perplexity"] = heldout_perplexity(kernel.cg, heldout, mean)["per_word"]
    return row


def mh_sweep_stats(state) -> dict:
    """The last sweep's MH move counts (:meth:`CollapsedMH.sample`) and
    ``acceptance_moved`` = accepted_moved / (proposed − proposed_same), the acceptance
    rate of proposals that differ from the current tree (None when every proposal was the
    current tree: a JSON null, so that traces stay comparable with ``==``); {} for a state
    that no sweep of this process made."""
    st = getattr(state, "sweep_stats", None)
    if st is None:
        return {}
    changed = st["proposed"] - st["proposed_same"]
    return dict(st, acceptance_moved=st["accepted_moved"] / changed if changed else None)


def _describe(state, row) -> str:
    msg = f"[{state.kind}] iter {state.iteration:5d}  log P(t) {row['log_p_trees']:.3f}"
    if "acceptance" in row:
        msg += f"  accept {row['acceptance']:.3f}"
    if "proposed_same" in row:
        msg += f" (same {row['proposed_same']}, moved {row['accepted_moved']})"
    if "neg_log_prob" in row:
        msg += f"  -logP(w) {row['neg_log_prob']:.3f}"
    if "heldout_perplexity" in row:
        msg += f"  heldout ppl {row['heldout_perplexity']:.3f}"
    return msg
