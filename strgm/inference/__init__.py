"""Inference on string factor graphs: one entry point, several methods.

    infer(graph, method="bp" | "pruned" | "ep" | "pep", **options) -> InferenceResult

Methods are looked up in a registry (:mod:`strgm.inference.methods`); each is the shared
scheduler with its own variable side (:mod:`strgm.inference.side`).
"""

from __future__ import annotations

import time
import warnings
from contextlib import nullcontext
from typing import Callable, Optional

from threadpoolctl import threadpool_limits

from strgm.errors import ConvergenceWarning, NoProjectionWarning
from strgm.graph import FactorGraph
from strgm.inference.belief import Belief  # noqa: F401
from strgm.inference.bp import ExactSide, PrunedSide  # noqa: F401
from strgm.inference.ep import EPSide  # noqa: F401
from strgm.inference.methods import METHODS, Method, method_named, register  # noqa: F401
from strgm.inference.result import InferenceResult
from strgm.inference.schedule import Progress, run_sweeps  # noqa: F401
from strgm.inference.side import VariableSide  # noqa: F401
from strgm.validate import check_float, check_int, check_size
from fst_factors.wfsa import guard


def infer(graph: FactorGraph, method: str = "pruned", *, max_iters: int = 10,
          tol: Optional[float] = None, max_seconds: Optional[float] = None,
          kbest: int = 20, max_states: int = 200_000, max_memory: Optional[int | str] = None,
          progress: Optional[Callable[[str], None]] = None, **options) -> InferenceResult:
    """Run inference and return beliefs for every latent variable.

    * ``"bp"``: loopy BP with exact WFSA messages (exact on acyclic graphs).
    * ``"pruned"``: pruned BP, domains = union of the ``kbest`` strings of incoming messages.
    * ``"ep"`` / ``"pep"``: expectation propagation with n-gram θ messages (see
      :mod:`strgm.inference.ep`; options such as ``order``, ``projection``, ``lam``).

    Memory, for every method (:mod:`fst_factors.wfsa.guard`): ``max_states`` bounds the states
    of every message and belief; ``max_memory`` (bytes, or a size such as ``"4G"``;
    default: current RSS plus half of the available memory) caps the process's resident
    memory.

    Stopping: the run stops when no tracked belief moved more than ``tol`` in an
    iteration (default: the method's ``default_tol``, a top-5 probability change of 1e-4
    for BP and pruned BP, a symmetric KL divergence of 0.01 nats for EP and 0.05 for PEP), after
    ``max_iters`` iterations, or — anytime — at the end of the first iteration that
    ends after ``max_seconds``. ``result.extra["stop_reason"]`` says which, and
    ``result.deltas`` how far the beliefs moved in each iteration.

    Each composition, ε-removal and n-best search is bounded *before* it runs (160
    bytes per state and 48 per arc of a pynini VectorFst while being built, times 2
    for the copy that follows) and refused with :class:`MessageTooLargeError` — naming
    the variable or factor — when it might not fit; OpenFst itself would abort the process
    with ``std::bad_alloc``. Options are validated with :mod:`strgm.validate` (an
    :class:`OptionError` names the keyword).
    """
    method_named(method)
    max_iters = check_int("max_iters", max_iters, min=1)
    if tol is None:
        tol = method_named(method).default_tol
    tol = check_float("tol", tol, min=0)
    if max_seconds is not None:
        max_seconds = check_float("max_seconds", max_seconds, min=0)
    kbest = check_int("kbest", kbest, min=1)
    max_states = check_int("max_states", max_states, min=1)
    if max_memory is not None:
        max_memory = check_size("max_memory", max_memory)
    with guard.limits(max_states, max_memory, method=method) as lim:
        return _infer(graph, method, max_iters, tol, max_seconds, kbest, max_states, lim,
                      progress, options)


def _infer(graph, method, max_iters, tol, max_seconds, kbest, max_states, lim, progress,
           options) -> InferenceResult:
    t0 = time.perf_counter()
    side = method_named(method).make_side(graph, kbest=kbest, max_states=max_states,
                                          options=options)
    limit = nullcontext() if side.blas_threads is None else \
        threadpool_limits(limits=side.blas_threads, user_api="blas")
    with limit:
        stats = run_sweeps(graph, side, max_iters=max_iters, tol=tol,
                           max_states=max_states, progress=progress,
                           min_iters=side.min_iters, max_seconds=max_seconds)
    timed_out = stats.stop_reason == "max_seconds"
    if not stats.converged and (timed_out or not graph.is_acyclic()):
        why = "its time limit" if timed_out else "max_iters"
        warnings.warn(f"{method} stopped at {why} after {stats.iterations} iterations "
                      f"without converging (last belief change {stats.deltas[-1]:.2e} > "
                      f"tol={tol})", ConvergenceWarning, stacklevel=3)
    if getattr(side, "approximated", None) == [] and graph.latent:
        warnings.warn(f"{method} made no projection: every latent variable has degree ≤ 2 "
                      "and its messages were relayed exactly, so these are exact BP's "
                      "beliefs (relay=False projects them anyway)", NoProjectionWarning,
                      stacklevel=3)
    settings = {"max_iters": max_iters, "tol": tol, "max_seconds": max_seconds,
                **side.settings}
    return InferenceResult(method, settings, time.perf_counter() - t0, stats.iterations,
                           stats.converged, stats.deltas, side=side, graph=graph,
                           extra={"max_message_states": stats.max_message_states,
                                  "stop_reason": stats.stop_reason,
                                  **side.diagnostics()})
