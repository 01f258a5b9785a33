"""The product automaton M = μ × D (× a length counter) of the PCFG factor.

Let D be the feature DFA of a feature set W (states = contexts h ∈ C, ``goto``) and μ the
incoming message (a log64 acceptor over labels 1..N). M = μ × D (× a length counter
0..L when ``max_len`` = L is given) is an ε-free weighted automaton with states
k = (q, h[, ℓ]), one K×K matrix M_a per label a (M_a[k, k'] = μ's arc weight when
k →a→ k') and final weights φ_k = μ_final(q) (the counter allows ℓ ≤ L only). M gives every
string the weight μ(v) (D is deterministic and complete and carries weight 1) and
remembers D's state, so the DFA arc taken at each position is known; the intersection
grammar of :mod:`strgm.grammars.factor_moments` is indexed by M's states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError, InconsistentEvidenceError, InputError, \
    MessageTooLargeError, UnknownSymbolError
from strgm.features.theta import FeatureSet
from strgm.grammars.cfg import Grammar
from fst_factors.wfsa import guard
from fst_factors.wfsa.core import arc_table

__all__ = ["ProductAutomaton", "product_automaton", "terminal_labels"]


def terminal_labels(grammar: Grammar, labels) -> dict:
    """terminal → label for every terminal of ``grammar``; ``labels`` is a mapping or an
    object with ``label(sym)`` (an :class:`~fst_factors.alphabet.Alphabet`)."""
    out = {}
    for t in grammar.terminals:
        if isinstance(labels, Mapping):
            if t not in labels:
                raise UnknownSymbolError(t, "the PCFG factor's terminal alphabet")
            out[t] = int(labels[t])
        else:
            out[t] = int(labels.label(t, "the PCFG factor's terminal alphabet"))
    return out


@dataclass
class ProductAutomaton:
    """Dense view of M = μ × feature DFA (× length counter); see the module docstring.

    ``mats`` (N, K, K) linear weights M_a; ``final`` (K,) φ; ``start``; ``dfa_state`` (K,)
    the feature-DFA context h of each state.
    """

    mats: np.ndarray
    final: np.ndarray
    start: int
    dfa_state: np.ndarray
    num_labels: int

    @property
    def K(self) -> int:
        return self.final.shape[0]


def _mu_arrays(mu: pynini.Fst, n: int):
    f = mu
    t = arc_table(f)
    if t.num_arcs and (t.olabel == 0).any():
        f = guard.rmepsilon(pynini.project(mu.copy(), "output"),
                            "ε-removal of a message to a PCFG factor", delta=1e-6)
        t = arc_table(f)
    if t.start < 0:
        raise InconsistentEvidenceError("the incoming message accepts no string")
    if t.num_arcs and (t.olabel.min() < 1 or t.olabel.max() > n):
        raise InputError(f"message has labels outside 1..{n}")
    return t


def _mu_edges(mu: Optional[pynini.Fst], n: int):
    """(src, dst, label, linear weight) arcs of μ sorted by source, its start state and
    final weights; μ = None is the one-state acceptor of Σ* with weight 1."""
    if mu is None:
        src = np.zeros(n, dtype=np.int64)
        dst = np.zeros(n, dtype=np.int64)
        return src, dst, np.arange(1, n + 1), np.ones(n), 0, np.ones(1)
    t = _mu_arrays(mu, n)
    order = np.argsort(t.src, kind="stable")
    return (t.src[order], t.dst[order], t.olabel[order], np.exp(-t.weight)[order], t.start,
            np.exp(-t.final))


def product_automaton(mu: Optional[pynini.Fst], features: FeatureSet,
                      max_len: Optional[int] = None, max_states: int = 4000
                      ) -> ProductAutomaton:
    """Reachable part of μ × D(features) (× {0..max_len}); μ = None means weight 1 on Σ*.

    Breadth-first over product states, vectorised per frontier. Raises
    :class:`MessageTooLargeError` beyond ``max_states`` states (dense K×K matrices).
    """
    n = features.num_labels
    src, dst, lab, wt, mstart, mfinal = _mu_edges(mu, n)
    nq = int(max(src.max(initial=0), dst.max(initial=0), mstart, len(mfinal) - 1)) + 1
    first = np.searchsorted(src, np.arange(nq + 1))
    states, edges = _explore((src, dst, lab, wt, first), mstart, features.dfa,
                             -1 if max_len is None else int(max_len), max_states)
    K = len(states)
    st = np.array(states, dtype=np.int64)
    mats = np.zeros((n, K, K))
    if edges[0]:
        es, ed, el, ew = (np.concatenate(x) for x in edges)
        np.add.at(mats, (el - 1, es, ed), ew)
    final = mfinal[st[:, 0]]
    final = np.where(np.isfinite(final), final, 0.0)
    if not (np.all(np.isfinite(mats)) and np.all(np.isfinite(final))):
        raise DivergenceError("PCFG factor: message weights overflow (exp of a huge θ)")
    return ProductAutomaton(mats, final, 0, st[:, 1].copy(), n)


def _explore(arcs, mstart: int, dfa, L: int, max_states: int):
    """Breadth-first search of the product states (q, h, ℓ) reachable from
    (μ start, D start, 0); returns the states in discovery order and the edge lists
    (source ids, target ids, labels, weights) per frontier."""
    src, dst, lab, wt, first = arcs
    nh = dfa.num_states
    nl = 1 if L < 0 else L + 1

    def key(q, h, l):
        return (q * nh + h) * nl + l
    index = {key(mstart, dfa.start, 0): 0}
    states = [(mstart, dfa.start, 0)]
    frontier = np.array([[mstart, dfa.start, 0]], dtype=np.int64)
    e_src, e_dst, e_lab, e_w = [], [], [], []
    while len(frontier):
        q, h, l = frontier[:, 0], frontier[:, 1], frontier[:, 2]
        cnt = first[q + 1] - first[q]
        rep = np.repeat(np.arange(len(frontier)), cnt)
        arcs = np.repeat(first[q], cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        q2 = dst[arcs]
        a = lab[arcs]
        h2 = dfa.goto[h[rep], a - 1]
        l2 = l[rep] + (1 if L >= 0 else 0)
        ok = (l2 <= L) if L >= 0 else np.ones(len(arcs), dtype=bool)
        rep, arcs, q2, a, h2, l2 = rep[ok], arcs[ok], q2[ok], a[ok], h2[ok], l2[ok]
        new = []
        ids = np.empty(len(q2), dtype=np.int64)
        for j, kk in enumerate(key(q2, h2, l2).tolist()):
            i = index.get(kk)
            if i is None:
                i = index[kk] = len(states)
                states.append((int(q2[j]), int(h2[j]), int(l2[j])))
                new.append(states[-1])
            ids[j] = i
        if len(states) > max_states:
            raise MessageTooLargeError(
                f"PCFG factor: the product of the message and the feature DFA has more than "
                f"{max_states} states; use sampled_moments or a smaller feature set")
        e_src.append(np.array([index[kk] for kk in key(q[rep], h[rep], l[rep]).tolist()],
                              dtype=np.int64))
        e_dst.append(ids)
        e_lab.append(a)
        e_w.append(wt[arcs])
        frontier = np.array(new, dtype=np.int64).reshape(-1, 3)
    return states, (e_src, e_dst, e_lab, e_w)
