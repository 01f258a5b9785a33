"""Feature strings: substrings of BOS·v·EOS over integer labels (PEP §3.3, docs/pep.md).

A variable's values are label strings over 1..N (N = ``alphabet.size``, boundary
included). Inside feature definitions only, two extra labels exist:

    BOS = N + 1   (may occur only as the first symbol of a feature)
    EOS = N + 2   (may occur only as the last symbol of a feature)

f_w(v) = number of occurrences of w in BOS·v·EOS. So (a,) counts the a's of v, (BOS, a)
says v starts with a, (a, EOS) that it ends with a, (BOS, EOS) that v is empty; (BOS,) and
(EOS,) are constant features (count 1 for every v).

Fixed-order families (``ngram_features``): contexts C_n = Σ^{<n} ∪ BOS·Σ^{<n-1} and
features W_n = {h·a : h ∈ C_n, a ∈ Σ ∪ {EOS}} ("every n-gram and every shorter one that
touches BOS"). Every arc of ENCODE(W_n) then carries its own feature, so the family is all
(unnormalised) variable-order Markov chains on that context set and the closed-form
projection (PEP §6) is exact. |W_n| = |C_n|·(N+1) with |C_n| = Σ_{k<n} N^k + Σ_{k<n-1} N^k.
"""

from __future__ import annotations

import itertools
from typing import Iterable

import numpy as np

from strgm.errors import InputError

Feature = tuple  # a tuple of int labels


def bos(num_labels: int) -> int:
    return num_labels + 1


def eos(num_labels: int) -> int:
    return num_labels + 2


def check_feature(w: Feature, num_labels: int) -> Feature:
    """Validate one feature string; returns it as a tuple of ints."""
    w = tuple(int(a) for a in w)
    if not w:
        raise InputError("the empty string is not a feature")
    b, e = bos(num_labels), eos(num_labels)
    for i, a in enumerate(w):
        if a == b and i != 0:
            raise InputError(f"feature {w}: BOS ({b}) may only be the first symbol")
        if a == e and i != len(w) - 1:
            raise InputError(f"feature {w}: EOS ({e}) may only be the last symbol")
        if not 1 <= a <= e:
            raise InputError(f"feature {w}: label {a} outside 1..{e} (N={num_labels})")
    return w


def feature_key(w: Feature) -> tuple:
    """Canonical order of features: by length, then labels (parents before children)."""
    return (len(w), w)


def canonical_sorted(features) -> list:
    """``sorted(features, key=feature_key)`` with two C-level sorts (labels, then a stable
    sort by length) instead of a Python key call per comparison; EP sorts active sets
    thousands of times."""
    out = sorted(features)
    out.sort(key=len)
    return out


def describe(w: Feature, alphabet=None) -> str:
    """Readable form of a feature, e.g. '^ab$'."""
    if alphabet is None:
        return "·".join(map(str, w))
    n = alphabet.size
    out = []
    for a in w:
        out.append("^" if a == bos(n) else "$" if a == eos(n) else alphabet.symbol(a))
    return "".join(out)


def ngram_contexts(order: int, num_labels: int) -> list[Feature]:
    """C_n: every context of length < n (BOS counts as a symbol), ε included."""
    if order < 1:
        raise InputError(f"n-gram order must be >= 1, got {order}")
    sig = range(1, num_labels + 1)
    out: list[Feature] = [()]
    for k in range(1, order):
        out.extend(itertools.product(sig, repeat=k))
        out.extend((bos(num_labels),) + t for t in itertools.product(sig, repeat=k - 1))
    return out


def ngram_features(order: int, num_labels: int) -> list[Feature]:
    """W_n = C_n · (Σ ∪ {EOS}) (see module docstring)."""
    nxt = list(range(1, num_labels + 1)) + [eos(num_labels)]
    return [h + (a,) for h in ngram_contexts(order, num_labels) for a in nxt]


def unigram_features(num_labels: int) -> list[Feature]:
    return ngram_features(1, num_labels)


def extensions(w: Feature, num_labels: int) -> Iterable[Feature]:
    """One-symbol right extensions w·a (a ∈ Σ ∪ {EOS}); none after EOS."""
    if w and w[-1] == eos(num_labels):
        return []
    return [w + (a,) for a in list(range(1, num_labels + 1)) + [eos(num_labels)]]


#: Interned ids of features too long for a positional code (see :func:`feature_ids`).
_LONG_IDS: dict = {}


def feature_ids(features, num_labels: int) -> np.ndarray:
    """One int64 per feature, equal for equal features and distinct otherwise.

    A feature w = (w_0, …, w_{k-1}) with labels in 1..N+2 gets the bijective base-B code
    Σ_i w_i·B^i (B = N + 3; no digit is 0, so codes of different lengths never meet)
    while B^k fits in int64, computed with numpy on the flattened labels; the rare longer
    features get negative, process-wide interned ids. O(Σ|w|) in C-level loops."""
    from strgm.features.codes import encode, max_int_length

    n = len(features)
    lengths = np.fromiter(map(len, features), dtype=np.int64, count=n)
    short = lengths <= max_int_length(num_labels)
    if short.all():
        return encode(features, num_labels, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(short)
    if len(idx):
        out[idx] = encode([features[i] for i in idx], num_labels, dtype=np.int64)
    for i in np.flatnonzero(~short):
        out[i] = -1 - _LONG_IDS.setdefault(features[i], len(_LONG_IDS))
    return out
