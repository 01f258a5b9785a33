"""The tree of backoff contexts as arrays: nodes, cells, data and candidate rules.

Nodes are contexts: every full context (key ``("full", lhs)``) and every backoff key of
its chain (:func:`strgm.grammars.smoothing.backoff.chain`); a node's parent is the next
key of the chain, and the last key of a chain is a *top* node, whose base distribution
H is uniform over the outcomes observed in its subtree (V_top of them).  A *cell* is a
(node, outcome) pair with the outcome observed in the node's subtree; ``cell_parent``
is the same outcome's cell at the parent node (-1 at a top node).  Data (rule counts)
sit at the cells of full contexts.

*Candidate pairs* (full context, outcome) are the rules a smoothed grammar may hold:
outcomes of the context's top node that the context admits
(:func:`~strgm.grammars.smoothing.backoff.consistent`) and whose right-hand side names
only left-hand sides of the grammar (so no mass flows to a symbol without rules).  For
each pair, ``pair_cells[i, d]`` / ``pair_nodes[i, d]`` list the cell (-1 when the
outcome is unseen at that node) and node at depth d of the chain (0 = the full context;
-1 past the top).  :func:`chain_predictive` evaluates every pair at once.

Building is O(Σ_rules chain length + pairs); the arrays are what the samplers use.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from strgm.grammars.smoothing.backoff import chain, concretize, consistent, level_name

__all__ = ["Hierarchy", "build_hierarchy", "chain_predictive"]


@dataclass
class Hierarchy:
    """Arrays of the context tree (module docstring)."""
    node_keys: list
    node_parent: np.ndarray
    node_level: np.ndarray
    levels: list
    top_size: np.ndarray       # V of the top node of each node's chain
    cell_node: np.ndarray
    cell_parent: np.ndarray
    leaf_count: np.ndarray     # data count per cell (0 away from full contexts)
    pair_lhs: list
    pair_rhs: list
    pair_observed: np.ndarray
    pair_cells: np.ndarray
    pair_nodes: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.node_keys)

    def pooled_counts(self) -> tuple:
        """(data count of each cell's subtree, of each node's subtree, number of distinct
        outcomes of each node's subtree): Collins's c and u at every level."""
        pooled = self.leaf_count.astype(float).copy()
        order = np.argsort(-_depth(self.node_parent)[self.cell_node], kind="stable")
        for c in order:  # deepest cells first
            p = self.cell_parent[c]
            if p >= 0:
                pooled[p] += pooled[c]
        node_tot = np.bincount(self.cell_node, weights=pooled, minlength=self.n_nodes)
        distinct = np.bincount(self.cell_node, minlength=self.n_nodes).astype(float)
        return pooled, node_tot, distinct


def _depth(parent: np.ndarray) -> np.ndarray:
    """Distance of each node to its top node."""
    d = np.zeros(len(parent), dtype=np.int64)
    for i in range(len(parent)):
        j = parent[i]
        while j >= 0:
            d[i] += 1
            j = parent[j]
    return d


def _nodes(ctxs: dict) -> tuple:
    """(keys, index, parent list, chain of node ids per full lhs)."""
    keys, index, parent, chains = [], {}, [], {}

    def node(key):
        if key not in index:
            index[key] = len(keys)
            keys.append(key)
            parent.append(-1)
        return index[key]
    for lhs in sorted(ctxs):
        ids = [node(("full", ctxs[lhs]))] + [node(k) for k in chain(ctxs[lhs])]
        for a, b in zip(ids, ids[1:]):
            parent[a] = b
        chains[lhs] = ids
    return keys, index, parent, chains


def build_hierarchy(counts, ctxs: dict, horizontal: int | None, lhs_set) -> Hierarchy:
    """The arrays of :class:`Hierarchy` for the phrasal rule ``counts`` (``(lhs,
    outcome) -> n``) and contexts ``ctxs`` of
    :func:`~strgm.grammars.smoothing.backoff.observe`; ``lhs_set``: every left-hand
    side of the grammar (phrasal and preterminal); None: no such filter (every
    consistent outcome of the top node is a candidate)."""
    keys, _, parent, chains = _nodes(ctxs)
    cell_of: dict = {}
    cell_node, leaf = [], []
    for (lhs, out), n in sorted(counts.items(), key=lambda kv: (kv[0][0], repr(kv[0][1]))):
        for i, u in enumerate(chains[lhs]):
            c = cell_of.setdefault((u, out), len(cell_node))
            if c == len(cell_node):
                cell_node.append(u)
                leaf.append(0.0)
            if i == 0:
                leaf[c] += n
    cell_parent = [cell_of.get((parent[u], out), -1) if parent[u] >= 0 else -1
                   for (u, out) in cell_of]
    top_out: dict = defaultdict(list)
    for (u, out) in cell_of:
        if parent[u] < 0:
            top_out[u].append(out)
    top_size = np.zeros(len(keys), dtype=np.int64)
    for lhs, ids in chains.items():
        top_size[ids] = len(top_out[ids[-1]])
    levels = sorted({level_name(k) for k in keys})
    lev = {name: i for i, name in enumerate(levels)}
    h = Hierarchy(keys, np.array(parent, dtype=np.int64),
                  np.array([lev[level_name(k)] for k in keys], dtype=np.int64), levels,
                  top_size, np.array(cell_node, dtype=np.int64),
                  np.array(cell_parent, dtype=np.int64), np.array(leaf), [], [],
                  np.zeros(0, bool), np.zeros((0, 1), np.int64), np.zeros((0, 1), np.int64))
    _pairs(h, ctxs, chains, cell_of, top_out, horizontal,
           None if lhs_set is None else frozenset(lhs_set))
    return h


def _pairs(h: Hierarchy, ctxs, chains, cell_of, top_out, horizontal, lhs_set) -> None:
    """Fill the candidate-pair arrays of ``h``."""
    depth = max(len(ids) for ids in chains.values())
    cells, nodes, observed = [], [], []
    for lhs in sorted(ctxs):
        ctx, ids = ctxs[lhs], chains[lhs]
        for out in top_out[ids[-1]]:
            rhs = concretize(ctx, out)
            if not consistent(ctx, out, horizontal) or (
                    lhs_set is not None and not all(s in lhs_set for s in rhs)):
                continue
            row = [cell_of.get((u, out), -1) for u in ids]
            h.pair_lhs.append(lhs)
            h.pair_rhs.append(rhs)
            observed.append(row[0] >= 0 and h.leaf_count[row[0]] > 0)
            cells.append(row + [-1] * (depth - len(ids)))
            nodes.append(ids + [-1] * (depth - len(ids)))
    h.pair_cells = np.array(cells, dtype=np.int64).reshape(-1, depth)
    h.pair_nodes = np.array(nodes, dtype=np.int64).reshape(-1, depth)
    h.pair_observed = np.array(observed, dtype=bool)


def chain_predictive(h: Hierarchy, cell_count: np.ndarray, node_total: np.ndarray,
                     node_conc: np.ndarray) -> np.ndarray:
    """π(outcome | full context) for every candidate pair, by the backoff recursion
    (Dawson 2015, eq. 59; Teh et al. 2006, eq. 24 for the Chinese restaurant franchise)

        π_top-parent(o) = H(o) = 1 / V_top,
        π_u(o) = (c_u(o) + a_u · π_parent(u)(o)) / (c_u + a_u),

    i.e. π_u = λ_u ĉ_u + (1 − λ_u) π_parent with λ_u = c_u / (c_u + a_u), where c_u(o)
    is ``cell_count`` (0 for an outcome unseen at u), c_u is ``node_total`` and a_u is
    ``node_conc``.  HDP: c = customers (data at full contexts, the children's table
    counts m above: the m of eq. 59), a_u = α_level(u).  Collins: c = pooled data
    counts, a_u = b · u_u.  O(pairs × depth)."""
    n, depth = h.pair_nodes.shape
    pi = np.zeros(n)
    top = h.pair_nodes[:, 0]
    pi[:] = 1.0 / h.top_size[top] if n else 0.0
    for d in range(depth - 1, -1, -1):
        u = h.pair_nodes[:, d]
        on = u >= 0
        if not on.any():
            continue
        uu = u[on]
        cells = h.pair_cells[on, d]
        c = np.where(cells >= 0, cell_count[np.maximum(cells, 0)], 0.0)
        a = node_conc[uu]
        pi[on] = (c + a * pi[on]) / (node_total[uu] + a)
    return pi
