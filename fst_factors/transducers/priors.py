"""String priors: proper distributions over Σ* used as unary factors on latent strings.

geometric length × unigram:  p(v) = p_stop · Π_i (1 - p_stop) · u(v_i),
so |v| ~ Geometric(p_stop) with mean (1 - p_stop)/p_stop and Σ_v p(v) = 1.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pynini

from fst_factors.errors import InputError
from fst_factors.wfsa.construct import unigram_acceptor


def geometric_unigram_prior(num_symbols: int, mean_length: float = 5.0,
                            unigram: Optional[Sequence[float]] = None) -> pynini.Fst:
    """One-state log64 acceptor of the prior above over labels 1..num_symbols.

    ``unigram`` (length num_symbols, non-negative, normalised here) defaults to uniform.
    """
    if mean_length <= 0:
        raise InputError(f"mean_length must be positive, got {mean_length}")
    if num_symbols < 1:
        raise InputError("a prior needs at least one symbol")
    p_stop = 1.0 / (1.0 + mean_length)
    u = np.full(num_symbols, 1.0 / num_symbols) if unigram is None else \
        np.asarray(unigram, dtype=float)
    if u.shape != (num_symbols,) or np.any(u < 0) or u.sum() <= 0:
        raise InputError("unigram must be a non-negative vector with one entry per symbol")
    u = u / u.sum()
    with np.errstate(divide="ignore"):
        return unigram_acceptor(np.log(u) + np.log1p(-p_stop), np.log(p_stop))
