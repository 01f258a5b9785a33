"""Concatenation relations W = M1 · b · M2 · b ··· Mk (b an optional boundary label).

Messages of a concatenation factor (docs/messages.md):
* to W: the concatenation of the incoming acceptors (with b between them);
* to M_i: the input projection of T_i ∘ μ_W, where
  T_i = (ε:μ_1)(ε:b)…(ε:μ_{i-1})(ε:b) · Id(Σ*) · (ε:b)(ε:μ_{i+1})…(ε:μ_k)
  inserts the other incoming messages around an identity.

The message to M_i is the two-sided quotient of μ_W by the other parts' messages
(:mod:`fst_factors.wfsa.quotient`), computed without the composition and its ε-removal:
:func:`part_message_by_quotient`. String lists (pruned BP's k-best domains) are carried
through μ_W string by string; cyclic messages (EP's n-gram acceptors) by path sums over
their products with μ_W (:mod:`fst_factors.wfsa.quotient_product`).
"""

from __future__ import annotations

from typing import Optional, Sequence

import pynini

from fst_factors.wfsa import guard
from fst_factors.wfsa.construct import identity_transducer, insertion_transducer, string_acceptor
from fst_factors.wfsa.core import is_acyclic, num_arcs
from fst_factors.wfsa.quotient import quotient

#: Other parts' messages with more arcs than this in all, or with a cycle, take the
#: product route of the quotient: the list route costs a vector operation per arc.
QUOTIENT_MAX_ARCS = 2_000


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


def part_message_by_quotient(parts: Sequence[pynini.Fst], i: int, whole: pynini.Fst,
                             num_labels: int, boundary_label: Optional[int] = None,
                             what: str = "quotient") -> Optional[pynini.Fst]:
    """μ_{F→M_i} as the quotient of ``whole`` by the parts before and after part i (with
    the boundary between them): carried through ``whole`` string by string when the
    other parts are small acyclic acceptors (pruned BP's lists), else by path sums over
    their products with ``whole`` (EP's n-gram acceptors, exact BP's messages;
    :mod:`fst_factors.wfsa.quotient_product`). ``None`` when neither applies (then
    :func:`concat_context_transducer` and a composition give it). ``parts[i]`` is
    ignored."""
    others = [p for j, p in enumerate(parts) if j != i]
    if any(p is None for p in others):
        return None
    lists = (sum(num_arcs(p) for p in others) <= QUOTIENT_MAX_ARCS
             and all(is_acyclic(p) for p in others))
    b = _boundary(boundary_label)
    before: list = []
    after: list = []
    for j, p in enumerate(parts):
        if j < i:
            before += [p] if b is None else [p, b]
        elif j > i:
            after += [p] if b is None else [b, p]
    return quotient(whole, before, after, num_labels, what, by_product=not lists)
