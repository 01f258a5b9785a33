"""Deterministic estimators sharing one inside–outside chart: EM, MAP-EM, VB and CVB.

The update rules and their costs are in :mod:`strgm.grammars.estimator_kernels` (Johnson,
Griffiths & Goldwater 2007; Kurihara & Sato 2006; Wang & Blunsom 2013 Fig. 3), one
deterministic kernel per method with the samplers' interface: ``state = kernel.init(...)``
runs the first E-step, ``state = kernel.sample(state)`` one update, the whole state in an
:class:`~strgm.grammars.estimator_state.EstimatorState`.  :func:`run` drives any of them
with :func:`strgm.chains.driver.drive` (trace, periodic checkpoints, exact resume), as
:func:`strgm.grammars.samplers.run` drives the samplers.  :func:`fit` (and :func:`em`,
:func:`map_em`, :func:`vb`, :func:`cvb`) wrap init + run and return a :class:`FitResult`
with the trace of −log P(w | θ) (nats), bits/token, rules above 1e-7, unparsable sentences
and, when a held-out corpus is given, held-out perplexity, plus the wall-clock seconds of
each row.  Row t of the trace describes the estimate after t updates (row 0: the initial θ).
"""

from __future__ import annotations

import sys
import time

from strgm.chains.driver import drive
from strgm.grammars.estimator_kernels import CVBKernel, EMKernel, FitResult, MAPKernel, \
    VBKernel, _Estimator, describe, posterior_mean, unparsable_corpus_error
from strgm.grammars.estimator_state import EstimatorState
from strgm.validate import check_choice, check_float, check_int

__all__ = ["FitResult", "em", "map_em", "vb", "cvb", "fit", "run", "posterior_mean",
           "EMKernel", "MAPKernel", "VBKernel", "CVBKernel", "KERNELS", "EstimatorState",
           "unparsable_corpus_error"]


def _check_args(iters, alpha=None, seed=None, tol=None):
    """The keyword arguments every estimator shares, checked like the command line's."""
    check_int("iters", iters, min=1)
    if alpha is not None:
        check_float("alpha", alpha, min=0, min_open=True)
    if seed is not None:
        check_int("seed", seed, min=0)
    if tol is not None:
        check_float("tol", tol, min=0)


KERNELS = {"em": EMKernel, "map": MAPKernel, "vb": VBKernel, "cvb": CVBKernel}


def run(kernel: _Estimator, state: EstimatorState, iters: int, progress: bool = False,
        log=sys.stderr, checkpoint=None, checkpoint_every: int = 0, callback=None
        ) -> EstimatorState:
    """Up to ``iters`` updates from ``state`` with :func:`strgm.chains.driver.drive`
    (progress lines, ``callback(state, row)``, atomic checkpoints every
    ``checkpoint_every`` updates and at the end); EM stops early once its tolerance is met.
    ``kernel.result(state)`` gives the :class:`FitResult`."""
    kernel.check(state, deep=True)
    return drive(kernel.sample, state, iters, describe=describe, progress=progress, log=log,
                 checkpoint=checkpoint, checkpoint_every=checkpoint_every, callback=callback,
                 stop=lambda s: s.converged)


def _with_seconds(row: dict, seconds: float) -> dict:
    """``row`` with the wall-clock ``seconds`` after its ``unparsable`` entry."""
    out = {}
    for k, v in row.items():
        out[k] = v
        if k == "unparsable":
            out["seconds"] = seconds
    return out


def _fit(kernel, iters, progress, log, callback=None, **init_kw) -> FitResult:
    """init + :func:`run`; the result's trace rows carry the seconds since the start."""
    t0 = time.perf_counter()
    state = kernel.init(**init_kw)
    secs = [time.perf_counter() - t0]
    if progress:
        print(describe(state, state.trace[0]) + f"  {secs[0]:.1f}s", file=log, flush=True)

    def cb(st, row):
        secs.append(time.perf_counter() - t0)
        if callback is not None:
            callback(st.iteration, st.theta, _with_seconds(row, secs[-1]))
    state = run(kernel, state, iters, progress=progress, log=log, callback=cb)
    res = kernel.result(state)
    res.trace = [_with_seconds(r, s) for r, s in zip(res.trace, secs)]
    return res


def em(grammar, corpus, iters=50, theta0=None, tol=None, heldout=None, progress=False,
       log=sys.stderr, max_memory=None) -> FitResult:
    """Inside–outside EM (:class:`EMKernel`): θ_r ∝ E[f_r | w, θ⁽ᵗ⁾]."""
    _check_args(iters, tol=tol)
    return _fit(EMKernel(grammar, corpus, tol, heldout, max_memory), iters, progress, log,
                theta0=theta0)


def map_em(grammar, corpus, alpha=None, iters=50, theta0=None, heldout=None, progress=False,
           log=sys.stderr, max_memory=None) -> FitResult:
    """MAP-EM (:class:`MAPKernel`): θ_r ∝ max(0, E_r + α_r − 1)."""
    _check_args(iters, alpha)
    return _fit(MAPKernel(grammar, corpus, alpha, heldout, max_memory), iters, progress, log,
                theta0=theta0)


def vb(grammar, corpus, alpha=None, iters=50, theta0=None, heldout=None, progress=False,
       log=sys.stderr, max_memory=None) -> FitResult:
    """Mean-field VB (:class:`VBKernel`); the returned θ is the posterior mean of q(θ)."""
    _check_args(iters, alpha)
    return _fit(VBKernel(grammar, corpus, alpha, heldout, max_memory), iters, progress, log,
                theta0=theta0)


def cvb(grammar, corpus, alpha=None, iters=20, theta0=None, seed=0, heldout=None,
        progress=False, log=sys.stderr, callback=None, max_memory=None) -> FitResult:
    """Collapsed VB (:class:`CVBKernel`); ``callback(iteration, θ̄, row)`` after each sweep."""
    _check_args(iters, alpha, seed)
    return _fit(CVBKernel(grammar, corpus, alpha, heldout, max_memory), iters, progress, log,
                callback, theta0=theta0, seed=seed)


def fit(method: str, grammar, corpus, **kw) -> FitResult:
    """Dispatch on ``method`` in {em, map, vb, cvb}.  Every keyword is checked as the
    command line checks its option (``iters`` ≥ 1, ``alpha`` finite and > 0, ``seed`` ≥ 0);
    an empty corpus is an :class:`InputError`, a corpus none of whose sentences parses a
    :class:`GrammarError`."""
    fns = {"em": em, "map": map_em, "vb": vb, "cvb": cvb}
    check_choice("method", method, sorted(fns))
    return fns[method](grammar, corpus, **kw)
