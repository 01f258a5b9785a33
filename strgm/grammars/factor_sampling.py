"""Importance-sampling EP moments of the PCFG factor, and string features.

Self-normalised importance sampling with the PCFG as proposal: v_i ~ P_G (top-down
generation), weights w_i = μ(v_i), Ê[f] = Σ w_i f(v_i) / Σ w_i, and the delta-method standard
error se = sqrt(Σ w_i² (f(v_i) − Ê)²) / Σ w_i; Ẑ = mean(w_i) estimates Z/Z_G. Strings longer
than ``max_len`` are discarded (counted in ``n_truncated``; the estimate then refers to
p restricted to |v| ≤ max_len, exactly what :func:`pcfg_moments` computes with the same
``max_len``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pynini

from strgm.errors import InconsistentEvidenceError
from strgm.features.theta import FeatureSet
from strgm.grammars.cfg import Grammar
from strgm.grammars.factor_product import terminal_labels
from fst_factors.wfsa.measure import score_strings

__all__ = ["sample_strings", "string_features", "SampledMoments", "sampled_moments",
           "weighted_estimate"]


def sample_strings(grammar: Grammar, n: int, rng: np.random.Generator, theta=None,
                   max_len: int = 200):
    """n yields of top-down samples from P_G; returns (list of terminal tuples or None for
    a sample abandoned past ``max_len`` terminals).  Rule choice: θ normalised per lhs."""
    if theta is None:
        theta = grammar.probabilities()
    theta = np.asarray(theta, dtype=float)
    by_lhs: dict = {}
    for i, r in enumerate(grammar.rules):
        by_lhs.setdefault(r.lhs, []).append(i)
    cum = {}
    for x, idx in by_lhs.items():
        w = theta[idx]
        if w.sum() <= 0:
            continue
        cum[x] = (np.array(idx), np.cumsum(w / w.sum()))
    rules = grammar.rules
    out = []
    for _ in range(n):
        stack = [grammar.start]
        y: list = []
        ok = True
        steps = 0
        while stack:
            x = stack.pop()
            if x not in grammar.nt_index:
                y.append(x)
                if len(y) > max_len:
                    ok = False
                    break
                continue
            steps += 1
            if x not in cum or steps > 50 * max_len + 1000 or len(stack) + len(y) > max_len:
                ok = False  # every nonterminal yields ≥ 1 terminal (no ε-rules)
                break
            idx, c = cum[x]
            r = rules[idx[min(np.searchsorted(c, rng.random(), side="right"), len(c) - 1)]]
            stack.extend(reversed(r.rhs))
        out.append(tuple(y) if ok else None)
    return out


def string_features(features: FeatureSet, strings) -> np.ndarray:
    """f_w(v) for every string (label tuples) and w ∈ features: (n, |W|), by running the
    feature DFA on the padded label matrix (one numpy step per position) and accumulating
    arc counts up the failure tree (batched)."""
    dfa = features.dfa
    n, nc = features.num_labels, dfa.num_states
    S = len(strings)
    Lmax = max((len(v) for v in strings), default=0)
    lab = np.zeros((S, max(Lmax, 1)), dtype=np.int64)
    lens = np.array([len(v) for v in strings], dtype=np.int64)
    for i, v in enumerate(strings):
        lab[i, :len(v)] = v
    A = nc * (n + 1)
    cnt = np.zeros((S, A))
    st = np.full(S, dfa.start, dtype=np.int64)
    rows = np.arange(S)
    for j in range(Lmax):
        live = lens > j
        a = lab[live, j]
        np.add.at(cnt, (rows[live], st[live] * (n + 1) + a - 1), 1.0)
        st[live] = dfa.goto[st[live], a - 1]
    np.add.at(cnt, (rows, st * (n + 1) + n), 1.0)
    s = cnt.reshape(S, nc, n + 1)
    for lev in reversed(dfa.levels):
        np.add.at(s, (slice(None), dfa.fail[lev]), s[:, lev])
    ok = dfa.feat_node >= 0
    out = np.empty((S, len(features)))
    out[:, ok] = s[:, dfa.feat_node[ok], dfa.feat_col[ok]]
    out[:, ~ok] = 1.0
    return out


@dataclass
class SampledMoments:
    """Importance-sampling estimate: ``expectations`` ± ``stderr`` (per feature),
    ``log_z`` ≈ log E_{P_G}[μ(v)] (log of the mean weight), ``ess`` (effective sample size
    (Σw)²/Σw²), ``n_samples``, ``n_truncated`` (samples past max_len, weight 0)."""

    features: FeatureSet
    expectations: np.ndarray
    stderr: np.ndarray
    log_z: float
    ess: float
    n_samples: int
    n_truncated: int


def sampled_moments(grammar: Grammar, labels, features: FeatureSet,
                    mu: Optional[pynini.Fst] = None, theta=None, *, n_samples: int = 2000,
                    seed=0, max_len: int = 200) -> SampledMoments:
    """Self-normalised importance sampling of E_p[f] with proposal P_G (module docstring)."""
    rng = np.random.default_rng(seed)
    term_label = terminal_labels(grammar, labels)
    ys = sample_strings(grammar, n_samples, rng, theta, max_len)
    keep = [i for i, y in enumerate(ys) if y is not None]
    strings = [tuple(term_label[t] for t in ys[i]) for i in keep]
    if mu is None:
        logw = np.zeros(len(strings))
    else:
        logw = score_strings(mu, strings)
    if not strings or not np.isfinite(logw).any():
        raise InconsistentEvidenceError("PCFG factor: no sample has positive weight under "
                                        "the message; use pcfg_moments or more samples")
    est, se, log_mean, ess = weighted_estimate(logw, string_features(features, strings))
    return SampledMoments(features, est, se, float(log_mean + np.log(len(strings) / n_samples)),
                          ess, n_samples, n_samples - len(keep))


def weighted_estimate(logw: np.ndarray, f: np.ndarray) -> tuple:
    """Self-normalised importance-sampling estimate (module docstring) from log weights
    and the samples' feature rows: (Ê[f], delta-method standard errors, log of the mean
    weight, effective sample size (Σw)²/Σw²)."""
    m = logw.max()
    w = np.exp(logw - m)
    sw = w.sum()
    est = (w @ f) / sw
    se = np.sqrt((w ** 2) @ (f - est) ** 2) / sw
    return est, se, float(m + np.log(sw / len(w))), float(sw ** 2 / (w ** 2).sum())
