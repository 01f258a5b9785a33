"""InferenceResult: beliefs of every latent variable plus how they were obtained."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from strgm.inference.belief import Belief


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

    def belief(self, var: str) -> Belief:
        if var not in self._beliefs:
            self._beliefs[var] = self.side.belief(var)
        return self._beliefs[var]

    def beliefs(self, names: Optional[list] = None) -> dict[str, Belief]:
        names = self.graph.latent if names is None else names
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
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(k), fh, ensure_ascii=False, indent=1)
