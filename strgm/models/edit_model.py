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

from fst_factors.transducers.contextual_edit import (ContextSpec, EditStructure, build_structure,
                                         compile_fst)
from fst_factors.alphabet import Alphabet
from strgm.errors import InputError, MessageTooLargeError, check_kind
from strgm.models.ipa_features import symbol_info
from strgm.safe_io import json_float
from fst_factors.transducers.edit import P_COPY

_CACHE: dict = {}
#: Largest |θ_k| a model may hold: e^θ must be a finite double (the largest is e^709.78),
#: and an L2-penalised model never comes near it.
MAX_ABS_WEIGHT = 700.0
#: Most segments a model may have: its edit events and arcs grow with the square of the
#: alphabet (substitutions in every context), so the bound keeps one model in memory;
#: phoneme inventories are far smaller.
MAX_SEGMENTS = 256
#: The context classes of a new model (a saved model keeps its own; one saved before
#: ``tier_features`` existed reads back without them).
DEFAULT_CLASSES = {"context": "natural", "right_context": "coarse",
                   "output_context": "coarse", "max_sub_distance": 1,
                   "tier_features": False}


@dataclass
class PhonologyEditModel:
    alphabet: Alphabet
    spec: ContextSpec = ContextSpec()
    classes: dict = field(default_factory=lambda: dict(DEFAULT_CLASSES))
    theta: Optional[np.ndarray] = None

    def __post_init__(self):
        if self.alphabet.num_segments > MAX_SEGMENTS:
            raise MessageTooLargeError(_too_many_segments(self.alphabet.num_segments))

    def __repr__(self) -> str:
        theta = "untrained" if self.theta is None else f"parameters={np.size(self.theta)}"
        return (f"PhonologyEditModel(segments={self.alphabet.num_segments}, "
                f"context={self.spec!r}, {theta})")

    @property
    def structure(self) -> EditStructure:
        key = (self.alphabet, self.spec,
               tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                            for k, v in self.classes.items())))
        if key not in _CACHE:
            info = symbol_info(self.alphabet.segment_symbols,
                               boundary=self.alphabet.boundary is not None, **self.classes)
            _CACHE.clear()
            _CACHE[key] = build_structure(info, self.spec)
        return _CACHE[key]

    @classmethod
    def copy_biased(cls, alphabet: Alphabet, spec: ContextSpec = ContextSpec(),
                    right_classes: str = "coarse", p_copy: float = P_COPY, *,
                    tier_features: Optional[bool] = None) -> "PhonologyEditModel":
        """The untrained starting point (:meth:`initial`) with context windows ``spec``,
        class scheme ``right_classes`` for the right context and the harmony templates
        over single vowel features on or off (None: :data:`DEFAULT_CLASSES`)."""
        classes = dict(cls(alphabet).classes, right_context=right_classes)
        if tier_features is not None:
            classes["tier_features"] = bool(tier_features)
        return cls(alphabet, spec, classes).initial(p_copy)

    def with_theta(self, theta: np.ndarray) -> "PhonologyEditModel":
        return replace(self, theta=np.asarray(theta, dtype=float).copy())

    def initial(self, p_copy: float = P_COPY) -> "PhonologyEditModel":
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
        return {"format": FORMAT, "alphabet": self.alphabet.to_dict(),
                "spec": {"left_input": self.spec.left_input,
                         "right_input": self.spec.right_input,
                         "left_output": self.spec.left_output, "tier": self.spec.tier},
                "classes": self.classes,
                "theta": [[list(names[i]), float(self.theta[i])] for i in nz]}

    def save(self, path: str, extra: Optional[dict] = None) -> None:
        """Write the model as strict JSON, atomically (a temporary file renamed over
        ``path``), so an interrupted save leaves the earlier file or the new one."""
        from strgm.safe_io import atomic_write_json

        d = self.to_dict()
        if extra:
            d["settings"] = extra
        atomic_write_json(path, d)

    @classmethod
    def from_dict(cls, d: dict, path: str = "<dict>") -> "PhonologyEditModel":
        """The model of a parsed JSON object; a malformed object, an unknown feature or a
        non-finite weight (which would make every observation look impossible later) is
        an :class:`InputError` naming ``path``."""
        if isinstance(d, dict):
            check_kind(path, d, (FORMAT,), "a phonology model")
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InputError(f"not a strgm phonology model (format {FORMAT})", path=path)
        try:
            spec = ContextSpec(**_object(d, "spec"))
            classes = _classes(_object(d, "classes"))
            alphabet = Alphabet.from_dict(_object(d, "alphabet"))
            if alphabet.num_segments > MAX_SEGMENTS:
                raise InputError(_too_many_segments(alphabet.num_segments), path=path)
            m = cls(alphabet, spec, classes)
            index = {tuple(n): i for i, n in enumerate(m.structure.feature_names)}
            weights = d["theta"]
            if not isinstance(weights, list):
                raise InputError("'theta' is not a list")
            th = np.zeros(len(index))
            for name, v in weights:
                key = tuple(x if isinstance(x, str) else int(x) for x in name)
                if key not in index:
                    raise InputError(f"model feature {key} does not exist for this "
                                     "alphabet", path=path)
                th[index[key]] = json_float(v)
        except InputError as e:
            if e.path is not None:
                raise
            raise InputError(f"phonology model is damaged: {e.detail}", path=path) from None
        except (KeyError, TypeError, ValueError, IndexError, OverflowError,
                AttributeError) as e:
            raise InputError(f"phonology model is damaged ({type(e).__name__}: {e})",
                             path=path) from None
        bad = np.flatnonzero(~np.isfinite(th) | (np.abs(th) > MAX_ABS_WEIGHT))
        if bad.size:
            name = m.structure.feature_names[bad[0]]
            raise InputError(f"phonology model has {bad.size} non-finite weight(s) or "
                             f"weight(s) beyond ±{MAX_ABS_WEIGHT:g}, e.g. {th[bad[0]]:g} "
                             f"for feature {tuple(name)}; retrain or restore the file",
                             path=path)
        return m.with_theta(th)

    @classmethod
    def load(cls, path: str) -> "PhonologyEditModel":
        """The model saved at ``path`` (UTF-8 strict JSON), with :class:`InputError`
        naming the file when it is missing, not JSON, malformed or has non-finite
        weights."""
        from strgm.safe_io import read_text

        text = read_text(path, "phonology model")
        try:
            d = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:
            raise InputError("phonology model is damaged (nested too deeply)",
                             path=path) from None
        except ValueError as e:
            raise InputError(f"phonology model is damaged (not JSON: {e})", path=path) from None
        return cls.from_dict(d, path)


FORMAT = "strgm-phonology-v1"
_CLASS_KEYS = ("context", "right_context", "output_context")


def _too_many_segments(n: int) -> str:
    return (f"a phonology model over {n:,} segments (more than {MAX_SEGMENTS}): its edit "
            "events grow with the square of the alphabet; check that the words are "
            "written as intended (a segment is a character with its combining marks)")


def _refuse_constant(name: str):
    raise InputError(f"{name} is not JSON (non-finite numbers are stored as strings)")


def _object(d: dict, key: str) -> dict:
    v = d[key]
    if not isinstance(v, dict):
        raise InputError(f"{key!r} is not an object")
    return v


def _classes(c: dict) -> dict:
    """The context-class settings of a saved model, checked (unknown keys and schemes
    would otherwise fail deep inside the feature table)."""
    from strgm.models.ipa_features import SCHEMES

    unknown = sorted(set(c) - set(_CLASS_KEYS) - {"max_sub_distance", "transparent",
                                                  "tier_features"})
    if unknown:
        raise InputError(f"unknown class setting {unknown[0]!r}")
    for k in _CLASS_KEYS:
        if k in c and c[k] not in SCHEMES:
            raise InputError(f"class scheme {k} = {c[k]!r} is not one of {SCHEMES}")
    dist = c.get("max_sub_distance", 2)
    if dist is not None and (isinstance(dist, bool) or not isinstance(dist, int) or dist < 0):
        raise InputError(f"max_sub_distance = {dist!r} is not a count ≥ 0")
    if not isinstance(c.get("tier_features", False), bool):
        raise InputError(f"tier_features = {c['tier_features']!r} is not true or false")
    out = dict(c)
    if "transparent" in c:
        t = c["transparent"]
        if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
            raise InputError(f"transparent = {t!r} is not a list of segments")
        out["transparent"] = tuple(t)
    return out
