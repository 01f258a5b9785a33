"""Running a chain: sweeps, burn-in, thinning, checkpoints and the posterior it yields.

:func:`run_chain` applies the kernel (by :func:`strgm.chains.driver.drive`) until
``state.iteration == iters``; after
``burn_in`` sweeps it keeps every ``thin``-th state's HMM (p0, P, stop, emissions) in
``state.samples``, so the samples travel with checkpoints and a resumed run keeps the
same ones as an uninterrupted run. Defaults: burn-in half the sweeps, thinning so that at
most :data:`MAX_SAMPLES` samples are kept. A :class:`~strgm.errors.TruncationWarning` is
given when the last sweep uses all L states (the weak-limit truncation is then too small).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from strgm.chains.driver import drive
from strgm.errors import InputError, TruncationWarning
from strgm.hmm.model import HMM, HMMPosterior, hmm_of_state
from strgm.validate import check_int

__all__ = ["run_chain", "posterior_of", "default_schedule", "MAX_SAMPLES"]

MAX_SAMPLES = 20


def default_schedule(iters: int, burn_in=None, thin=None) -> tuple[int, int]:
    """(burn-in, thinning): half the sweeps, and at most MAX_SAMPLES samples."""
    iters = check_int("iters", iters, min=1)
    burn = iters // 2 if burn_in is None else check_int("burn_in", burn_in, min=0,
                                                        max=iters - 1)
    if thin is None:
        thin = max(1, -(-(iters - burn) // MAX_SAMPLES))
    return burn, check_int("thin", thin, min=1)


def _sample_record(h: HMM) -> dict:
    return {"p0": h.p0, "P": h.P, "stop": h.stop, "params": h.params}


def run_chain(kernel, state, iters: int, burn_in: int, thin: int, on_sweep=None,
              checkpoint=None, checkpoint_every: int = 10):
    """The state after ``iters`` sweeps in all (resumed or not), by
    :func:`strgm.chains.driver.drive`. ``on_sweep(state)`` is called after every sweep
    (progress); ``checkpoint`` (a path) is rewritten atomically every
    ``checkpoint_every`` sweeps and at the end."""
    if state.iteration > iters:
        raise InputError(f"the checkpoint is at sweep {state.iteration}, past --iters {iters}")

    def keep(s):
        h = hmm_of_state(s, kernel.settings, kernel.emissions)
        return replace(s, samples=s.samples + [_sample_record(h)])
    state = drive(kernel.sample, state, iters - state.iteration, keep=keep,
                  burn_in=burn_in, thin=thin, checkpoint=checkpoint,
                  checkpoint_every=checkpoint_every,
                  callback=None if on_sweep is None else (lambda s, row: on_sweep(s)))
    L = kernel.settings.L
    if state.trace and state.trace[-1]["states"] == L:
        warnings.warn(f"the last sweep used all L = {L} states: the truncation is "
                      "probably too small (raise L)", TruncationWarning, stacklevel=2)
    return state


def posterior_of(state, kernel, vocab) -> HMMPosterior:
    """The kept samples as an :class:`HMMPosterior` (the last state if none were kept)."""
    em = kernel.emissions
    recs = state.samples or [_sample_record(hmm_of_state(state, kernel.settings, em))]
    hs = tuple(HMM(np.asarray(r["p0"]), np.asarray(r["P"]),
                   None if r["stop"] is None else np.asarray(r["stop"]),
                   {k: np.asarray(v) for k, v in r["params"].items()}, em) for r in recs)
    return HMMPosterior(hs, tuple(vocab), kernel.settings)
