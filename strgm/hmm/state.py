"""The complete state of an infinite-HMM chain, and its checkpoint files.

An :class:`HMMState` holds every variable of the augmented model — z, π, β, α, γ, κ, λ,
the locations ℓ, the stopping probabilities, the emission parameters, u and q — plus the
RNG state, the iteration, the acceptance counters, the trace rows (no wall-clock time,
so a resumed chain's trace equals an uninterrupted one's) and ``settings``, the options
that shape the chain but not the kernel (``{"--seed": S}``; a checkpoint written before
they were recorded has none), which a resumed run must repeat. Checkpoints are strict JSON
written atomically (:func:`strgm.chains.codec.save_json_state`, ``.json`` or
``.npz``); floats are written by ``repr``, so a state read back is bit-identical and a
resumed chain equals an uninterrupted one. :meth:`HMMState.load` checks every field and,
given the kernel, that the checkpoint belongs to its data and settings; a damaged or
foreign checkpoint is an :class:`~strgm.errors.InputError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from strgm.errors import InputError
from strgm.chains.codec import (ChainState, chain_trace, check_rng_state, count_field,
                                get_field, save_json_state)

__all__ = ["HMMState", "FORMAT", "array_field"]

FORMAT = "strgm-hmm-state"
_FLOATS = ("alpha", "gamma", "kappa", "lam")
_ARRAYS = ("pi", "beta", "ell", "stop", "u")


@dataclass
class HMMState(ChainState):
    """Complete state of an infinite-HMM chain (see the module docstring). ``stop`` is
    empty when lengths are not modelled; ``params`` holds the emission parameters."""

    FORMAT: ClassVar[str] = FORMAT
    WHAT: ClassVar[str] = "HMM checkpoint"
    HOLDS: ClassVar[str] = "an HMM checkpoint"

    iteration: int
    z: np.ndarray
    pi: np.ndarray
    beta: np.ndarray
    alpha: float
    gamma: float
    kappa: float
    lam: float
    ell: np.ndarray
    stop: np.ndarray
    params: dict
    u: np.ndarray
    q: np.ndarray
    rng_state: dict
    accepted: int = 0
    proposed: int = 0
    fingerprint: str = ""
    trace: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)


    @property
    def num_states(self) -> int:
        return len(self.beta)

    def to_dict(self) -> dict:
        d = {"format": FORMAT, "version": 1, "iteration": int(self.iteration),
             "z": np.asarray(self.z, dtype=np.int64).tolist(),
             "q": np.asarray(self.q, dtype=float).tolist(),
             "params": {k: np.asarray(v, dtype=float).tolist() for k, v in self.params.items()},
             "rng_state": self.rng_state, "accepted": int(self.accepted),
             "proposed": int(self.proposed), "fingerprint": self.fingerprint,
             "trace": list(self.trace), "settings": dict(self.settings),
             "samples": [{k: _plain(v) for k, v in smp.items()} for smp in self.samples]}
        d.update({k: float(getattr(self, k)) for k in _FLOATS})
        d.update({k: np.asarray(getattr(self, k), dtype=float).tolist() for k in _ARRAYS})
        return d

    @classmethod
    def from_dict(cls, d) -> "HMMState":
        """The state described by ``d`` (as written by :meth:`to_dict`); an InputError
        naming the first field that is missing or out of range."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InputError(f"not an HMM sampler state (expected format {FORMAT!r})")
        ints = {k: count_field(d, k) for k in ("iteration", "accepted", "proposed")}
        vals = {k: _number(d, k) for k in _FLOATS}
        arrays = {k: array_field(d, k) for k in _ARRAYS}
        z, q = array_field(d, "z", int), array_field(d, "q")
        if np.any(q != np.round(q)):
            raise InputError("field 'q' holds a count that is not an integer")
        params = get_field(d, "params", dict)
        params = {k: array_field(params, k) for k in params}
        trace, _ = chain_trace({"trace": get_field(d, "trace", list)}, ints["iteration"])
        samples = get_field(d, "samples", list)
        if len(samples) > ints["iteration"] or not all(isinstance(x, dict) for x in samples):
            raise InputError(f"field 'samples': expected at most {ints['iteration']} objects")
        settings = get_field(d, "settings", dict) if "settings" in d else {}
        return cls(z=z, q=q, params=params, trace=trace, samples=samples,
                   rng_state=check_rng_state(get_field(d, "rng_state", dict)),
                   fingerprint=get_field(d, "fingerprint", str), settings=settings,
                   **ints, **vals, **arrays)

    @staticmethod
    def fits(kernel, state) -> None:
        kernel.check_state(state)


def _plain(v):
    """Arrays (also inside dicts) as nested lists, for JSON."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return None if v is None else np.asarray(v, dtype=float).tolist()


def _number(d: dict, key: str) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0:
        raise InputError(f"field {key!r} must be a finite number ≥ 0")
    return float(v)


def array_field(d: dict, key: str, dtype=float, shape=None, signed: bool = False,
                where: str = "") -> np.ndarray:
    """``d[key]`` as a finite float (or, with ``dtype=int``, integer-valued int64) array;
    with ``shape``, of that shape; nonnegative unless ``signed`` (or the key is a
    location or mean). An InputError naming ``where.key`` (or the field) otherwise."""
    name = f"{where}.{key}" if where else f"field {key!r}"
    if key not in d:
        raise InputError(f"{name} is missing")
    try:
        a = np.asarray(d[key], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} is not a (nested) list of numbers") from None
    if shape is not None and a.shape != shape:
        raise InputError(f"{name} has shape {a.shape}, expected {shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} holds a non-finite value")
    if not signed and key not in ("ell", "mu") and np.any(a < 0):
        raise InputError(f"{name} holds a negative number")
    if dtype is int:
        if np.any(a != np.round(a)):
            raise InputError(f"{name} holds a number that is not an integer")
        a = a.astype(np.int64)
    return a
