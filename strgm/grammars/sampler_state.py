"""The complete state of a PCFG sampler chain, and its checkpoint files.

A :class:`SamplerState` holds everything the next sweep and the final output depend on:
the trees, their rule counts, θ (Gibbs), α (possibly resampled), the RNG state, the
acceptance counters, the running sum of E[θ | t, α] and the trace so far, plus the
fingerprint of the grammar and corpus it belongs to and the settings of the run that
made it. Restoring it therefore continues the chain exactly: an interrupted and resumed
run gives the same trees, averages and trace as an uninterrupted one.

Checkpoints are strict JSON (``.json``, or the same JSON inside an ``.npz`` archive),
written atomically (temporary file, fsync, rename), so an interruption leaves either the
previous checkpoint or the new one. :meth:`SamplerState.load` checks every field (types,
shapes, finiteness, ranges, RNG state) and, given the kernel, that the state belongs to
its grammar and corpus and that the counts are those of the trees; a damaged or foreign
checkpoint is an :class:`~strgm.errors.InputError` naming the file.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from strgm.errors import InputError
from strgm.safe_io import atomic_write_bytes, atomic_write_text, json_float, read_bytes, \
    strict_json

__all__ = ["SamplerState", "check_state"]

KINDS = ("gibbs", "mh")


@dataclass
class SamplerState:
    """Complete state of a chain (see the module docstring). ``trees[i]`` is the tuple of
    user rule ids of t_i in preorder (its leftmost derivation), or None for an unparsable
    sentence. ``trace`` is the list of per-sweep rows since iteration 0; ``settings`` is
    free-form (the command line records the options that shape the output)."""

    kind: str
    iteration: int
    trees: list
    counts: np.ndarray
    alpha: np.ndarray
    theta: np.ndarray | None
    rng_state: dict
    accepted: int = 0
    proposed: int = 0
    sum_theta: np.ndarray | None = None
    n_avg: int = 0
    fingerprint: str = ""
    last_accept: float = float("nan")
    trace: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)

    def rng(self) -> np.random.Generator:
        g = np.random.Generator(np.random.PCG64())
        g.bit_generator.state = self.rng_state
        return g

    def to_dict(self) -> dict:
        lst = lambda x: None if x is None else np.asarray(x, dtype=float).tolist()
        return {"format": "strgm-pcfg-sampler-state", "version": 1,
                "kind": self.kind, "iteration": int(self.iteration),
                "trees": [None if t is None else list(map(int, t)) for t in self.trees],
                "counts": lst(self.counts), "alpha": lst(self.alpha),
                "theta": lst(self.theta), "rng_state": self.rng_state,
                "accepted": int(self.accepted), "proposed": int(self.proposed),
                "sum_theta": lst(self.sum_theta), "n_avg": int(self.n_avg),
                "fingerprint": self.fingerprint, "last_accept": self.last_accept,
                "trace": list(self.trace), "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d) -> "SamplerState":
        """The state described by ``d`` (as written by :meth:`to_dict`); ValueError naming
        the first field that is missing or out of range."""
        if not isinstance(d, dict):
            raise ValueError("not a sampler state (expected a JSON object)")
        kind = _get(d, "kind", str)
        if kind not in KINDS:
            raise ValueError(f"field 'kind': unknown sampler {kind!r}")
        trees = _get(d, "trees", list)
        for i, t in enumerate(trees):
            if t is not None and not (isinstance(t, list) and t and all(
                    isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in t)):
                raise ValueError(f"field 'trees': entry {i} is not a list of rule ids")
        n = None
        arrays = {}
        for key, optional, positive in (("counts", False, False), ("alpha", False, True),
                                        ("theta", True, False), ("sum_theta", True, False)):
            v = d.get(key)
            if v is None and optional:
                arrays[key] = None
                continue
            a = _vector(key, v, positive)
            if n is not None and len(a) != n:
                raise ValueError(f"field {key!r}: {len(a)} entries, expected {n}")
            n = len(a)
            arrays[key] = a
        rng_state = _get(d, "rng_state", dict)
        try:
            np.random.PCG64().state = rng_state
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"field 'rng_state': not a PCG64 state ({e})") from None
        ints = {k: _count(d, k) for k in ("iteration", "accepted", "proposed", "n_avg")}
        if ints["accepted"] > ints["proposed"]:
            raise ValueError("field 'accepted': more acceptances than proposals")
        if ints["n_avg"] > ints["iteration"] or (ints["n_avg"] > 0) != (
                arrays["sum_theta"] is not None):
            raise ValueError("field 'n_avg' does not match 'sum_theta' and 'iteration'")
        trace = _get(d, "trace", list)
        if len(trace) > ints["iteration"] or not all(isinstance(r, dict) for r in trace):
            raise ValueError(f"field 'trace': expected at most {ints['iteration']} rows")
        last = d.get("last_accept", "NaN")
        try:
            last = json_float(last)
        except ValueError:
            raise ValueError(f"field 'last_accept': not a number: {last!r}") from None
        return cls(kind=kind, iteration=ints["iteration"],
                   trees=[None if t is None else tuple(t) for t in trees],
                   counts=arrays["counts"], alpha=arrays["alpha"], theta=arrays["theta"],
                   rng_state=rng_state, accepted=ints["accepted"],
                   proposed=ints["proposed"], sum_theta=arrays["sum_theta"],
                   n_avg=ints["n_avg"], fingerprint=_get(d, "fingerprint", str),
                   last_accept=last, trace=[_row(r) for r in trace],
                   settings=_get(d, "settings", dict))

    def save(self, path) -> None:
        """Write a checkpoint atomically: strict JSON, or for ``.npz`` the same JSON as a
        byte array in a compressed archive."""
        p = Path(path)
        if p.suffix == ".npz":
            buf = io.BytesIO()
            data = strict_json(self.to_dict(), indent=None).encode("utf-8")
            np.savez_compressed(buf, state=np.frombuffer(data, dtype=np.uint8))
            atomic_write_bytes(p, buf.getvalue())
        else:
            atomic_write_text(p, strict_json(self.to_dict(), indent=None) + "\n")

    @classmethod
    def load(cls, path, kernel=None) -> "SamplerState":
        """Read a checkpoint written by :meth:`save`; with ``kernel``, also check that it
        belongs to the kernel's grammar, corpus and sampler (:func:`check_state`)."""
        p = Path(path)
        data = read_bytes(p, "sampler checkpoint")
        try:
            if p.suffix == ".npz":
                with np.load(io.BytesIO(data), allow_pickle=False) as z:
                    data = z["state"].tobytes()
            d = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
            state = cls.from_dict(d)
        except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise InputError(f"damaged sampler checkpoint ({msg}); delete it and start "
                             "again, or resume from an intact copy", str(p)) from None
        if kernel is not None:
            try:
                check_state(kernel, state)
            except InputError as e:
                raise InputError(f"sampler checkpoint does not fit this run: {e.detail}",
                                 str(p)) from None
        return state


def check_state(kernel, state: SamplerState, deep: bool = True) -> None:
    """InputError unless ``state`` belongs to ``kernel`` (sampler kind, grammar and corpus
    fingerprint); ``deep`` also checks sizes, rule ids and that the counts are the rule
    counts of the trees (O(total tree size))."""
    if state.kind != kernel.kind:
        raise InputError(f"checkpoint is for a {state.kind} sampler, not {kernel.kind}")
    if state.fingerprint and state.fingerprint != kernel.fingerprint:
        raise InputError("checkpoint was made with a different grammar or corpus")
    if not deep:
        return
    if len(state.trees) != len(kernel.corpus):
        raise InputError(f"checkpoint has {len(state.trees)} trees for a corpus of "
                         f"{len(kernel.corpus)} sentences")
    for key in ("counts", "alpha", "theta", "sum_theta"):
        v = getattr(state, key)
        if v is not None and np.shape(v) != (kernel.nR,):
            raise InputError(f"checkpoint field {key!r} has shape {np.shape(v)}, "
                             f"expected ({kernel.nR},)")
    f = np.zeros(kernel.nR)
    for i, t in enumerate(state.trees):
        if t is None:
            continue
        if max(t) >= kernel.nR:
            raise InputError(f"checkpoint tree {i} uses rule {max(t)}; the grammar has "
                             f"{kernel.nR} rules")
        f += np.bincount(np.asarray(t, dtype=np.int64), minlength=kernel.nR)
    if not np.array_equal(f, state.counts):
        raise InputError("checkpoint counts are not the rule counts of its trees")


def _refuse_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _get(d: dict, key: str, typ):
    if key not in d:
        raise ValueError(f"field {key!r} is missing")
    v = d[key]
    if not isinstance(v, typ):
        raise ValueError(f"field {key!r} has the wrong type ({type(v).__name__})")
    return v


def _count(d: dict, key: str) -> int:
    v = _get(d, key, int)
    if isinstance(v, bool) or v < 0:
        raise ValueError(f"field {key!r} must be an integer ≥ 0, got {v!r}")
    return v


def _vector(key: str, v, positive: bool) -> np.ndarray:
    if not isinstance(v, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise ValueError(f"field {key!r} is not a list of numbers")
    a = np.asarray(v, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"field {key!r} holds a non-finite number")
    if np.any(a <= 0 if positive else a < 0):
        raise ValueError(f"field {key!r} holds a number {'≤' if positive else '<'} 0")
    return a


def _row(r: dict) -> dict:
    """A trace row read back: the strings strict JSON uses for non-finite floats become
    floats again."""
    out = {}
    for k, v in r.items():
        if isinstance(v, str):
            try:
                v = json_float(v)
            except ValueError:
                pass
        out[k] = v
    return out
