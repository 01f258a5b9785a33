"""Decoding a sentence from Monte-Carlo tree samples: maximum expected rules (MER).

Given trees t^(1..M) sampled from a posterior over parses of one sentence, the MER tree
(Cohn & Blunsom 2010 §3, after Goodman's 2003 labelled-recall parser) maximises the
expected number of correct anchored CFG rules,

    t̂ = argmax_t Σ_{anchored rules r ∈ t} μ(r),     μ(r) = (1/M) Σ_m [r ∈ t^(m)],

where an anchored rule is ``(A, i, j) → (B, i, k) (C, k, j)`` (or a unary, or a lexical
rule ``A → w_i``).  Unary chains make the maximisation ill-posed when a sampled chain and
its reverse both occur (a cycle of positive gains), so a node's *unary chain with the
rule below it* is one item: a *constituent* ``(A₁ → … → A_m, rule of A_m)`` anchored on a
span, worth its own marginal μ(c), the fraction of samples that hold it.  A chain thus
counts once however long it is: summing the marginals of its links instead would pay a
tree for every extra X → X link, so a minority sample padded with unary links would
beat the majority's tree.  Without unary chains μ(c) is μ of the node's rule, and the
objective is Goodman's.  ``objective="product"`` maximises Σ log μ(r) over the rules
(every link's marginal, as before).  Only constituents that occur in some sample
compete, so the result is always a tree built of sampled pieces.

The dynamic program runs over the distinct anchored constituents of the samples:
best(A, i, j) = max over constituents c with top label A on (i, j) of
gain(c) + Σ_{children (B, s, e) of c} best(B, s, e), computed by increasing span width.
Cost O(Σ_m |t^(m)|) to collect, O(#distinct constituents) to maximise.

The most frequent sampled tree (:func:`most_frequent_tree`) is the Monte-Carlo estimate of
the maximum-probability tree, for comparison.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from strgm.errors import InputError
from strgm.validate import check_choice

__all__ = ["anchored_constituents", "expected_rules", "mer_tree", "most_frequent_tree",
           "OBJECTIVES"]

OBJECTIVES = ("sum", "product")


def _collect(tree, start, out):
    """Append the anchored constituents of ``tree`` (whose yield begins at ``start``) to
    ``out``; returns the end of its yield.  A constituent is (top label, i, j, chain,
    children) with ``chain`` the labels from the top down to the branching node and
    ``children`` the (label or word, i, j) of that node's children."""
    chain = [tree[0]]
    node = tree
    while len(node) == 2 and not isinstance(node[1], str):
        node = node[1]
        chain.append(node[0])
    kids, pos = [], start
    for c in node[1:]:
        if isinstance(c, str):
            kids.append((c, pos, pos + 1, True))
            pos += 1
        else:
            end = _collect(c, pos, out)
            kids.append((c[0], pos, end, False))
            pos = end
    out.append((chain[0], start, pos, tuple(chain), tuple(kids)))
    return pos


def anchored_constituents(tree) -> list:
    """The anchored constituents of one tree (see the module docstring), bottom-up."""
    out: list = []
    _collect(tree, 0, out)
    return out


def _chain_gain(chain, kids, span, mu_rule, mu_const, product=False):
    """The constituent's marginal ``mu_const`` (module docstring), or (``product``) Σ of
    the logs of the marginals ``mu_rule`` of the unary rules in ``chain`` and of its
    branching rule; a constituent or rule in no sample has marginal 0 (log: −∞)."""
    i, j = span
    if not product:
        return mu_const[(tuple(chain), tuple(kids), i, j)]
    mus = [mu_rule[(a, b, i, j)] for a, b in zip(chain, chain[1:])]
    mus.append(mu_rule[(chain[-1], tuple(k[:3] for k in kids), i, j)])
    return sum(math.log(m) if m > 0 else -math.inf for m in mus)


def expected_rules(tree, samples, objective: str = "sum") -> float:
    """The MER objective of ``tree`` under ``samples``: Σ over its anchored constituents of
    their marginals (``objective="product"``: Σ of the logs of its anchored rules'
    marginals); used by the tests and for reporting."""
    mu, consts, _ = _marginals(list(samples))
    return sum(_chain_gain(chain, kids, (i, j), mu, consts, objective == "product")
               for _, i, j, chain, kids in anchored_constituents(tree))


def _marginals(samples):
    """(anchored rule → marginal, anchored constituent → marginal, sentence length)."""
    m = len(samples)
    mu_rule: Counter = Counter()
    consts: Counter = Counter()
    length = None
    for t in samples:
        cs = anchored_constituents(t)
        n = cs[-1][2]
        if length is None:
            length = n
        elif n != length:
            raise InputError(f"sampled trees have yields of lengths {length} and {n}")
        for top, i, j, chain, kids in cs:
            for a, b in zip(chain, chain[1:]):
                mu_rule[(a, b, i, j)] += 1.0 / m
            mu_rule[(chain[-1], tuple(k[:3] for k in kids), i, j)] += 1.0 / m
            consts[(chain, kids, i, j)] += 1.0 / m
    return mu_rule, consts, length


def mer_tree(samples, objective: str = "sum"):
    """The tree maximising the expected number of correct anchored rules under the empirical
    distribution of ``samples`` (a non-empty list of trees over one sentence);
    ``objective="product"`` maximises the product of the rules' marginals instead."""
    objective = check_choice("objective", objective, OBJECTIVES)
    product = objective == "product"
    samples = list(samples)
    if not samples:
        raise InputError("MER decoding needs at least one sampled tree")
    mu_rule, consts, length = _marginals(samples)
    by_width = defaultdict(list)
    for chain, kids, i, j in consts:
        by_width[j - i].append((chain, kids, i, j))
    best: dict = {}
    for w in sorted(by_width):
        for chain, kids, i, j in by_width[w]:
            sub = [best[(k[0], k[1], k[2])] for k in kids if not k[3]]
            score = _chain_gain(chain, kids, (i, j), mu_rule, consts, product) + \
                sum(s[0] for s in sub)
            key = (chain[0], i, j)
            if key not in best or score > best[key][0] + 1e-12:
                best[key] = (score, chain, kids)
    roots = {t[0] for t in samples}
    root = max(((v[0], k) for k, v in best.items()
                if k[1] == 0 and k[2] == length and k[0] in roots), key=lambda x: x[0])
    return _build(best, root[1])


def _build(best, key):
    _, chain, kids = best[key]
    children = tuple(k[0] if k[3] else _build(best, (k[0], k[1], k[2])) for k in kids)
    node = (chain[-1],) + children
    for label in reversed(chain[:-1]):
        node = (label, node)
    return node


def most_frequent_tree(samples):
    """The most frequent tree among ``samples`` (ties: the first seen)."""
    samples = list(samples)
    if not samples:
        raise InputError("decoding needs at least one sampled tree")
    counts = Counter(samples)
    top = max(counts.values())
    return next(t for t in samples if counts[t] == top)
