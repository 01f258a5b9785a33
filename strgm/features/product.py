"""The product of a string message with a feature DFA, built straight into arrays.

EP's p̂ moments (:func:`strgm.features.moments.p_moments`) need C = p·EOS ∘ T, where T is
the counting transducer of a feature DFA: it reads v·EOS and writes the id of every DFA
arc it takes (:meth:`strgm.features.dfa.FeatureDFA.counting_transducer`). Because the DFA
is deterministic and complete, C is the product automaton

    states (q, h) reachable from (start_p, start_DFA);
    an arc q –a/w→ q' of p gives (q, h) –a:id(h, a)/w→ (q', goto(h, a))   (1 ≤ a ≤ N);
    an ε-arc q –ε/w→ q' gives (q, h) –ε:ε/w→ (q', h);
    a final state q (weight ρ) gives (q, h) –EOS:id(h, EOS)/ρ→ sink, sink final with 1,

which one breadth-first search builds in O(|C|) (the right operand reads no ε, so the
composition needs no ε-filter: each path of C pairs one path of p with the DFA's only
run on its string). Doing it in a compiled loop replaces three OpenFst calls (concatenation with
EOS, composition, connection) and the parse of the result into arrays, which together
were about a sixth of PEP's time. The arcs of C differ from OpenFst's result only in
where the EOS step sits (OpenFst's concatenation adds an ε-arc before it), which leaves
every moment unchanged; :func:`strgm.features.moments.compose_counting_reference` keeps
the OpenFst route, and the tests hold the two to 1e-10.

States are numbered in breadth-first order, the sink last; arcs are listed by source
state. Labels of p outside 0..N match no DFA arc and are dropped, as in a composition.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from strgm.errors import InconsistentEvidenceError
from strgm.compiled import njit
from fst_factors.wfsa.core import ArcTable
from fst_factors.wfsa.measure import TrimmedTopology, trimmed_topology

#: Largest |Q_p|·|C_DFA| for the dense pair index and queue (24 bytes per cell: 96 MB);
#: a larger product returns None before any allocation, and the caller takes OpenFst's
#: composition, which the size guard bounds (docs/reliability.md).
MAX_PAIRS = 4_000_000


@njit(cache=True)
def _number_states(indptr, dst, lab, start, h0, goto, n):  # pragma: no cover - compiled
    """Breadth-first numbering of the pairs reachable from (start, h0): (index, q, h)."""
    nq = indptr.shape[0] - 1
    nh = goto.shape[0]
    index = np.full(nq * nh, -1, np.int64)
    pq = np.empty(nq * nh, np.int64)
    ph = np.empty(nq * nh, np.int64)
    index[start * nh + h0] = 0
    pq[0] = start
    ph[0] = h0
    count = 1
    head = 0
    while head < count:
        q = pq[head]
        h = ph[head]
        head += 1
        for e in range(indptr[q], indptr[q + 1]):
            a = lab[e]
            if a == 0:
                h2 = h
            elif 1 <= a <= n:
                h2 = goto[h, a - 1]
            else:
                continue
            cell = dst[e] * nh + h2
            if index[cell] < 0:
                index[cell] = count
                pq[count] = dst[e]
                ph[count] = h2
                count += 1
    return index, pq[:count], ph[:count]


@njit(cache=True)
def _fill_arcs(indptr, dst, lab, w, final, goto, n, index, pq, ph):  # pragma: no cover
    """The arcs of C by source state (see the module docstring)."""
    nh = goto.shape[0]
    ns = pq.shape[0]
    m = 0
    for s in range(ns):
        q = pq[s]
        for e in range(indptr[q], indptr[q + 1]):
            if 0 <= lab[e] <= n:
                m += 1
        if final[q] < np.inf:
            m += 1
    src = np.empty(m, np.int64)
    dsts = np.empty(m, np.int64)
    il = np.empty(m, np.int64)
    ol = np.empty(m, np.int64)
    wt = np.empty(m, np.float64)
    k = 0
    sink = ns
    for s in range(ns):
        q = pq[s]
        h = ph[s]
        for e in range(indptr[q], indptr[q + 1]):
            a = lab[e]
            if a == 0:
                h2 = h
                ol[k] = 0
            elif 1 <= a <= n:
                h2 = goto[h, a - 1]
                ol[k] = h * (n + 1) + (a - 1) + 1
            else:
                continue
            src[k] = s
            dsts[k] = index[dst[e] * nh + h2]
            il[k] = a
            wt[k] = w[e]
            k += 1
        if final[q] < np.inf:
            src[k] = s
            dsts[k] = sink
            il[k] = n + 2  # EOS
            ol[k] = h * (n + 1) + n + 1
            wt[k] = final[q]
            k += 1
    return src, dsts, il, ol, wt


def message_arrays(p: ArcTable) -> tuple:
    """(indptr, dst, label, weight, final, start) of p's arcs sorted by source state
    (output labels; int64 and float64, contiguous), as the compiled products read them."""
    indptr = np.zeros(p.num_states + 1, dtype=np.int64)
    np.cumsum(np.bincount(p.src, minlength=p.num_states), out=indptr[1:])
    if p.num_arcs and np.any(p.src[1:] < p.src[:-1]):
        order = np.argsort(p.src, kind="stable")
        dst, lab, w = p.dst[order], p.olabel[order], p.weight[order]
    else:
        dst, lab, w = p.dst, p.olabel, p.weight
    return (indptr, np.ascontiguousarray(dst, dtype=np.int64),
            np.ascontiguousarray(lab, dtype=np.int64),
            np.ascontiguousarray(w, dtype=np.float64),
            np.ascontiguousarray(p.final, dtype=np.float64), int(p.start))


def counting_product(p: ArcTable, goto: np.ndarray, dfa_start: int, num_labels: int,
                     what: str = "automaton", with_pairs: bool = False):
    """C = p·EOS ∘ T as an arc table (module docstring); ``None`` when the pair index
    would exceed :data:`MAX_PAIRS`. Raises :class:`InconsistentEvidenceError` when p has
    no start state. ``with_pairs``: (C, q, h) with the message state q and DFA state h of
    every state of C but the sink (the last).

    ``p``: the message's arc table (labels 0..N, 0 = ε); ``goto``: the DFA's |C| × N
    transition table, ``dfa_start`` its start state. Cost O(|C|) time, O(|Q_p|·|DFA|)
    for the pair index."""
    if p.start < 0 or p.num_states == 0:
        raise InconsistentEvidenceError(f"{what} accepts no string")
    if p.num_states * goto.shape[0] > MAX_PAIRS:
        return None
    indptr, dst, lab, w, final, _ = message_arrays(p)
    goto = np.ascontiguousarray(goto, dtype=np.int64)
    index, pq, ph = _number_states(indptr, dst, lab, int(p.start), int(dfa_start), goto,
                                   num_labels)
    src, dsts, il, ol, wt = _fill_arcs(indptr, dst, lab, w, final, goto, num_labels,
                                       index, pq, ph)
    ns = len(pq) + 1
    fin = np.full(ns, np.inf)
    fin[-1] = 0.0
    t = ArcTable(ns, 0, src, dsts, il, ol, wt, fin)
    return (t, pq, ph) if with_pairs else t


@njit(cache=True)
def reverse_reachable(src, dst, n, seeds):  # pragma: no cover - compiled
    """seen[s]: state s reaches one of ``seeds`` along the arcs src → dst (reverse
    breadth-first search over linked lists of incoming arcs)."""
    m = src.shape[0]
    head = np.full(n, -1, np.int64)
    nxt = np.empty(m, np.int64)
    for e in range(m):
        nxt[e] = head[dst[e]]
        head[dst[e]] = e
    seen = np.zeros(n, np.bool_)
    queue = np.empty(n, np.int64)
    count = 0
    for s in seeds:
        if not seen[s]:
            seen[s] = True
            queue[count] = s
            count += 1
    i = 0
    while i < count:
        e = head[queue[i]]
        i += 1
        while e >= 0:
            s = src[e]
            if not seen[s]:
                seen[s] = True
                queue[count] = s
                count += 1
            e = nxt[e]
    return seen


def _all_coaccessible(src, dst, n, sink) -> bool:
    """True when every state reaches ``sink``."""
    return bool(reverse_reachable(src, dst, n, np.array([sink], dtype=np.int64)).all())


def product_topology(t: ArcTable) -> Optional[TrimmedTopology]:
    """The trimming of a product built by :func:`counting_product` (its one final state,
    the sink, is last; states are accessible by construction and arcs sorted by source):
    every state kept when every state reaches the sink — the usual case, since every
    DFA state has an EOS arc, so (q, h) is co-accessible whenever q is in p — checked in
    one compiled reverse search; otherwise :func:`fst_factors.wfsa.measure.trimmed_topology`."""
    n = t.num_states
    if not _all_coaccessible(t.src, t.dst, n, n - 1):
        return trimmed_topology(t)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(t.src, minlength=n), out=indptr[1:])
    every = np.arange(n)
    return TrimmedTopology(every, every, np.arange(t.num_arcs), indptr, t.dst, int(t.start))
