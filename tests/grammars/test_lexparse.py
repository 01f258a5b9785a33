"""The lexicalised chart parser against brute force, and its PCFG pruning.

The oracle enumerates every lexicalised tree the contract of
:mod:`strgm.grammars.lexicalized.scorer` allows over a short sentence (every head child,
every sequence of left and right modifiers, unary chains of at most ``max_unary`` nodes
per span, never X over X), scores each by the contract's formula written out here, and
the parser must return the maximum, also the maximum over the trees a span mask
(``allowed``) or a parent mask (``parents``) admits; a beam must return a tree scored as
it says.  A deliberately broken parser (adjacency always True, or STOP left out)
disagrees with the oracle, so the comparison can fail.  The pruning is checked against
span and parent posteriors computed by enumerating every parse of a tiny
parent-annotated PCFG.
"""

from __future__ import annotations

import math
import zlib
from functools import lru_cache

import numpy as np
import pytest

from strgm.errors import OptionError
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.lexicalized.parser import Parser, parse, parse_heads, strip_heads
from strgm.grammars.lexicalized.prune import (parse_pruned, pcfg_parent_mask,
                                              pcfg_span_mask, span_posteriors)
from strgm.grammars.lexicalized.scorer import LEFT, RIGHT, STOP


class TableScorer:
    """Random log-probabilities for every row (a fixed function of the row and the
    seed), a fraction ``p_inf`` of them −inf; tags from a fixed dictionary.  A
    ``head_bonus`` added to the head rows makes nodes profitable, so that the best
    trees are deep (the parser maximises whatever the scores are)."""

    def __init__(self, labels, tagdict, seed=0, p_inf=0.0, head_bonus=0.0):
        self.labels = tuple(labels)
        self.tagdict, self.seed, self.p_inf = tagdict, seed, p_inf
        self.head_bonus = head_bonus
        self.memo: dict = {}

    def tags(self, words):
        return [list(self.tagdict[w]) for w in words]

    def _val(self, row):
        rng = np.random.default_rng([self.seed, zlib.crc32(repr(row).encode())])
        bonus = self.head_bonus if row[0] == "head" else 0.0
        return -np.inf if rng.random() < self.p_inf else float(rng.uniform(-4.0, -0.05)) + bonus

    def value(self, kind, row):
        key = (kind,) + tuple(row)
        v = self.memo.get(key)
        if v is None:
            v = self.memo[key] = self._val(key)
        return v

    def _many(self, kind, rows):
        return np.array([self.value(kind, r) for r in rows], dtype=float)

    def log_top(self, rows):
        return self._many("top", rows)

    def log_head(self, rows):
        return self._many("head", rows)

    def log_mod(self, rows):
        return self._many("mod", rows)


class Broken:
    """A scorer seen through a parser bug: every modifier row forced adjacent, or STOP
    free (log 0)."""

    def __init__(self, inner, bug):
        self.inner, self.bug = inner, bug
        self.labels = inner.labels
        self.tags, self.log_top, self.log_head = inner.tags, inner.log_top, inner.log_head

    def log_mod(self, rows):
        if self.bug == "adjacent":
            return self.inner.log_mod([r[:1] + (True,) + tuple(r[2:]) for r in rows])
        v = self.inner.log_mod(rows)
        return np.where([r[6] == STOP for r in rows], 0.0, v)


# -- the oracle: the contract's formula and every tree it allows -----------------------------
def one(f, row):
    """One row's value: straight from the table when ``f`` is a :class:`TableScorer`'s
    (the oracle's many single rows), else by the batched call."""
    table = getattr(f, "__self__", None)
    if isinstance(table, TableScorer):
        return table.value(f.__name__[4:], row)
    return float(f([row])[0])


def local_logp(sc, P, hi, heads):
    """The events of a node P whose children have heads ``heads`` (label, tag, word),
    the head child at ``hi``: the formula of the scorer module."""
    _, H, ht, hw = (None,) + heads[hi]
    total = one(sc.log_head, (P, H, ht, hw))
    for side, mods in ((RIGHT, heads[hi + 1:]), (LEFT, heads[:hi][::-1])):
        for k, (M, mt, mw) in enumerate(mods):
            total += one(sc.log_mod, (side, k == 0, P, H, ht, hw, M, mt, mw))
        total += one(sc.log_mod, (side, len(mods) == 0, P, H, ht, hw, STOP, None, None))
    return total


def node_logp(sc, t):
    """(log P of a head-annotated subtree's events below its own label, (label, head
    tag, head word))."""
    if len(t) == 2 and isinstance(t[1], str):
        return 0.0, (t[0], t[0], t[1])
    subs = [node_logp(sc, k) for k in t[2:]]
    heads = tuple(h for _, h in subs)
    total = sum(s for s, _ in subs) + local_logp(sc, t[0], t[1], heads)
    return total, (t[0],) + heads[t[1]][1:]


def tree_logp(sc, t):
    s, head = node_logp(sc, t)
    return s + one(sc.log_top, head)


def all_trees(sc, words, max_unary, allowed=None, parents=None):
    """Every head-annotated tree of ``words`` with a phrasal root, as (tree, log P by
    the formula); a subtree's score is computed once where it is built.  ``allowed``:
    the (i, j, X) phrasal nodes may span; ``parents``: the (i, j, X, P) such that a
    phrasal X over [i, j) may be a child of P (None: no restriction)."""
    tags = sc.tags(words)

    def ok(i, j, P, kids):
        return (allowed is None or (i, j, P) in allowed) and (
            parents is None or all(k[1][0] not in sc.labels or k[4] + (k[1][0], P) in parents
                                   for k in kids))

    @lru_cache(maxsize=None)
    def complete(i, j):  # (tree, (label, tag, word), score, unary level, span)
        out = [((t, words[i]), (t, t, words[i]), 0.0, 0, (i, j))
               for t in tags[i]] if j == i + 1 else []
        for a in range(i, j):
            for b in range(a + 1, j + 1):
                if (a, b) == (i, j):
                    continue
                for head in complete(a, b):
                    for lefts in seqs(i, a):
                        for rights in seqs(b, j):
                            kids = lefts + (head,) + rights
                            hs = tuple(k[1] for k in kids)
                            s = sum(k[2] for k in kids)
                            out += [((P, len(lefts)) + tuple(k[0] for k in kids),
                                     (P,) + head[1][1:],
                                     s + local_logp(sc, P, len(lefts), hs), 0, (i, j))
                                    for P in sc.labels if ok(i, j, P, kids)]
        level = out
        for lvl in range(1, max_unary + 1):
            level = [((P, 0, c[0]), (P,) + c[1][1:], c[2] + local_logp(sc, P, 0, (c[1],)),
                      lvl, (i, j))
                     for c in level for P in sc.labels if P != c[1][0] and ok(i, j, P, (c,))]
            out = out + level
        return tuple(out)

    @lru_cache(maxsize=None)
    def seqs(i, a):
        if i == a:
            return ((),)
        return tuple((c,) + rest for k in range(i + 1, a + 1) for c in complete(i, k)
                     for rest in seqs(k, a))

    return [(c[0], c[2] + one(sc.log_top, c[1])) for c in complete(0, len(words))
            if c[1][0] in sc.labels]


def oracle(sc, words, max_unary, allowed=None, parents=None):
    best, arg = -math.inf, None
    for t, s in all_trees(sc, words, max_unary, allowed, parents):
        if s > best:
            best, arg = s, t
    return arg, best


def draw_case(seed):
    """A scorer over 2 labels and 2-3 tags, and a sentence of 2-4 words (up to 3 tags a
    word for 2 words, 2 for 3, 1 for 4, so that the enumeration stays small)."""
    rng = np.random.default_rng(seed)
    tagset = ["t", "u", "v"][:rng.integers(2, 4)]
    n = int(rng.integers(2, 5))
    words = [f"w{k}" for k in rng.integers(0, 3, size=n)]
    most = {2: 3, 3: 2, 4: 1}[n]
    tagdict = {w: sorted(set(rng.choice(tagset, size=rng.integers(1, most + 1)).tolist()))
               for w in sorted(set(words))}
    sc = TableScorer(["A", "B"], tagdict, seed=seed, p_inf=0.1 if seed % 3 == 0 else 0.0)
    return sc, words, (1 if n == 4 else 2)


@pytest.mark.parametrize("seed", range(8))
def test_parse_is_the_brute_force_maximum(seed):
    """Odd seeds: with a head bonus, so that the best trees are deep."""
    sc, words, mu = draw_case(seed)
    sc.head_bonus = 4.0 * (seed % 2)
    want_tree, want = oracle(sc, words, mu)
    htree, got = parse_heads(sc, words, max_unary=mu)
    if want_tree is None:
        assert htree is None and got == -np.inf
        return
    assert got == pytest.approx(want, abs=1e-9)
    assert tree_logp(sc, htree) == pytest.approx(got, abs=1e-9)
    tree, logp = parse(sc, words, max_unary=mu)
    assert tree == strip_heads(htree) and logp == got


@pytest.mark.parametrize("seed", range(4))
def test_parse_under_a_mask_is_the_maximum_over_allowed_trees(seed):
    sc, words, mu = draw_case(100 + seed)
    n = len(words)
    rng = np.random.default_rng(seed)
    spans = [(i, j, X) for i in range(n) for j in range(i + 1, n + 1) for X in sc.labels]
    allowed = {s for s in spans if rng.random() < 0.6} | {(0, n, "A")}
    want_tree, want = oracle(sc, words, mu, allowed)
    htree, got = Parser(sc, words, max_unary=mu).parse_heads(allowed)
    assert got == pytest.approx(want, abs=1e-9)
    if htree is not None:
        assert tree_logp(sc, htree) == pytest.approx(got, abs=1e-9)
    mask = np.zeros((n + 1, n + 1, 2), dtype=bool)
    for i, j, X in allowed:
        mask[i, j, sc.labels.index(X)] = True
    assert parse(sc, words, mask, max_unary=mu)[1] == pytest.approx(got, abs=1e-12)


def relations(t, i=0) -> tuple:
    """(width, the (i, j, X, P) of every phrasal child X of a P node) of a
    head-annotated subtree starting at i."""
    if len(t) == 2 and isinstance(t[1], str):
        return 1, []
    out, k = [], i
    for c in t[2:]:
        w, sub = relations(c, k)
        out += sub
        if not (len(c) == 2 and isinstance(c[1], str)):
            out.append((k, k + w, c[0], t[0]))
        k += w
    return k - i, out


@pytest.mark.parametrize("seed", [200, 202, 204, 211])  # cases of 3 words
def test_parse_under_a_parent_mask_is_the_maximum_over_allowed_trees(seed):
    """The mask forbids one parent relation of the unrestricted best tree, and a random
    fifth of the others."""
    sc, words, mu = draw_case(seed)
    sc.head_bonus = 4.0
    n = len(words)
    rng = np.random.default_rng(seed)
    best, unrestricted = oracle(sc, words, mu)
    used = relations(best)[1]
    assert used
    parents = {(i, j, X, P) for i in range(n) for j in range(i + 1, n + 1)
               for X in sc.labels for P in sc.labels if rng.random() < 0.8}
    parents -= {used[int(rng.integers(len(used)))]}
    _, want = oracle(sc, words, mu, None, parents)
    htree, got = Parser(sc, words, max_unary=mu).parse_heads(None, parents)
    assert got == pytest.approx(want, abs=1e-9) and want < unrestricted
    if htree is not None:
        assert tree_logp(sc, htree) == pytest.approx(got, abs=1e-9)
        assert set(relations(htree)[1]) <= parents
    arr = np.zeros((n + 1, n + 1, 2, 2), dtype=bool)
    for i, j, X, P in parents:
        arr[i, j, sc.labels.index(X), sc.labels.index(P)] = True
    assert parse(sc, words, parents=arr, max_unary=mu)[1] == pytest.approx(got, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 7])
def test_a_beam_gives_a_tree_scored_as_it_says_and_a_wide_one_is_exact(seed):
    sc, words, mu = draw_case(seed)
    _, want = oracle(sc, words, mu)
    for beam in (0.0, 0.5, 2.0):
        htree, got = parse_heads(sc, words, max_unary=mu, beam=beam)
        assert htree is not None and got <= want + 1e-9
        assert tree_logp(sc, htree) == pytest.approx(got, abs=1e-9)
    assert parse_heads(sc, words, max_unary=mu, beam=1e6)[1] == pytest.approx(want, abs=1e-9)


def test_unary_chains_are_bounded_and_never_x_over_x():
    sc = TableScorer(["A", "B", "C"], {"x": ["t"]}, seed=3)
    for mu in (0, 1, 2, 3):
        tree, logp = parse_heads(sc, ["x"], max_unary=mu)
        want_tree, want = oracle(sc, ["x"], mu)
        assert logp == pytest.approx(want, abs=1e-9) and tree == want_tree
    assert parse(sc, ["x"], max_unary=0) == (None, -np.inf)  # no phrasal root possible


@pytest.mark.parametrize("bug", ["adjacent", "stop"])
def test_a_broken_parser_disagrees_with_the_brute_force(bug):
    """On the first drawn case of at most 3 words where the bug matters, the broken
    parser's tree scores below the brute-force maximum (the correct parser's does not)."""
    for seed in range(8):
        sc, words, mu = draw_case(seed)
        if len(words) > 3:
            continue
        _, want = oracle(sc, words, mu)
        tree, _ = parse_heads(Broken(sc, bug), words, max_unary=mu)
        got = -math.inf if tree is None else tree_logp(sc, tree)
        if not math.isclose(got, want, abs_tol=1e-9):
            assert got < want
            assert parse_heads(sc, words, max_unary=mu)[1] == pytest.approx(want, abs=1e-9)
            return
    pytest.fail(f"the {bug} bug went unnoticed")


def test_bad_options_and_masks_are_refused():
    sc = TableScorer(["A"], {"x": ["t"]})
    with pytest.raises(OptionError):
        parse(sc, ["x"], max_unary=-1)
    with pytest.raises(OptionError):
        parse(sc, ["x"], {(0, 2, "A")})
    with pytest.raises(OptionError):
        parse(sc, ["x"], np.ones((3, 3, 1), dtype=bool))


# -- pruning --------------------------------------------------------------------------------
TINY = [("TOP", ("S",), 1.0), ("S", ("NP^S", "VP^S"), 3.0), ("S", ("VP^S",), 1.0),
        ("VP^S", ("V", "NP^VP"), 2.0), ("VP^S", ("V",), 1.0),
        ("VP^S", ("V", "VP^S|<NP,NP>"), 1.0), ("VP^S|<NP,NP>", ("NP^VP", "NP^VP"), 1.0),
        ("NP^S", ("N",), 2.0), ("NP^S", ("D", "NP^S|<N>"), 1.0),
        ("NP^S|<N>", ("N", "N"), 1.0), ("NP^VP", ("N",), 2.0), ("NP^VP", ("D", "N"), 1.0),
        ("NP^VP", ("NP^NP", "N"), 1.0), ("NP^NP", ("N",), 1.0),
        ("D", ("a",), 1.0), ("N", ("b",), 2.0), ("N", ("c",), 1.0), ("N", ("<UNK>",), 0.5),
        ("V", ("c",), 1.0), ("V", ("d",), 1.0)]


def tiny_pcfg():
    return Grammar([Rule(a, b, w) for a, b, w in TINY], start="TOP")


def brute_posteriors(g, words):
    """{(i, j, base label): posterior} by enumerating every parse of ``words`` (an
    unknown word read as the grammar's only signature, ``<UNK>``)."""
    words = [w if w in g.terminals else "<UNK>" for w in words]
    theta = dict(zip(((r.lhs, tuple(r.rhs)) for r in g.rules), g.probabilities()))
    rules = [(a, rhs) for a, rhs in theta]

    def derive(X, i, j):  # [(probability, nodes)]
        out = []
        for a, rhs in rules:
            if a != X:
                continue
            p = theta[(a, rhs)]
            if len(rhs) == 1 and rhs[0] not in g.nt_index:
                if j == i + 1 and words[i] == rhs[0]:
                    out.append((p, [(i, j, X)]))
            elif len(rhs) == 1:
                out += [(p * q, [(i, j, X)] + ns) for q, ns in derive(rhs[0], i, j)]
            else:
                for k in range(i + 1, j):
                    out += [(p * q1 * q2, [(i, j, X)] + n1 + n2)
                            for q1, n1 in derive(rhs[0], i, k) for q2, n2 in derive(rhs[1], k, j)]
        return out

    trees = derive("TOP", 0, len(words))
    Z = sum(p for p, _ in trees)
    post: dict = {}
    for p, nodes in trees:
        keys = {(i, j, X.split("^")[0]) for i, j, X in nodes if "|<" not in X}
        keys |= {(i, j) + tuple(X.split("^")) for i, j, X in nodes
                 if "|<" not in X and "^" in X}  # (i, j, X, parent)
        for k in keys:
            post[k] = post.get(k, 0.0) + p / Z
    return post


@pytest.mark.parametrize("words", [["b", "c", "b"], ["a", "b", "b", "d", "b", "c"],
                                   ["b", "c", "a", "b"], ["zzz", "d", "b", "b"]])
def test_span_posteriors_equal_brute_force_enumeration(words):
    g = tiny_pcfg()
    both = brute_posteriors(g, words)
    want = {k: v for k, v in both.items() if len(k) == 3}
    assert want  # the sentence parses
    labels, post = span_posteriors(g, words)
    got = {(i, i + w, labels[x]): post[w][i, x] for w in range(1, len(words) + 1)
           for i, x in zip(*np.nonzero(post[w]))}
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12)
    assert pcfg_span_mask(g, words, 0.0) == set(want)  # threshold 0: all it can build
    assert pcfg_span_mask(g, words, 0.5) == {k for k, v in want.items() if v >= 0.5}
    pairs = {k: v for k, v in both.items() if len(k) == 4}
    for th in (0.0, 0.3, 0.9):
        assert pcfg_parent_mask(g, words, th) == {k for k, v in pairs.items() if v >= th}


def test_parse_pruned_falls_back_to_a_lower_threshold():
    g = Grammar([Rule("TOP", ("S",), 0.9998), Rule("TOP", ("Q",), 0.0002),
                 Rule("S", ("A", "B")), Rule("Q", ("A", "B")), Rule("A", ("x",)),
                 Rule("B", ("y",))], start="TOP")

    class NoS(TableScorer):  # a root S is impossible, the PCFG's favourite
        def log_top(self, rows):
            return np.where([r[0] == "S" for r in rows], -np.inf, super().log_top(rows))

    sc = NoS(["S", "Q"], {"x": ["A"], "y": ["B"]})
    words = ["x", "y"]
    assert (0, 2, "Q") not in pcfg_span_mask(g, words, 1e-3)
    assert parse(sc, words, pcfg_span_mask(g, words, 1e-3))[0] is None
    tree, logp, used = parse_pruned(sc, words, g, (1e-3, 1e-4, 0.0))
    assert used == 1e-4 and tree[0] == "Q"
    assert logp == parse(sc, words, pcfg_span_mask(g, words, 1e-4))[1]
    # a sentence the PCFG cannot parse at all gets the unpruned parse
    sc2 = TableScorer(["S", "Q"], {"x": ["A"], "q": ["B"]})
    tree, logp, used = parse_pruned(sc2, ["x", "q"], g)
    assert used == 0.0 and (tree, logp) == parse(sc2, ["x", "q"])


def test_parse_pruned_parses_under_both_coarse_masks():
    g = tiny_pcfg()
    sc = TableScorer(["S", "NP", "VP"], {"a": ["D"], "b": ["N"], "c": ["N", "V"], "d": ["V"]},
                     seed=0, head_bonus=4.0)
    words = ["a", "b", "b", "c", "b", "b"]
    spans, pairs = pcfg_span_mask(g, words, 1e-3), pcfg_parent_mask(g, words, 1e-3)
    tree, logp, used = parse_pruned(sc, words, g, beam=None)
    assert used == 1e-3 and (tree, logp) == parse(sc, words, spans, parents=pairs)
    htree, _ = parse_heads(sc, words, spans, parents=pairs)
    assert set(relations(htree)[1]) <= pairs and len(htree) < 2 + len(words)  # not flat
    assert parse(sc, words, spans)[1] > logp  # the parent mask binds here
