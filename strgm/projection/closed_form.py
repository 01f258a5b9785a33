"""Closed-form projection onto a fixed, complete n-gram family (PEP §6 "Closed-form").

For a *complete* feature set W (every context h ∈ C has a feature h·a for every
a ∈ Σ ∪ {EOS}; e.g. the order-n sets of :func:`strgm.features.ngram_features`) every arc of
ENCODE(W) carries its own feature, so Q is the set of all weightings of that DFA and
argmin_θ D(p ‖ q_θ) (eq. 2) is the locally normalised DFA with

    q(a | h) = c(h, a) / (Σ_a' c(h, a') + c(h, EOS))                 (PEP §6)

where c(h, a) is the expected number of times the DFA takes arc (h, a) when reading
v ~ p. The c are recovered from the expected substring counts E_p[f_w] by undoing the
failure-tree accumulation (:meth:`FeatureDFA.deaccumulate`). In substring form θ follows
by telescoping along the failure chain (docs/pep.md):

    θ_{h·a} = log q(a | h) − log q(a | fail(h)),      θ_a = log q(a | ε).

Contexts that p never reaches (total count ≤ ``min_count``) inherit their parent's
distribution (θ_{h·a} = 0); log 0 is represented by LOG_FLOOR. At the result the gradient
E_p[f] − E_q[f] of eq. (2) vanishes (up to the floor). Cost: one :func:`p_moments` plus
O(|C|·(N+1)).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from strgm.errors import InputError
from strgm.features.moments import CompositionCache, Moments, p_moments
from strgm.features.symbols import ngram_contexts
from strgm.features.theta import LOG_FLOOR, FeatureSet, Theta


def complete_feature_set(contexts, num_labels: int) -> FeatureSet:
    """The complete set {h·a : h ∈ prefix-closure(contexts), a ∈ Σ ∪ {EOS}}."""
    from strgm.features.symbols import eos

    ctx = {()}
    for h in contexts:
        h = tuple(h)
        for k in range(1, len(h) + 1):
            ctx.add(h[:k])
    nxt = list(range(1, num_labels + 1)) + [eos(num_labels)]
    return FeatureSet([h + (a,) for h in ctx for a in nxt], num_labels)


def order_feature_set(order: int, num_labels: int) -> FeatureSet:
    """The complete order-n set W_n (cached per (order, N))."""
    key = (order, num_labels)
    fs = _ORDER_CACHE.get(key)
    if fs is None:
        fs = _ORDER_CACHE[key] = complete_feature_set(ngram_contexts(order, num_labels),
                                                      num_labels)
    return fs


_ORDER_CACHE: dict = {}


def expectations_on(m: Moments, fs: FeatureSet) -> np.ndarray:
    """E[f_w] for w ∈ fs, read from moments computed on a superset of fs."""
    if m.features is fs or m.features == fs:
        return m.expectations
    idx = m.features.index
    try:
        return m.expectations[[idx[w] for w in fs.features]]
    except KeyError as e:
        raise InputError(f"feature {e.args[0]} has no computed expectation") from None


def conditional_logprobs(fs: FeatureSet, expectations: np.ndarray,
                         min_count: float = 1e-12) -> np.ndarray:
    """log q(a | h) (|C| × (N+1), column N = EOS) of the closed-form fit on ``fs``."""
    dfa = fs.dfa
    if not dfa.is_complete:
        raise InputError("closed-form projection needs a complete feature set "
                         "(use complete_feature_set / order_feature_set)")
    c = np.maximum(dfa.deaccumulate(expectations), 0.0)
    tot = c.sum(axis=1)
    live = tot > min_count
    with np.errstate(divide="ignore", invalid="ignore"):
        logq = np.log(c / np.where(live, tot, 1.0)[:, None])
    logq = np.maximum(logq, LOG_FLOOR)
    if not live[0]:
        logq[0] = -np.log(dfa.num_labels + 1)
    for lev in dfa.levels:
        dead = lev[~live[lev]]
        if dead.size:
            logq[dead] = logq[dfa.fail[dead]]
    return logq


def theta_from_logprobs(fs: FeatureSet, logq: np.ndarray) -> Theta:
    """Telescoping: θ_{h·a} = log q(a|h) − log q(a|fail(h)), θ_a = log q(a|ε)."""
    dfa = fs.dfa
    node, col = dfa.feat_node, dfa.feat_col
    ok = node >= 0
    vals = np.zeros(len(fs))
    parent = np.where(node[ok] > 0, dfa.fail[np.maximum(node[ok], 0)], -1)
    base = np.where(parent >= 0, logq[np.maximum(parent, 0), col[ok]], 0.0)
    vals[ok] = logq[node[ok], col[ok]] - base
    return Theta(fs, vals)


def closed_form_from_expectations(fs: FeatureSet, expectations: np.ndarray,
                                  min_count: float = 1e-12) -> Theta:
    """θ maximising E_p[log q_θ] over the complete family ``fs``, given E_p[f] on fs."""
    return theta_from_logprobs(fs, conditional_logprobs(fs, expectations, min_count))


def closed_form(p: pynini.Fst, fs: FeatureSet, theta_context: Optional[Theta] = None,
                what: str = "automaton",
                compositions: Optional[CompositionCache] = None) -> tuple[Theta, Moments]:
    """Project p (or p ⊙ ENCODE(θ_context), EP's eq. 5) onto the complete family ``fs``.

    Returns (θ, moments of the projected distribution on fs ∪ support(θ_context)).
    ``compositions``: where p's composition with the feature DFA is kept (see
    :func:`strgm.features.moments.p_moments`).
    """
    big = fs if theta_context is None else fs.union(theta_context.features)
    m = p_moments(p, big, theta_context, what=what, compositions=compositions)
    return closed_form_from_expectations(fs, expectations_on(m, fs)), m
