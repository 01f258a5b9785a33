"""PEP's feature-set bookkeeping against its references: the compiled tree prox
(:func:`strgm.projection.prox.tree_prox` vs ``tree_prox_reference``), canonical order by
big-endian codes (:func:`strgm.features.codes.canonical_unique` vs
``canonical_unique_reference``), interned sets with remembered unions and positions
(:meth:`strgm.features.theta.FeatureSet.from_codes`), and the remembered active set
(:func:`strgm.projection.prox.active_set` vs ``_active_set``). Each has a deliberately
broken variant that the same comparison catches.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strgm.features.codes as codes
import strgm.features.theta as theta_mod
import strgm.projection.prox as prox
from strgm.features import FeatureSet, Theta
from strgm.features.symbols import canonical_sorted
from strgm.projection.prox import _active_set, active_set, tree_prox, tree_prox_reference
from tests.features.test_feature_codes import feature_sets, long_variant


def over(fs: FeatureSet, n: int) -> FeatureSet:
    """The same shapes of features over the alphabet 1..n."""
    m = fs.num_labels
    return FeatureSet([tuple(min(x, n) if x <= m else (n + 1 if x == m + 1 else n + 2)
                             for x in w) for w in fs.features], n)


def random_values(fs: FeatureSet, seed: int, zeros: float = 0.2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=len(fs))
    v[rng.random(len(fs)) < zeros] = 0.0
    return v


@settings(max_examples=150, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.floats(0.0, 2.0))
def test_compiled_tree_prox_equals_the_reference(fs, seed, t):
    th = Theta(fs, random_values(fs, seed))
    np.testing.assert_allclose(tree_prox(th, t).values, tree_prox_reference(th, t).values,
                               rtol=1e-12, atol=1e-14)


def test_a_tree_prox_without_the_top_down_pass_is_caught(monkeypatch):
    """Negative control: scales not multiplied down the trie (a child zeroed with its
    parent's group would survive)."""
    fs = FeatureSet([(1,), (1, 2), (1, 2, 1), (2,)], 2)
    th = Theta(fs, [0.05, 0.02, 3.0, 1.0])
    ref = tree_prox_reference(th, 0.5).values
    np.testing.assert_allclose(tree_prox(th, 0.5).values, ref, rtol=1e-12)

    def broken(parent, feat_node, values, t):
        out = tree_prox_reference(Theta(fs, values), t).values.copy()
        out[2] = values[2] * max(0.0, 1.0 - t / abs(values[2]))  # its own group only
        return out

    monkeypatch.setattr(prox, "_prox_scales", broken)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(tree_prox(th, 0.5).values, ref, rtol=1e-12)


@settings(max_examples=150, deadline=None)
@given(feature_sets(), feature_sets(), st.integers(0, 2**32 - 1))
def test_canonical_order_by_big_endian_codes_equals_the_reference(fs1, fs2, seed):
    n = fs1.num_labels
    raw = np.concatenate([fs1.codes, fs1.codes[::-1]])  # duplicates, any order
    rng = np.random.default_rng(seed)
    raw = raw[rng.permutation(len(raw))]
    got, got_len = codes.canonical_unique(raw, n)
    want, want_len = codes.canonical_unique_reference(raw, n)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_len, want_len)
    lens = codes.lengths(raw, n)
    np.testing.assert_array_equal(codes.canonical_order(raw, lens, n),
                                  codes.canonical_order_reference(raw, lens, n))
    assert list(FeatureSet.from_codes(got, n).features) == list(fs1.features)


def test_little_endian_order_is_caught(monkeypatch):
    """Negative control: sorting the codes themselves (first symbol least significant)
    is not the canonical order: (2, 1) would come before (1, 2)."""
    n = 2
    raw = codes.encode([(1, 2), (2, 1), (1,)], n)
    want, _ = codes.canonical_unique_reference(raw, n)
    np.testing.assert_array_equal(codes.canonical_unique(raw, n)[0], want)
    monkeypatch.setattr(codes, "_reversed", lambda c, b: (c.copy(), codes.lengths(c, n)))
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(codes.canonical_unique(raw, n)[0], want)


@settings(max_examples=100, deadline=None)
@given(feature_sets(), feature_sets(), feature_sets())
def test_interned_sets_remember_unions_and_positions_correctly(a, b, c):
    n = a.num_labels
    sets = [FeatureSet.from_codes(over(f, n).codes, n) for f in (a, b, c)]
    for f in sets + [FeatureSet.from_codes(long_variant(a, 1).codes, n)]:
        assert FeatureSet.from_codes(f.codes.copy(), n) is f  # one live object per set
    for x in sets + [long_variant(a, 1)]:
        for y in sets:
            if x.codes.dtype != y.codes.dtype:
                continue
            u = x.union(y)
            assert x.union(y) is u
            assert u == x._union(y)
            assert list(u.features) == canonical_sorted(set(x.features) | set(y.features))
            pos = x.positions_in(y)
            np.testing.assert_array_equal(pos, y._id_lookup.find(x.ids))
            assert not pos.flags.writeable


def test_a_memo_that_ignores_the_partner_is_caught(monkeypatch):
    """Negative control: a memo keyed on the set alone returns the first union for
    every partner."""
    n = 2
    a = FeatureSet([(1,)], n)
    b, c = FeatureSet([(2,)], n), FeatureSet([(1, 2)], n)
    assert a.union(b) != a.union(c)

    def broken(fs, name, other, compute):
        memo = fs.__dict__.setdefault(name + "_broken", {})
        if "any" not in memo:
            memo["any"] = compute(other)
        return memo["any"]

    monkeypatch.setattr(theta_mod, "_memo", broken)
    a2 = FeatureSet([(1,)], n)
    assert a2.union(b) == a2.union(c)  # what the test above would catch


@settings(max_examples=100, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 2, 3]))
def test_remembered_active_set_equals_the_computed_one(fs, seed, max_len):
    vals = random_values(fs, seed, zeros=0.0)
    vals[vals == 0.0] = 1.0
    x = Theta(FeatureSet.from_codes(fs.codes, fs.num_labels), vals)
    first = active_set(x, max_len)
    assert active_set(Theta(x.features, vals * 2.0), max_len) is first  # remembered
    assert first == _active_set(x, max_len)
    with_zeros = Theta(x.features, random_values(fs, seed))
    assert active_set(with_zeros, max_len) == _active_set(with_zeros, max_len)


@settings(max_examples=100, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1))
def test_compiled_failure_tree_passes_equal_the_level_passes(fs, seed):
    dfa = fs.dfa
    vals = random_values(fs, seed)
    np.testing.assert_allclose(dfa.arc_logweights(vals),
                               dfa.arc_logweights(vals, compiled=False), rtol=1e-13,
                               atol=1e-13)
    counts = np.random.default_rng(seed).random((dfa.num_states, dfa.num_labels + 1))
    np.testing.assert_allclose(dfa.accumulate(counts), dfa.accumulate(counts, compiled=False),
                               rtol=1e-13)
    sub = FeatureSet.from_codes(fs.codes[::2].copy(), fs.num_labels)  # another set's view
    if (dfa.placement(sub)[0] >= -1).all():
        assert dfa.placement(sub)[0] is dfa.placement(sub)[0]  # remembered
        np.testing.assert_allclose(dfa.accumulate(counts, sub),
                                   dfa.accumulate(counts, sub, compiled=False), rtol=1e-13)


def test_an_upward_pass_in_the_wrong_order_is_caught(monkeypatch):
    """Negative control: passing sums up the failure tree shallowest first loses the
    counts of contexts two levels deep (abc → bc → c)."""
    import strgm.features.dfa as dfa_mod

    fs = FeatureSet([(1, 2, 3), (2, 3), (3,)], 3)
    dfa = fs.dfa
    counts = np.random.default_rng(0).random((dfa.num_states, 4))
    want = dfa.accumulate(counts, compiled=False)
    np.testing.assert_allclose(dfa.accumulate(counts), want, rtol=1e-13)

    def forward(s, fail):
        for h in range(1, s.shape[0]):
            s[fail[h]] += s[h]

    monkeypatch.setattr(dfa_mod, "_up", forward)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(dfa.accumulate(counts), want, rtol=1e-13)


def _long_codes(n, data):
    """Object codes of features up to 2L + 3 symbols (L = max_int_length), repeats
    included, in random order: the split-key route and the digit-by-digit fallback."""
    top = 2 * codes.max_int_length(n) + 3
    feats = data.draw(st.lists(st.lists(st.integers(1, n + 2), min_size=0, max_size=top)
                               .map(tuple), min_size=1, max_size=40))
    feats += feats[: len(feats) // 2]
    raw = codes.encode(feats, n, dtype=object)
    return raw[np.random.default_rng(len(feats)).permutation(len(raw))]


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 40), st.data())
def test_long_object_codes_sort_by_split_keys_as_the_reference(n, data):
    raw = _long_codes(n, data)
    got, got_len = codes.canonical_unique(raw, n)
    want, want_len = codes.canonical_unique_reference(raw, n)
    assert got.dtype == object
    assert list(got) == list(want)
    np.testing.assert_array_equal(got_len, want_len)
    lens = codes.lengths(raw, n)
    np.testing.assert_array_equal(codes.canonical_order(raw, lens, n),
                                  codes.canonical_order_reference(raw, lens, n))


def test_split_keys_in_the_wrong_order_are_caught(monkeypatch):
    """Negative control: comparing the last symbols before the first L is not the
    canonical order."""
    n = 3
    L = codes.max_int_length(n)
    feats = [(1,) * L + (3,), (2,) * L + (1,)]
    raw = codes.encode(feats, n, dtype=object)
    want, _ = codes.canonical_unique_reference(raw, n)
    assert list(codes.canonical_unique(raw, n)[0]) == list(want)
    real = codes._split_keys
    monkeypatch.setattr(codes, "_split_keys",
                        lambda c, k: (lambda t: (t[0], t[2], t[1]))(real(c, k)))
    assert list(codes.canonical_unique(raw, n)[0]) != list(want)
