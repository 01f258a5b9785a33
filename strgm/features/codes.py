"""Feature strings as integer codes, and the trie arithmetic on them (numpy, no per-string
Python).

A feature w = (w_0, …, w_{k-1}) over labels 1..N+2 (BOS = N+1, EOS = N+2) has the
bijective base-B code (B = N + 3; every digit is ≥ 1)

    code(w) = Σ_i w_i·B^i,        code(ε) = 0,

the first symbol in the *least* significant digit. Codes of length k lie in [B^{k-1},
B^k), so the length is read off the code, and the trie operations are arithmetic:

    parent  w[:-1]   = code mod B^{k-1}          last symbol w_{k-1} = code div B^{k-1}
    prefix  w[:j]    = code mod B^j               suffix w[1:]       = code div B
    extension w·a    = code + a·B^k

These are the positional ids of :func:`strgm.features.symbols.feature_ids` (equal to
them whenever B^k fits in int64). Longer features use object arrays of Python ints: the
same code, exact, slower (and rare: k > 12 on a 33-symbol alphabet).

The canonical order of feature sets (by length, then labels lexicographically; parents
before children) is a sort on (k, big-endian code Σ_i w_i·B^{k-1-i}).

EP and PEP build thousands of short-lived feature sets (PEP's active sets change at
every proximal step); their tries, DFAs and frontiers are computed here with O(k_max)
vectorised passes instead of Python loops over tuples.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from strgm.compiled import njit

Feature = tuple


def base(num_labels: int) -> int:
    return num_labels + 3


def max_int_length(num_labels: int) -> int:
    """Longest feature whose code (and B^k) fits in int64 with a bit to spare."""
    return int(np.floor(62 * np.log(2) / np.log(base(num_labels))))


def powers(num_labels: int, upto: int, dtype) -> np.ndarray:
    """B^0 … B^upto as ``dtype`` (int64, or object for exact Python ints)."""
    b = base(num_labels)
    if dtype == object:
        return np.array([b ** k for k in range(upto + 1)], dtype=object)
    return b ** np.arange(upto + 1, dtype=np.int64)


def dtype_for(max_len: int, num_labels: int):
    """int64 if codes of length ``max_len`` fit, else object."""
    return np.int64 if max_len <= max_int_length(num_labels) else object


def encode(features: Sequence[Feature], num_labels: int, dtype=None) -> np.ndarray:
    """Codes of tuple features (exact; object dtype when some are too long for int64)."""
    lengths = np.fromiter(map(len, features), dtype=np.int64, count=len(features))
    longest = int(lengths.max()) if len(features) else 0
    dtype = dtype or dtype_for(longest, num_labels)
    if len(features) == 0:
        return np.zeros(0, dtype=dtype)
    flat = np.fromiter(itertools.chain.from_iterable(features), dtype=np.int64,
                       count=int(lengths.sum()))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.arange(len(flat)) - np.repeat(starts, lengths)
    pw = powers(num_labels, longest, dtype)
    terms = flat.astype(dtype) * pw[pos]
    if dtype == object:
        return np.array([sum(terms[s:s + k]) for s, k in zip(starts, lengths)],
                        dtype=object)
    return np.add.reduceat(terms, starts)


def lengths(codes: np.ndarray, num_labels: int) -> np.ndarray:
    """k for every code (0 for ε)."""
    b = base(num_labels)
    out = np.zeros(len(codes), dtype=np.int64)
    x = codes.copy()
    while True:
        live = x > 0
        if not live.any():
            return out
        out += live
        x = x // b


def digits(codes: np.ndarray, num_labels: int, k: int) -> np.ndarray:
    """(m × k) int64 labels, column i = w_i (0 past the end of a shorter feature)."""
    b = base(num_labels)
    out = np.zeros((len(codes), k), dtype=np.int64)
    x = codes.copy()
    for i in range(k):
        out[:, i] = (x % b).astype(np.int64)
        x = x // b
    return out


@njit(cache=True)
def _reversed(codes, b):  # pragma: no cover - compiled
    """(big-endian codes Σ_i w_i·B^{k-1-i}, lengths) of int64 codes. Reversing the
    digits is an involution, and since every digit is in 1..B−1 a longer feature has a
    larger big-endian code ((B^{k+1} − 1)/(B − 1) > B^k − 1): sorting these codes is
    the canonical order (length, then labels)."""
    m = codes.shape[0]
    out = np.empty(m, np.int64)
    ln = np.empty(m, np.int64)
    for i in range(m):
        x = codes[i]
        r = 0
        k = 0
        while x > 0:
            r = r * b + x % b
            x //= b
            k += 1
        out[i] = r
        ln[i] = k
    return out, ln


def _split_keys(codes: np.ndarray, num_labels: int):
    """(lengths, big-endian codes of the first L symbols, big-endian codes of the rest)
    of object codes of at most 2L symbols (L = :func:`max_int_length`), as int64; None
    for longer ones. Their lexicographic order is the canonical order: code mod B^L
    holds the first min(k, L) symbols (exactly L when k > L, every digit being ≥ 1)
    and code div B^L the others, so two features of one length compare on their first
    L symbols, then on the rest."""
    p = base(num_labels) ** max_int_length(num_labels)
    try:
        hi = (codes // p).astype(np.int64)
        lo = (codes % p).astype(np.int64)
    except OverflowError:
        return None
    if len(hi) and hi.max() >= p:
        return None
    b = base(num_labels)
    rlo, nlo = _reversed(lo, b)
    rhi, nhi = _reversed(hi, b)
    return nlo + nhi, rlo, rhi


def canonical_order(codes: np.ndarray, lens: np.ndarray, num_labels: int) -> np.ndarray:
    """Permutation putting codes in canonical order (length, then labels): for int64
    codes a stable argsort of the big-endian codes (:func:`_reversed`), for object
    codes up to 2L symbols a lexicographic sort on :func:`_split_keys`, else
    :func:`canonical_order_reference`."""
    if codes.dtype == np.int64 and len(codes):
        return np.argsort(_reversed(codes, base(num_labels))[0], kind="stable")
    keys = _split_keys(codes, num_labels) if len(codes) else None
    if keys is not None:
        return np.lexsort(keys[::-1])
    return canonical_order_reference(codes, lens, num_labels)


def canonical_order_reference(codes: np.ndarray, lens: np.ndarray,
                              num_labels: int) -> np.ndarray:
    """:func:`canonical_order` by a lexicographic sort on (length, big-endian code)
    computed digit by digit (numpy; any dtype)."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    k = int(lens.max())
    b = base(num_labels)
    d = digits(codes, num_labels, k)
    key = np.zeros(len(codes), dtype=codes.dtype)
    for i in range(k):
        key = np.where(i < lens, key * b + d[:, i].astype(codes.dtype), key)
    if codes.dtype == object:
        order = np.argsort(key, kind="stable")
        return order[np.argsort(lens[order], kind="stable")]
    return np.lexsort((key, lens))


def decode(codes: np.ndarray, lens: np.ndarray, num_labels: int) -> list[Feature]:
    """Tuples of the codes (in the given order); per-length C-level conversion."""
    if len(codes) == 0:
        return []
    d = digits(codes, num_labels, int(lens.max()))
    out: list = [None] * len(codes)
    for k in np.unique(lens):
        idx = np.flatnonzero(lens == k)
        for i, t in zip(idx.tolist(), map(tuple, d[idx, :k].tolist())):
            out[i] = t
    return out


def parents(codes: np.ndarray, lens: np.ndarray, num_labels: int) -> np.ndarray:
    """Code of w[:-1] for every w (ε for single symbols)."""
    pw = powers(num_labels, max(int(lens.max(initial=1)) - 1, 0), codes.dtype)
    return codes % pw[np.maximum(lens - 1, 0)]


def last_labels(codes: np.ndarray, lens: np.ndarray, num_labels: int) -> np.ndarray:
    """w_{k-1} for every w of length k ≥ 1."""
    pw = powers(num_labels, max(int(lens.max(initial=1)) - 1, 0), codes.dtype)
    return (codes // pw[np.maximum(lens - 1, 0)]).astype(np.int64)


def prefix_closure(codes: np.ndarray, lens: np.ndarray, num_labels: int,
                   proper: bool) -> tuple[np.ndarray, np.ndarray]:
    """ε and every prefix w[:j] (1 ≤ j < |w|, or ≤ |w| unless ``proper``) of the codes:
    (codes, lengths) in canonical order, ε first. O(k_max) vectorised passes."""
    k = int(lens.max(initial=0))
    pw = powers(num_labels, k, codes.dtype)
    parts = [np.zeros(1, dtype=codes.dtype)]
    for j in range(1, k + (0 if proper else 1)):
        sel = lens > j if proper else lens >= j
        parts.append(codes[sel] % pw[j])
    return canonical_unique(np.concatenate(parts), num_labels)


def canonical_unique(codes: np.ndarray, num_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes in canonical order, with their lengths: for int64 codes the
    sorted distinct big-endian codes reversed back (:func:`_reversed`), for object
    codes up to 2L symbols the sort on :func:`_split_keys` without repeats, else
    :func:`canonical_unique_reference`."""
    if codes.dtype == np.int64 and len(codes):
        b = base(num_labels)
        return _reversed(np.unique(_reversed(codes, b)[0]), b)
    keys = _split_keys(codes, num_labels) if len(codes) else None
    if keys is None:
        return canonical_unique_reference(codes, num_labels)
    order = np.lexsort(keys[::-1])
    ln, lo, hi = (k[order] for k in keys)
    keep = np.ones(len(order), dtype=bool)
    keep[1:] = (ln[1:] != ln[:-1]) | (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])
    return codes[order[keep]], ln[keep]


def canonical_unique_reference(codes: np.ndarray,
                               num_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`canonical_unique` by np.unique, :func:`lengths` and
    :func:`canonical_order_reference` (numpy; any dtype)."""
    distinct = np.unique(codes)
    ln = lengths(distinct, num_labels)
    order = canonical_order_reference(distinct, ln, num_labels)
    return distinct[order], ln[order]


@njit(cache=True)
def merge_canonical(a, b, base_):  # pragma: no cover - compiled
    """The union of two int64 code arrays, each distinct and in canonical order, in
    canonical order: one merge on their big-endian codes (:func:`_reversed`), O(|a| + |b|)
    after the digit reversal. Returns (codes, how many)."""
    ra = _reversed(a, base_)[0]
    rb = _reversed(b, base_)[0]
    out = np.empty(a.shape[0] + b.shape[0], np.int64)
    i = j = k = 0
    while i < a.shape[0] or j < b.shape[0]:
        if j == b.shape[0] or (i < a.shape[0] and ra[i] < rb[j]):
            out[k] = a[i]
            i += 1
        elif i == a.shape[0] or rb[j] < ra[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
            j += 1
        k += 1
    return out[:k], k


@njit(cache=True)
def trie_arrays(codes, base_):  # pragma: no cover - compiled
    """The prefix trie of int64 codes (distinct): (parent, depth, feat_node) over the
    nodes ε and every prefix w[:j], 1 ≤ j ≤ |w|, in canonical order. A node's parent
    is found from its big-endian code: that of w[:-1] is the node's divided by B."""
    be, ln = _reversed(codes, base_)
    total = 1
    for i in range(codes.shape[0]):
        total += ln[i]
    pre = np.zeros(total, np.int64)  # big-endian codes of all prefixes, ε = 0
    j = 1
    for i in range(codes.shape[0]):
        x = be[i]
        for _ in range(ln[i]):
            pre[j] = x
            j += 1
            x //= base_
    nodes = np.unique(pre)
    depth = np.zeros(nodes.shape[0], np.int64)
    parent = np.full(nodes.shape[0], -1, np.int64)
    for i in range(1, nodes.shape[0]):
        parent[i] = np.searchsorted(nodes, nodes[i] // base_)
        depth[i] = depth[parent[i]] + 1
    return parent, depth, np.searchsorted(nodes, be)


class Lookup:
    """Positions of codes in a fixed array of distinct codes (sorted search)."""

    def __init__(self, codes: np.ndarray):
        self._order = np.argsort(codes, kind="stable")
        self._sorted = codes[self._order]

    def find(self, codes: np.ndarray) -> np.ndarray:
        """Position of each code in the array, −1 where absent."""
        if len(self._sorted) == 0 or len(codes) == 0:
            return np.full(len(codes), -1, dtype=np.int64)
        j = np.minimum(np.searchsorted(self._sorted, codes), len(self._sorted) - 1)
        return np.where(self._sorted[j] == codes, self._order[j], -1).astype(np.int64)
