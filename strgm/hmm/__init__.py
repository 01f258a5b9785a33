"""Infinite hidden Markov models over symbols or vectors: the HDP-HMM with local
transitions (Dawson 2015), the plain HDP-HMM and the sticky HDP-HMM, as one Gibbs
kernel with ``init``/``sample(state)``, and the learned HMM as a string model
(docs/hmm.md)."""

from strgm.hmm.data import UNK, Sequences
from strgm.hmm.emissions import Categorical, Gaussian
from strgm.hmm.kernel import HMMSampler
from strgm.hmm.settings import DEFAULT_L, MODELS, HMMSettings
from strgm.hmm.state import HMMState

__all__ = ["HMMSettings", "HMMSampler", "HMMState", "Sequences", "Categorical", "Gaussian",
           "UNK", "MODELS", "DEFAULT_L"]
