"""MER decoding against brute force: every tree assembled from sampled constituents is
scored, and the decoder must reach the maximum; the most frequent sampled tree (a
different decoder) is shown to fall short on some sample sets (negative control)."""

import random

import pytest

from strgm.errors import InputError
from strgm.grammars.mer_decode import anchored_constituents, expected_rules, mer_tree, \
    most_frequent_tree

LABELS = ("A", "B", "C")


def _random_tree(rng, i, j, words):
    if j - i == 1:
        node = (rng.choice(LABELS), words[i])
    else:
        k = rng.randrange(i + 1, j)
        node = (rng.choice(LABELS), _random_tree(rng, i, k, words),
                _random_tree(rng, k, j, words))
    if rng.random() < 0.3:
        node = (rng.choice(LABELS), node)
    return node


def _all_trees(samples):
    """Every tree whose constituents (chain + branching rule, anchored) all occur in the
    samples: enumerated recursively from the root."""
    consts = {}
    for t in samples:
        for top, i, j, chain, kids in anchored_constituents(t):
            consts.setdefault((top, i, j), set()).add((chain, kids))

    def build(label, i, j):
        out = []
        for chain, kids in consts.get((label, i, j), ()):
            options = [[]]
            for k in kids:
                subs = [k[0]] if k[3] else build(k[0], k[1], k[2])
                options = [o + [s] for o in options for s in subs]
            for o in options:
                node = (chain[-1],) + tuple(o)
                for lab in reversed(chain[:-1]):
                    node = (lab, node)
                out.append(node)
        return out
    n = anchored_constituents(samples[0])[-1][2]
    return [t for r in {s[0] for s in samples} for t in build(r, 0, n)]


@pytest.mark.parametrize("objective", ["sum", "product"])
@pytest.mark.parametrize("seed", range(25))
def test_mer_reaches_the_brute_force_maximum(seed, objective):
    rng = random.Random(seed)
    words = ["w%d" % i for i in range(4)]
    samples = [_random_tree(rng, 0, 4, words) for _ in range(rng.randint(2, 6))]
    best = max(expected_rules(t, samples, objective) for t in _all_trees(samples))
    got = mer_tree(samples, objective)
    assert expected_rules(got, samples, objective) == pytest.approx(best, abs=1e-12)
    assert got in set(_all_trees(samples))


def test_the_two_objectives_differ_on_some_samples():
    """Sum and product are different decoders: on some sample sets the sum's tree is not
    optimal for the product (so each test above can tell them apart)."""
    differ = 0
    for seed in range(25):
        rng = random.Random(seed)
        words = ["w%d" % i for i in range(4)]
        samples = [_random_tree(rng, 0, 4, words) for _ in range(rng.randint(2, 6))]
        best = max(expected_rules(t, samples, "product") for t in _all_trees(samples))
        differ += expected_rules(mer_tree(samples, "sum"), samples, "product") < best - 1e-9
    assert differ > 0


def test_most_frequent_tree_is_not_mer_negative_control():
    """The same oracle rejects a weaker decoder: on some sample sets the most frequent
    sampled tree scores strictly below the brute-force maximum."""
    worse = 0
    for seed in range(25):
        rng = random.Random(seed)
        words = ["w%d" % i for i in range(4)]
        samples = [_random_tree(rng, 0, 4, words) for _ in range(rng.randint(2, 6))]
        best = max(expected_rules(t, samples) for t in _all_trees(samples))
        worse += expected_rules(most_frequent_tree(samples), samples) < best - 1e-9
    assert worse > 0


def test_mer_of_identical_samples_is_that_tree():
    t = ("S", ("NP", ("D", "the"), ("N", "dog")), ("VP", ("V", "barks")))
    assert mer_tree([t, t, t]) == t


def test_bad_samples():
    with pytest.raises(InputError):
        mer_tree([])
    with pytest.raises(InputError, match="lengths"):
        mer_tree([("S", ("A", "x")), ("S", ("A", "x"), ("B", "y"))])
    with pytest.raises(InputError, match="objective"):
        mer_tree([("S", ("A", "x"))], "max")


def test_a_unary_chain_counts_once_so_padding_does_not_beat_the_majority():
    """One sample padded with unary links against two plain ones: the constituent
    (chain with the rule below it) is worth its own marginal, 1/3 against 2/3, so the
    majority's tree wins. Control: summing every link's marginal, as MER once did,
    prefers the padded minority (1/3 · 3 links + 1 for B → x = 2 against 2/3 + 1)."""
    padded = ("S", ("A", ("A", ("B", "x"))))
    plain = ("S", ("B", "x"))
    samples = [padded, plain, plain]
    assert mer_tree(samples) == plain
    assert expected_rules(plain, samples) == pytest.approx(2 / 3)
    assert expected_rules(padded, samples) == pytest.approx(1 / 3)

    def per_link(tree):  # the old objective, written out: Σ of the links' marginals
        links = []
        while not isinstance(tree[1], str):
            links.append((tree[0], tree[1][0]))
            tree = tree[1]
        links.append((tree[0], tree[1]))
        return links
    counts = [link for t in samples for link in per_link(t)]
    old = {t: sum(counts.count(link) / 3 for link in per_link(t)) for t in (padded, plain)}
    assert old[padded] > old[plain]
