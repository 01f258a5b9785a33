"""The one driver of the grammar-side chains: samplers and deterministic estimators alike.

Every method of :mod:`strgm.grammars` is a *kernel* with explicit state (numpyro style):
``state = kernel.init(...)`` and ``state = kernel.sample(state)`` (one sweep or one
estimator update; a new state, the input unchanged). The state carries everything the next
step and the output depend on, including the trace rows so far, and saves itself to an
atomic checkpoint (``state.save(path)``). :func:`drive` is the loop shared by
:func:`strgm.grammars.samplers.run` (Gibbs, collapsed MH) and
:func:`strgm.grammars.estimators.run` (EM, MAP-EM, VB, CVB): steps, progress lines,
callbacks, periodic checkpoints and the final one, and early stopping. Because the rows
hold only quantities determined by the chain (wall-clock time goes to the progress lines
only), a run interrupted at any iteration boundary and resumed from its checkpoint ends in
the same state, byte for byte, as an uninterrupted one (docs/architecture.md, the grammar
side).
"""

from __future__ import annotations

import sys
import time

from strgm.errors import InputError
from strgm.progress import StepProgress
from strgm.validate import check_int, check_size

__all__ = ["drive", "stuck_chain"]


def drive(step, state, iters: int, *, describe=None, progress: bool = False, log=sys.stderr,
          checkpoint=None, checkpoint_every: int = 0, callback=None, stop=None):
    """Apply ``step`` (state → new state whose ``trace`` ends with its row) ``iters`` times.

    ``describe(state, row)`` gives the progress line (``progress``; the elapsed seconds are
    appended); ``callback(state, row)`` runs after every step; ``checkpoint`` (a path) is
    written every ``checkpoint_every`` steps and at the end; ``stop(state)`` true ends the
    run early (EM's tolerance). Returns the last state."""
    iters = check_int("iters", iters, min=0)
    checkpoint_every = check_int("checkpoint_every", checkpoint_every, min=0)
    t0 = time.perf_counter()
    with StepProgress(iters, enabled=progress and describe is not None, stream=log) as bar:
        state, saved = _loop(step, state, iters, describe, bar, t0, checkpoint,
                             checkpoint_every, callback, stop)
    if checkpoint and saved != state.iteration:
        state.save(checkpoint)
    return state


def _loop(step, state, iters, describe, bar, t0, checkpoint, checkpoint_every, callback,
          stop):
    """The steps of :func:`drive`: (last state, iteration of the last checkpoint)."""
    saved = None
    for _ in range(iters):
        if stop is not None and stop(state):
            break
        state = step(state)
        row = state.trace[-1]
        if describe is not None:
            bar.step(describe(state, row) + f"  {time.perf_counter() - t0:.1f}s")
        if callback is not None:
            callback(state, row)
        if checkpoint and checkpoint_every and state.iteration % checkpoint_every == 0:
            state.save(checkpoint)
            saved = state.iteration
    return state, saved


def chain_inputs(grammar, corpus, max_memory=None, compiled=None, purpose="estimate from"):
    """(compiled grammar, corpus as tuples) shared by every chain: the corpus must be
    non-empty without empty sentences; ``max_memory`` bytes bound one chart (batches are
    sized to fit)."""
    from strgm.grammars.cfg import compile_grammar

    cg = compiled if compiled is not None else compile_grammar(grammar)
    if max_memory is not None:
        cg.max_chart_bytes = check_size("max_memory", max_memory)
    sentences = [tuple(s) for s in corpus]
    if not sentences:
        raise InputError(f"the corpus is empty (no sentences to {purpose})")
    if any(len(s) == 0 for s in sentences):
        raise InputError("the corpus holds an empty sentence")
    return cg, sentences


def stuck_chain(trace, key: str, window: int = 10, acceptance=None):
    """A one-line warning when a chain has not moved: ``key`` (its log P) took the same
    value over the last ``window`` sweeps, or the MH acceptance rate is exactly 1 with a
    constant log P (every proposal is the current state: each sentence has one parse, or
    the proposal never leaves the current trees). None when the chain moved or the run
    is shorter than ``window`` sweeps."""
    values = [r[key] for r in trace if key in r][-window:]
    if len(values) < window or len(set(values)) > 1:
        return None
    why = (f"acceptance {acceptance:.3f}, " if acceptance is not None else "")
    return (f"the chain did not move: {why}{key} stayed at {values[-1]:.6g} for the last "
            f"{window} sweeps; check that the sentences are ambiguous under the grammar, "
            "or run more sweeps")

