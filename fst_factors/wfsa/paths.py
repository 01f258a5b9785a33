"""k-best strings and exact sampling from log64 acceptors.

k-best by *total* string weight (summed over all paths of the string) is what users want,
but it needs determinisation, which does not terminate on every cyclic automaton (even
OpenFst's lazy ``unique=True`` n-shortest-paths can loop forever on a cyclic ambiguous
machine). We therefore collect candidate strings by best-path (tropical) weight and rescore
each of them exactly with :func:`score_strings`:

* acyclic automata: the ``n`` best *distinct* strings (``unique=True`` is safe: acyclic
  machines always determinise), so the result is exact when there are at most ``n``
  strings;
* cyclic automata: the ``5n`` best paths, deduplicated (several paths may spell one
  string, e.g. alternative edit alignments or placements of ε arcs). ε-arcs are kept:
  removing them from a cyclic machine can multiply its arcs (an n-gram belief composed
  with an edit model went from 0.27M to 5.4M arcs), and the search does not need it.

``n = max(2k, k + 10)``. Before searching, paths more than ``prune`` nats (default 30,
a factor e^-30 ≈ 1e-13) worse than the best are pruned away in the tropical copy, which
shrinks typical messages tenfold. On ambiguous cyclic machines a string whose best single path is
poor but whose many paths add up could be missed; it is then also improbable.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from fst_factors.errors import OptionError
from fst_factors.wfsa import guard
from fst_factors.wfsa.interrupts import native
from fst_factors.wfsa.core import arc_table, is_acyclic, shortest_distance
from fst_factors.wfsa.measure import check_normalisable, score_strings
from fst_factors.wfsa.string_scores import LabelledArcs


PRUNE_NATS = 30.0
#: Most samples one :func:`sample` call draws (each is a Python tuple held in memory).
MAX_SAMPLES = 1_000_000


def candidate_strings(fst: pynini.Fst, n: int, prune: float = PRUNE_NATS
                      ) -> list[tuple[int, ...]]:
    """Up to ``n`` distinct strings with the best single-path weights (output tape).

    On a cyclic machine the ``n`` best paths are searched first, then the ``2n`` and the
    ``5n`` best, each only when the shorter list spells fewer than ``n`` strings: paths
    come best first, so the first ``n`` distinct strings of a shorter list are those of
    a longer one, up to the order of paths of equal weight. (Pruned BP's concatenation
    messages mostly spell one string per path, so the first search usually suffices.)"""
    if n <= 0 or fst.num_states() == 0:
        return []
    acceptor = fst.properties(pynini.ACCEPTOR, True) == pynini.ACCEPTOR  # no copy
    std = pynini.arcmap(fst if acceptor else pynini.project(fst.copy(), "output"),
                        map_type="to_std")
    if prune is not None and np.isfinite(prune):
        with native():
            std = pynini.prune(std, weight=prune)
    std = std.connect()
    if std.num_states() == 0:
        return []
    if is_acyclic(std):
        # unique=True determinises, which treats ε as a symbol: remove it first
        return _spelled(guard.shortestpath(guard.rmepsilon(std), nshortest=n,
                                           unique=True))[:n]
    for paths in (n, 2 * n, 5 * n):
        out = _spelled(guard.shortestpath(std, nshortest=paths))
        if len(out) >= n:
            break
    return out[:n]


def _spelled(paths: pynini.Fst) -> list[tuple[int, ...]]:
    """The distinct strings (output tape, ε dropped) of ``paths``' paths, in path order."""
    out = []
    it = paths.paths()
    while not it.done():
        out.append(tuple(a for a in it.olabels() if a != 0))
        it.next()
    return list(dict.fromkeys(out))


def kbest(fst: pynini.Fst, k: int, n_candidates: Optional[int] = None,
          arcs: Optional[LabelledArcs] = None) -> list[tuple[tuple[int, ...], float]]:
    """The ``k`` strings of highest total weight, as (labels, log weight), best first
    (``arcs``: ``fst``'s arcs for :func:`fst_factors.wfsa.measure.score_strings`, when the
    caller keeps them)."""
    if k <= 0:
        return []
    n = n_candidates if n_candidates is not None else max(2 * k, k + 10)
    cands = candidate_strings(fst, n)
    if not cands:
        return []
    scores = score_strings(fst, cands, arcs)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(cands[i], float(scores[i])) for i in order if scores[i] > -np.inf]


def sample(fst: pynini.Fst, n: int, seed: int | np.random.Generator | None = 0,
           max_length: int = 10_000) -> list[tuple[int, ...]]:
    """``n`` independent exact samples v ~ weight(v)/Z (output tape); ``n`` is at most
    :data:`MAX_SAMPLES` per call (draw larger sets in batches with different seeds).

    Ancestral sampling with backward weights β: from state q take arc e with probability
    exp(-w_e) β(dst_e) / β(q), or stop with probability exp(-ρ_q) / β(q). O(n · length).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_SAMPLES:
        raise OptionError("n", n, f"must be an integer from 0 to {MAX_SAMPLES}")
    n = int(n)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    f = fst.copy().connect()
    if f.num_states() == 0:
        raise ValueError("cannot sample from an automaton that accepts no string")
    check_normalisable(f, "automaton to sample from")
    beta = shortest_distance(f, reverse=True, delta=1e-10)
    t = arc_table(f)
    order = np.argsort(t.src, kind="stable")
    counts = np.bincount(t.src, minlength=t.num_states)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    arc_cost = t.weight + beta[t.dst]
    out = []
    for _ in range(n):
        q = t.start
        labels = []
        for _step in range(max_length):
            idx = order[offsets[q]: offsets[q + 1]]
            costs = np.concatenate([arc_cost[idx], [t.final[q]]]) - beta[q]
            p = np.exp(-costs)
            p /= p.sum()
            j = rng.choice(len(p), p=p)
            if j == len(idx):
                break
            e = idx[j]
            if t.olabel[e] != 0:
                labels.append(int(t.olabel[e]))
            q = int(t.dst[e])
        else:
            raise RuntimeError(f"sampled path exceeded max_length={max_length}")
        out.append(tuple(labels))
    return out
