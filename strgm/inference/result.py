"""InferenceResult: beliefs of every latent variable plus how they were obtained.

Results save to a directory of OpenFst files and load back (:mod:`strgm.inference.saved`):

    result.save("beliefs/")                    # or: strgm infer ... --save-beliefs beliefs/
    r = InferenceResult.load("beliefs/")
    r.belief("M:walk").kbest(3)                # same numbers, no inference re-run

A fresh result also answers ``message(var, factor)`` from its engine state; ``detach()``
keeps the beliefs and lets that state go.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from strgm.errors import GraphError, did_you_mean
from strgm.inference.belief import Belief
from strgm.inference.saved import read_saved, save_beliefs


@dataclass
class InferenceResult:
    """Beliefs (computed on first access and cached), settings, timing and diagnostics."""

    method: str
    settings: dict
    seconds: float
    iterations: int
    converged: bool
    deltas: list
    side: Any = field(repr=False, default=None)
    graph: Any = field(repr=False, default=None)
    extra: dict = field(default_factory=dict)
    _beliefs: dict = field(default_factory=dict, repr=False)
    _names: Optional[list] = field(default=None, repr=False)  # when loaded (no graph)

    def __repr__(self) -> str:
        try:
            n = str(len(self.variables))
        except AttributeError:
            n = "?"
        return (f"InferenceResult(method={self.method!r}, variables={n}, "
                f"iterations={self.iterations}, converged={self.converged}, "
                f"seconds={self.seconds:.3g})")

    @property
    def variables(self) -> list[str]:
        """Names of the variables with beliefs (the graph's latent variables)."""
        return list(self._names) if self._names is not None else self.graph.latent

    def belief(self, var: str) -> Belief:
        if var not in self._beliefs:
            if self.side is None:
                raise GraphError(f"no belief for variable {var!r}"
                                 f"{did_you_mean(var, self.variables)}; this result has "
                                 f"{len(self.variables)} variables, e.g. "
                                 f"{', '.join(map(repr, self.variables[:5]))}")
            self._beliefs[var] = self.side.belief(var)
        return self._beliefs[var]

    def message(self, var: str, factor: str):
        """μ_{V→F}, the message variable ``var`` sends factor ``factor`` at the end of the
        run (an acceptor; for EP the encoded θ_{V→F}). EM's expected counts read the
        messages into the phonology factors this way. Needs the engine state: a result
        that was loaded or :meth:`detach`-ed has none."""
        if self.side is None:
            raise GraphError(f"no message from {var!r} to {factor!r}: this result has no "
                             "engine state (it was loaded or detached)")
        if var not in self.graph.variables or factor not in self.graph.factors_of(var):
            raise GraphError(f"no edge between variable {var!r} and factor {factor!r}")
        return self.side.incoming_to_factor(var, factor)

    def detach(self, names: Optional[list] = None) -> "InferenceResult":
        """A new result holding the beliefs of ``names`` (default: every variable),
        computed now, and no engine state: the side's caches (message compositions,
        k-best lists, encoded messages) can then be freed. This result is unchanged."""
        names = self.variables if names is None else list(names)
        return replace(self, side=None, graph=None, _beliefs=self.beliefs(names),
                       _names=names)

    def beliefs(self, names: Optional[list] = None) -> dict[str, Belief]:
        names = self.variables if names is None else names
        return {v: self.belief(v) for v in names}

    def to_dict(self, k: int = 5, names: Optional[list] = None) -> dict:
        """JSON-ready summary: variable -> top-k [string, prob], plus settings and timing."""
        return {
            "method": self.method,
            "settings": self.settings,
            "seconds": self.seconds,
            "iterations": self.iterations,
            "converged": self.converged,
            "belief_changes": self.deltas,
            "beliefs": {v: [[s, p] for s, p in b.kbest(k)]
                        for v, b in self.beliefs(names).items()},
            **self.extra,
        }

    def save_json(self, path: str, k: int = 5) -> None:
        """A top-k summary as strict JSON (non-finite numbers as strings), written
        atomically (see :meth:`save` for the full beliefs)."""
        from strgm.safe_io import atomic_write_json

        atomic_write_json(path, self.to_dict(k))

    def save(self, directory, names: Optional[list] = None, force: bool = False):
        """Write the full beliefs (one OpenFst file each) and the settings to
        ``directory``; :meth:`load` reads them back (:mod:`strgm.inference.saved`).
        Only files the previous save's manifest lists are replaced; a directory holding
        anything else raises :class:`~strgm.errors.InputError` naming one such file,
        unless ``force``, which keeps those files beside the new save."""
        return save_beliefs(self, directory, names, force=force)

    @classmethod
    def load(cls, directory) -> "InferenceResult":
        """A result saved by :meth:`save`: its beliefs answer every query; it has no
        graph or engine state, so inference cannot be resumed from it."""
        return cls(**read_saved(directory))


def load_beliefs(directory) -> InferenceResult:
    """:meth:`InferenceResult.load` as a function."""
    return InferenceResult.load(directory)
