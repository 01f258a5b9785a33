"""Brute-force oracles for the WFSA layer (and the tests above it that need them):
enumerate paths and strings.

Nothing here uses OpenFst algorithms beyond reading arcs one by one; every quantity is a
plain sum over explicitly enumerated paths/strings.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pynini

from fst_factors.wfsa.core import new_fst, weight


def arcs_of(fst):
    out = defaultdict(list)
    for s in fst.states():
        for a in fst.arcs(s):
            out[s].append((a.ilabel, a.olabel, float(a.weight.to_string()), a.nextstate))
    finals = {s: float(fst.final(s).to_string()) for s in fst.states()
              if fst.final(s).to_string() != "Infinity"}
    return out, finals


def enumerate_paths(fst, max_arcs: int):
    """Yield (input labels, output labels, -log weight, arc list) for every accepting
    path with at most ``max_arcs`` arcs."""
    arcs, finals = arcs_of(fst)
    stack = [(fst.start(), (), (), 0.0, ())]
    while stack:
        q, ins, outs, w, path = stack.pop()
        if q in finals:
            yield ins, outs, w + finals[q], path
        if len(path) >= max_arcs:
            continue
        for k, (i, o, aw, d) in enumerate(arcs[q]):
            stack.append((d, ins + ((i,) if i else ()), outs + ((o,) if o else ()),
                          w + aw, path + ((q, k),)))


def string_distribution(fst, max_arcs: int) -> dict:
    """output string -> total (unnormalised) weight, summing all paths up to max_arcs."""
    dist: dict = defaultdict(float)
    for _, outs, w, _ in enumerate_paths(fst, max_arcs):
        dist[outs] += math.exp(-w)
    return dict(dist)


def random_acceptor(rng: np.random.Generator, n_states: int, n_labels: int,
                    acyclic: bool, density: float = 0.5, scale: float = 1.0,
                    eps: bool = False):
    """A random log64 acceptor. Cyclic ones are scaled to be safely normalisable."""
    f = new_fst()
    f.add_states(n_states)
    f.set_start(0)
    for s in range(n_states):
        for d in range(n_states):
            if acyclic and d <= s:
                continue
            for a in range(0 if eps else 1, n_labels + 1):
                if a == 0 and (d == s or not acyclic and d <= s):
                    continue  # keep epsilon arcs acyclic
                if rng.random() < density:
                    # 4 decimals: the oracle reads weights back through 9-digit strings
                    f.add_arc(s, pynini.Arc(a, a, weight(round(scale * rng.exponential() + (
                        0.0 if acyclic else 1.5), 4)), d))
        if rng.random() < 0.5 or s == n_states - 1:
            f.set_final(s, weight(round(rng.exponential(), 4)))
    return f


def enumerate_strings(n_labels: int, max_len: int):
    for n in range(max_len + 1):
        yield from itertools.product(range(1, n_labels + 1), repeat=n)


def dense_string_logweight(f, labels, string, tape="input"):
    """weight(v) = e_startᵀ E* M_{v1} E* … M_{vn} E* ρ with E* = (I − A_ε)⁻¹ on ``tape``:
    every path spelling v, however many ε-loops it takes (dense numpy oracle)."""
    arcs, finals = arcs_of(f)
    n = f.num_states()
    m = np.zeros((labels + 1, n, n))
    for q, lst in arcs.items():
        for i, o, w, d in lst:
            m[i if tape == "input" else o, q, d] += math.exp(-w)
    close = np.linalg.inv(np.eye(n) - m[0])
    vec = close[f.start()]
    for a in string:
        vec = vec @ m[a] @ close
    rho = np.array([math.exp(-finals[q]) if q in finals else 0.0 for q in range(n)])
    total = vec @ rho
    return math.log(total) if total > 0 else -math.inf
