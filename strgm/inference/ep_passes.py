"""The passes of one EP/PEP visit: which pending messages are re-projected, in what
order, and when the remaining passes are skipped (:meth:`strgm.inference.ep.EPSide._visit`).

A visit to V takes K passes over its pending messages μ_{F→V} (``K_early`` on the early
iterations, PEP §7). Round robin (the default): a pass re-projects every pending message
once. Block Gauss–Seidel (``block``): all K passes on one message, then the next.

Residual stop (``pass_tol`` > 0). A pass that moved θ_V by at most ``pass_tol`` in every
coordinate, max_f |θ_V^after(f) − θ_V^before(f)| ≤ ``pass_tol``, ends the unit's passes.
A heuristic: a pass that barely moved θ_V suggests the passes are near a fixed point
(each step is η times a gradient, so a small move means small gradients on the active
set), and the messages are re-projected again on the next iteration anyway. The passes
saved are counted (``updates_saved``). Off (``pass_tol`` = 0) the visit is exactly the
fixed K passes. Measured: docs/architecture.md §3.

Fused block (``fused``, default on for PEP-prox with block passes and no residual stop):
the same passes on one message, but every run of passes whose working set stays fixed is
one compiled call (:mod:`strgm.projection.fused`); the first pass and every pass that
grows the working set or meets a divergent step stay reference passes
(:func:`run_fused_block`).
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pynini

from strgm.features.theta import Theta


def pass_units(pending: list, passes: int, block: bool) -> list:
    """The visit's units: each a list of (factor, moment cache) taking up to ``passes``
    passes. Block Gauss–Seidel: one unit per message, each with its own cache (its cavity
    stays fixed while its passes run, so p̂'s moments are reused); round robin: one unit
    of every pending message (sharing one cache only when there is one message)."""
    if block:
        return [[(f, {})] for f in pending]
    shared = {} if len(pending) == 1 else None
    return [[(f, shared) for f in pending]]


def theta_moved(before: Theta, after: Theta) -> float:
    """max |after − before| over the union of their features (absent entries are 0)."""
    if before is after:
        return 0.0
    fs = before.features.union(after.features)
    d = after.align(fs, strict=False).values - before.align(fs, strict=False).values
    return float(np.max(np.abs(d), initial=0.0))


def run_passes(units: list, passes: int, update: Callable[[str, Optional[dict]], None],
               theta: Callable[[], Theta], pass_tol: float) -> int:
    """Run every unit's passes (``update(factor, cache)`` per message), ending a unit
    early once one of its passes moved θ_V by ≤ ``pass_tol`` (module docstring).
    Returns the number of message updates saved."""
    saved = 0
    for unit in units:
        for k in range(passes):
            before = theta() if pass_tol > 0 and k + 1 < passes else None
            for f, cache in unit:
                update(f, cache)
            if before is not None and theta_moved(before, theta()) <= pass_tol:
                saved += (passes - k - 1) * len(unit)
                break
    return saved


def run_visit(side, var: str, pending: list, passes: int) -> int:
    """A visit's ``passes`` passes over its ``pending`` messages: fused blocks
    (:func:`run_fused_block`) when PEP-prox takes block passes with no residual stop and
    ``fused`` is on, else :func:`run_passes`. Returns the message updates saved."""
    s = side.s
    if passes > 1 and s["block"] and s["fused"] and s["pass_tol"] == 0 \
            and hasattr(side.projection, "fit_fused"):
        for f in pending:
            run_fused_block(side, var, f, passes)
        return 0
    return run_passes(pass_units(pending, passes, s["block"]), passes,
                      lambda f, cache: side._guarded_update(var, f, cache),
                      lambda: side.theta(var), s["pass_tol"])


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
