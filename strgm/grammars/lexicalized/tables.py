"""The context tree of a lexicalised grammar's events, as arrays.

Nodes are the context keys of :mod:`strgm.grammars.lexicalized.events` seen in training;
a node's parent is the next key of its chain (-1 for a chain's last key, whose base is
ε, uniform over the family's V outcomes).  A *cell* is a (node, outcome) pair observed
in the node's subtree; ``cell_parent`` is the same outcome's cell at the parent node.
Training counts sit at the cells of the finest keys.  The arrays are those of
:class:`strgm.grammars.smoothing.hierarchy.Hierarchy`, so the HDP sampler of
:mod:`strgm.grammars.smoothing.hdp` runs on them unchanged.

:meth:`EventTables.locate` turns (chain, outcome) queries into node and cell indices;
:func:`backoff_predictive` evaluates the backoff recursion (Dawson 2015, eq. 59) for
many queries and many states at once.  Building is O(Σ_events chain length).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from strgm.grammars.lexicalized.events import level_of
from strgm.grammars.smoothing.hierarchy import Hierarchy

__all__ = ["EventTables", "build_tables", "backoff_predictive", "strict_backoff",
           "FAMILY_OF_KIND"]

#: the family of a key's kind
FAMILY_OF_KIND = {"h": "head", "m": "mod", "w": "word", "wt": "word", "tw": "word",
                  "top": "top"}


class EventTables:
    """Nodes, cells and counts of the training events (module docstring)."""

    def __init__(self, node_keys, node_parent, cells, cell_parent, leaf_count,
                 family_size: dict):
        self.node_keys = list(node_keys)
        self.node_index = {k: i for i, k in enumerate(self.node_keys)}
        self.node_parent = np.asarray(node_parent, dtype=np.int64)
        self.cells = list(cells)
        self.cell_index = {c: i for i, c in enumerate(self.cells)}
        self.cell_node = np.array([u for u, _ in self.cells], dtype=np.int64)
        self.cell_parent = np.asarray(cell_parent, dtype=np.int64)
        self.leaf_count = np.asarray(leaf_count, dtype=float)
        self.family_size = dict(family_size)
        self.levels = sorted({level_of(k) for k in self.node_keys})
        lev = {name: i for i, name in enumerate(self.levels)}
        self.node_level = np.array([lev[level_of(k)] for k in self.node_keys],
                                   dtype=np.int64)
        self.node_size = np.array([self.family_size[FAMILY_OF_KIND[k[0]]]
                                   for k in self.node_keys], dtype=np.int64)

    def hierarchy(self) -> Hierarchy:
        """The arrays as a :class:`Hierarchy` (no candidate pairs)."""
        return Hierarchy(self.node_keys, self.node_parent, self.node_level, self.levels,
                         self.node_size, self.cell_node, self.cell_parent,
                         self.leaf_count, [], [], np.zeros(0, bool),
                         np.zeros((0, 1), np.int64), np.zeros((0, 1), np.int64))

    def pooled(self) -> tuple:
        """(count of each cell's subtree, of each node's subtree, distinct outcomes of
        each node's subtree): Collins's c and u at every level."""
        return self.hierarchy().pooled_counts()

    def locate(self, chains, outcomes) -> tuple:
        """(nodes, cells): int arrays (queries × depth), -1 where a key or its cell was
        not seen; depth is the longest chain's."""
        depth = max((len(c) for c in chains), default=1)
        nodes = np.full((len(chains), depth), -1, dtype=np.int64)
        cells = np.full((len(chains), depth), -1, dtype=np.int64)
        ni, ci = self.node_index, self.cell_index
        for r, (chain, out) in enumerate(zip(chains, outcomes)):
            for d, key in enumerate(chain):
                u = ni.get(key, -1)
                nodes[r, d] = u
                if u >= 0:
                    cells[r, d] = ci.get((u, out), -1)
        return nodes, cells


def build_tables(events) -> EventTables:
    """Tables of ``events``, an iterable of ``(family, chain, outcome)``."""
    counts: Counter = Counter(events)
    node_index: dict = {}
    parent: list = []
    cell_index: dict = {}
    leaf: list = []
    outcomes: dict = {f: set() for f in ("head", "mod", "word", "top")}
    for (family, chain, out), n in counts.items():
        outcomes[family].add(out)
        ids = []
        for key in chain:
            if key not in node_index:
                node_index[key] = len(parent)
                parent.append(-1)
            ids.append(node_index[key])
        for a, b in zip(ids, ids[1:]):
            parent[a] = b
        for d, u in enumerate(ids):
            c = cell_index.setdefault((u, out), len(leaf))
            if c == len(leaf):
                leaf.append(0.0)
            if d == 0:
                leaf[c] += n
    cells = list(cell_index)
    cell_parent = [cell_index.get((parent[u], out), -1) if parent[u] >= 0 else -1
                   for u, out in cells]
    keys = sorted(node_index, key=node_index.get)
    sizes = {f: max(len(o), 1) for f, o in outcomes.items()}
    return EventTables(keys, parent, cells, cell_parent, leaf, sizes)


def backoff_predictive(nodes, cells, size, cell_count, node_total, node_conc) -> np.ndarray:
    """π(outcome | context) of every query (rows of ``nodes``/``cells``, depth columns,
    finest first) in every state (first axis of ``cell_count`` (S × cells),
    ``node_total`` and ``node_conc`` (S × nodes)): π = 1/``size`` below the coarsest
    key, then from coarse to fine, at every seen key u,

        π_u(o) = (c_u(o) + a_u π_parent(o)) / (c_u + a_u),

    with c_u(o) = 0 for an outcome unseen at u.  Unseen keys are skipped.  Returns an
    array S × queries.  O(S × queries × depth)."""
    n_states = cell_count.shape[0]
    pi = np.broadcast_to(1.0 / np.asarray(size, dtype=float), (n_states, len(nodes))).copy()
    for d in range(nodes.shape[1] - 1, -1, -1):
        on = nodes[:, d] >= 0
        if not on.any():
            continue
        u = nodes[on, d]
        cc = cells[on, d]
        c = np.where(cc >= 0, cell_count[:, np.maximum(cc, 0)], 0.0)
        a = node_conc[:, u]
        pi[:, on] = (c + a * pi[:, on]) / (node_total[:, u] + a)
    return pi


def strict_backoff(nodes, cells, size, cell_count, node_total) -> np.ndarray:
    """The unsmoothed score of every query: the relative frequency c_u(o) / c_u in the
    finest key u of its chain that saw the outcome, 1/``size`` when none did.  No mass
    is moved between outcomes, so a context's scores sum to more than 1 when it backs
    off for some outcome (a score, not a distribution).  Shapes and cost as
    :func:`backoff_predictive`."""
    n_states = cell_count.shape[0]
    pi = np.broadcast_to(1.0 / np.asarray(size, dtype=float), (n_states, len(nodes))).copy()
    for d in range(nodes.shape[1] - 1, -1, -1):
        on = (nodes[:, d] >= 0) & (cells[:, d] >= 0)
        if on.any():
            pi[:, on] = cell_count[:, cells[on, d]] / node_total[:, nodes[on, d]]
    return pi
