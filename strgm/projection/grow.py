"""Closed-form projection with greedy growing of contexts (PEP §6.1, objective (3) with Ω
of eq. (8)).

We keep a prefix-closed context set C (start: {ε}, the unigram model) and the complete
family W(C) = C·(Σ ∪ {EOS}), whose optimum is the closed form. Each round:

1. frontier: u = h·a with h ∈ C, u ∉ C, u[1:] ∈ C (the conjunction test of footnote 7,
   which also keeps the failure structure intact), |u| < ``max_len``; BOS extends ε.
2. one composition gives E_p[f_{u·b}] for every frontier u and b (the counting DFA of
   W(C ∪ frontier)); the current model's log q(b | s(u)), s(u) = longest suffix of u in C,
   comes from the closed form on W(C).
3. candidates are taken in decreasing expected count E_p[f_u] (a priority queue); u is
   added if its estimated decrease of D(p ‖ q) — the KL gain of giving u its own
   next-symbol distribution, Σ_b c(u,b) log( c(u,b)/c(u,·) / q(b | s(u)) ) — exceeds λ
   times its cost, the N+1 arcs that the new state adds to ENCODE (Ω of eq. 8 counts the
   prefixes of nonzero features, i.e. the arcs of ENCODE).
4. the true objective E_p[log q_θ] − λ·(N+1)·|C| is measured after every round; growth
   stops when it no longer improves (the previous C is kept) or nothing is added.

Cost per round: one :func:`p_moments` on |C ∪ frontier| states plus O(|frontier|·N).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from strgm.features.moments import CompositionCache, p_moments, q_moments
from strgm.features.symbols import bos
from strgm.features.theta import Theta
from strgm.projection.closed_form import (
    complete_feature_set,
    conditional_logprobs,
    expectations_on,
    theta_from_logprobs,
)


def _frontier(ctx: set, n: int, max_len: Optional[int]) -> list[tuple]:
    out = []
    b = bos(n)
    for h in ctx:
        if max_len is not None and len(h) + 1 >= max_len:
            continue
        syms = range(1, n + 1) if h else list(range(1, n + 1)) + [b]
        for a in syms:
            u = h + (a,)
            if u not in ctx and (u[1:] in ctx or u[0] == b and len(u) == 1):
                out.append(u)
    return out


def grow(p: pynini.Fst, num_labels: int, lam: float = 0.01,
         theta_context: Optional[Theta] = None, max_len: Optional[int] = None,
         max_rounds: int = 12, what: str = "automaton",
         compositions: Optional[CompositionCache] = None) -> Theta:
    """θ ≈ argmin D(p̂ ‖ q_θ) + λΩ(θ), p̂ ∝ p ⊙ ENCODE(θ_context) (see module docstring).

    Returns θ_V on the complete family of the chosen contexts (θ_context not subtracted).
    """
    n = num_labels
    cost = lam * (n + 1)
    ctx = {()}
    best = None
    for _ in range(max_rounds):
        fs = complete_feature_set(ctx, n)
        cands = _frontier(ctx, n, max_len)
        big = complete_feature_set(ctx | set(cands), n)
        if theta_context is not None:
            big = big.union(theta_context.features)
        m = p_moments(p, big, theta_context, what=what, compositions=compositions)
        e_fs = expectations_on(m, fs)
        logq = conditional_logprobs(fs, e_fs)
        theta = theta_from_logprobs(fs, logq)
        ll = float(theta.values @ e_fs - q_moments(theta, what=what).log_z)
        obj = ll - cost * len(fs.dfa.contexts)
        if best is not None and obj <= best[1] + 1e-12:
            break
        best = (theta, obj)
        if not cands:
            break
        dfa = fs.dfa
        idx = m.features.index
        added = []
        order = []
        for u in cands:
            c = np.array([m.expectations[idx[u + (b,)]] for b in
                          list(range(1, n + 1)) + [n + 2]])
            order.append((-c.sum(), u, c))
        order.sort(key=lambda t: t[0])
        for negtot, u, c in order:
            tot = -negtot
            if tot <= 0:
                break
            if u == (bos(n),):
                s = 0
            else:
                s = int(dfa.goto[dfa.context_index[u[:-1]], u[-1] - 1])
            pos = c > 0
            gain = float(np.sum(c[pos] * (np.log(c[pos] / tot) - logq[s, pos])))
            if gain > cost:
                added.append(u)
        if not added:
            break
        ctx = ctx | set(added)
    return best[0]
