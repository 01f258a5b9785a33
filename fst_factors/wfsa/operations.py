"""Composition and intersection through the size guard (:mod:`fst_factors.wfsa.guard`).

These are the two products every layer above uses; they live apart from
:mod:`fst_factors.wfsa.core` (plain machine construction and arc tables) so that the guard,
which reads arc tables, sits between the two and no module of ``fst_factors.wfsa`` imports one
that imports it back.
"""

from __future__ import annotations

import pynini

from fst_factors.wfsa import guard


def compose(a: pynini.Fst, b: pynini.Fst, connect: bool = True) -> pynini.Fst:
    """Composition a ∘ b (a's output tape meets b's input tape), sorting copies as needed.
    The result's size is bounded first (:mod:`fst_factors.wfsa.guard`): one that cannot fit in
    the memory budget raises :class:`strgm.errors.MessageTooLargeError` unbuilt."""
    return guard.compose(a, b, connect=connect)


def intersect(a: pynini.Fst, b: pynini.Fst) -> pynini.Fst:
    """Pointwise product of two acceptors (weights multiply, i.e. -log weights add)."""
    return guard.compose(a, b, op="intersection")
