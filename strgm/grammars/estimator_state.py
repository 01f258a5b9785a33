"""The complete state of a deterministic PCFG estimator (EM, MAP-EM, VB, CVB), and its
checkpoint files.

An :class:`EstimatorState` after t updates holds θ⁽ᵗ⁾, the expected rule counts of the
corpus under it (CVB: the global counts C and every sentence's sparse counts c_i), the set
of sentences without a parse, the notes so far, the RNG state (CVB's sweep order), whether
EM's tolerance has stopped the run, and the trace rows 0..t. That is everything the next
update and the output depend on, so a run resumed from a checkpoint ends in the same state,
byte for byte, as an uninterrupted one. Files are those of
:mod:`strgm.chains.codec` (atomic strict JSON or ``.npz``); a damaged or foreign
checkpoint is an :class:`~strgm.errors.InputError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from strgm.errors import InputError
from strgm.chains.codec import (ChainState, check_rng_state, count_field, get_field,
                                trace_row, vector_field)

__all__ = ["EstimatorState", "ESTIMATORS"]

ESTIMATORS = ("em", "map", "vb", "cvb")


@dataclass
class EstimatorState(ChainState):
    """State after ``iteration`` updates (module docstring). ``per_sentence`` (CVB only) is
    a list of (rule indices, values) pairs; ``rng_state`` is None except for CVB."""

    FORMAT: ClassVar[str] = "strgm-pcfg-estimator-state"
    WHAT: ClassVar[str] = "estimator checkpoint"
    HOLDS: ClassVar[str] = "a PCFG estimator checkpoint (em, map, vb, cvb)"

    kind: str
    iteration: int
    theta: np.ndarray
    counts: np.ndarray
    unparsable: list
    notes: list = field(default_factory=list)
    per_sentence: list | None = None
    rng_state: dict | None = None
    converged: bool = False
    fingerprint: str = ""
    trace: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)


    def to_dict(self) -> dict:
        per = None if self.per_sentence is None else [
            [np.asarray(i, dtype=np.int64).tolist(), np.asarray(v, dtype=float).tolist()]
            for i, v in self.per_sentence]
        return {"format": "strgm-pcfg-estimator-state", "version": 1,
                "kind": self.kind, "iteration": int(self.iteration),
                "theta": np.asarray(self.theta, dtype=float).tolist(),
                "counts": np.asarray(self.counts, dtype=float).tolist(),
                "unparsable": [int(i) for i in self.unparsable], "notes": list(self.notes),
                "per_sentence": per, "rng_state": self.rng_state,
                "converged": bool(self.converged), "fingerprint": self.fingerprint,
                "trace": list(self.trace), "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d) -> "EstimatorState":
        """The state described by ``d`` (as written by :meth:`to_dict`); an InputError
        naming the first field that is missing or out of range."""
        if not isinstance(d, dict):
            raise InputError("not an estimator state (expected a JSON object)")
        kind = get_field(d, "kind", str)
        if kind not in ESTIMATORS:
            raise InputError(f"field 'kind': unknown estimator {kind!r}")
        it = count_field(d, "iteration")
        theta = vector_field("theta", d.get("theta"))
        counts = vector_field("counts", d.get("counts"))
        if len(counts) != len(theta):
            raise InputError(f"field 'counts': {len(counts)} entries, expected {len(theta)}")
        unp = get_field(d, "unparsable", list)
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in unp):
            raise InputError("field 'unparsable' is not a list of sentence indices")
        notes = get_field(d, "notes", list)
        if not all(isinstance(n, str) for n in notes):
            raise InputError("field 'notes' is not a list of strings")
        per = _per_sentence(d.get("per_sentence"), len(theta))
        rng_state = d.get("rng_state")
        if (kind == "cvb") != (rng_state is not None) or (kind == "cvb") != (per is not None):
            raise InputError("fields 'rng_state' and 'per_sentence' are for CVB only")
        if rng_state is not None:
            check_rng_state(get_field(d, "rng_state", dict))
        trace = get_field(d, "trace", list)
        if len(trace) != it + 1 or not all(isinstance(r, dict) for r in trace):
            raise InputError(f"field 'trace': expected {it + 1} rows")
        return cls(kind=kind, iteration=it, theta=theta, counts=counts, unparsable=list(unp),
                   notes=list(notes), per_sentence=per, rng_state=rng_state,
                   converged=get_field(d, "converged", bool),
                   fingerprint=get_field(d, "fingerprint", str),
                   trace=[trace_row(r) for r in trace], settings=get_field(d, "settings", dict))

    @staticmethod
    def fits(kernel, state) -> None:
        kernel.check(state, deep=True)


def _per_sentence(v, n_rules: int):
    """CVB's per-sentence sparse counts read back: (int64 indices, float values) pairs."""
    if v is None:
        return None
    if not isinstance(v, list):
        raise InputError("field 'per_sentence' is not a list")
    out = []
    for k, e in enumerate(v):
        if not (isinstance(e, list) and len(e) == 2 and isinstance(e[0], list) and all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_rules
                for i in e[0])):
            raise InputError(f"field 'per_sentence': entry {k} is not (rule ids, values)")
        val = vector_field("per_sentence", e[1])
        if len(val) != len(e[0]):
            raise InputError(f"field 'per_sentence': entry {k} has unequal lengths")
        out.append((np.asarray(e[0], dtype=np.int64), val))
    return out
