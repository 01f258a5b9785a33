"""The one loop of every learner's chain: samplers and deterministic estimators alike.

Every learner is a *kernel* with explicit state (numpyro style): ``state =
kernel.init(...)`` and ``state = step(state)`` (one sweep or one estimator update; a new
state, the input unchanged).  The state carries everything the next step and the output
depend on, including the trace rows so far (``state.trace``) and the number of steps
taken (``state.iteration``), and saves itself to an atomic checkpoint
(``state.save(path)``).  :func:`drive` applies the steps, shows progress lines, calls
back, writes periodic checkpoints and the final one, stops early when asked (EM's
tolerance), and keeps samples after a burn-in with thinning (``keep``).  Because the
rows hold only quantities determined by the chain (wall-clock time goes to the progress
lines only), a run interrupted at any step boundary and resumed from its checkpoint ends
in the same state, byte for byte, as an uninterrupted one.

Used by the PCFG estimators and samplers (:mod:`strgm.grammars.estimators`,
:mod:`strgm.grammars.samplers`), the TSG samplers (``strgm tsg train``), the infinite
HMMs (:func:`strgm.hmm.training.run_chain`) and phonology EM
(:func:`strgm.models.em.train_phonology`).
"""

from __future__ import annotations

import sys
import time

from strgm.progress import StepProgress
from strgm.validate import check_int

__all__ = ["drive", "kept_at"]


def kept_at(iteration: int, burn_in: int, thin: int) -> bool:
    """Whether the state after step ``iteration`` (counted from 1) is a kept sample:
    past ``burn_in`` steps, every ``thin``-th."""
    return iteration > burn_in and (iteration - burn_in) % thin == 0


def drive(step, state, iters: int, *, describe=None, progress: bool = False, log=sys.stderr,
          checkpoint=None, checkpoint_every: int = 0, callback=None, stop=None,
          keep=None, burn_in: int = 0, thin: int = 1):
    """Apply ``step`` (state → new state whose ``trace`` ends with its row) ``iters`` times.

    ``describe(state, row)`` gives the progress line (``progress``; the elapsed seconds are
    appended); ``keep(state)`` returns the state with the current sample recorded, after
    every step at which :func:`kept_at` (``burn_in``, ``thin``) holds; ``callback(state,
    row)`` runs after every step; ``checkpoint`` (a path) is written every
    ``checkpoint_every`` steps and at the end; ``stop(state)`` true ends the run early,
    before the next step.  Returns the last state.  O(iters) calls of ``step``."""
    iters = check_int("iters", iters, min=0)
    checkpoint_every = check_int("checkpoint_every", checkpoint_every, min=0)
    check_int("burn_in", burn_in, min=0)
    check_int("thin", thin, min=1)
    t0 = time.perf_counter()
    with StepProgress(iters, enabled=progress and describe is not None, stream=log) as bar:
        saved = None
        for _ in range(iters):
            if stop is not None and stop(state):
                break
            state = step(state)
            row = state.trace[-1] if state.trace else {}
            if keep is not None and kept_at(state.iteration, burn_in, thin):
                state = keep(state)
            if describe is not None:
                bar.step(describe(state, row) + f"  {time.perf_counter() - t0:.1f}s")
            if callback is not None:
                callback(state, row)
            if checkpoint and checkpoint_every and state.iteration % checkpoint_every == 0:
                state.save(checkpoint)
                saved = state.iteration
    if checkpoint and saved != state.iteration:
        state.save(checkpoint)
    return state
