"""Brute-force enumeration of tiny HMMs: the oracle for the forward algorithm, FFBS,
Viterbi and the WFSA export."""

from __future__ import annotations

import itertools

import numpy as np


def random_hmm(L: int, V: int, rng, stop: bool = True):
    p0 = rng.dirichlet(np.ones(L))
    P = rng.dirichlet(np.ones(L), size=L)
    theta = rng.dirichlet(np.ones(V), size=L)
    s = rng.uniform(0.1, 0.6, size=L) if stop else None
    return p0, P, s, theta


def path_probs(x, p0, P, stop, theta) -> dict:
    """Joint probability p(z, x) of every state path z."""
    L, T = len(p0), len(x)
    out = {}
    for z in itertools.product(range(L), repeat=T):
        p = p0[z[0]] * theta[z[0], x[0]]
        for t in range(1, T):
            p *= P[z[t - 1], z[t]] * theta[z[t], x[t]] * (1 - stop[z[t - 1]] if stop is not None else 1)
        if stop is not None:
            p *= stop[z[-1]]
        out[z] = p
    return out


def string_prob(x, p0, P, stop, theta) -> float:
    return sum(path_probs(x, p0, P, stop, theta).values())
