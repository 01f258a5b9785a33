"""Choosing the infinite HMM by held-out predictive score: ``--model auto``.

Which of the three models fits best depends on the data (docs/architecture.md §9): local
transitions help where the states lie on a low-dimensional manifold and cost mixing
where they do not. :func:`choose_model` therefore holds out a fraction of the training
sequences (drawn with the run's seed), runs one chain of each candidate on the rest with
the run's sweeps and settings, and scores each posterior predictive on the held-out
sequences, log p(x) per symbol (each sequence's end included when lengths are
modelled). The chosen model is then trained on all the sequences by the caller.

Cost: about (1 − fraction) × the number of candidates × one run, before the final run.
With fewer than :data:`MIN_SEQUENCES` sequences there is no useful split, and
:data:`FALLBACK` is used without a comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from strgm.hmm.data import Sequences
from strgm.hmm.kernel import HMMSampler
from strgm.hmm.training import posterior_of, run_chain
from strgm.validate import check_float

__all__ = ["Choice", "choose_model", "split_sequences", "CANDIDATES", "MIN_SEQUENCES",
           "FALLBACK"]

CANDIDATES = ("lt", "hdp", "sticky")
MIN_SEQUENCES = 10
FALLBACK = "hdp"


@dataclass(frozen=True)
class Choice:
    """The chosen model and each candidate's held-out log-likelihood per symbol (empty
    when there were too few sequences to compare)."""

    model: str
    scores: dict

    def describe(self) -> str:
        if not self.scores:
            return (f"{self.model} (fewer than {MIN_SEQUENCES} sequences: no held-out "
                    "comparison)")
        shown = ", ".join(f"{m} {v:.4f}" for m, v in self.scores.items())
        return f"{self.model} (held-out nats/symbol: {shown})"


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


def choose_model(kernel: HMMSampler, iters: int, burn_in: int, thin: int, seed: int,
                 fraction: float = 0.1, candidates=CANDIDATES, on_candidate=None) -> Choice:
    """The candidate whose posterior predictive scores best on a held-out ``fraction`` of
    ``kernel``'s sequences (module docstring). ``kernel.settings`` supplies everything
    but the model; ``on_candidate(model)`` is called before each candidate's run."""
    data = kernel.data
    if data.num_sequences < MIN_SEQUENCES:
        return Choice(FALLBACK, {})
    train, held = split_sequences(data, fraction, seed)
    scores = {}
    for model in candidates:
        if on_candidate is not None:
            on_candidate(model)
        settings = _settings_for(kernel.settings, model)
        k = HMMSampler(train, settings, kernel.emissions)
        state = run_chain(k, k.init(seed), iters, burn_in, thin)
        post = posterior_of(state, k, ())
        scores[model] = float(post.log_likelihoods(held).sum() / held.num_tokens)
    best = max(scores, key=lambda m: (scores[m], -candidates.index(m)))
    return Choice(best, scores)


def _settings_for(settings, model: str):
    """``settings`` with ``model``: κ only for the sticky model, split–merge moves only
    where they apply (not the LT model)."""
    kappa = settings.kappa if model == "sticky" else 0.0
    if model == "sticky" and kappa == 0 and not settings.sample_hypers:
        kappa = 1.0
    moves = 0 if model == "lt" else settings.split_merge
    return replace(settings, model=model, kappa=kappa, split_merge=moves)
