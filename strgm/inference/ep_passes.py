"""The passes of one EP/PEP visit: which pending messages are re-projected, and in what
order (:meth:`strgm.inference.ep.EPSide._visit`).

A visit to V takes K passes over its pending messages μ_{F→V} (``K_early`` on the early
iterations, PEP §7). Round robin (the default): a pass re-projects every pending message
once. Block Gauss–Seidel (``block``): all K passes on one message, then the next.

Fused block (``fused``, default on for PEP-prox with block passes):
the same passes on one message, but every run of passes whose working set stays fixed is
one compiled call (:mod:`strgm.projection.fused`); the first pass and every pass that
grows the working set or meets a divergent step stay reference passes
(:func:`run_fused_block`).
"""

from __future__ import annotations

from typing import Callable, Optional

import pynini


def pass_units(pending: list, passes: int, block: bool) -> list:
    """The visit's units: each a list of (factor, moment cache) taking up to ``passes``
    passes. Block Gauss–Seidel: one unit per message, each with its own cache (its cavity
    stays fixed while its passes run, so p̂'s moments are reused); round robin: one unit
    of every pending message (sharing one cache only when there is one message)."""
    if block:
        return [[(f, {})] for f in pending]
    shared = {} if len(pending) == 1 else None
    return [[(f, shared) for f in pending]]


def run_passes(units: list, passes: int,
               update: Callable[[str, Optional[dict]], None]) -> None:
    """Run every unit's passes: ``update(factor, cache)`` per message and pass."""
    for unit in units:
        for _ in range(passes):
            for f, cache in unit:
                update(f, cache)


def run_visit(side, var: str, pending: list, passes: int) -> None:
    """A visit's ``passes`` passes over its ``pending`` messages: fused blocks
    (:func:`run_fused_block`) when PEP-prox takes block passes and ``fused`` is on, else
    :func:`run_passes`."""
    s = side.s
    if passes > 1 and s.block and s.fused and hasattr(side.projection, "fit_fused"):
        for f in pending:
            run_fused_block(side, var, f, passes)
        return
    run_passes(pass_units(pending, passes, s.block), passes,
               lambda f, cache: side._guarded_update(var, f, cache))


def run_fused_block(side, var: str, factor: str, passes: int) -> None:
    """All ``passes`` passes of ``side`` (an :class:`strgm.inference.ep.EPSide`) on
    μ_{factor→var}: a reference pass (``side._guarded_update``) wherever the fused kernel
    cannot continue (the first pass, a pass that grows the working set, a divergent
    step), fused runs (``projection.fit_fused``) in between. The same passes, in the same
    order, as :func:`run_passes` on a block unit."""
    cache: dict = {}
    left = passes
    while left > 0:
        done = 0
        if left < passes and isinstance(side.mu[var][factor], pynini.Fst):
            out = side.projection.fit_fused(side._target(var, factor), side.schedule,
                                            cache, left)
            if out is not None:
                fit, done = out
                side.updates += done
                side._set(var, factor, fit)
        if done == 0:
            side._guarded_update(var, factor, cache)
            done = 1
        left -= done
