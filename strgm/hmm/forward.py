"""The forward algorithm, forward-filtering backward-sampling and Viterbi, vectorised
over sequences.

An HMM here is (p0, P, stop, E): start distribution p0 (L,), row-stochastic jump matrix
P (L, L), per-state stopping probability stop (L,) or None when lengths are given, and the
emission log-likelihoods E of the tokens: an (N, L) array, or a function from an (n, T)
array of token positions to their (n, T, L) log-likelihoods, so that E is only ever
computed chunk by chunk. With a stop vector the probability of
a sequence x_1..x_T is

    p(x) = Σ_z p0(z_1) e_1(z_1) Π_{t≥2} (1 − stop_{z_{t−1}}) P[z_{t−1}, z_t] e_t(z_t) · stop_{z_T},

i.e. the HMM is a distribution over strings of every length ≥ 1; without it the last
factor and the (1 − stop) factors are dropped (Rabiner 1989). Forward variables are
rescaled at every step (and each token's emissions shifted by their maximum), so any
length is safe in float64. Each function works on batches of equal-length sequences
(:meth:`strgm.hmm.data.Sequences.batches`, cut to at most :data:`MAX_CELLS` forward
cells): O(Σ_T T) numpy steps of O(n_T·L²) each.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_likelihoods", "sample_states", "viterbi", "jump_matrix", "sample_rows"]


#: Largest number of forward-variable cells (sequences × T × L) held at once: batches of
#: equal-length sequences are cut into chunks of at most this size (64 MB of float64), so
#: memory stays bounded whatever the number of sequences.
MAX_CELLS = 1 << 23


def _chunks(seqs, L: int):
    """:meth:`Sequences.batches`, each cut into pieces of at most MAX_CELLS cells
    (forward variables, and Viterbi's L×L scores per sequence)."""
    for T, ids, pos in seqs.batches():
        step = max(1, MAX_CELLS // (T * L + L * L))
        for i in range(0, len(ids), step):
            yield T, ids[i:i + step], pos[i:i + step]


def _emit(loglik, pos: np.ndarray) -> np.ndarray:
    """Emission log-likelihoods (n, T, L) of the tokens at ``pos``: ``loglik`` is an
    (N, L) array or a function of the positions (computed chunk by chunk)."""
    return loglik(pos) if callable(loglik) else loglik[pos]


def jump_matrix(P: np.ndarray, stop) -> np.ndarray:
    """P with row k scaled by (1 − stop_k): the weight of moving on from k."""
    return P if stop is None else P * (1.0 - np.asarray(stop))[:, None]


def _emissions(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(exp(ll − shift), shift) with each token's maximum as its shift."""
    shift = ll.max(axis=-1)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    return np.exp(ll - shift[..., None]), shift


def _filter(p0, Pc, e):
    """Normalised forward variables a (n, T, L) and log scale factors (n, T)."""
    n, T, L = e.shape
    a = np.empty((n, T, L))
    logc = np.empty((n, T))
    cur = p0[None, :] * e[:, 0]
    for t in range(T):
        if t:
            cur = (cur @ Pc) * e[:, t]
        c = cur.sum(axis=1)
        with np.errstate(divide="ignore"):
            logc[:, t] = np.log(c)
        cur = cur / np.where(c > 0, c, 1.0)[:, None]
        a[:, t] = cur
    return a, logc


def log_likelihoods(seqs, p0, P, stop, loglik) -> np.ndarray:
    """log p(x_s) of every sequence (S,), in nats; −inf for an impossible one."""
    Pc = jump_matrix(P, stop)
    out = np.empty(seqs.num_sequences)
    for _, ids, pos in _chunks(seqs, len(p0)):
        e, shift = _emissions(_emit(loglik, pos))
        a, logc = _filter(p0, Pc, e)
        ll = logc.sum(axis=1) + shift.sum(axis=1)
        if stop is not None:
            with np.errstate(divide="ignore"):
                ll = ll + np.log(a[:, -1] @ stop)
        out[ids] = ll
    return out


def sample_rows(w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of the nonnegative weights ``w`` (n, L), ∝ the row."""
    c = np.cumsum(w, axis=1)
    u = rng.random(len(w)) * c[:, -1]
    return np.minimum((c <= u[:, None]).sum(axis=1), w.shape[1] - 1)


def sample_states(seqs, p0, P, stop, loglik, rng: np.random.Generator
                  ) -> tuple[np.ndarray, float]:
    """(z ~ p(z | x) for every sequence as one (N,) array aligned with the tokens,
    Σ_s log p(x_s)): forward filtering, backward sampling (Chib 1996). Batches are
    visited in increasing length and each draws its uniforms in one call per step, so a
    seed fixes the result."""
    Pc = jump_matrix(P, stop)
    z = np.empty(seqs.num_tokens, dtype=np.int64)
    total = 0.0
    for T, _, pos in _chunks(seqs, len(p0)):
        e, shift = _emissions(_emit(loglik, pos))
        total += float(shift.sum())
        a, logc = _filter(p0, Pc, e)
        w = a[:, -1] * (stop[None, :] if stop is not None else 1.0)
        with np.errstate(divide="ignore"):
            total += float(logc.sum() + np.log(w.sum(axis=1)).sum())
        zt = sample_rows(w, rng)
        z[pos[:, -1]] = zt
        for t in range(T - 2, -1, -1):
            zt = sample_rows(a[:, t] * Pc[:, zt].T, rng)
            z[pos[:, t]] = zt
    return z, total


def viterbi(seqs, p0, P, stop, loglik) -> tuple[np.ndarray, np.ndarray]:
    """(most probable state path as an (N,) array, its log joint probability per
    sequence (S,)). Ties go to the lowest state index."""
    with np.errstate(divide="ignore"):
        lp0, lPc = np.log(p0), np.log(jump_matrix(P, stop))
        lstop = np.log(stop) if stop is not None else 0.0
    z = np.empty(seqs.num_tokens, dtype=np.int64)
    best = np.empty(seqs.num_sequences)
    for T, ids, pos in _chunks(seqs, len(p0)):
        n = len(ids)
        ll = _emit(loglik, pos)
        delta = lp0[None, :] + ll[:, 0]
        back = np.empty((n, T, len(p0)), dtype=np.int64)
        for t in range(1, T):
            scores = delta[:, :, None] + lPc[None, :, :]
            back[:, t] = scores.argmax(axis=1)
            delta = scores.max(axis=1) + ll[:, t]
        delta = delta + lstop
        zt = delta.argmax(axis=1)
        best[ids] = delta[np.arange(n), zt]
        z[pos[:, -1]] = zt
        for t in range(T - 1, 0, -1):
            zt = back[np.arange(n), t, zt]
            z[pos[:, t - 1]] = zt
    return z, best
