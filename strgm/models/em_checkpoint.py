"""Phonology EM's checkpoints: the state of a run at an iteration boundary, written as
strict JSON (atomically) and read back with every field checked (the run itself:
:mod:`strgm.models.em`, whose module docstring says what a checkpoint holds and why a
resumed run is byte-identical to an uninterrupted one)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Optional

from strgm.errors import InputError, check_kind
from strgm.models.edit_model import PhonologyEditModel
from strgm.safe_io import atomic_write_json, json_float, read_text
from strgm.validate import check_int

__all__ = ["CHECKPOINT_FORMAT", "Checkpoint", "write_checkpoint", "load_checkpoint",
           "resumed"]

CHECKPOINT_FORMAT = "strgm-em-checkpoint-v2"
_SETTING_NAMES = {"l2": "l2 (--l2)", "l1": "l1 (--l1)", "method": "method (--method)",
                  "infer_opts": "inference options (--max-iters ...)",
                  "blocks": "blocks (--blocks, since removed)"}


@dataclass
class Checkpoint:
    """The state of an EM run at an iteration boundary (module docstring)."""

    model: PhonologyEditModel
    trace: list
    iteration: int  # next iteration to run; with ``stop``: the last one run
    stop: Optional[str] = None
    settings: Optional[dict] = None  # None for checkpoints of format v1


def resumed(path: str, settings: dict, em_iters: int) -> tuple:
    """(model, trace, next iteration, stop, previous objective) of the checkpoint at
    ``path``, refused when made with other settings; a run stopped at its cap continues
    when ``em_iters`` is larger."""
    ck = load_checkpoint(path)
    check_same_run(ck, settings, em_iters, path)
    trace, stop = list(ck.trace), ck.stop
    if stop == "cap" and em_iters > ck.iteration:  # continue a run stopped at its cap
        trace, stop = trace[:-1], None
    return ck.model, trace, ck.iteration, stop, (trace[-1]["objective"] if trace else None)


def check_same_run(ck: Checkpoint, settings: dict, em_iters: int, path: str) -> None:
    """InputError naming ``path`` when the checkpoint ``ck`` was made with other
    ``settings`` or training words, or is past ``em_iters``."""
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


def write_checkpoint(path: str, ck: Checkpoint) -> None:
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
