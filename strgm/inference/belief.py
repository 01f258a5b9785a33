"""Belief: a normalised distribution over strings for one variable, backed by an FST.

Exact BP beliefs are intersections of WFSAs, pruned-BP beliefs are finite weighted sets,
EP beliefs are ENCODE(θ) DFAs; all answer the same queries here.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pynini

from strgm import display
from fst_factors.alphabet import Alphabet
from strgm.errors import DivergenceError, InconsistentEvidenceError, StrgmError
from fst_factors.wfsa import entropy as _entropy
from fst_factors.wfsa import kbest as _kbest
from fst_factors.wfsa import log_partition, sample as _sample, score_strings


#: The notebook display computes the entropy only of beliefs with at most this many
#: states (exact, or a Monte-Carlo estimate from DISPLAY_ENTROPY_SAMPLES samples).
DISPLAY_ENTROPY_STATES = 200
DISPLAY_ENTROPY_SAMPLES = 200


class Belief:
    """b_V(v) = weight(v) / Z for the variable ``name``.

    ``fst`` is the *unnormalised* acceptor; ``log_z`` its log total weight. Raises
    :class:`InconsistentEvidenceError` when Z = 0 (the evidence rules out every value) and
    :class:`DivergenceError` (naming the variable) when Z = ∞.
    """

    def __init__(self, name: str, fst: pynini.Fst, alphabet: Alphabet,
                 log_z: Optional[float] = None):
        self.name = name
        self.alphabet = alphabet
        self._fst = fst
        if log_z is None:
            try:
                log_z = log_partition(fst, what=f"belief of variable {name!r}")
            except DivergenceError as e:
                raise DivergenceError(
                    f"belief of variable {name!r} is not normalisable: {e}") from None
        if log_z == -np.inf:
            raise InconsistentEvidenceError(
                f"variable {name!r}: the evidence gives every value probability zero "
                "(observations inconsistent with the model)")
        self.log_z = float(log_z)

    @property
    def fst(self) -> pynini.Fst:
        """The unnormalised acceptor (a copy)."""
        return self._fst.copy()

    def kbest(self, k: int = 5) -> list[tuple[str, float]]:
        """The k most probable strings with their probabilities, best first."""
        return [(self.alphabet.join(s), float(np.exp(lw - self.log_z)))
                for s, lw in _kbest(self._fst, k)]

    def kbest_labels(self, k: int = 5) -> list[tuple[tuple[int, ...], float]]:
        return [(s, float(np.exp(lw - self.log_z))) for s, lw in _kbest(self._fst, k)]

    def _labels(self, word: str | Sequence[int]) -> tuple[int, ...]:
        if isinstance(word, str):
            return self.alphabet.encode(word, where=f"query for variable {self.name!r}")
        return tuple(word)

    def logprob(self, word: str | Sequence[int]) -> float:
        """log b(word) (natural log); -inf if impossible."""
        return float(score_strings(self._fst, [self._labels(word)])[0] - self.log_z)

    def prob(self, word: str | Sequence[int]) -> float:
        return float(np.exp(self.logprob(word)))

    def logprobs(self, words: Sequence[str | Sequence[int]]) -> np.ndarray:
        return score_strings(self._fst, [self._labels(w) for w in words]) - self.log_z

    def sample(self, n: int = 1, seed: int = 0) -> list[str]:
        """n exact samples from the belief."""
        return [self.alphabet.join(s) for s in _sample(self._fst, n, seed)]

    def entropy(self, return_stderr: bool = False, **kw):
        """Entropy in nats (exact when possible, else a Monte-Carlo estimate; see
        :func:`fst_factors.wfsa.entropy`)."""
        return _entropy(self._fst, return_stderr=return_stderr, **kw)

    def __repr__(self) -> str:
        top = ", ".join(f"{s or 'ε'}:{p:.3f}" for s, p in self.kbest(3))
        return f"Belief({self.name!r}, [{top}])"

    def _display_entropy(self) -> Optional[str]:
        """The entropy for the notebook display, when the belief is small enough."""
        if self._fst.num_states() > DISPLAY_ENTROPY_STATES:
            return None
        try:
            h, se = self.entropy(return_stderr=True, n_samples=DISPLAY_ENTROPY_SAMPLES)
        except (StrgmError, ValueError, ArithmeticError):
            return None
        if not np.isfinite(h):
            return None
        return f"{h:.3g} nats" if se == 0 else f"≈ {h:.3g} ± {se:.2g} nats (Monte-Carlo)"

    def _repr_html_(self, k: int = 10) -> str:
        """The ``k`` most probable strings (:meth:`kbest`, never the whole support, which
        may be infinite) with probabilities and bars, the mass they cover, the number of
        states and, for a small automaton, the entropy (:meth:`entropy`)."""
        pairs = self.kbest(k)
        info = [("states", self._fst.num_states()),
                (f"mass of the top {len(pairs)}", f"{sum(p for _, p in pairs):.1%}")]
        h = self._display_entropy()
        if h is not None:
            info.append(("entropy", h))
        return display.card(f"Belief of {self.name}", display.facts(info),
                            display.table(["string", "probability", ""],
                                          display.ranked_rows(pairs)))
