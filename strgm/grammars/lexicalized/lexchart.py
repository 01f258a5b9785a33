"""Integer-coded items of the lexicalised chart parser, their storage and its kernels.

The parser (:mod:`strgm.grammars.lexicalized.parser`) codes every item by integers: a
span [i, j), a lexical head ``hk`` (a word position with one of its candidate tags), the
label X (complete items) or the parent P and head-child label H (items of a node being
built, with the adjacency flag of the side being extended).  For each width it keeps one
*representative* per item (the best-scoring derivation, Viterbi) in an :class:`Items`
store, cell by cell: the items of cell (i, j) are the contiguous block
``off[i, j]:end[i, j]`` of the store's columns.

Kernels (compiled with :func:`strgm.compiled.njit`):

* :func:`attach_combos` — the candidates of a modifier attachment: for a right
  modifier every pair (r, c) of an R-phase item r over [i, k) and a complete item c over
  [k, j), j − i = w, whose parent may still be a constituent over [i, j) (``contain[i,
  j, P_r]``) and, with a parent mask, whose modifier may sit under that parent
  (``child[k, j, X_c, P_r]``, phrasal X_c only); for a left modifier every pair (l, c)
  of an L-phase item l over [k, j) and a complete item c over [i, k) with ``contain[i,
  j, P_l]`` (and ``child[i, k, X_c, P_l]``).

It counts first and then fills, O(Σ_cells Σ_k |items(i,k)| · |items(k,j)|) time and the
same output.  :func:`best_by_key` keeps the best candidate per item key (a stable sort,
O(m log m) for m candidates).  :class:`Records` holds the back pointers of every
representative: its kind, span, head, labels and the records of its parts.

Events: :class:`SentenceCode` numbers a sentence's symbols (phrasal labels first, then
the tags, then STOP) and lexical heads (distinct (tag, word) pairs); :class:`Events` packs
each scorer row into one int64 key (mixed radix over those numbers) and keeps one
:class:`EventCache` per event kind, which scores each distinct key once per sentence, by
one scorer call for all the keys of a step that it has not seen (O(m log m) to look up m
keys, plus the scorer's time).
"""

from __future__ import annotations

import numpy as np

from strgm.compiled import njit
from strgm.errors import GrammarError
from strgm.grammars.lexicalized.scorer import LEFT, RIGHT, STOP

__all__ = ["attach_combos", "best_by_key", "Items", "Records", "EventCache",
           "SentenceCode", "Events",
           "PRE", "FROM_L", "UNARY", "START", "EXT_R", "STOP_R", "EXT_L"]

#: Record kinds: a preterminal; a complete node closed by STOP on the left (a: its L
#: item); a unary node (a: its head child); an R item started over a head child (a: the
#: child); an R item extended by a right modifier (a: the R item, b: the modifier); an
#: L item made by STOP on the right (a: the R item); an L item extended by a left
#: modifier (a: the L item, b: the modifier).
PRE, FROM_L, UNARY, START, EXT_R, STOP_R, EXT_L = range(7)


@njit(cache=True)
def attach_combos(n, w, head_first, h_off, h_end, h_par, c_off, c_end, c_lab, contain,
                  child, nl):
    """(h, c) index arrays of the modifier attachments at width ``w`` (module
    docstring), ordered by start i, split k, h, c: a head-side item h (parent
    ``h_par[h]``) over [i, k) with a complete item c over [k, j) when ``head_first``
    (right modifiers: R items), else h over [k, j) with c over [i, k) (left modifiers:
    L items). A phrasal modifier (label < ``nl``) needs ``child[ms, me, label, P]``
    over its span when ``child`` is not empty."""
    use = child.shape[0] > 0
    total = 0
    hi = np.empty(0, np.int64)
    ci = np.empty(0, np.int64)
    for step in range(2):
        if step == 1:
            hi = np.empty(total, np.int64)
            ci = np.empty(total, np.int64)
        t = 0
        for i in range(n - w + 1):
            j = i + w
            for k in range(i + 1, j):
                hs, he, ms, me = (i, k, k, j) if head_first else (k, j, i, k)
                for h in range(h_off[hs, he], h_end[hs, he]):
                    p = h_par[h]
                    if not contain[i, j, p]:
                        continue
                    for c in range(c_off[ms, me], c_end[ms, me]):
                        if use and c_lab[c] < nl and not child[ms, me, c_lab[c], p]:
                            continue
                        if step == 1:
                            hi[t] = h
                            ci[t] = c
                        t += 1
        total = t
    return hi, ci


def best_by_key(keys, scores) -> np.ndarray:
    """Indices of the best finite score per distinct key, in increasing key order (ties:
    the first candidate).  O(m log m)."""
    keys = np.asarray(keys, dtype=np.int64)
    ok = np.flatnonzero(np.isfinite(scores))
    if not len(ok):
        return ok
    order = ok[np.lexsort((-scores[ok], keys[ok]))]
    ks = keys[order]
    first = np.empty(len(ks), dtype=bool)
    first[0] = True
    first[1:] = ks[1:] != ks[:-1]
    return order[first]


def take(cols: dict, idx) -> dict:
    """The rows ``idx`` of every column."""
    return {k: v[idx] for k, v in cols.items()}


def concat(*parts: dict) -> dict:
    """Columns of several candidate sets, one after the other."""
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def by_start(cols: dict) -> dict:
    """The rows in order of their start i (stable)."""
    return take(cols, np.argsort(cols["i"], kind="stable"))


class Items:
    """Representative items of one kind (complete, R phase or L phase), appended a width
    at a time with the rows of each width in order of start i; cell (i, j) is the block
    ``off[i, j]:end[i, j]`` of the concatenated columns (:meth:`col`)."""

    def __init__(self, n: int, fields):
        self.n = n
        self.off = np.zeros((n + 1, n + 1), dtype=np.int64)
        self.end = np.zeros((n + 1, n + 1), dtype=np.int64)
        self.chunks: dict = {f: [] for f in fields}
        self.size = 0
        self._cols: dict = {}

    def add(self, w: int, cols: dict) -> None:
        """Append the items of width ``w`` (columns ordered by ``cols["i"]``)."""
        S = self.n - w + 1
        cnt = np.bincount(cols["i"], minlength=S)[:S]
        starts = self.size + np.concatenate([[0], np.cumsum(cnt)[:-1]])
        idx = np.arange(S)
        self.off[idx, idx + w] = starts
        self.end[idx, idx + w] = starts + cnt
        for f, lst in self.chunks.items():
            lst.append(np.asarray(cols[f]))
        self.size += len(cols["i"])
        self._cols = {}

    def col(self, f: str) -> np.ndarray:
        """Column ``f`` of all items so far."""
        if f not in self._cols:
            lst = self.chunks[f]
            self._cols[f] = np.concatenate(lst) if lst else np.zeros(0)
        return self._cols[f]

    def cell(self, i: int, j: int) -> dict:
        """The items of cell (i, j) as columns."""
        a, b = self.off[i, j], self.end[i, j]
        return {f: self.col(f)[a:b] for f in self.chunks}


class Records:
    """Back pointers of representatives: per record its kind, span (i, j), head ``hk``,
    label P (the node's, or the parent's for R/L items), head-child label H and the
    records a, b of its parts (−1: none)."""

    FIELDS = ("kind", "i", "j", "hk", "P", "H", "a", "b")

    def __init__(self):
        self.chunks: list = []
        self.size = 0

    def add(self, kind: int, i, j, hk, P, H=-1, a=-1, b=-1) -> np.ndarray:
        """Append records (array arguments of one length m, scalars broadcast); their
        ids."""
        m = len(i)
        cols = [np.broadcast_to(np.asarray(x, dtype=np.int64), (m,))
                for x in (kind, i, j, hk, P, H, a, b)]
        self.chunks.append(np.stack(cols, axis=1))
        ids = np.arange(self.size, self.size + m, dtype=np.int64)
        self.size += m
        return ids

    def table(self) -> np.ndarray:
        """All records as an int64 array of rows (kind, i, j, hk, P, H, a, b)."""
        if not self.chunks:
            return np.zeros((0, len(self.FIELDS)), dtype=np.int64)
        return np.concatenate(self.chunks)


class EventCache:
    """Scores of integer-coded event rows of one kind, kept in sorted runs (merged when
    a run is at least half its predecessor's size, so each key is merged O(log K)
    times): :meth:`__call__` looks keys up and scores the missing distinct ones by one
    call ``fn(decode(keys))``."""

    def __init__(self, fn, decode):
        self.fn, self.decode = fn, decode
        self.runs: list = []
        self.rows = 0

    def _lookup(self, u):
        vals = np.full(len(u), np.nan)
        found = np.zeros(len(u), dtype=bool)
        for keys, v in self.runs:
            pos = np.minimum(np.searchsorted(keys, u), len(keys) - 1)
            hit = keys[pos] == u
            vals[hit] = v[pos[hit]]
            found |= hit
        return vals, found

    def __call__(self, keys) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        if not len(keys):
            return np.zeros(0)
        u, inv = np.unique(keys, return_inverse=True)
        vals, found = self._lookup(u)
        miss = u[~found]
        if len(miss):
            rows = self.decode(miss)
            v = np.asarray(self.fn(rows), dtype=np.float64).reshape(-1)
            if len(v) != len(rows) or np.isnan(v).any():
                raise GrammarError(f"the scorer returned {len(v)} values (NaN among them: "
                                   f"{bool(np.isnan(v).any())}) for {len(rows)} rows")
            vals[~found] = v
            self.rows += len(rows)
            self.runs.append((miss, v))
            while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]):
                (k1, v1), (k2, v2) = self.runs.pop(), self.runs.pop()
                k, v = np.concatenate([k2, k1]), np.concatenate([v2, v1])
                o = np.argsort(k, kind="stable")
                self.runs.append((k[o], v[o]))
        return vals[inv]


class SentenceCode:
    """The sentence as integers: symbols (phrasal labels first, then tags not among
    them, then STOP), heads hk = (position, tag), lexical heads lh = distinct (tag, word)
    pairs (the scorer's rows depend on words, not positions)."""

    def __init__(self, scorer, words):
        self.words = tuple(words)
        n = self.n = len(self.words)
        if n == 0:
            raise GrammarError("cannot parse an empty sentence")
        labels = tuple(dict.fromkeys(scorer.labels))
        self.NL = len(labels)
        tags = [list(dict.fromkeys(ts)) for ts in scorer.tags(self.words)]
        if len(tags) != n:
            raise GrammarError(f"the scorer gave tags for {len(tags)} of {n} words")
        names = list(labels)
        sym = {x: k for k, x in enumerate(names)}
        for ts in tags:
            for t in ts:
                if t not in sym:
                    sym[t] = len(names)
                    names.append(t)
        self.sym, self.names, self.NS = sym, names, len(names)
        self.hk_pos = np.array([h for h in range(n) for _ in tags[h]], dtype=np.int64)
        self.hk_sym = np.array([sym[t] for ts in tags for t in ts], dtype=np.int64)
        pairs: dict = {}
        self.lh = np.array([pairs.setdefault((t, self.words[h]), len(pairs))
                            for h in range(n) for t in tags[h]], dtype=np.int64)
        self.NHK, self.NLH = len(self.hk_pos), len(pairs)
        self.sym_obj = np.array(names + [STOP], dtype=object)
        self.lh_tag = np.array([t for t, _ in pairs] + [None], dtype=object)
        self.lh_word = np.array([w for _, w in pairs] + [None], dtype=object)
        if 4 * (self.NS + 1) ** 3 * (self.NLH + 1) ** 2 >= 2 ** 63 \
                or (n + 1) * (self.NHK + 1) * self.NS ** 2 * 2 >= 2 ** 63:
            raise GrammarError(f"sentence of {n} words with {self.NHK} (position, tag) "
                               f"heads and {self.NS} symbols is too large to code")


class Events:
    """The scorer's three event kinds over integer-coded rows, each with its cache."""

    def __init__(self, scorer, code: SentenceCode):
        self.c = code
        self.S1, self.W1 = code.NS + 1, code.NLH + 1
        self.top = EventCache(scorer.log_top, self._dec_top)
        self.head = EventCache(scorer.log_head, self._dec_head)
        self.mod = EventCache(scorer.log_mod, self._dec_mod)

    def top_key(self, X, lh):
        return X * self.W1 + lh

    def head_key(self, P, H, lh):
        return (P * self.S1 + H) * self.W1 + lh

    def mod_key(self, side, adj, P, H, lh, M=None, mlh=None):
        """Key of a modifier row; M None: STOP."""
        if M is None:
            M, mlh = self.c.NS, self.c.NLH
        k = ((np.asarray(side, np.int64) * 2 + adj) * self.S1 + P) * self.S1 + H
        return ((k * self.W1 + lh) * self.S1 + M) * self.W1 + mlh

    def _dec_top(self, keys):
        X, lh = np.divmod(keys, self.W1)
        c = self.c
        return list(zip(c.sym_obj[X].tolist(), c.lh_tag[lh].tolist(), c.lh_word[lh].tolist()))

    def _dec_head(self, keys):
        rest, lh = np.divmod(keys, self.W1)
        P, H = np.divmod(rest, self.S1)
        c = self.c
        return list(zip(c.sym_obj[P].tolist(), c.sym_obj[H].tolist(), c.lh_tag[lh].tolist(),
                        c.lh_word[lh].tolist()))

    def _dec_mod(self, keys):
        rest, mlh = np.divmod(keys, self.W1)
        rest, M = np.divmod(rest, self.S1)
        rest, lh = np.divmod(rest, self.W1)
        rest, H = np.divmod(rest, self.S1)
        rest, P = np.divmod(rest, self.S1)
        side, adj = np.divmod(rest, 2)
        c, so = self.c, np.array([LEFT, RIGHT], dtype=object)
        return list(zip(so[side].tolist(), (adj == 1).tolist(), c.sym_obj[P].tolist(),
                        c.sym_obj[H].tolist(), c.lh_tag[lh].tolist(), c.lh_word[lh].tolist(),
                        c.sym_obj[M].tolist(), c.lh_tag[mlh].tolist(),
                        c.lh_word[mlh].tolist()))
