"""Brute-force oracles for the PCFG tests: enumerate every tree of a tiny grammar."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import gammaln

from strgm.grammars.cfg import Grammar, Rule, tree_rules


def splits(i, j, m):
    """All ways to cut [i, j) into m non-empty consecutive pieces."""
    if m == 1:
        yield [(i, j)]
        return
    for k in range(i + 1, j - m + 2):
        for rest in splits(k, j, m - 1):
            yield [(i, k)] + rest


def enumerate_trees(g: Grammar, tokens, max_depth: int = 12):
    """All user trees with yield ``tokens`` (depth-bounded, for unary cycles)."""
    tokens = tuple(tokens)
    by_lhs = {}
    for r in g.rules:
        by_lhs.setdefault(r.lhs, []).append(r)

    memo = {}

    def go(x, i, j, d):
        key = (x, i, j, d)
        if key in memo:
            return memo[key]
        out = []
        if d > 0:
            for r in by_lhs.get(x, []):
                if len(r.rhs) > j - i:
                    continue
                for cut in splits(i, j, len(r.rhs)):
                    opts = []
                    ok = True
                    for sym, (a, b) in zip(r.rhs, cut):
                        if sym in g.nt_index:
                            sub = go(sym, a, b, d - 1)
                            if not sub:
                                ok = False
                                break
                            opts.append(sub)
                        else:
                            if b - a != 1 or tokens[a] != sym:
                                ok = False
                                break
                            opts.append([sym])
                    if ok:
                        for kids in itertools.product(*opts):
                            out.append((x,) + tuple(kids))
        memo[key] = out
        return out

    return go(g.start, 0, len(tokens), max_depth)


def tree_logweight(g: Grammar, tree, theta):
    return float(sum(math.log(theta[r]) if theta[r] > 0 else -math.inf
                     for r in tree_rules(g, tree)))


def brute_force(g: Grammar, tokens, theta, max_depth=12):
    """(log Z, expected counts, trees, tree log-weights)."""
    trees = enumerate_trees(g, tokens, max_depth)
    lw = np.array([tree_logweight(g, t, theta) for t in trees])
    counts = np.zeros(len(g.rules))
    if not trees:
        return -math.inf, counts, trees, lw
    m = lw.max()
    z = np.exp(lw - m).sum()
    logZ = m + math.log(z)
    for t, l in zip(trees, lw):
        p = math.exp(l - logZ)
        for r in tree_rules(g, t):
            counts[r] += p
    return logZ, counts, trees, lw


def collapsed_logprob(g: Grammar, rule_lists, alpha):
    """log P(t | α) = Σ_A log B(f_A + α_A) − log B(α_A)  (JGG07 / Wang & Blunsom eq. 4)."""
    f = np.zeros(len(g.rules))
    for rl in rule_lists:
        for r in rl:
            f[r] += 1
    lhs = g.lhs_index
    out = 0.0
    for a in range(g.n_lhs):
        m = lhs == a
        out += (gammaln(f[m] + alpha[m]).sum() - gammaln((f[m] + alpha[m]).sum())
                - gammaln(alpha[m]).sum() + gammaln(alpha[m].sum()))
    return out


def exact_collapsed_posterior(g: Grammar, corpus, alpha, max_depth=12):
    """Dict (tree_1, ..., tree_n) -> P(t | w, α) by enumeration."""
    per = [enumerate_trees(g, s, max_depth) for s in corpus]
    keys, lps = [], []
    for combo in itertools.product(*per):
        keys.append(combo)
        lps.append(collapsed_logprob(g, [tree_rules(g, t) for t in combo], alpha))
    lps = np.array(lps)
    p = np.exp(lps - lps.max())
    p /= p.sum()
    return dict(zip(keys, p))


def R(lhs, *rhs, w=1.0, a=None):
    return Rule(lhs, tuple(rhs), w, a)


def observed_words(words, params, alphabet):
    """A factor graph with one string variable per word, each observed (a unary point
    mass) and each under a grammar factor sharing ``params`` (rule weights learned in
    the graph)."""
    from strgm.graph import FactorGraph
    from fst_factors.wfsa.construct import weighted_strings

    g = FactorGraph(alphabet)
    for i, w in enumerate(words):
        g.add_variable(f"V{i}")
        g.add_grammar(f"G{i}", f"V{i}", params.grammar, params=params)
        g.add_unary(f"O{i}", f"V{i}", weighted_strings([(tuple(alphabet.label(c) for c in w),
                                                        0.0)]))
    return g
