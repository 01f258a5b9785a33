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
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from fst_factors.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.errors import ConvergenceWarning, InputError, ObjectiveDecreaseWarning, check_kind
from strgm.inference import METHODS, infer
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.phonology import build_phonology_model
from strgm.progress import tagged
from strgm.models.training import expected_counts, m_step
from strgm.safe_io import (atomic_write_json, check_output, json_float, read_text,
                           strict_json)
from strgm.validate import check_choice, check_float, check_int, check_probability
from fst_factors.transducers.edit import P_COPY

CHECKPOINT_FORMAT = "strgm-em-checkpoint-v2"
#: Inference options that bound resources but never change a result (not compared).
_BUDGET_OPTIONS = ("max_memory", "max_states")
_SETTING_NAMES = {"l2": "l2 (--l2)", "l1": "l1 (--l1)", "method": "method (--method)",
                  "infer_opts": "inference options (--max-iters ...)",
                  "blocks": "blocks (--blocks, since removed)"}


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


@dataclass
class Checkpoint:
    """The state of an EM run at an iteration boundary (module docstring)."""

    model: PhonologyEditModel
    trace: list
    iteration: int  # next iteration to run; with ``stop``: the last one run
    stop: Optional[str] = None
    settings: Optional[dict] = None  # None for checkpoints of format v1


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
    res, pm, timing, unsettled = None, None, [], []
    if stop is not None:  # finished: only the final E-step, for its result
        return _rerun_final(Checkpoint(model, trace, start, stop, settings), train, method,
                            infer_opts, checkpoint, ur_prior)
    for it in range(start, em_iters + 1):
        t0, tell = time.perf_counter(), _tagged(progress, f"EM iteration {it}/{em_iters}")
        first = first_step if it == start and not resume else None
        counts, ll, res, pm = _e_step_of(first, model, train, method, infer_opts, tell, ur_prior)
        unsettled += [] if res.converged or pm.graph.is_acyclic() else [res.deltas[-1]]
        obj = ll - 0.5 * l2 * float(model.theta @ model.theta) \
            - l1 * float(np.abs(model.theta).sum())
        entry = _trace_entry_of(it, obj, ll, prev, method, report)
        t1 = time.perf_counter()
        stop = _stop_reason(obj, prev, tol, it, em_iters)
        if stop:
            trace.append(entry)
            timing.append({"iteration": it, "e_seconds": t1 - t0})
            if checkpoint:
                _write_checkpoint(checkpoint, Checkpoint(model, trace, it, stop, settings))
            break
        prev = obj
        theta, q = (first.theta, first.q) if first and first.theta is not None and not l1 \
            else m_step(model.structure, counts, model.theta, l2, progress=tell, l1=l1)
        model = model.with_theta(theta)
        entry["q"] = q
        trace.append(entry)
        timing.append({"iteration": it, "e_seconds": t1 - t0,
                       "m_seconds": time.perf_counter() - t1})
        if checkpoint:
            _write_checkpoint(checkpoint, Checkpoint(model, trace, it + 1, None, settings))
    _warn_unsettled(unsettled, len(timing), method, infer_opts)
    return TrainResult(model, trace, res, pm, timing, stop)


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
        model, trace, start, stop, prev = _resumed(resume, settings, em_iters)
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


def _resumed(path: str, settings: dict, em_iters: int) -> tuple:
    """(model, trace, next iteration, stop, previous objective) of the checkpoint at
    ``path``, refused when made with other settings; a run stopped at its cap continues
    when ``em_iters`` is larger."""
    ck = load_checkpoint(path)
    _check_same_run(ck, settings, em_iters, path)
    trace, stop = list(ck.trace), ck.stop
    if stop == "cap" and em_iters > ck.iteration:  # continue a run stopped at its cap
        trace, stop = trace[:-1], None
    return ck.model, trace, ck.iteration, stop, (trace[-1]["objective"] if trace else None)


def _stop_reason(obj: float, prev: Optional[float], tol: float, it: int,
                 em_iters: int) -> Optional[str]:
    """``"converged"`` when the objective changed by at most ``tol`` relative to the
    previous one, ``"cap"`` at the last allowed iteration, else None."""
    if prev is not None and abs(obj - prev) <= tol * abs(prev):
        return "converged"
    return "cap" if it == em_iters else None


def _check_same_run(ck: Checkpoint, settings: dict, em_iters: int, path: str) -> None:
    if ck.settings is not None:
        mine, theirs = {"l1": 0.0, **settings}, {"l1": 0.0, **ck.settings}  # l1 is new
        for key in list(mine) + [k for k in theirs if k not in mine]:  # blocks: old checkpoints
            value = mine.get(key)
            if theirs.get(key) != value:
                what = ("other training words (another paradigm, --holdout or --seed)"
                        if key == "training_words" else
                        f"{_SETTING_NAMES.get(key, key)} = {theirs.get(key)!r}, "
                        f"this run has {value!r}")
                raise InputError(f"checkpoint was made with {what}; resume with the same "
                                 "settings or start afresh", path=path)
    last = ck.iteration
    if last > em_iters:
        raise InputError(f"checkpoint is at EM iteration {last}, past em_iters = {em_iters} "
                         f"(--em-iters); resume with {last} or more", path=path)


def _write_checkpoint(path: str, ck: Checkpoint) -> None:
    atomic_write_json(path, {"format": CHECKPOINT_FORMAT, "iteration": ck.iteration,
                             "stop": ck.stop, "settings": ck.settings, "trace": ck.trace,
                             "model": ck.model.to_dict()})


def _refuse_constant(name: str):
    raise InputError(f"{name} is not JSON (non-finite numbers are stored as strings)")


def load_checkpoint(path: str) -> Checkpoint:
    """The :class:`Checkpoint` in ``path`` (written by ``checkpoint=``; format v1
    files without settings are read too). Anything truncated, not strict JSON,
    inconsistent, or with non-finite or unknown weights is an :class:`InputError`
    naming the file."""
    what = "EM checkpoint"
    text = read_text(path, what)
    try:
        d = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(f"{what} is damaged (nested too deeply)", path=path) from None
    except json.JSONDecodeError as e:
        raise InputError(f"{what} is damaged (not JSON: {e.msg})", path=path,
                         line=e.lineno) from None
    except ValueError as e:
        raise InputError(f"{what} is damaged ({e})", path=path) from None
    check_kind(path, d, (CHECKPOINT_FORMAT,), "a phonology EM checkpoint")
    if not isinstance(d, dict) or d.get("format", CHECKPOINT_FORMAT) != CHECKPOINT_FORMAT \
            or not {"model", "trace", "iteration"} <= set(d):
        raise InputError(f"not a strgm EM checkpoint (format {CHECKPOINT_FORMAT} with "
                         "model, trace and iteration)", path=path)
    try:
        it = check_int("iteration", d["iteration"], min=0)
        stop = d.get("stop")
        if stop not in (None, "converged", "cap"):
            raise InputError(f"stop = {stop!r}")
        settings = d.get("settings")
        if "format" in d and not isinstance(settings, dict):
            raise InputError("no settings")
        trace = [_trace_entry(e, i) for i, e in enumerate(d["trace"])]
        if len(trace) != it + (stop is not None):
            raise InputError(f"{len(trace)} trace entries for iteration {it}")
    except (InputError, KeyError, TypeError, ValueError, OverflowError) as e:
        raise InputError(f"{what} is damaged or inconsistent ({e})", path=path) from None
    model = PhonologyEditModel.from_dict(d["model"], path)
    return Checkpoint(model, trace, it, stop, settings)


def _trace_entry(e, i: int) -> dict:
    if not isinstance(e, dict) or e.get("iteration") != i:
        raise InputError(f"trace entry {i} is not that of iteration {i}")
    out = {}
    for k, v in e.items():
        if k == "decreased":
            if v is not True:
                raise InputError(f"trace entry {i} has decreased = {v!r} (only true)")
            out[k] = v
            continue
        out[k] = v if k == "iteration" else json_float(v)
        if k != "iteration" and math.isnan(out[k]):
            raise InputError(f"trace entry {i} has {k} = NaN")
    if "objective" not in out:
        raise InputError(f"trace entry {i} has no objective")
    return out
