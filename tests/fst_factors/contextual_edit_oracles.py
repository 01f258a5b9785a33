"""Tiny fixtures for the contextual edit transducer (brute-force oracles), shared by its
tests here and by the phonology EM tests (tests/models/test_counts_mstep.py)."""

import itertools

import numpy as np

from fst_factors.transducers.contextual_edit import SymbolInfo
from fst_factors.wfsa import string_acceptor, compose, log_partition


def tiny_info(n=2, boundary=False):
    info = SymbolInfo.plain(n, boundary)
    # vowel tier for label 1 (class 0) and voicing for label 2 to exercise those features
    return SymbolInfo(info.in_class, info.right_class, info.out_class,
                      np.array([0] + [-1] * (n - 1)), np.array([-1] + [1] * (n - 1)),
                      info.sub_ok, np.where(info.sub_ok, 0, -1), boundary)


def random_theta(st, seed=0, scale=1.0):
    return np.random.default_rng(seed).normal(0, scale, st.num_features)


def outputs_logprob(fst, x, max_len):
    """log p(y | x) for every y up to max_len, by composition with each y."""
    out = {}
    for L in range(max_len + 1):
        for y in itertools.product(range(1, 3), repeat=L):
            g = compose(compose(string_acceptor(x), fst), string_acceptor(y))
            out[y] = log_partition(g)
    return out


def exact_logz(fst):
    """log total weight by a dense linear solve (I − W)⁻¹ — no iteration tolerance."""
    from fst_factors.wfsa import arc_table

    t = arc_table(fst.copy())
    n = t.num_states
    if n == 0 or t.start < 0:
        return -np.inf
    W = np.zeros((n, n))
    np.add.at(W, (t.src, t.dst), np.exp(-t.weight))
    rho = np.exp(-t.final)
    v = np.linalg.solve(np.eye(n) - W, rho)
    return float(np.log(v[t.start]))
