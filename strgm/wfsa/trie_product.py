"""A machine's product with the trie of a few strings, built straight into arrays.

:func:`strgm.wfsa.measure.score_strings` scores strings v_1 … v_k under a machine M (on
its output tape) from C = M ∘ trie, where the trie reads v_i and then writes the marker
i + 1 (:func:`strgm.wfsa.construct.weighted_strings`). The trie is deterministic and
ε-free, so C is the product automaton

    states (q, t) reachable from (start_M, root);
    an arc q –x:a/w→ q' of M with a ≠ 0 gives (q, t) → (q', child(t, a)), if t has an
    a-child;
    an arc q –x:ε/w→ q' gives (q, t) → (q', t);
    a final state q (weight ρ) gives (q, t) –marker i + 1/ρ→ sink when t ends v_i; the
    sink is final with weight 1,

and weight(v_i) is the sum over C's paths through marker i + 1. The pairs and their arcs
come from one compiled breadth-first search (:func:`strgm.wfsa.pair_product.pair_product`),
whose size check pairs the two machines' arcs label by label. OpenFst's composition is
checked instead against a bound from the operands' sizes, which for a held-out word's
surface belief under an EM-trained English phonology (5,521 states and 1.9M arcs, ε-arcs
from deletions) and a 22-state trie was 364k states and 250M arcs, and refused, where C
has 6,073 states and 378k arcs. Cost O(|C|) time, O(|Q_M| · |trie|) for the pair index.
The composition route is the reference the tests hold this one to.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from strgm.wfsa.core import ArcTable
from strgm.wfsa.pair_product import pair_product


def trie_table(strings: Sequence[tuple]) -> tuple[ArcTable, np.ndarray]:
    """The prefix tree of ``strings`` as an ε-free acceptor (root 0, nodes numbered as
    first reached) and, per node, the index of the string it ends (−1 if none)."""
    children: dict = {}
    ends = [-1]
    for i, s in enumerate(strings):
        t = 0
        for a in s:
            nxt = children.get((t, a))
            if nxt is None:
                nxt = children[(t, a)] = len(ends)
                ends.append(-1)
            t = nxt
        ends[t] = i
    keys = np.array(list(children), dtype=np.int64).reshape(-1, 2)
    lab = keys[:, 1].copy()
    return ArcTable(len(ends), 0, keys[:, 0].copy(),
                    np.fromiter(children.values(), dtype=np.int64, count=len(children)),
                    lab, lab, np.zeros(len(lab)), np.full(len(ends), np.inf)), \
        np.array(ends, dtype=np.int64)


def trie_product(m: ArcTable, strings: Sequence[tuple]) -> Optional[ArcTable]:
    """C = M ∘ trie(strings) as an arc table (module docstring): the pairs in
    breadth-first order from (start_M, root), the sink last, arcs by source with label 0
    but for string i's marker i + 1 on the output tape. ``strings``: distinct tuples of
    labels ≥ 1; M's output tape is read. ``None`` when the pair search declines (its
    pair index or the size guard, :func:`strgm.wfsa.pair_product.pair_product`): the
    caller composes."""
    if any(a <= 0 for s in strings for a in s):
        raise ValueError("trie_product: labels must be positive")
    trie, ends = trie_table(strings)
    if m.start < 0:  # no start state: only the sink, no marker, every string rejected
        e = np.empty(0, dtype=np.int64)
        return ArcTable(1, 0, e, e, e, e, np.empty(0), np.zeros(1))
    on_output = ArcTable(m.num_states, m.start, m.src, m.dst, m.olabel, m.olabel,
                         m.weight, m.final)
    p = pair_product(on_output, trie, np.array([m.start]), np.array([0]))
    if p is None:
        return None
    sink = p.num_states
    done = np.isfinite(m.final[p.c]) & (ends[p.w] >= 0)
    k = np.flatnonzero(done)
    src = np.concatenate([p.src, k])
    zeros = np.zeros(len(src), dtype=np.int64)
    marker = np.concatenate([zeros[: len(p.src)], ends[p.w[k]] + 1])
    dst = np.concatenate([p.dst, np.full(len(k), sink)])
    wt = np.concatenate([p.weight, m.final[p.c[k]]])
    order = np.argsort(src, kind="stable")
    fin = np.full(sink + 1, np.inf)
    fin[sink] = 0.0
    return ArcTable(sink + 1, 0, src[order], dst[order], zeros, marker[order], wt[order],
                    fin)


def is_acyclic_table(t: ArcTable) -> bool:
    """True when the arcs of ``t`` form no cycle (strongly connected components, O(|E|))."""
    if np.any(t.src == t.dst):
        return False
    g = sp.csr_matrix((np.ones(t.num_arcs), (t.src, t.dst)), shape=(t.num_states,) * 2)
    return connected_components(g, directed=True, connection="strong")[0] == t.num_states
