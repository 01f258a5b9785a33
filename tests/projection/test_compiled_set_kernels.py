"""The compiled feature-set operations of PEP's reference steps against their numpy
references: the prefix trie (:func:`strgm.features.codes.trie_arrays` in
:func:`strgm.projection.prox._tree`), the union of two sets
(:func:`strgm.features.codes.merge_canonical` in ``FeatureSet._union``) and the active
set (:func:`strgm.projection.prox._active_codes` in ``_active_set``), on hypothesis
feature sets, the object-code path included. Each has a broken variant that the same
comparison catches."""

import numpy as np
from hypothesis import given, settings, strategies as st

import strgm.features.codes as codes
import strgm.projection.prox as prox
from strgm.features import FeatureSet, Theta
from strgm.projection.prox import (_active_set, _active_set_reference, _tree,
                                   _tree_reference)
from tests.projection.test_compiled_sets import over, random_values
from tests.features.test_feature_codes import feature_sets, long_variant


def same_tree(a, b) -> bool:
    return (np.array_equal(a.parent, b.parent) and np.array_equal(a.feat_node, b.feat_node)
            and len(a.levels) == len(b.levels)
            and all(np.array_equal(x, y) for x, y in zip(a.levels, b.levels)))


@settings(max_examples=150, deadline=None)
@given(feature_sets())
def test_compiled_trie_equals_the_reference(fs):
    assert same_tree(_tree.__wrapped__(fs), _tree_reference(fs))


def test_a_trie_with_the_wrong_parents_is_caught(monkeypatch):
    fs = FeatureSet([(1,), (1, 2), (2,), (2, 1, 1)], 2)
    assert same_tree(_tree.__wrapped__(fs), _tree_reference(fs))
    real = codes.trie_arrays

    def broken(c, b):  # little-endian parents: the node's code divided by B
        parent, depth, feat = real(c, b)
        return np.maximum(parent - (depth > 1), -1), depth, feat

    monkeypatch.setattr(codes, "trie_arrays", broken)
    assert not same_tree(_tree.__wrapped__(fs), _tree_reference(fs))


@settings(max_examples=150, deadline=None)
@given(feature_sets(), feature_sets(), st.integers(0, 2))
def test_compiled_union_equals_the_reference(fs1, fs2, long):
    a, b = fs1, over(fs2, fs1.num_labels)
    if long:
        a = long_variant(a, long)
    u = a._union(b)
    assert u == a._union_reference(b)
    assert [len(w) for w in u.features] == sorted(len(w) for w in u.features)
    if (b.positions_in(a) >= 0).all():
        assert u is a  # a superset is returned as it is


def test_a_union_merged_in_little_endian_order_is_caught(monkeypatch):
    a, b = FeatureSet([(1, 2)], 2), FeatureSet([(2, 1)], 2)
    assert a._union(b).features == ((1, 2), (2, 1))
    monkeypatch.setattr(codes, "_reversed", lambda c, base_: (c, None))
    merged, k = codes.merge_canonical.py_func(a.codes, b.codes, codes.base(2))
    assert FeatureSet.from_codes(merged[:k], 2).features != ((1, 2), (2, 1))


@settings(max_examples=150, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 2, 3]),
       st.integers(0, 2))
def test_compiled_active_set_equals_the_reference(fs, seed, max_len, long):
    if long:
        fs = long_variant(fs, long)
    x = Theta(fs, random_values(fs, seed))
    assert _active_set(x, max_len) == _active_set_reference(x, max_len)


def test_an_active_set_that_ignores_the_length_bound_is_caught(monkeypatch):
    fs = FeatureSet([(1,), (2,), (1, 2), (2, 1)], 2)
    x = Theta(fs, np.ones(len(fs)))
    assert _active_set(x, 2) == _active_set_reference(x, 2)
    real = prox._active_codes
    monkeypatch.setattr(prox, "_active_codes", lambda c, ln, n, ml, pw: real(c, ln, n, -1, pw))
    assert _active_set(x, 2) != _active_set_reference(x, 2)
