"""Concatenation relations W = M1 · b · M2 · b ··· Mk (b an optional boundary label).

Messages of a concatenation factor (docs/architecture.md §2):
* to W: the concatenation of the incoming acceptors (with b between them);
* to M_i: the input projection of T_i ∘ μ_W, where
  T_i = (ε:μ_1)(ε:b)…(ε:μ_{i-1})(ε:b) · Id(Σ*) · (ε:b)(ε:μ_{i+1})…(ε:μ_k)
  inserts the other incoming messages around an identity.
"""

from __future__ import annotations

from typing import Optional, Sequence

import pynini

from strgm.wfsa import guard
from strgm.wfsa.construct import identity_transducer, insertion_transducer, string_acceptor


def _boundary(label: Optional[int]) -> Optional[pynini.Fst]:
    return None if label is None else string_acceptor((label,))


def concat_acceptors(parts: Sequence[pynini.Fst], boundary_label: Optional[int] = None
                     ) -> pynini.Fst:
    """μ_1 · b · μ_2 ··· μ_k as a new log64 acceptor (ε-free, trimmed)."""
    if not parts:
        raise ValueError("concatenation of zero parts")
    out = parts[0].copy()
    b = _boundary(boundary_label)
    for p in parts[1:]:
        if b is not None:
            out = pynini.concat(out, b)
        out = pynini.concat(out, p)
    return guard.rmepsilon(out, "ε-removal of a concatenation").connect()


def concat_context_transducer(parts: Sequence[Optional[pynini.Fst]], i: int,
                              num_labels: int, boundary_label: Optional[int] = None
                              ) -> pynini.Fst:
    """T_i: input = a candidate string for part i, output = the whole W (see module doc).

    ``parts[j]`` for j ≠ i are the incoming acceptors; ``parts[i]`` is ignored. The identity
    ranges over labels 1..num_labels.
    """
    b = _boundary(boundary_label)
    pieces = []
    for j, p in enumerate(parts):
        if j > 0 and b is not None:
            pieces.append(insertion_transducer(b))
        pieces.append(identity_transducer(num_labels) if j == i else insertion_transducer(p))
    out = pieces[0]
    for p in pieces[1:]:
        out = pynini.concat(out, p)
    return out
