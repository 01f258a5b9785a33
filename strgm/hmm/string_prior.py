"""A learned HMM as a prior over strings of another alphabet (e.g. underlying forms).

The HMM's vocabulary and the target alphabet need not agree. Label a of the target
alphabet (symbol σ_a) emits from state k with probability

    θ_k(σ_a)                       if σ_a is in the HMM's vocabulary,
    θ_k(<unk>) / |unseen|          otherwise (the unknown-symbol mass shared equally
                                   among the target symbols the HMM never saw),

and vocabulary symbols absent from the target alphabet lose their mass (the prior is then
deficient, which a factor may be: messages are normalised by the engine). The empty
string gets probability ``empty`` (an HMM emits at least one symbol; an affix's
underlying form may be empty), every other string (1 − empty)·p_HMM(x). States visited
less than ``min_occupancy`` times per string are dropped first (:meth:`HMM.pruned`),
which bounds the acceptor to O(L_used²·K) arcs.
"""

from __future__ import annotations

import numpy as np

from strgm.errors import InputError
from strgm.hmm.data import UNK
from strgm.validate import check_float

__all__ = ["vocab_columns", "hmm_string_prior"]


def vocab_columns(vocab, symbols) -> tuple[np.ndarray, list]:
    """((K, V) matrix mapping target symbols onto vocabulary columns, the target symbols
    the HMM never saw)."""
    index = {s: i for i, s in enumerate(vocab)}
    if UNK not in index:
        raise InputError(f"the HMM's vocabulary has no {UNK!r} symbol")
    unseen = [s for s in symbols if s not in index or s == UNK]
    cols = np.zeros((len(symbols), len(vocab)))
    for a, s in enumerate(symbols):
        if s in index and s != UNK:
            cols[a, index[s]] = 1.0
        else:
            cols[a, index[UNK]] = 1.0 / len(unseen)
    return cols, unseen


def hmm_string_prior(posterior, symbols, empty: float = 0.05,
                     min_occupancy: float = 1e-4):
    """(log64 acceptor over labels 1..len(symbols), the symbols the HMM never saw) for
    the posterior-mean model of ``posterior`` (an :class:`HMMPosterior`)."""
    empty = check_float("empty", empty, min=0, max=1, max_open=True)
    min_occupancy = check_float("min_occupancy", min_occupancy, min=0)
    if posterior.samples[0].emissions.kind != "categorical":
        raise InputError("only an HMM over symbols (categorical emissions) is a string prior")
    if posterior.samples[0].stop is None:
        raise InputError("the HMM was trained without a length model, so it is not a "
                         "distribution over strings")
    cols, unseen = vocab_columns(posterior.vocab, list(symbols))
    hmm = posterior.mean().pruned(min_occupancy)
    return hmm.to_wfsa(cols, empty=empty), unseen
