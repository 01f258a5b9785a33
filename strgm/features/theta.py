"""Sparse θ vectors keyed by feature substrings (PEP eq. 1, §3.2).

``FeatureSet`` is an immutable, canonically ordered set of feature strings W (with a
position index and a prefix trie); ``Theta`` is a value vector over a FeatureSet, i.e. the
sparse map w ↦ θ_w with support ⊆ W (absent features have weight 0).

Vectors on the *same* FeatureSet combine with numpy arithmetic (fixed-order EP keeps every
message on one set); vectors on different sets are first aligned to the union of their
sets (sorted searches on feature ids, O((|W₁| + |W₂|) log |W|) in numpy). Sets built by
EP's own operations (unions, restrictions, active sets) come from integer codes
(:mod:`strgm.features.codes`) and decode their tuples only when asked.
log q_θ(v) = θ·f(v) − log Z_θ, so adding vectors multiplies the distributions
(q_{θ₁+θ₂} ∝ q_{θ₁}·q_{θ₂}).

Zero probabilities are represented by the finite weight ``LOG_FLOOR`` (≈ e^-40) instead
of −∞, so that EP's subtraction θ_{V→F} = θ_V − θ_{F→V} never meets −∞ − (−∞) (PEP
footnote 4) and arithmetic stays exact.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from functools import cached_property
from typing import Iterable, Mapping, Optional

import numpy as np

from strgm.errors import InputError
from strgm.features import codes as _codes
from strgm.features.symbols import (Feature, canonical_sorted, check_feature, describe,
                                    feature_ids)

#: log of a "zero" probability (finite so that θ arithmetic never produces NaN).
LOG_FLOOR = -40.0

#: Least-recently-used cache of feature DFAs, keyed by (equal) feature sets.
_DFA_CACHE: "OrderedDict[FeatureSet, object]" = OrderedDict()
_DFA_CACHE_SIZE = 512
#: Sets built from int64 codes, one live object per (alphabet, codes) (see from_codes).
_INTERNED: "weakref.WeakValueDictionary[tuple, FeatureSet]" = weakref.WeakValueDictionary()
#: Unions and positions remembered per set (the most recent partners, by identity).
_MEMO_SIZE = 8


class FeatureSet:
    """An immutable set of feature strings in canonical order (length, then labels)."""

    __slots__ = ("num_labels", "__dict__", "__weakref__")

    def __init__(self, features: Iterable[Feature], num_labels: int, _checked: bool = False,
                 _ids: Optional[np.ndarray] = None):
        self.num_labels = int(num_labels)
        if _checked:
            feats = tuple(features)
        else:
            feats = tuple(canonical_sorted({check_feature(w, num_labels) for w in features}))
        self.__dict__["features"] = feats
        if _ids is not None:  # known to the caller (a subset or union of known sets)
            self.__dict__["ids"] = _ids

    @classmethod
    def from_codes(cls, codes: np.ndarray, num_labels: int) -> "FeatureSet":
        """The set of the features with these codes (:mod:`strgm.features.codes`), which
        must be distinct and in canonical order; the tuples are decoded on first use.
        EP's working sets are built this way (active sets, unions, restrictions).

        Interned: while a set with the same codes is alive, that object is returned
        (PEP rebuilds the same active and working sets at most proximal steps: 83% of
        the sets built on 200 English words), so what is cached on it — DFA, prefix
        trie, lookups, unions, positions — is reused, and ``is`` decides equality."""
        exact = codes.dtype == object  # Python ints (features too long for int64)
        key = (int(num_labels), codes.dtype.str,
               tuple(codes.tolist()) if exact else codes.tobytes())
        hit = _INTERNED.get(key)
        if hit is not None:
            return hit
        fs = cls.__new__(cls)
        fs.num_labels = int(num_labels)
        fs.__dict__["codes"] = codes
        if not exact:
            fs.__dict__["ids"] = codes
        _INTERNED[key] = fs
        return fs

    @cached_property
    def features(self) -> tuple[Feature, ...]:
        """The feature strings (tuples of labels) in canonical order."""
        return tuple(_codes.decode(self.codes, self.lengths, self.num_labels))

    # The position index, the hash and the feature ids are built on first use: EP makes
    # many short-lived sets (θ restricted to its nonzero features) that never need them.
    @cached_property
    def index(self) -> dict[Feature, int]:
        return {w: i for i, w in enumerate(self.features)}

    @cached_property
    def _hash(self) -> int:
        return hash((self.num_labels, self.ids.tobytes()))

    def __len__(self) -> int:
        d = self.__dict__
        return len(d["features"]) if "features" in d else len(d["codes"])

    def __iter__(self):
        return iter(self.features)

    def __contains__(self, w) -> bool:
        return tuple(w) in self.index

    def __eq__(self, other) -> bool:
        """Same alphabet and same features (compared by id: one per feature)."""
        return isinstance(other, FeatureSet) and (self is other or (
            self._hash == other._hash and self.num_labels == other.num_labels
            and np.array_equal(self.ids, other.ids)))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"FeatureSet({len(self)} features, N={self.num_labels})"

    def union(self, other: "FeatureSet") -> "FeatureSet":
        if other is self:
            return self
        return _memo(self, "_unions", other, self._union)

    def _union(self, other: "FeatureSet") -> "FeatureSet":
        if other == self:
            return self
        if self.num_labels != other.num_labels:
            raise InputError("cannot combine feature sets over different alphabets")
        a, b = self.codes, other.codes
        if a.dtype == np.int64 and b.dtype == np.int64 and len(a) and len(b):
            merged, size = _codes.merge_canonical(a, b, _codes.base(self.num_labels))
            if size == len(a):
                return self
            return other if size == len(b) else \
                FeatureSet.from_codes(merged, self.num_labels)
        return self._union_reference(other)

    def _union_reference(self, other: "FeatureSet") -> "FeatureSet":
        """:meth:`_union` by membership tests and :func:`strgm.features.codes.canonical_unique`
        (numpy; any dtype)."""
        if (other.positions_in(self) >= 0).all():
            return self
        if (self.positions_in(other) >= 0).all():
            return other
        a, b = self.codes, other.codes
        if a.dtype != b.dtype:
            a, b = a.astype(object), b.astype(object)
        merged, _ = _codes.canonical_unique(np.concatenate([a, b]), self.num_labels)
        return FeatureSet.from_codes(merged, self.num_labels)

    @cached_property
    def ids(self) -> np.ndarray:
        """Integer ids of the features (:func:`strgm.features.symbols.feature_ids`), so
        that sets can be compared with numpy."""
        return feature_ids(self.features, self.num_labels)

    @cached_property
    def codes(self) -> np.ndarray:
        """Exact positional codes (:mod:`strgm.features.codes`): the ids themselves when
        every feature fits in int64, else an object array of Python ints."""
        ids = self.ids
        if len(ids) == 0 or ids.min() > 0:
            return ids
        return _codes.encode(self.features, self.num_labels, dtype=object)

    @cached_property
    def _id_lookup(self) -> "_codes.Lookup":
        return _codes.Lookup(self.ids)

    def positions_in(self, other: "FeatureSet") -> np.ndarray:
        """index[i] = the position of feature i of this set in ``other`` (−1 if absent).

        A sorted search on feature ids, O((|W| + |W'|) log |W'|) in numpy: EP combines
        θ vectors on different sets (θ_V, θ_{F→V}, their union) thousands of times, and
        a dictionary pass over ~10⁴–10⁵ trigram features each time dominated trigram EP.
        Remembered per partner (read-only)."""
        return _memo(self, "_positions", other, self._positions_in)

    def _positions_in(self, other: "FeatureSet") -> np.ndarray:
        pos = other._id_lookup.find(self.ids)
        pos.setflags(write=False)
        return pos

    def with_features(self, extra: Iterable[Feature]) -> "FeatureSet":
        extra = [check_feature(w, self.num_labels) for w in extra]
        new = [w for w in extra if w not in self.index]
        if not new:
            return self
        return FeatureSet(canonical_sorted(set(self.features) | set(new)),
                          self.num_labels, _checked=True)

    @cached_property
    def lengths(self) -> np.ndarray:
        if "features" in self.__dict__:
            return np.fromiter(map(len, self.features), dtype=np.int64, count=len(self))
        return _codes.lengths(self.codes, self.num_labels)

    @cached_property
    def dfa(self):
        """The ENCODE structure (contexts, transitions, feature map) of this set; cached,
        and shared by equal sets (EP rebuilds the same active sets many times)."""
        from strgm.features.dfa import FeatureDFA

        hit = _DFA_CACHE.get(self)
        if hit is None:
            hit = FeatureDFA(self)
            _DFA_CACHE[self] = hit
            if len(_DFA_CACHE) > _DFA_CACHE_SIZE:
                _DFA_CACHE.popitem(last=False)
        else:
            _DFA_CACHE.move_to_end(self)
        return hit

    @cached_property
    def prefixes(self) -> tuple[Feature, ...]:
        """All non-empty prefixes u of members (the groups of eq. 9, minus the root), in
        canonical order."""
        c, ln = _codes.prefix_closure(self.codes, self.lengths, self.num_labels,
                                      proper=False)
        return tuple(_codes.decode(c[1:], ln[1:], self.num_labels))


def _memo(fs: FeatureSet, name: str, other: FeatureSet, compute):
    """compute(other), remembered in ``fs`` under ``name`` for the ``_MEMO_SIZE`` most
    recent partners (by identity; interned sets make equal partners identical)."""
    memo = fs.__dict__.get(name)
    if memo is None:
        memo = fs.__dict__[name] = {}
    hit = memo.get(id(other))
    if hit is not None and hit[0] is other:
        return hit[1]
    out = compute(other)
    if len(memo) >= _MEMO_SIZE:
        memo.pop(next(iter(memo)))
    memo[id(other)] = (other, out)
    return out


class Theta:
    """θ: a float vector over a :class:`FeatureSet` (a new object after every operation).

    >>> fs = FeatureSet([(1,), (2,), (1, 2)], num_labels=2)
    >>> t = Theta(fs, [0.5, -1.0, 2.0])
    >>> (t + t)[(1, 2)], t.get((2, 1))
    (4.0, 0.0)
    """

    __slots__ = ("features", "values")

    def __init__(self, features: FeatureSet, values=None):
        self.features = features
        if values is None:
            self.values = np.zeros(len(features))
        else:
            v = np.array(values, dtype=np.float64)
            if v.shape != (len(features),):
                raise InputError(f"theta has {v.shape} values for {len(features)} features")
            if not np.all(np.isfinite(v)):
                raise InputError("theta values must be finite (use LOG_FLOOR for log 0)")
            self.values = v

    # --- construction ------------------------------------------------------------
    @classmethod
    def zeros(cls, features: FeatureSet) -> "Theta":
        return cls(features)

    @classmethod
    def from_dict(cls, d: Mapping[Feature, float], num_labels: int) -> "Theta":
        fs = FeatureSet(d.keys(), num_labels)
        dd = {tuple(k): v for k, v in d.items()}
        return cls(fs, [dd[w] for w in fs.features])

    @property
    def num_labels(self) -> int:
        return self.features.num_labels

    # --- access ------------------------------------------------------------------
    def __getitem__(self, w) -> float:
        return float(self.values[self.features.index[tuple(w)]])

    def get(self, w, default: float = 0.0) -> float:
        i = self.features.index.get(tuple(w))
        return default if i is None else float(self.values[i])

    def to_dict(self, nonzero: bool = True) -> dict[Feature, float]:
        return {w: float(x) for w, x in zip(self.features.features, self.values)
                if x != 0.0 or not nonzero}

    def __len__(self) -> int:
        return len(self.features)

    @property
    def nnz(self) -> int:
        return int(np.count_nonzero(self.values))

    def __repr__(self) -> str:
        top = sorted(self.to_dict().items(), key=lambda kv: -abs(kv[1]))[:4]
        s = ", ".join(f"{describe(w)}:{x:+.3g}" for w, x in top)
        return f"Theta({self.nnz}/{len(self)} nonzero; {s}{', ...' if self.nnz > 4 else ''})"

    # --- alignment and arithmetic ------------------------------------------------
    def align(self, features: FeatureSet, strict: bool = True) -> "Theta":
        """The same vector on ``features`` (absent entries 0). With ``strict``, a nonzero
        weight on a feature outside ``features`` raises ``InputError``."""
        if features is self.features or features == self.features:
            return Theta(features, self.values) if features is not self.features else self
        pos = self.features.positions_in(features)
        inside = pos >= 0
        if strict and not inside.all():
            lost = np.flatnonzero(~inside & (self.values != 0.0))
            if len(lost):
                w = self.features.features[lost[0]]
                raise InputError(f"feature {w} with weight {self.values[lost[0]]} is not "
                                 "in the target set")
        out = np.zeros(len(features))
        out[pos[inside]] = self.values[inside]
        return Theta(features, out)

    def _binary(self, other: "Theta", op) -> "Theta":
        if other.features is self.features or other.features == self.features:
            return Theta(self.features, op(self.values, other.values))
        fs = self.features.union(other.features)
        return Theta(fs, op(self.align(fs).values, other.align(fs).values))

    def __add__(self, other: "Theta") -> "Theta":
        return self._binary(other, np.add)

    def __sub__(self, other: "Theta") -> "Theta":
        return self._binary(other, np.subtract)

    def __mul__(self, c: float) -> "Theta":
        return Theta(self.features, self.values * float(c))

    __rmul__ = __mul__

    def __neg__(self) -> "Theta":
        return Theta(self.features, -self.values)

    def dot(self, expectations: np.ndarray) -> float:
        return float(self.values @ expectations)

    def restrict(self, keep: Optional[np.ndarray] = None, tol: float = 0.0) -> "Theta":
        """Drop features (default: those with |θ_w| ≤ tol); a new, smaller FeatureSet."""
        if keep is None:
            keep = np.abs(self.values) > tol
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return self
        fs = FeatureSet.from_codes(self.features.codes[keep], self.num_labels)
        return Theta(fs, self.values[keep])

    def allclose(self, other: "Theta", atol: float = 1e-8) -> bool:
        fs = self.features.union(other.features)
        return bool(np.allclose(self.align(fs).values, other.align(fs).values, atol=atol))
