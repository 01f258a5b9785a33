"""ENCODE(θ): the deterministic longest-context DFA of a substring feature set (PEP §3.2–3.4,
docs/pep.md; Allauzen et al. 2003 style variable-order Markov automaton).

Structure (depends on the feature set W only, cached on the FeatureSet):

* states = contexts C = {ε} ∪ proper prefixes of members of W. C is prefix-closed, i.e. a
  trie, so "the longest suffix of h·a that is in C" is the Aho–Corasick goto function:
  goto(h, a) = h·a if h·a ∈ C, else goto(fail(h), a), with fail(h) the longest proper
  suffix of h in C. The suffixes of h that lie in C are exactly its failure chain
  h, fail(h), fail²(h), …, ε.
* the start state is the context BOS if BOS ∈ C, else ε; reading symbol a ∈ Σ in h moves
  to goto(h, a); the machine is complete (every state has an arc for every symbol).
* built on the features' integer codes (:mod:`strgm.features.codes`), one depth of the
  trie at a time: fail and goto of all contexts at depth d are numpy gathers from the
  finished rows of shallower contexts. O(depth) passes, O(|C|·N) work in all.

Weights: the features firing on arc (h, a) are {s·a ∈ W : s in the failure chain of h}
(every occurrence of w ends at one position, and w[:-1] ∈ C is then a suffix of h), so

    A[h, a] = θ_{h·a} + A[fail(h), a]          (θ_x = 0 for x ∉ W)
    A[h, $] = θ_{h·EOS} + A[fail(h), $] + θ_{BOS}          (final weight; θ_{BOS} is a
                                                           constant feature)

computed level by level (O(|C|·(N+1)) numpy work). The arc weight in log64 is −A.
ENCODE(θ) accepts v with weight exp(θ·f(v)) (PEP eq. 1 unnormalised).

Feature expectations from per-arc expected counts c(h, a) (any distribution over paths):
E[f_{s·a}] = Σ_{h : s ∈ chain(h)} c(h, a), i.e. the counts accumulated up the failure tree
from the deepest contexts to the root (reverse BFS), then read at (s, a). O(|C|·(N+1)).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pynini

from strgm.errors import InputError
from strgm.features import codes
from strgm.features.symbols import bos, eos
from strgm.compiled import njit
from fst_factors.wfsa.core import from_arc_table

#: Kept under its old name: the builder now lives in the WFSA layer.
fst_from_arrays = from_arc_table


@njit(cache=True)
def _down(a, fail):  # pragma: no cover - compiled
    """a[h] += a[fail(h)] for the states in order (canonical: by depth, so fail(h) — a
    shallower context — is final when read); the root (state 0) is left alone."""
    for h in range(1, a.shape[0]):
        f = fail[h]
        for j in range(a.shape[1]):
            a[h, j] += a[f, j]


@njit(cache=True)
def _up(s, fail):  # pragma: no cover - compiled
    """s[fail(h)] += s[h] for the states in reverse order (deepest first, so each
    state's sum is complete before it is passed up)."""
    for h in range(s.shape[0] - 1, 0, -1):
        f = fail[h]
        for j in range(s.shape[1]):
            s[f, j] += s[h, j]


class FeatureDFA:
    """The ENCODE structure of a :class:`~strgm.features.theta.FeatureSet` (see module doc).

    Attributes: ``contexts`` (tuple per state), ``depth``, ``fail``, ``goto`` (|C| × N,
    column a-1 for label a), ``start``, ``feat_node``/``feat_col`` (feature i = context
    ``feat_node[i]`` followed by column ``feat_col[i]``; column N is EOS; ``feat_node = -1``
    marks the constant feature (BOS,)).
    """

    def __init__(self, features):
        self.features = features
        n = self.num_labels = features.num_labels
        b = bos(n)
        ctx, depth = codes.prefix_closure(features.codes, features.lengths, n, proper=True)
        self._context_codes = ctx
        nc = len(ctx)
        look = codes.Lookup(ctx)
        parent = look.find(codes.parents(ctx, depth, n))
        label = codes.last_labels(ctx, depth, n)
        self.levels = [np.flatnonzero(depth == d) for d in range(1, int(depth.max()) + 1)]
        fail = np.zeros(nc, dtype=np.int64)
        goto = np.zeros((nc, n), dtype=np.int64)

        def link_children(d: int) -> None:
            # goto(h, a) = h·a for the children h·a ∈ C at depth d + 1 (BOS is no symbol)
            if d < len(self.levels):
                kids = self.levels[d]
                kids = kids[label[kids] != b]
                goto[parent[kids], label[kids] - 1] = kids

        link_children(0)
        for d, lev in enumerate(self.levels, start=1):
            # fail(h·a) = goto(fail(h), a); root's children (and BOS) fail to the root.
            # Every row read here is final: failure links point to shallower contexts.
            p, a = parent[lev], label[lev]
            inner = (p != 0) & (a != b)
            f = np.zeros(len(lev), dtype=np.int64)
            f[inner] = goto[fail[p[inner]], a[inner] - 1]
            fail[lev] = f
            goto[lev] = goto[f]
            link_children(d)
        self.depth, self.fail, self.goto = depth, fail, goto
        self._lookup = look
        found = look.find(np.array([b], dtype=ctx.dtype))[0]
        self.start = int(found) if found >= 0 else 0
        self.feat_node, self.feat_col = self._place(features)

    def _place(self, features) -> tuple[np.ndarray, np.ndarray]:
        """(node, col) of every feature s·a: node = the context s (−1 for the constant
        feature (BOS,), −2 when s is not a context here), col = a − 1 (N for EOS)."""
        n = self.num_labels
        fl, fcodes = features.lengths, features.codes
        node = self._lookup.find(codes.parents(fcodes, fl, n))
        node[node < 0] = -2
        last = codes.last_labels(fcodes, fl, n)
        col = np.where(last == eos(n), n, last - 1)
        const = fcodes == bos(n)
        node[const], col[const] = -1, n
        return node, col

    def placement(self, features) -> tuple[np.ndarray, np.ndarray]:
        """Where the features of another set sit in this DFA: (node, col) as for the own
        features (:meth:`_place`). Every feature whose prefix s is a context of this DFA
        fires exactly on the arcs (h, a) with s in h's failure chain, so weights and
        expectations of that set can be computed on this (finer) DFA."""
        if features is self.features or features == self.features:
            return self.feat_node, self.feat_col
        memo = self.__dict__.setdefault("_placements", {})  # the last few sets (interned)
        hit = memo.get(id(features))
        if hit is None or hit[0] is not features:
            if len(memo) >= 8:
                memo.pop(next(iter(memo)))
            node, col = self._place(features)
            node.setflags(write=False)
            col.setflags(write=False)
            hit = memo[id(features)] = (features, (node, col))
        return hit[1]

    def coarser_states(self, other: "FeatureDFA") -> np.ndarray:
        """For every state h' of this DFA, the state of ``other`` (whose contexts must be
        among this one's) that a history ending in h' reaches there: the longest suffix
        of h' that is a context of ``other`` (suffix w[1:] = code div B; ε is always a
        context). O(|C|·depth) sorted searches."""
        c = self._context_codes.copy()
        out = other._lookup.find(c)
        todo = out < 0
        while todo.any():
            c[todo] = c[todo] // codes.base(self.num_labels)
            out[todo] = other._lookup.find(c[todo])
            todo = out < 0
        return out

    def contains_contexts_of(self, features) -> bool:
        """True when every feature's prefix s (w = s·a) is a context of this DFA."""
        return bool((self.placement(features)[0] >= -1).all())

    @cached_property
    def contexts(self) -> tuple:
        """The context strings, one per state (built on demand)."""
        return tuple(codes.decode(self._context_codes, self.depth, self.num_labels))

    @cached_property
    def context_index(self) -> dict:
        return {c: i for i, c in enumerate(self.contexts)}

    @property
    def num_states(self) -> int:
        return len(self._context_codes)

    @property
    def num_arcs(self) -> int:
        """Ordinary arcs of ENCODE (|C|·N), the size measure of eq. (8)."""
        return self.num_states * self.num_labels

    # --- weights ---------------------------------------------------------------------
    def arc_logweights(self, values: np.ndarray, features=None,
                       compiled: bool = True) -> np.ndarray:
        """A (|C| × (N+1)): log weight of every arc (column N = final weight), for θ =
        ``values`` on this DFA's features or on ``features`` (whose prefixes must be
        contexts here, see :meth:`placement`). ``compiled``: the failure-tree pass as
        one compiled loop over the states (:func:`_down`), else level by level."""
        values = np.asarray(values, dtype=np.float64)
        node, col = self._placed(features)
        t = np.zeros((self.num_states, self.num_labels + 1))
        ok = node >= 0
        t[node[ok], col[ok]] = values[ok]
        a = t
        if compiled:
            _down(a, self.fail)
        else:
            for lev in self.levels:
                a[lev] += a[self.fail[lev]]
        const = node == -1
        if const.any():
            a[:, -1] += values[const].sum()
        return a

    def accumulate(self, arc_counts: np.ndarray, features=None,
                   compiled: bool = True) -> np.ndarray:
        """Feature expectations E[f] from per-arc expected counts (|C| × (N+1)), for this
        DFA's features or for ``features`` (see :meth:`placement`). ``compiled``: the
        pass up the failure tree as one compiled loop (:func:`_up`), else by levels."""
        node, col = self._placed(features)
        s = np.array(arc_counts, dtype=np.float64, copy=True)
        if compiled:
            _up(s, self.fail)
        else:
            for lev in reversed(self.levels):
                np.add.at(s, self.fail[lev], s[lev])
        out = np.empty(len(node))
        ok = node >= 0
        out[ok] = s[node[ok], col[ok]]
        out[~ok] = arc_counts[:, -1].sum()
        return out

    def _placed(self, features) -> tuple[np.ndarray, np.ndarray]:
        if features is None:
            return self.feat_node, self.feat_col
        node, col = self.placement(features)
        if (node < -1).any():
            w = features.features[int(np.flatnonzero(node < -1)[0])]
            raise InputError(f"feature {w}: its prefix is not a context of this DFA")
        return node, col

    def deaccumulate(self, expectations: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`accumulate` for a *complete* set (every h·a, h ∈ C, a ∈ Σ∪{$},
        is a feature): the per-arc counts c(h, a) = S(h, a) − Σ_{g: fail(g)=h} S(g, a)."""
        s = np.zeros((self.num_states, self.num_labels + 1))
        ok = self.feat_node >= 0
        s[self.feat_node[ok], self.feat_col[ok]] = np.asarray(expectations)[ok]
        c = s.copy()
        for lev in self.levels:
            np.subtract.at(c, self.fail[lev], s[lev])
        return c

    @cached_property
    def is_complete(self) -> bool:
        """True when every context has a feature for every next symbol (and EOS)."""
        ok = self.feat_node >= 0
        cells = np.zeros((self.num_states, self.num_labels + 1), dtype=bool)
        cells[self.feat_node[ok], self.feat_col[ok]] = True
        return bool(cells.all())

    @cached_property
    def reachable(self) -> np.ndarray:
        """States reachable from the start, sorted (breadth-first over ``goto``; every
        arc of ENCODE(θ) has positive weight, so this is the support of any q_θ)."""
        seen = np.zeros(self.num_states, dtype=bool)
        seen[self.start] = True
        frontier = np.array([self.start])
        while frontier.size:
            nxt = np.unique(self.goto[frontier])
            frontier = nxt[~seen[nxt]]
            seen[frontier] = True
        return np.flatnonzero(seen)

    @cached_property
    def transition_cells(self) -> np.ndarray:
        """Flat index h·|C| + goto(h, a) of every arc (for dense transition matrices)."""
        src, _, dst = self.arc_arrays
        return src * self.num_states + dst

    # --- automata ----------------------------------------------------------------------
    @cached_property
    def arc_arrays(self):
        nc, n = self.num_states, self.num_labels
        src = np.repeat(np.arange(nc), n)
        lab = np.tile(np.arange(1, n + 1), nc)
        dst = self.goto.reshape(-1)
        return src, lab, dst

    def encode(self, values: np.ndarray) -> pynini.Fst:
        """ENCODE(θ) as a complete deterministic log64 acceptor (|C| states, |C|·N arcs)."""
        a = self.arc_logweights(values)
        src, lab, dst = self.arc_arrays
        f = fst_from_arrays(self.num_states, self.start, src, dst, lab, lab,
                            -a[:, :-1].reshape(-1), -a[:, -1])
        return f

    def counting_transducer(self, values=None) -> pynini.Fst:
        """Reads v·EOS (EOS = label N+2), writes the id+1 of every DFA arc it takes.

        Arc (h, a) has id h·(N+1) + (a−1), the final "arc" (h, EOS) id h·(N+1) + N. With
        ``values`` the arcs carry ENCODE(θ)'s weights (so composing with p gives
        p ⊙ ENCODE(θ) with arc provenance); without, weight 1.
        """
        nc, n = self.num_states, self.num_labels
        src, lab, dst = self.arc_arrays
        if values is None:
            a = np.zeros((nc, n + 1))
        else:
            a = self.arc_logweights(values)
        ids = np.arange(nc * (n + 1)).reshape(nc, n + 1)
        sink = nc
        s_all = np.concatenate([src, np.arange(nc)])
        d_all = np.concatenate([dst, np.full(nc, sink)])
        il = np.concatenate([lab, np.full(nc, eos(n))])
        ol = np.concatenate([ids[:, :-1].reshape(-1), ids[:, -1]]) + 1
        w = np.concatenate([-a[:, :-1].reshape(-1), -a[:, -1]])
        final = np.full(nc + 1, np.inf)
        final[sink] = 0.0
        return fst_from_arrays(nc + 1, self.start, s_all, d_all, il, ol, w, final)
