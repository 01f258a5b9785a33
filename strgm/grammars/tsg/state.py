"""The complete state of a DP-TSG (or PY-TSG) chain, and its checkpoint files.

A :class:`TSGState` holds what the next sweep and the output depend on: the substitution
indicators of every node (one flat 0/1 array in the corpus's global preorder, 1 at every
root), α_c and s_c per label, the RNG state, the iteration, the acceptance counters and the
trace rows (no wall-clock time, so a resumed chain's trace equals an uninterrupted one's).
A Pitman–Yor chain (``process="py"``, :mod:`.pitman_yor`) also holds the discounts d_c
and its seating, one table id per site in node order (renumbered by first appearance);
a DP chain's files carry neither field, as before.
The ET counts are a function of the indicators; ``counts`` is an in-memory cache of them
(an :class:`~strgm.grammars.tsg.fragments.ETCounts`, rebuilt by the kernels at the start of
every sweep in a deterministic order and never written to disk).

Checkpoints are strict JSON written atomically by
:func:`strgm.chains.codec.save_json_state` (``.json`` or ``.npz``). :meth:`TSGState.load`
checks every field and, given the kernel, that the state belongs to its corpus and sampler;
a damaged or foreign checkpoint is an :class:`~strgm.errors.InputError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from strgm.errors import InputError
from strgm.chains.codec import (ChainState, chain_trace, check_rng_state, count_field,
                                get_field, save_json_state, vector_field)

__all__ = ["TSGState", "check_tsg_state", "KINDS", "FORMAT", "PROCESSES"]

KINDS = ("tsg-local", "tsg-blocked")
PROCESSES = ("dp", "py")
FORMAT = "strgm-tsg-state"


@dataclass
class TSGState(ChainState):
    """Complete state of a DP- or PY-TSG chain (see the module docstring)."""

    FORMAT: ClassVar[str] = FORMAT
    WHAT: ClassVar[str] = "TSG checkpoint"
    HOLDS: ClassVar[str] = "a TSG checkpoint"

    kind: str
    iteration: int
    site: np.ndarray
    alpha: np.ndarray
    s: np.ndarray
    rng_state: dict
    accepted: int = 0
    proposed: int = 0
    last_accept: float = float("nan")
    fingerprint: str = ""
    trace: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    process: str = "dp"
    discount: object = None
    tables: object = None
    counts: object = field(default=None, repr=False, compare=False)


    def to_dict(self) -> dict:
        d = self._dp_dict()
        if self.process == "py":
            d.update(process="py", discount=np.asarray(self.discount, dtype=float).tolist(),
                     tables=np.asarray(self.tables, dtype=np.int64).tolist())
        return d

    def _dp_dict(self) -> dict:
        return {"format": FORMAT, "version": 1, "kind": self.kind,
                "iteration": int(self.iteration),
                "site": np.asarray(self.site, dtype=np.uint8).tobytes().translate(
                    bytes.maketrans(b"\x00\x01", b"01")).decode("ascii"),
                "alpha": np.asarray(self.alpha, dtype=float).tolist(),
                "s": np.asarray(self.s, dtype=float).tolist(),
                "rng_state": self.rng_state, "accepted": int(self.accepted),
                "proposed": int(self.proposed), "last_accept": self.last_accept,
                "fingerprint": self.fingerprint, "trace": list(self.trace),
                "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d) -> "TSGState":
        """The state described by ``d`` (as written by :meth:`to_dict`); an InputError
        naming the first field that is missing or out of range."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InputError(f"not a TSG sampler state (expected format {FORMAT!r})")
        kind = get_field(d, "kind", str)
        if kind not in KINDS:
            raise InputError(f"field 'kind': unknown TSG sampler {kind!r}")
        text = get_field(d, "site", str)
        if text.strip("01"):
            raise InputError("field 'site' must be a string of 0s and 1s")
        site = (np.frombuffer(text.encode("ascii"), dtype=np.uint8) - ord("0")).astype(np.uint8)
        alpha = vector_field("alpha", d.get("alpha"), positive=True)
        s = vector_field("s", d.get("s"), positive=True)
        if len(s) != len(alpha):
            raise InputError(f"field 's' has {len(s)} entries, 'alpha' {len(alpha)}")
        if np.any(s >= 1):
            raise InputError("field 's' holds a probability ≥ 1")
        ints = {k: count_field(d, k) for k in ("iteration", "accepted", "proposed")}
        if ints["accepted"] > ints["proposed"]:
            raise InputError("field 'accepted': more acceptances than proposals")
        trace, last = chain_trace(d, ints["iteration"])
        return cls(kind=kind, iteration=ints["iteration"], site=site, alpha=alpha, s=s,
                   rng_state=check_rng_state(get_field(d, "rng_state", dict)),
                   accepted=ints["accepted"], proposed=ints["proposed"], last_accept=last,
                   fingerprint=get_field(d, "fingerprint", str),
                   trace=trace,
                   settings=get_field(d, "settings", dict), **_py_fields(d, len(alpha)))

    @staticmethod
    def fits(kernel, state) -> None:
        check_tsg_state(kernel, state)


def _py_fields(d: dict, n_labels: int) -> dict:
    """process, discount and tables of a state dict (absent: a DP chain)."""
    process = d.get("process", "dp")
    if process not in PROCESSES:
        raise InputError(f"field 'process': unknown process {process!r}")
    if process == "dp":
        return {}
    disc = vector_field("discount", d.get("discount"))
    if len(disc) != n_labels or np.any(disc >= 1):
        raise InputError("field 'discount' must hold one number in [0, 1) per label")
    tables = get_field(d, "tables", list)
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tables):
        raise InputError("field 'tables' must be a list of integers ≥ 0")
    return {"process": "py", "discount": disc, "tables": np.asarray(tables, dtype=np.int64)}


def check_tsg_state(kernel, state: TSGState) -> None:
    """InputError unless ``state`` belongs to ``kernel``: sampler kind, corpus fingerprint,
    one indicator per node with every root a site, one α and s per label."""
    if not isinstance(state, TSGState):
        raise InputError(f"expected a TSGState, got {type(state).__name__}")
    if state.kind != kernel.kind:
        raise InputError(f"checkpoint is for a {state.kind} sampler, not {kernel.kind}")
    t = kernel.table
    if state.fingerprint != t.fingerprint:
        raise InputError("checkpoint was made with a different treebank")
    if np.shape(state.site) != (t.n_nodes,) or np.any(np.asarray(state.site) > 1):
        raise InputError(f"checkpoint has {np.size(state.site)} indicators for a treebank "
                         f"of {t.n_nodes} nodes")
    if not np.all(np.asarray(state.site)[t.starts[:-1]] == 1):
        raise InputError("checkpoint marks a tree's root as not a substitution site")
    for key in ("alpha", "s"):
        if np.shape(getattr(state, key)) != (t.n_labels,):
            raise InputError(f"checkpoint field {key!r} has shape "
                             f"{np.shape(getattr(state, key))}, expected ({t.n_labels},)")
    process = getattr(kernel, "process", "dp")
    if state.process != process:
        raise InputError(f"checkpoint is for a {state.process.upper()}-TSG, not a "
                         f"{process.upper()}-TSG")
    if process == "py":
        if np.shape(state.discount) != (t.n_labels,):
            raise InputError(f"checkpoint has {np.size(state.discount)} discounts for "
                             f"{t.n_labels} labels")
        if np.size(state.tables) != int(np.asarray(state.site).sum()):
            raise InputError(f"checkpoint seats {np.size(state.tables)} customers at "
                             f"{int(np.asarray(state.site).sum())} sites")
