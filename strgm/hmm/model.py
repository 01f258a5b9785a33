"""A learned HMM: posterior samples of a chain, scoring, decoding and the WFSA export.

An :class:`HMM` is one parameter set (p0, P, stop, emission parameters) over a
vocabulary; an :class:`HMMPosterior` holds S thinned samples of a chain plus the
vocabulary and settings, and gives

* the posterior predictive log p(x) ≈ log (1/S) Σ_s p(x | sample s), by the forward
  algorithm per sample (label switching does not matter here);
* the same given each sequence's length, log p(x | |x| = T) = log Σ_s p_s(x) −
  log Σ_s p_s(T), where p_s(T) = p0ᵀ P_cᵀ⁻¹ stop is the sample's length distribution
  (P_c the continuing jumps): the score to set beside a model that is given the
  lengths (a unigram, an HMM trained with ``model_length=False``, or the generator of
  fixed-length data), since the end event alone costs a geometric length model
  −[log p + (T − 1) log(1 − p)]/T nats per symbol at best;
* the posterior-mean model: p0, P, stop and θ averaged over the samples. Averaging is
  meaningful because a Gibbs chain on thousands of symbols does not switch labels
  between its later samples; the mean model is what :meth:`HMM.to_wfsa`, Viterbi
  decoding and the string prior use.

``HMM.to_wfsa`` writes the HMM as a log64 acceptor with a start state and one state per
HMM state: arc j → k labelled x with weight −log[(1 − stop_j)·P_jk·θ_k(x)], from the
start −log[p0_k·θ_k(x)], final weight −log stop_k. Its weight for a string is the
forward probability (tests compare every string up to length 5). O(L²·V) arcs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import logsumexp

from strgm import display
from strgm.errors import InputError
from strgm.hmm.emissions import emitter
from strgm.hmm.forward import log_likelihoods, viterbi
from strgm.hmm.transitions import jump_probabilities, similarity
from fst_factors.wfsa.core import from_arc_table

__all__ = ["HMM", "HMMPosterior", "hmm_of_state"]


def _emissions_of(h, k: int, vocab: tuple, top: int) -> str:
    """State k's ``top`` most probable symbols (categorical) or its mean (Gaussian)."""
    if "theta" in h.params:
        row = np.asarray(h.params["theta"][k])
        return ", ".join(f"{vocab[v] if v < len(vocab) else v} {row[v]:.2g}"
                         for v in np.argsort(-row, kind="stable")[:top])
    if "mu" in h.params:
        return "μ = " + np.array2string(np.asarray(h.params["mu"][k]), precision=2,
                                        threshold=2 * top)
    return ""


def _states_html(h, vocab: tuple, title: str, info: list, max_states: int = 10,
                max_symbols: int = 5) -> str:
    """Notebook display of an HMM: ``info`` facts, then its ``max_states`` most used
    states (expected visits per sequence, :meth:`HMM.occupancy`, else p0) with their
    stop probabilities and emissions."""
    try:
        weight, what = h.occupancy(), "visits"
    except (InputError, np.linalg.LinAlgError):
        weight, what = np.asarray(h.p0, dtype=float), "p0"
    order = np.argsort(-weight, kind="stable")[:max_states]
    rows = [(str(k), float(weight[k]), "" if h.stop is None else float(h.stop[k]),
             _emissions_of(h, int(k), vocab, max_symbols)) for k in order]
    return display.card(title, display.facts(info), display.table(
        ["state", what, "stop", "emissions"], rows, more=len(weight) - len(order),
        more_what="states"))


@dataclass(frozen=True)
class HMM:
    """One HMM: ``p0`` (L,), ``P`` (L, L), ``stop`` (L,) or None, ``params`` for the
    ``emissions`` family (an object of :mod:`strgm.hmm.emissions`)."""

    p0: np.ndarray
    P: np.ndarray
    stop: object
    params: dict
    emissions: object

    def __repr__(self) -> str:
        em = self.emissions
        size = f"symbols={em.V}" if em.kind == "categorical" else f"dim={em.D}"
        return (f"HMM(states={len(self.p0)}, {size}, "
                f"length_model={'yes' if self.stop is not None else 'no'})")

    def loglik_tokens(self, x: np.ndarray):
        """The tokens' emission log-likelihoods, computed chunk by chunk."""
        return emitter(self.emissions, self.params, x)

    def log_likelihoods(self, seqs) -> np.ndarray:
        """log p(x_s) per sequence (forward algorithm)."""
        return log_likelihoods(seqs, self.p0, self.P, self.stop, self.loglik_tokens(seqs.x))

    def length_log_probs(self, lengths) -> np.ndarray:
        """log p(|x| = T) for each T in ``lengths`` (0 for all without a length model):
        p0ᵀ P_c^(T−1) stop, one vector–matrix product per length up to the largest."""
        lengths = np.asarray(lengths, dtype=np.int64)
        if self.stop is None or not len(lengths):
            return np.zeros(len(lengths))
        Pc = self.P * (1.0 - self.stop)[:, None]
        v, out = np.asarray(self.p0, dtype=float), np.empty(int(lengths.max()) + 1)
        for T in range(1, len(out)):
            with np.errstate(divide="ignore"):
                out[T] = np.log(v @ self.stop)
            v = v @ Pc
        return out[lengths]

    def viterbi(self, seqs) -> tuple[np.ndarray, np.ndarray]:
        return viterbi(seqs, self.p0, self.P, self.stop, self.loglik_tokens(seqs.x))

    def occupancy(self) -> np.ndarray:
        """Expected number of visits to each state per sequence: o = p0 (I − Pc)^−1
        with Pc the continuing jumps (stop needed; O(L³))."""
        if self.stop is None:
            raise InputError("state occupancy needs a model of sequence length")
        Pc = self.P * (1.0 - self.stop)[:, None]
        return np.linalg.solve((np.eye(len(self.p0)) - Pc).T, self.p0)

    def pruned(self, min_occupancy: float) -> "HMM":
        """The HMM restricted to paths through the states visited at least
        ``min_occupancy`` times per sequence in expectation: p(x) becomes the sum over
        those paths only, ≤ its value before for every x (a deficient model, which is
        all a prior factor needs)."""
        occ = self.occupancy()
        keep = occ >= min_occupancy
        keep[np.argmax(occ)] = True
        return replace(self, p0=self.p0[keep], P=self.P[np.ix_(keep, keep)],
                       stop=self.stop[keep], params={k: v[keep] for k, v in self.params.items()})

    def _repr_html_(self) -> str:
        """Notebook display: the most used states and what they emit (:func:`_states_html`)."""
        info = [("states", len(self.p0)), ("emissions", getattr(self.emissions, "kind", "?")),
                ("length model", "no" if self.stop is None else "yes")]
        return _states_html(self, (), "HMM", info)

    def to_wfsa(self, columns: np.ndarray | None = None, empty: float = 0.0):
        """Log64 acceptor of this HMM (module docstring). Arc labels are symbol index + 1;
        with ``columns`` (K, V) the labels are 1..K and label a emits with probability
        Σ_v columns[a−1, v]·θ_k(v) (how :func:`strgm.hmm.string_prior.hmm_string_prior`
        maps the vocabulary onto another alphabet). With ``empty`` > 0 the empty string
        gets that probability and every other string (1 − empty) times its own."""
        if self.stop is None or "theta" not in self.params:
            raise InputError("a WFSA needs a categorical HMM with a length model")
        theta = self.params["theta"] if columns is None else self.params["theta"] @ columns.T
        L, K = theta.shape
        with np.errstate(divide="ignore"):
            lp0, lP = np.log(self.p0), np.log(self.P * (1.0 - self.stop)[:, None])
            lth = np.log(theta)
            final = np.concatenate([[-np.log(empty)], -np.log(self.stop)])
            lp0 = lp0 + np.log1p(-empty)
        src = np.concatenate([np.zeros(L * K, dtype=np.int64),
                              np.repeat(np.arange(1, L + 1), L * K)])
        dst = np.concatenate([np.repeat(np.arange(1, L + 1), K),
                              np.tile(np.repeat(np.arange(1, L + 1), K), L)])
        lab = np.tile(np.arange(1, K + 1), L * (L + 1))
        w = -np.concatenate([(lp0[:, None] + lth).reshape(-1),
                             (lP[:, :, None] + lth[None, :, :]).reshape(-1)])
        ok = np.isfinite(w)
        return from_arc_table(L + 1, 0, src[ok], dst[ok], lab[ok], lab[ok], w[ok], final)


def hmm_of_state(state, settings, emissions) -> HMM:
    """The HMM of one chain state."""
    p0, P = jump_probabilities(state.pi, similarity(state.ell, state.lam, settings.local))
    stop = np.asarray(state.stop) if settings.model_length else None
    return HMM(p0, P, stop, dict(state.params), emissions)


@dataclass(frozen=True)
class HMMPosterior:
    """Thinned samples (a list of :class:`HMM`) of one chain with their vocabulary."""

    samples: tuple
    vocab: tuple
    settings: object

    def __repr__(self) -> str:
        em = self.samples[0].emissions if self.samples else None
        kind = getattr(em, "kind", "?")
        size = f"symbols={len(self.vocab)}" if kind != "gaussian" else f"dim={em.D}"
        return (f"HMMPosterior(model={getattr(self.settings, 'model', '?')!r}, "
                f"states={len(self.samples[0].p0) if self.samples else 0}, {size}, "
                f"samples={len(self.samples)})")

    def log_likelihoods(self, seqs) -> np.ndarray:
        """log (1/S) Σ_s p(x | sample s) per sequence."""
        lls = np.array([h.log_likelihoods(seqs) for h in self.samples])
        return logsumexp(lls, axis=0) - np.log(len(self.samples))

    def log_likelihoods_given_lengths(self, seqs) -> np.ndarray:
        """log p(x | |x|) per sequence under the posterior predictive (module
        docstring); equal to :meth:`log_likelihoods` without a length model."""
        lls = np.array([h.log_likelihoods(seqs) for h in self.samples])
        lens = np.array([h.length_log_probs(seqs.lengths) for h in self.samples])
        return logsumexp(lls, axis=0) - logsumexp(lens, axis=0)

    def mean(self) -> HMM:
        """The posterior-mean model (module docstring)."""
        s = self.samples
        stop = None if s[0].stop is None else np.mean([h.stop for h in s], axis=0)
        return HMM(np.mean([h.p0 for h in s], axis=0), np.mean([h.P for h in s], axis=0),
                   stop, s[0].emissions.mean([h.params for h in s]), s[0].emissions)

    def _repr_html_(self) -> str:
        """Notebook display: the samples and vocabulary, then the posterior-mean model's
        most used states (:func:`_states_html`) with the vocabulary's symbols."""
        m = self.mean()
        info = [("samples", len(self.samples)), ("vocabulary", len(self.vocab)),
                ("model", getattr(self.settings, "model", "?")), ("states", len(m.p0)),
                ("emissions", getattr(m.emissions, "kind", "?"))]
        return _states_html(m, tuple(self.vocab), "HMMPosterior (posterior-mean model)", info)
