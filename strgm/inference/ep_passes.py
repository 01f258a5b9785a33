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
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

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
