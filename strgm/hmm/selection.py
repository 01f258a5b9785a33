"""Choosing the infinite HMM by held-out predictive score: ``--model auto``.

Which of the three models fits best depends on the data (docs/hmm.md): local
transitions help where the states lie on a low-dimensional manifold and cost mixing
where they do not. :func:`choose_model` therefore holds out a fraction of the training
sequences (drawn with the run's seed), runs R chains (restarts, seeds S .. S + R − 1)
of each candidate from each start (:data:`STARTS`) on the rest with the run's sweeps
and settings, and scores each chain's posterior predictive on the held-out sequences,
log p(x) per symbol (each sequence's end included when lengths are modelled). Of the
chains within one standard error of the best score, the one with the fewest states in
use is kept (:func:`one_standard_error`: chains that predict equally well but split the
same states more finely are not preferred), and the caller continues it on all the
sequences (:func:`start_from`), so a restart that found a better mode is the one
trained, not a new chain with its seed.

Cost: about (1 − fraction) × R × the number of candidates × the number of starts × one
run, before the final run. With fewer than :data:`MIN_SEQUENCES` sequences there is no
useful split, and :data:`FALLBACK` (or the only candidate) is used without a comparison.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from strgm.hmm.data import Sequences
from strgm.hmm.kernel import HMMSampler
from strgm.hmm.state import HMMState
from strgm.hmm.training import posterior_of, run_chain
from strgm.validate import check_float, check_int

__all__ = ["Choice", "choose_model", "one_standard_error", "start_from", "split_sequences",
           "starts_for", "CANDIDATES", "STARTS", "MIN_SHARE", "MIN_SEQUENCES", "FALLBACK"]

CANDIDATES = ("lt", "hdp", "sticky")
#: The starts tried for symbol data (:meth:`HMMSampler.init`): the bigram model suits
#: data with few states, all L states in use data that need them all.
STARTS = ("symbols", "random")
#: A state counts as in use by a chain when it holds this share of the tokens.
MIN_SHARE = 0.01
MIN_SEQUENCES = 10
FALLBACK = "hdp"


@dataclass(frozen=True)
class Choice:
    """The chosen model, each candidate's best held-out log-likelihood per symbol (empty
    when there were too few sequences to compare), every chain (``chains``: model, start,
    seed, score, states in use), and the chosen chain's start, seed and last state (on
    the training part; None without a comparison)."""

    model: str
    scores: dict
    chains: list = field(default_factory=list)
    start: str | None = None
    seed: int | None = None
    state: HMMState | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        if not self.scores:
            return (f"{self.model} (fewer than {MIN_SEQUENCES} sequences: no held-out "
                    "comparison)")
        shown = ", ".join(f"{m} {v:.4f}" for m, v in self.scores.items())
        return (f"{self.model}, {self.start} start, seed {self.seed}: the fewest states "
                f"within one standard error of the best held-out score (best per model, "
                f"nats/symbol: {shown})")


def starts_for(kernel: HMMSampler) -> tuple:
    """The starts compared for ``kernel``'s data: :data:`STARTS` for symbols, "random"
    alone for vectors."""
    return STARTS if kernel.emissions.kind == "categorical" else ("random",)


def split_sequences(seqs: Sequences, fraction: float, seed: int
                    ) -> tuple[Sequences, Sequences]:
    """(training part, held-out part): round(fraction·S) sequences (at least one) drawn
    without replacement with ``seed``."""
    check_float("fraction", fraction, min=0, max=1, min_open=True, max_open=True)
    S = seqs.num_sequences
    held = np.random.default_rng(seed).permutation(S)[:max(1, round(fraction * S))]
    mask = np.zeros(S, dtype=bool)
    mask[held] = True
    part = [[seqs.sequence(s) for s in range(S) if mask[s] == flag] for flag in (False, True)]
    return Sequences.from_list(part[0]), Sequences.from_list(part[1])


def one_standard_error(loglik, states) -> int:
    """The index of the chain chosen by the one-standard-error rule (Hastie, Tibshirani
    & Friedman 2009, §7.10): among the chains whose held-out log-likelihood is within
    one standard error of the best chain's, the one with the fewest ``states``; ties go
    to the higher score, then the earlier chain.

    ``loglik`` is (C, S): each chain's log-likelihood of each of the S held-out
    sequences. Chain c is within one standard error when Σ_s d_s ≤ √S · sd(d), d_s =
    ℓ_best,s − ℓ_c,s (the paired deficit; its sum's standard error is √S·sd when the
    sequences are independent). O(C·S)."""
    ll = np.asarray(loglik, dtype=float)
    total = ll.sum(axis=1)
    best = int(np.argmax(total))
    d = ll[best] - ll
    se = np.sqrt(ll.shape[1]) * d.std(axis=1, ddof=1) if ll.shape[1] > 1 else 0 * total
    near = np.flatnonzero(total[best] - total <= se)
    return int(min(near, key=lambda c: (states[c], -total[c], c)))


def choose_model(kernel_for, iters: int, burn_in: int, thin: int, seed: int,
                 fraction: float = 0.1, candidates=CANDIDATES, restarts: int = 1,
                 on_candidate=None) -> Choice:
    """The chain chosen on a held-out ``fraction`` of the sequences (module docstring):
    for each candidate model and each start of :func:`starts_for`, ``restarts`` chains
    (seeds ``seed`` .. ``seed + restarts − 1``), scored by their posterior predictive;
    :func:`one_standard_error` picks among them, states counted as those holding ≥
    :data:`MIN_SHARE` of the training part's tokens in the chain's last sweep.
    ``kernel_for(model)`` is the :class:`HMMSampler` the caller would train for
    ``model`` (its data, settings and emissions); each chain runs that kernel's settings
    on the training part. ``on_candidate(model, start, seed)`` is called before each
    chain."""
    check_int("restarts", restarts, min=1)
    data = kernel_for(candidates[0]).data
    if data.num_sequences < MIN_SEQUENCES:
        return Choice(FALLBACK if FALLBACK in candidates else candidates[0], {})
    train, held = split_sequences(data, fraction, seed)
    chains, lls, finals = [], [], []
    for model in candidates:
        full = kernel_for(model)
        k = HMMSampler(train, full.settings, full.emissions)
        for start in starts_for(full):
            for s in range(seed, seed + restarts):
                if on_candidate is not None:
                    on_candidate(model, start, s)
                finals.append(run_chain(k, k.init(s, start=start), iters, burn_in, thin))
                lls.append(posterior_of(finals[-1], k, ()).log_likelihoods(held))
                used = np.bincount(finals[-1].z, minlength=k.settings.L)
                chains.append({"model": model, "start": start, "seed": s,
                               "score": float(lls[-1].sum() / held.num_tokens),
                               "states": int((used >= MIN_SHARE * len(finals[-1].z)).sum())})
    c = one_standard_error(lls, [x["states"] for x in chains])
    scores = {m: max(x["score"] for x in chains if x["model"] == m) for m in candidates}
    return Choice(chains[c]["model"], scores, chains, chains[c]["start"], chains[c]["seed"],
                  finals[c])


def start_from(kernel: HMMSampler, choice: Choice) -> HMMState:
    """A first state for ``kernel`` (all the sequences) that continues the winning chain:
    its parameters — π, β, the hyperparameters, ℓ, the stopping probabilities and the
    emission parameters — copied, z drawn given them by forward filtering, backward
    sampling, u and q given z (:meth:`HMMSampler.from_parameters`), with
    ``choice.seed``'s random numbers."""
    if choice.state is None:
        raise ValueError("start_from needs a choice made by comparing chains")
    par = {k: copy.deepcopy(getattr(choice.state, k)) for k in _PARAMETERS}
    return kernel.from_parameters(par, np.random.default_rng(choice.seed))


_PARAMETERS = ("alpha", "gamma", "kappa", "lam", "beta", "ell", "pi", "stop", "params")
