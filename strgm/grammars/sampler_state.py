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

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from strgm.errors import InputError
from strgm.chains.codec import (ChainState, chain_trace, check_rng_state, count_field,
                                get_field, vector_field)

__all__ = ["SamplerState", "check_state"]

KINDS = ("gibbs", "mh")


@dataclass
class SamplerState(ChainState):
    """Complete state of a chain (see the module docstring). ``trees[i]`` is the tuple of
    user rule ids of t_i in preorder (its leftmost derivation), or None for an unparsable
    sentence. ``trace`` is the list of per-sweep rows since iteration 0; ``settings`` is
    free-form (the command line records the options that shape the output)."""

    FORMAT: ClassVar[str] = "strgm-pcfg-sampler-state"
    WHAT: ClassVar[str] = "sampler checkpoint"
    HOLDS: ClassVar[str] = "a PCFG sampler checkpoint (gibbs, mh)"

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
        """The state described by ``d`` (as written by :meth:`to_dict`); an
        :class:`~strgm.errors.InputError` (a ValueError) naming the first field that is
        missing or out of range."""
        if not isinstance(d, dict):
            raise InputError("not a sampler state (expected a JSON object)")
        kind = get_field(d, "kind", str)
        if kind not in KINDS:
            raise InputError(f"field 'kind': unknown sampler {kind!r}")
        trees = get_field(d, "trees", list)
        for i, t in enumerate(trees):
            if t is not None and not (isinstance(t, list) and t and all(
                    isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in t)):
                raise InputError(f"field 'trees': entry {i} is not a list of rule ids")
        n = None
        arrays = {}
        for key, optional, positive in (("counts", False, False), ("alpha", False, True),
                                        ("theta", True, False), ("sum_theta", True, False)):
            v = d.get(key)
            if v is None and optional:
                arrays[key] = None
                continue
            a = vector_field(key, v, positive)
            if n is not None and len(a) != n:
                raise InputError(f"field {key!r}: {len(a)} entries, expected {n}")
            n = len(a)
            arrays[key] = a
        rng_state = check_rng_state(get_field(d, "rng_state", dict))
        ints = {k: count_field(d, k) for k in ("iteration", "accepted", "proposed", "n_avg")}
        if ints["accepted"] > ints["proposed"]:
            raise InputError("field 'accepted': more acceptances than proposals")
        if ints["n_avg"] > ints["iteration"] or (ints["n_avg"] > 0) != (
                arrays["sum_theta"] is not None):
            raise InputError("field 'n_avg' does not match 'sum_theta' and 'iteration'")
        trace, last = chain_trace(d, ints["iteration"])
        return cls(kind=kind, iteration=ints["iteration"],
                   trees=[None if t is None else tuple(t) for t in trees],
                   counts=arrays["counts"], alpha=arrays["alpha"], theta=arrays["theta"],
                   rng_state=rng_state, accepted=ints["accepted"],
                   proposed=ints["proposed"], sum_theta=arrays["sum_theta"],
                   n_avg=ints["n_avg"], fingerprint=get_field(d, "fingerprint", str),
                   last_accept=last, trace=trace,
                   settings=get_field(d, "settings", dict))

    @staticmethod
    def fits(kernel, state) -> None:
        check_state(kernel, state)


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
