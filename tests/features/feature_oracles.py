"""Brute-force oracles shared by the feature and EP tests (enumeration of short strings,
feature counts), here and in tests/inference."""

from __future__ import annotations

import itertools

import numpy as np
import pynini

from strgm.features.symbols import bos, eos
from fst_factors.wfsa.core import new_fst, weight


def all_strings(n: int, max_len: int):
    return [tuple(t) for k in range(max_len + 1)
            for t in itertools.product(range(1, n + 1), repeat=k)]


def count(w, v, n):
    s = (bos(n),) + tuple(v) + (eos(n),)
    return sum(1 for i in range(len(s) - len(w) + 1) if s[i:i + len(w)] == w)


def feature_matrix(features, strings, n):
    return np.array([[count(w, v, n) for w in features] for v in strings], dtype=float)


def substitution_transducer(n: int, p_copy: float = 0.8) -> pynini.Fst:
    """Length-preserving stochastic substitution (messages through it stay n-gram exact)."""
    f = new_fst()
    s = f.add_state()
    f.set_start(s)
    f.set_final(s, weight(0.0))
    for a in range(1, n + 1):
        for b in range(1, n + 1):
            pr = p_copy if a == b else (1 - p_copy) / (n - 1)
            f.add_arc(s, pynini.Arc(a, b, weight(-np.log(pr)), s))
    return f
