"""A trainable phonology: contextual edit transducer parameters θ over an alphabet.

``PhonologyEditModel`` bundles the alphabet, the context settings and θ; it compiles the
log64 WFST (``fst``), and saves/loads as JSON (alphabet, settings, θ as named features,
so a saved model survives a change of feature order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np
import pynini

from fst_factors.contextual_edit import (ContextSpec, EditStructure, build_structure,
                                         compile_fst)
from strgm.alphabet import Alphabet
from strgm.errors import InputError
from strgm.models.ipa_features import symbol_info

_CACHE: dict = {}


@dataclass
class PhonologyEditModel:
    alphabet: Alphabet
    spec: ContextSpec = ContextSpec()
    classes: dict = field(default_factory=lambda: {"context": "natural",
                                                  "right_context": "coarse",
                                                  "output_context": "coarse",
                                                  "max_sub_distance": 1})
    theta: Optional[np.ndarray] = None

    @property
    def structure(self) -> EditStructure:
        key = (self.alphabet, self.spec, tuple(sorted(self.classes.items())))
        if key not in _CACHE:
            info = symbol_info(self.alphabet.segment_symbols,
                               boundary=self.alphabet.boundary is not None, **self.classes)
            _CACHE.clear()
            _CACHE[key] = build_structure(info, self.spec)
        return _CACHE[key]

    @classmethod
    def copy_biased(cls, alphabet: Alphabet, spec: ContextSpec = ContextSpec(),
                    right_classes: str = "coarse", p_copy: float = 0.99
                    ) -> "PhonologyEditModel":
        """The untrained starting point (:meth:`initial`) with context windows ``spec``
        and class scheme ``right_classes`` for the right context (other schemes default)."""
        classes = dict(cls(alphabet).classes, right_context=right_classes)
        return cls(alphabet, spec, classes).initial(p_copy)

    def with_theta(self, theta: np.ndarray) -> "PhonologyEditModel":
        return replace(self, theta=np.asarray(theta, dtype=float).copy())

    def initial(self, p_copy: float = 0.99) -> "PhonologyEditModel":
        """θ₀: only the global biases, set so that copying has probability ≈ p_copy and
        the rest is spread evenly (the copy-biased start of Cotterell et al. 2015)."""
        st = self.structure
        th = np.zeros(st.num_features)
        n = self.alphabet.num_segments
        kind = st.ev_attrs["kind"]
        n_alt = max(1.0, float(np.mean(np.bincount(st.ev_group)[st.ev_group[kind == 2]])) - 1)
        rest = 1.0 - p_copy
        for i, name in enumerate(st.feature_names):
            if name == ("copy",):
                th[i] = np.log(p_copy * n_alt / rest)
            elif name == ("cont",):
                th[i] = np.log(n * (1 - rest / 2) / (rest / 2))
        return self.with_theta(th)

    def fst(self, prune: Optional[float] = None, ids: bool = False) -> pynini.Fst:
        if self.theta is None:
            raise InputError("phonology model has no parameters (call initial() or train)")
        return compile_fst(self.structure, self.theta, prune=prune, ids=ids)

    # ---- persistence
    def to_dict(self) -> dict:
        names = self.structure.feature_names
        nz = np.flatnonzero(self.theta)
        return {"format": "strgm-phonology-v1", "alphabet": self.alphabet.to_dict(),
                "spec": {"left_input": self.spec.left_input,
                         "right_input": self.spec.right_input,
                         "left_output": self.spec.left_output, "tier": self.spec.tier},
                "classes": self.classes,
                "theta": [[list(names[i]), float(self.theta[i])] for i in nz]}

    def save(self, path: str, extra: Optional[dict] = None) -> None:
        d = self.to_dict()
        if extra:
            d["settings"] = extra
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(d, fh, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict, path: str = "<dict>") -> "PhonologyEditModel":
        if d.get("format") != "strgm-phonology-v1":
            raise InputError("not a strgm phonology model (format strgm-phonology-v1)", path=path)
        m = cls(Alphabet.from_dict(d["alphabet"]), ContextSpec(**d["spec"]), dict(d["classes"]))
        index = {tuple(n): i for i, n in enumerate(m.structure.feature_names)}
        th = np.zeros(len(index))
        for name, v in d["theta"]:
            key = tuple(x if isinstance(x, str) else int(x) for x in name)
            if key not in index:
                raise InputError(f"model feature {key} does not exist for this alphabet", path=path)
            th[index[key]] = v
        return m.with_theta(th)

    @classmethod
    def load(cls, path: str) -> "PhonologyEditModel":
        try:
            with open(path, encoding="utf-8") as fh:
                d = json.load(fh)
        except (OSError, json.JSONDecodeError) as e:
            raise InputError(f"cannot read phonology model: {e}", path=path) from None
        return cls.from_dict(d, path)
