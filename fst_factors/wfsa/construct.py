"""Constructors of log64 acceptors over integer labels.

Strings are tuples of labels 1..|Σ| (label 0 is epsilon). All constructors return new
automata; weights are given as -log values unless the argument name says ``logp``.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pynini

from fst_factors.wfsa.core import ONE, ZERO, new_fst, weight

Labels = Sequence[int]


def empty_acceptor() -> pynini.Fst:
    """The acceptor of the empty language (total weight 0)."""
    f = new_fst()
    f.set_start(f.add_state())
    return f


def string_acceptor(labels: Labels, neglogw: float = ONE) -> pynini.Fst:
    """A linear acceptor of the single string ``labels`` with weight exp(-neglogw).

    >>> string_acceptor((1, 2)).num_states()
    3
    """
    f = new_fst()
    f.add_states(len(labels) + 1)
    f.set_start(0)
    for i, a in enumerate(labels):
        if a <= 0:
            raise ValueError(f"labels must be positive, got {a} at position {i}")
        f.add_arc(i, pynini.Arc(int(a), int(a), weight(ONE), i + 1))
    f.set_final(len(labels), weight(neglogw))
    return f


def weighted_strings(items: Mapping[tuple, float] | Iterable[tuple[tuple, float]],
                     markers: bool = False) -> pynini.Fst:
    """Deterministic prefix-tree acceptor of a finite weighted set {string: -log weight}.

    With ``markers=True`` the result is instead a transducer that maps the i-th string
    (in iteration order) to the single output label i+1 (emitted on a final epsilon-input
    arc) and carries no weights; :func:`fst_factors.wfsa.measure.score_strings` uses it to score
    many strings with one composition. O(total length).
    """
    pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
    f = new_fst()
    root = f.add_state()
    f.set_start(root)
    children: dict[tuple[int, int], int] = {}
    sink = f.add_state() if markers else -1
    if markers:
        f.set_final(sink, weight(ONE))
    seen: set[tuple] = set()
    for idx, (labels, w) in enumerate(pairs):
        labels = tuple(int(a) for a in labels)
        if labels in seen:
            raise ValueError(f"duplicate string {labels} in weighted set")
        seen.add(labels)
        s = root
        for a in labels:
            if a <= 0:
                raise ValueError(f"labels must be positive, got {a} in {labels}")
            nxt = children.get((s, a))
            if nxt is None:
                nxt = f.add_state()
                children[(s, a)] = nxt
                f.add_arc(s, pynini.Arc(a, 0 if markers else a, weight(ONE), nxt))
            s = nxt
        if markers:
            f.add_arc(s, pynini.Arc(0, idx + 1, weight(ONE), sink))
        else:
            f.set_final(s, weight(w))
    return f


def sigma_star(num_symbols: int, neglogw_per_symbol: float = ONE,
               neglogw_final: float = ONE) -> pynini.Fst:
    """One-state acceptor of Σ* over labels 1..num_symbols.

    Every symbol costs ``neglogw_per_symbol`` and stopping ``neglogw_final``; with the
    defaults every string has weight 1 and the total weight is infinite (use it as an
    uninformative message, never as a belief).
    """
    f = new_fst()
    s = f.add_state()
    f.set_start(s)
    f.set_final(s, weight(neglogw_final))
    for a in range(1, num_symbols + 1):
        f.add_arc(s, pynini.Arc(a, a, weight(neglogw_per_symbol), s))
    return f


def unigram_acceptor(logp_symbols: np.ndarray, logp_stop: float) -> pynini.Fst:
    """One-state acceptor with p(v) = p_stop · Π_i p(v_i): symbol label a has log-prob
    ``logp_symbols[a-1]``. It is a proper distribution when exp(logp_symbols).sum() +
    exp(logp_stop) = 1."""
    f = new_fst()
    s = f.add_state()
    f.set_start(s)
    f.set_final(s, weight(-logp_stop))
    for a, lp in enumerate(np.asarray(logp_symbols, dtype=float), start=1):
        if lp > -np.inf:
            f.add_arc(s, pynini.Arc(a, a, weight(-lp), s))
    return f


def identity_transducer(num_symbols: int) -> pynini.Fst:
    """Id(Σ*): the unweighted identity relation over labels 1..num_symbols."""
    return sigma_star(num_symbols)


def insertion_transducer(acceptor: pynini.Fst) -> pynini.Fst:
    """(ε : L): reads nothing and writes any string of the acceptor with its weight."""
    f = acceptor
    out = new_fst()
    out.add_states(f.num_states())
    if f.num_states() == 0:
        return out
    out.set_start(f.start())
    for s in f.states():
        for arc in f.arcs(s):
            out.add_arc(s, pynini.Arc(0, arc.olabel, arc.weight, arc.nextstate))
        fw = f.final(s)
        if float(fw) != ZERO:
            out.set_final(s, fw)
    return out
