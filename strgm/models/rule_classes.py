"""Natural classes and feature changes over a paradigm's segments, for rewrite rules.

A *natural class* is the set of segments of the alphabet that satisfy a conjunction of
at most two feature predicates (``type=vowel``, ``voice=True``, ``place=cor``, …; the
bundles of :mod:`strgm.models.ipa_features`). Classes are identified by their extension:
two descriptions of the same set are one class, described by its shortest description.
A *feature change* (x → y) is the set of features whose values differ between x and y;
applied to another segment c it gives the segment whose bundle is c's with those values,
if the alphabet has one.

*Assimilation* (:meth:`SegmentFeatures.assimilate`): x takes a group of features of
a neighbour c (:data:`SPREAD_FEATURES`: place with [ant], voice, back, round, high,
low), the ``[α F]`` of textbook rules. Palatals count as [−ant] coronals for place
(the IPA table gives ɲ the place ``pal`` and ʧ the place ``cor``; Zoque /n+ʧ/ → [ɲʧ]).

Costs (the description length, in feature units, of :mod:`strgm.models.rule_search`):
a class costs its number of predicates, a single segment :data:`SEGMENT_COST`.
Enumeration: O(P²·n) for P feature predicates and n segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Optional, Sequence

from strgm.models.ipa_features import feature_table

_FEATURES = ("type", "place", "manner", "voice", "sib", "ant", "son", "cont", "nasal",
             "high", "low", "back", "round", "long", "nas", "pal", "asp")
_SONORANT = {"nasal", "lat", "rhot", "glide"}
_CONTINUANT = {"fric", "lat", "rhot", "glide"}
#: coronals behind the alveolar ridge: [−anterior] (the IPA table of
#: :mod:`strgm.models.ipa_features` gives s and ʃ the same bundle otherwise)
_POSTERIOR = set("ʃʒʧʤɕʑʨʥ")
#: the feature groups an assimilation rule copies, by the name it is written with
SPREAD_FEATURES = {"place": ("place", "ant"), "voice": ("voice",), "back": ("back",),
                   "round": ("round",), "high": ("high",), "low": ("low",)}
#: the description length of naming one segment (about three features)
SEGMENT_COST = 3.0


@dataclass(frozen=True)
class NaturalClass:
    """A set of segment labels (1-based, as in :class:`fst_factors.alphabet.Alphabet`) and the
    shortest description found (``"[+voice C]"``; a single segment is its symbol)."""

    members: frozenset
    text: str
    cost: float


def _value(bundle: dict, f: str):
    return bundle.get(f, False if f in ("long", "nas", "pal", "asp", "sib") else None)


def _bundle(symbol: str, features: dict) -> dict:
    b = {f: _value(features, f) for f in _FEATURES}
    b["ant"] = (symbol[:1] not in _POSTERIOR) if b.get("place") == "cor" else None
    # the binary manner features of textbook classes ([−son], [+cont], [−nasal]),
    # derived from the manner so that a class can exclude one manner
    vowel, manner = features.get("type") == "vowel", features.get("manner")
    known = vowel or manner is not None
    b["son"] = (vowel or manner in _SONORANT) if known else None
    b["cont"] = (vowel or manner in _CONTINUANT) if known else None
    b["nasal"] = (manner == "nasal") if known else None
    return b


def _predicate_text(f: str, v) -> str:
    if f == "type":
        return {"vowel": "V", "consonant": "C"}.get(v, str(v))
    if isinstance(v, bool):
        return ("+" if v else "−") + f
    return str(v)


class SegmentFeatures:
    """The feature bundles of ``symbols`` (labels 1..n in that order), their natural
    classes (:meth:`classes_of`) and feature changes (:meth:`change`)."""

    def __init__(self, symbols: Sequence[str]):
        self.symbols = list(symbols)
        self.table = feature_table(self.symbols, warn=False)
        self.bundles = [_bundle(s, self.table[s]) for s in self.symbols]
        self._by_bundle = {tuple(sorted(b.items(), key=str)): i + 1
                           for i, b in enumerate(self.bundles)}
        self.classes = self._enumerate()
        self._memo: dict = {}  # (method, arguments) -> result of the pure look-ups below

    def _enumerate(self) -> list:
        preds = sorted({(f, b[f]) for b in self.bundles for f in _FEATURES
                        if b[f] is not None}, key=str)
        best: dict = {}
        for k in (1, 2):
            for combo in combinations(preds, k):
                if len({f for f, _ in combo}) < k:
                    continue
                members = frozenset(i + 1 for i, b in enumerate(self.bundles)
                                    if all(b[f] == v for f, v in combo))
                if len(members) < 2 or len(members) == len(self.symbols):
                    continue
                if members not in best or best[members].cost > k:
                    text = "[" + " ".join(_predicate_text(f, v) for f, v in combo) + "]"
                    best[members] = NaturalClass(members, text, float(k))
        return sorted(best.values(), key=lambda c: (c.cost, c.text))

    def segment_class(self, label: int) -> NaturalClass:
        return NaturalClass(frozenset([label]), self.symbols[label - 1], SEGMENT_COST)

    def classes_of(self, label: int) -> list:
        """The single segment and every natural class containing ``label``."""
        key = ("classes_of", label)
        if key not in self._memo:
            self._memo[key] = [self.segment_class(label)] + \
                [c for c in self.classes if label in c.members]
        return list(self._memo[key])

    def change(self, x: int, y: int) -> tuple:
        """The feature values that turn x into y: ((feature, value of y), ...)."""
        bx, by = self.bundles[x - 1], self.bundles[y - 1]
        return tuple((f, by[f]) for f in _FEATURES if bx[f] != by[f])

    def apply_change(self, label: int, change: tuple) -> Optional[int]:
        """The segment whose bundle is ``label``'s with ``change`` applied (None if the
        alphabet has none, or if it is ``label`` itself)."""
        key = ("apply_change", label, change)
        if key not in self._memo:
            b = dict(self.bundles[label - 1])
            b.update(change)
            out = self._lookup(b)
            self._memo[key] = None if out == label else out
        return self._memo[key]

    def assimilate(self, x: int, c: int, name: str) -> Optional[int]:
        """The segment x becomes by taking the features ``SPREAD_FEATURES[name]`` of c
        (module docstring); None if the alphabet has none, or if it is x itself."""
        key = ("assimilate", x, c, name)
        if key not in self._memo:
            self._memo[key] = self._assimilate(x, c, name)
        return self._memo[key]

    def _assimilate(self, x: int, c: int, name: str) -> Optional[int]:
        b, bc = dict(self.bundles[x - 1]), self.bundles[c - 1]
        b.update((f, bc[f]) for f in SPREAD_FEATURES[name])
        out = self._lookup(b)
        if out is None and name == "place":
            if (bc["place"], bc["ant"]) == ("cor", False):
                out = self._lookup({**b, "place": "pal", "ant": None})
            elif bc["place"] == "pal":
                out = self._lookup({**b, "place": "cor", "ant": False})
        return None if out == x else out

    def _lookup(self, bundle: dict) -> Optional[int]:
        return self._by_bundle.get(tuple(sorted(bundle.items(), key=str)))

    def change_text(self, change: tuple) -> str:
        """The changed values that are written (a feature that stops applying, such as
        [ant] off the coronals, is implied by the others)."""
        return "[" + " ".join(_predicate_text(f, v) for f, v in change
                              if v is not None) + "]"
