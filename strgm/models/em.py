"""EM driver for the phonology, and its checkpoints (held-out prediction:
:mod:`strgm.models.prediction`).

``train_phonology(paradigm, ...)``: E-step = ``infer`` (any method) on the factor graph
of the observed words with T_θ as every word's phonology; expected edit counts
(:mod:`strgm.models.training`); M-step = L-BFGS with an L2 (and optional L1) penalty.
Iterates until the relative change of the objective trace ℓ̂ is below ``tol`` or
``em_iters`` M-steps.

Checkpoints. With ``checkpoint=PATH`` the complete state is written (atomically, strict
JSON) at every iteration boundary: θ, the trace, the next iteration, whether and why the
run stopped (converged / iteration cap), and the settings that define the run (method,
λ, tol, result-affecting inference options, a digest of the training words). The
convergence test needs only the previous objective, which is the trace's last entry, and
the M-step (L-BFGS from θ_t) and the E-step keep no state between iterations, so
``resume=PATH`` continues exactly where the run stopped: an interrupted and resumed run
gives byte-identical θ, trace and checkpoints to an uninterrupted one (tested at every
iteration boundary). Timings are not part of the trace (they never repeat); they are in
``TrainResult.timing``. Resuming a run that had stopped re-runs only its final E-step (to
return the inference result); one stopped at its cap continues when ``em_iters`` is
larger. A checkpoint made with other settings or training words is refused.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import numpy as np

from fst_factors.alphabet import Alphabet
from strgm.chains.driver import drive
from strgm.datasets.paradigm import Paradigm
from strgm.errors import ConvergenceWarning, InputError, ObjectiveDecreaseWarning
from strgm.inference import METHODS, infer
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.phonology import build_phonology_model
from strgm.progress import tagged
from strgm.models.training import expected_counts, m_step
from strgm.models.em_checkpoint import Checkpoint, resumed
from strgm.models.em_checkpoint import write_checkpoint as _write_checkpoint
from strgm.safe_io import check_output, strict_json
from strgm.validate import check_choice, check_float, check_int, check_probability
from fst_factors.transducers.edit import P_COPY

#: Inference options that bound resources but never change a result (not compared).
_BUDGET_OPTIONS = ("max_memory", "max_states")


@dataclass
class TrainResult:
    model: PhonologyEditModel
    trace: list = field(default_factory=list)  # per iteration: {"objective", "q", ...}
    result: object = None  # final InferenceResult (θ_final)
    graph_model: object = None  # PhonologyModel of the training words
    timing: list = field(default_factory=list)  # per iteration run here: seconds
    stop: Optional[str] = None  # "converged" or "cap"
    restart_objectives: list = field(default_factory=list)  # final ℓ of every restart
    restart: int = 0  # which restart this is (strgm.models.restarts)

    def __repr__(self) -> str:
        return (f"TrainResult(iterations={len(self.trace)}, stop={self.stop!r}, "
                f"restart={self.restart}, "
                f"segments={self.model.alphabet.num_segments})")


@dataclass(frozen=True)
class FirstStep:
    """EM's first iteration, already computed under the start's distribution p_θ₀(s | u)
    on the same training words (the tier screening, :mod:`strgm.models.tier_choice`):
    the E-step's ``messages`` (:func:`e_step_messages`' triple), optionally its
    ``counts`` and Σ log Z ``ll`` in the start's templates, and the M-step's ``theta``
    and ``q`` from the start's θ with EM's λ and no L1 (None: EM computes them)."""

    messages: tuple
    counts: Optional[np.ndarray] = None
    ll: Optional[float] = None
    theta: Optional[np.ndarray] = None
    q: Optional[float] = None


def split(paradigm: Paradigm, heldout: set) -> Paradigm:
    return Paradigm(tuple(e for e in paradigm.entries if e.key not in heldout
                          and e.surface is not None), paradigm.source)


def e_step(model: PhonologyEditModel, train: Paradigm, method: str, infer_opts: dict,
           progress=None, messages: Optional[tuple] = None, ur_prior=None):
    """Inference with T_θ, then (counts, Σ_w log Z_w, result, graph model). The result is
    detached (:meth:`strgm.inference.InferenceResult.detach`): it keeps the morphemes'
    beliefs, which is all prediction needs, and frees the engine's caches before the
    M-step. ``messages``: :func:`e_step_messages`' triple of an inference already run
    on ``train`` under a model with ``model``'s distribution p_θ(s | u), used instead of
    inference (only the counts are computed). ``ur_prior``: the morphemes' prior
    (:func:`strgm.models.phonology.build_phonology_model`)."""
    pairs, res, pm = messages or e_step_messages(model, train, method, infer_opts,
                                                 progress, ur_prior)
    counts, ll = expected_counts(model.structure, model.theta, pairs, progress)
    return counts, ll, res, pm


def e_step_messages(model: PhonologyEditModel, train: Paradigm, method: str,
                    infer_opts: dict, progress=None, ur_prior=None) -> tuple:
    """:func:`e_step`'s inference: (pairs, detached result, graph model);
    ``pairs``: per training word (μ_{phonology→U}, surface labels), for
    :func:`strgm.models.training.expected_counts`. They depend on T_θ only through
    p_θ(s | u): models with one distribution share them (:mod:`strgm.models.tier_choice`)."""
    fst = model.fst()
    pm = build_phonology_model(train, alphabet=model.alphabet, phonology=fst,
                               boundary=model.alphabet.boundary, ur_prior=ur_prior)
    if progress:
        progress(f"E-step ({method})")
    with warnings.catch_warnings():  # EM reports unconverged E-steps once (train_phonology)
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = infer(pm.graph, method, progress=progress, **infer_opts)
    pairs = [(res.message(pm.ur_vars[e.key], f"phonology:{e.key}"),
              model.alphabet.encode(e.segments)) for e in train.observed]
    return pairs, res.detach(list(pm.morpheme_vars.values())), pm


def run_settings(train: Paradigm, method: str, l2: float, tol: float,
                 infer_opts: dict, l1: float = 0.0) -> dict:
    """What defines an EM run besides θ: compared when resuming (``l1`` only when used,
    so checkpoints made before it existed still resume)."""
    words = json.dumps([[e.key, list(e.morphemes), e.surface] for e in train.observed],
                       ensure_ascii=False)
    opts = {k: v for k, v in sorted(infer_opts.items()) if k not in _BUDGET_OPTIONS}
    return json.loads(strict_json({
        "method": method, "l2": l2, "tol": tol, "infer_opts": opts,
        **({"l1": l1} if l1 else {}),
        "training_words": hashlib.sha256(words.encode("utf-8")).hexdigest()}))


def train_phonology(paradigm: Paradigm, *, alphabet: Optional[Alphabet] = None,
                    method: str = "pruned", em_iters: int = 5, l2: float = 1.0,
                    l1: float = 0.0, tol: float = 1e-4, infer_opts: Optional[dict] = None,
                    model: Optional[PhonologyEditModel] = None, p_copy: float = P_COPY,
                    checkpoint: Optional[str] = None, resume: Optional[str] = None,
                    heldout: set = frozenset(),
                    progress: Optional[Callable[[str], None]] = None,
                    report: Optional[Callable[[dict], None]] = None,
                    first_step: Optional[FirstStep] = None, ur_prior=None) -> TrainResult:
    """EM (module docstring). Returns the trained model, the trace and the last E-step.

    ``l1`` ≥ 0 adds μ‖θ‖₁ to the penalty (sparse weights; :func:`m_step`).
    ``em_iters`` ≥ 0 M-steps (0 evaluates the initial or resumed model), ``l2`` and
    ``tol`` finite and ≥ 0; bad values raise OptionError naming the keyword.
    ``report(entry)`` gets each trace entry as soon as its objective is known (restored
    ones first); a fall of the objective is flagged (:func:`_trace_entry_of`).
    ``first_step``: the first iteration's E-step (and M-step) already computed
    (:class:`FirstStep`; not with ``resume``). ``ur_prior``: the morphemes' prior in every
    E-step's graph (:func:`strgm.models.phonology.build_phonology_model`)."""
    method, em_iters, l2, tol, p_copy, l1 = _checked(method, em_iters, l2, tol, p_copy,
                                                     checkpoint, l1)
    infer_opts = dict(infer_opts or {})
    train = split(paradigm, set(heldout))
    if not train.observed:
        raise InputError("no observed training words", path=paradigm.source)
    settings = run_settings(train, method, l2, tol, infer_opts, l1)
    model, trace, start, stop, prev = _start_state(resume, settings, em_iters, report, model,
                                                   alphabet or paradigm.alphabet(), p_copy)
    if stop is not None:  # finished: only the final E-step, for its result
        return _rerun_final(Checkpoint(model, trace, start, stop, settings), train, method,
                            infer_opts, checkpoint, ur_prior)
    run = _EMRun(train, method, infer_opts, l2, l1, tol, em_iters,
                 None if resume else first_step, progress, report, ur_prior)
    st = drive(lambda state: _iteration(run, state), EMState(model, tuple(trace), start,
                                                              settings, prev=prev),
               em_iters + 1 - start, stop=lambda state: state.stop is not None,
               checkpoint=checkpoint, checkpoint_every=1)
    _warn_unsettled(list(st.unsettled), len(st.timing), method, infer_opts)
    return TrainResult(st.model, list(st.trace), st.result, st.graph_model, list(st.timing),
                       st.stop)


@dataclass(frozen=True)
class _EMRun:
    """What every iteration of one EM run shares (:func:`train_phonology`'s arguments)."""

    train: Paradigm
    method: str
    infer_opts: dict
    l2: float
    l1: float
    tol: float
    em_iters: int
    first_step: Optional[FirstStep]
    progress: Optional[Callable[[str], None]]
    report: Optional[Callable[[dict], None]]
    ur_prior: object


@dataclass(frozen=True)
class EMState:
    """EM at an iteration boundary, the chain state :func:`strgm.chains.driver.drive`
    advances: the model, the trace, ``iteration`` (the next one to run; with ``stop``,
    the last one run), the run's settings and the previous objective; also what this
    call computed (the last E-step's result and graph model, timings, unsettled
    E-steps), which a checkpoint does not hold."""

    model: PhonologyEditModel
    trace: tuple
    iteration: int
    settings: dict
    stop: Optional[str] = None
    prev: Optional[float] = None
    fresh: bool = True
    result: object = None
    graph_model: object = None
    timing: tuple = ()
    unsettled: tuple = ()

    def save(self, path: str) -> None:
        """The checkpoint of this boundary (:mod:`strgm.models.em_checkpoint`)."""
        _write_checkpoint(path, Checkpoint(self.model, list(self.trace), self.iteration,
                                           self.stop, self.settings))


def _iteration(run: _EMRun, st: EMState) -> EMState:
    """One EM iteration: the E-step and the objective; then, unless the run stops here
    (tolerance or cap), the M-step."""
    it = st.iteration
    t0, tell = time.perf_counter(), _tagged(run.progress, f"EM iteration {it}/{run.em_iters}")
    first = run.first_step if st.fresh else None
    counts, ll, res, pm = _e_step_of(first, st.model, run.train, run.method,
                                     run.infer_opts, tell, run.ur_prior)
    unsettled = st.unsettled + (() if res.converged or pm.graph.is_acyclic()
                                else (res.deltas[-1],))
    theta = st.model.theta
    obj = ll - 0.5 * run.l2 * float(theta @ theta) - run.l1 * float(np.abs(theta).sum())
    entry = _trace_entry_of(it, obj, ll, st.prev, run.method, run.report)
    t1 = time.perf_counter()
    done = dict(fresh=False, result=res, graph_model=pm, unsettled=unsettled)
    stop = _stop_reason(obj, st.prev, run.tol, it, run.em_iters)
    if stop:
        return replace(st, trace=st.trace + (entry,), stop=stop, **done,
                       timing=st.timing + ({"iteration": it, "e_seconds": t1 - t0},))
    new_theta, q = (first.theta, first.q) if first and first.theta is not None and not run.l1 \
        else m_step(st.model.structure, counts, theta, run.l2, progress=tell, l1=run.l1)
    timing = {"iteration": it, "e_seconds": t1 - t0, "m_seconds": time.perf_counter() - t1}
    return replace(st, model=st.model.with_theta(new_theta), trace=st.trace + ({**entry, "q": q},),
                   iteration=it + 1, prev=obj, timing=st.timing + (timing,), **done)


def _e_step_of(first: Optional[FirstStep], model, train, method, infer_opts, tell,
               ur_prior) -> tuple:
    """:func:`e_step`'s (counts, ll, result, graph model), or what ``first`` computed of
    it already."""
    if first is not None and first.counts is not None:
        return first.counts, first.ll, first.messages[1], first.messages[2]
    return e_step(model, train, method, infer_opts, tell, first and first.messages,
                  ur_prior)


def _start_state(resume, settings, em_iters, report, model, alphabet, p_copy) -> tuple:
    """(model, trace, first iteration, stop reason, previous objective) of a run that
    resumes the checkpoint ``resume`` (its trace entries reported again) or starts from
    ``model`` (default: the copy-biased start over ``alphabet``)."""
    if resume:
        model, trace, start, stop, prev = resumed(resume, settings, em_iters)
        for e in trace if report else ():
            report(e)
        return model, trace, start, stop, prev
    start = model if model is not None else PhonologyEditModel(alphabet).initial(p_copy)
    return start, [], 0, None, None


def _warn_unsettled(unsettled: list, n: int, method: str, infer_opts: dict) -> None:
    """One warning for the E-steps (``unsettled``: their last belief changes, of ``n``)
    whose inference on a loopy graph stopped at ``max_iters`` before meeting its tol
    (:func:`e_step` keeps each E-step's own warning back)."""
    if unsettled:
        warnings.warn(f"{method} inference stopped before meeting its tol in "
                      f"{len(unsettled)} of {n} E-steps (max_iters = "
                      f"{infer_opts.get('max_iters', 10)}; last belief change up to "
                      f"{max(unsettled):.2e})", ConvergenceWarning, stacklevel=3)


def _tagged(progress: Optional[Callable[[str], None]], tag: str):
    """``progress`` with every message prefixed by ``tag`` (None stays None)."""
    return (lambda msg: progress(tagged(msg, tag))) if progress else None


def _rerun_final(ck: Checkpoint, train: Paradigm, method: str, infer_opts: dict,
                 checkpoint: Optional[str], ur_prior=None) -> TrainResult:
    """A finished run resumed: its final E-step again, for the inference result (a new
    ``checkpoint`` path gets the final state too)."""
    if checkpoint:
        _write_checkpoint(checkpoint, ck)
    res, pm = e_step(ck.model, train, method, infer_opts, ur_prior=ur_prior)[2:]
    return TrainResult(ck.model, ck.trace, res, pm, [], ck.stop)


def _checked(method, em_iters, l2, tol, p_copy, checkpoint, l1) -> tuple:
    """The keyword arguments of :func:`train_phonology`, checked (OptionError)."""
    check_output(checkpoint, "checkpoint")
    return (check_choice("method", method, tuple(METHODS)),
            check_int("em_iters", em_iters, min=0), check_float("l2", l2, min=0),
            check_float("tol", tol, min=0), check_probability("p_copy", p_copy),
            check_float("l1", l1, min=0))


def _trace_entry_of(it: int, obj: float, ll: float, prev: Optional[float], method: str,
                    report: Optional[Callable[[dict], None]]) -> dict:
    """The trace entry of iteration ``it``, flagged and warned about when the objective
    fell below the previous one ``prev``; handed to ``report`` at once."""
    entry = {"iteration": it, "objective": obj, "log_evidence": ll}
    if prev is not None and obj < prev - 1e-9 * abs(prev):
        entry["decreased"] = True
        warnings.warn(f"EM iteration {it}: the objective fell from {prev:.3f} to "
                      f"{obj:.3f}; the {method!r} E-step is approximate (an exact one "
                      "never lowers it): try method 'bp', or more inference iterations",
                      ObjectiveDecreaseWarning, stacklevel=3)
    if report:
        report(entry)
    return entry


def _stop_reason(obj: float, prev: Optional[float], tol: float, it: int,
                 em_iters: int) -> Optional[str]:
    """``"converged"`` when the objective changed by at most ``tol`` relative to the
    previous one, ``"cap"`` at the last allowed iteration, else None."""
    if prev is not None and abs(obj - prev) <= tol * abs(prev):
        return "converged"
    return "cap" if it == em_iters else None


