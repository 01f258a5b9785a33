"""Oracles for the integer-code trie arithmetic (strgm.features.codes) and the structures
built on it (ENCODE's DFA, the prefix trie of the group lasso, PEP's active set).

Each vectorised structure is compared, entry by entry and in the same order, with a
direct tuple-by-tuple construction from its definition, on random feature sets that
include BOS/EOS features and features too long for int64 codes (object-array path).
"""

import numpy as np
from hypothesis import given, settings, strategies as st

from strgm.features import FeatureSet, Theta
from strgm.features import codes
from strgm.features.theta import _INTERNED
from strgm.features.symbols import bos, canonical_sorted, eos, feature_ids
from strgm.projection.prox import _tree, active_set

# --- direct constructions from the definitions (tuples, dictionaries) -----------------


def reference_dfa(fs: FeatureSet):
    """contexts, fail, goto, start, feat_node, feat_col by the Aho–Corasick definition:
    goto(h, a) = the longest suffix of h·a in C; fail(h) = the longest proper suffix."""
    n = fs.num_labels
    b, e = bos(n), eos(n)
    ctx = {()}
    for w in fs.features:
        ctx.update(w[:k] for k in range(1, len(w)))
    contexts = canonical_sorted(ctx)
    index = {c: i for i, c in enumerate(contexts)}

    def longest_suffix_in(s):
        for i in range(len(s) + 1):
            if s[i:] in index:
                return index[s[i:]]

    goto = np.array([[longest_suffix_in(h + (a,)) for a in range(1, n + 1)]
                     for h in contexts], dtype=np.int64).reshape(len(contexts), n)
    fail = np.array([0 if len(h) <= 1 else longest_suffix_in(h[1:]) for h in contexts])
    start = index.get((b,), 0)
    fn = [-1 if w == (b,) else index[w[:-1]] for w in fs.features]
    fc = [n if w[-1] in (b, e) else w[-1] - 1 for w in fs.features]
    return contexts, fail, goto, start, np.array(fn), np.array(fc)


def reference_active_set(x: Theta, max_len=None) -> list:
    """Nonzero features, unigrams, (EOS,) and the extensions w·a of each root w (nonzero,
    not ending in EOS, not (BOS,); or (BOS,) itself) whose suffix w[1:]·a is nonzero
    (or is (EOS,)); (BOS,) excluded."""
    n = x.num_labels
    b, e = bos(n), eos(n)
    nz = {w for w, v in zip(x.features.features, x.values) if v != 0.0}
    out = set(nz) | {(a,) for a in range(1, n + 1)} | {(e,)}
    roots = {w for w in nz if w[-1] != e and w != (b,)} | {(b,)}
    for w in roots:
        if max_len is not None and len(w) >= max_len:
            continue
        for a in list(range(1, n + 1)) + [e]:
            if w[1:] + (a,) in nz or w[1:] + (a,) == (e,):
                out.add(w + (a,))
    out.discard((b,))
    return canonical_sorted(out)


# --- random feature sets -----------------------------------------------------------


@st.composite
def feature_sets(draw, max_len=5):
    n = draw(st.integers(1, 4))
    b, e = bos(n), eos(n)
    sym = st.integers(1, n)
    body = st.lists(sym, min_size=0, max_size=max_len)
    raw = draw(st.lists(st.tuples(st.booleans(), body, st.booleans()), min_size=1,
                        max_size=25))
    feats = set()
    for start_bos, mid, end_eos in raw:
        w = ((b,) if start_bos else ()) + tuple(mid) + ((e,) if end_eos else ())
        if w:
            feats.add(w)
    return FeatureSet(feats, n)


def long_variant(fs: FeatureSet, extra: int) -> FeatureSet:
    """``fs`` plus one feature longer than the int64 codes allow (object path)."""
    n = fs.num_labels
    k = codes.max_int_length(n) + extra
    return FeatureSet(list(fs.features) + [tuple([1] * k)], n)


# --- tests -------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(feature_sets())
def test_codes_round_trip_and_trie_arithmetic(fs):
    n = fs.num_labels
    for f in (fs, long_variant(fs, 2)):
        c, ln = f.codes, f.lengths
        assert codes.decode(c, ln, n) == list(f.features)
        np.testing.assert_array_equal(codes.lengths(c, n), ln)
        assert codes.decode(codes.parents(c, ln, n), ln - 1, n) == \
            [w[:-1] for w in f.features]
        assert list(codes.last_labels(c, ln, n)) == [w[-1] for w in f.features]
        perm = np.random.default_rng(0).permutation(len(c))
        order = codes.canonical_order(c[perm], ln[perm], n)
        assert codes.decode(c[perm][order], ln[perm][order], n) == list(f.features)


def test_codes_equal_the_feature_ids_when_they_fit():
    n = 5
    fs = FeatureSet([(1,), (6, 2, 7), (3, 3, 3, 3), tuple([2] * codes.max_int_length(n))], n)
    np.testing.assert_array_equal(fs.codes, feature_ids(fs.features, n))
    assert fs.codes.dtype == np.int64
    assert long_variant(fs, 1).codes.dtype == object


@settings(max_examples=150, deadline=None)
@given(feature_sets())
def test_dfa_matches_the_aho_corasick_definition(fs):
    for f in (fs, long_variant(fs, 1)):
        ctx, fail, goto, start, fn, fc = reference_dfa(f)
        dfa = FeatureSet(f.features, f.num_labels).dfa  # a fresh set: no shared cache
        assert dfa.contexts == tuple(ctx)
        assert dfa.num_states == len(ctx)
        assert dfa.num_arcs == len(ctx) * f.num_labels
        np.testing.assert_array_equal(dfa.goto, goto)
        np.testing.assert_array_equal(dfa.fail, fail)
        assert dfa.start == start
        np.testing.assert_array_equal(dfa.feat_node, fn)
        np.testing.assert_array_equal(dfa.feat_col, fc)
        assert dfa.context_index == {c: i for i, c in enumerate(ctx)}


@settings(max_examples=150, deadline=None)
@given(feature_sets())
def test_prefix_trie_matches_its_definition(fs):
    for f in (fs, long_variant(fs, 1)):
        pre = canonical_sorted({w[:k] for w in f.features for k in range(1, len(w) + 1)})
        assert f.prefixes == tuple(pre)
        tree = _tree(f)
        nodes = [()] + pre
        index = {u: i for i, u in enumerate(nodes)}
        assert list(tree.parent) == [-1] + [index[u[:-1]] for u in pre]
        assert list(tree.feat_node) == [index[w] for w in f.features]
        depth = [len(u) for u in nodes]
        for d, lev in enumerate(tree.levels):
            assert list(lev) == [i for i, k in enumerate(depth) if k == d]


@settings(max_examples=200, deadline=None)
@given(feature_sets(), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 2, 3, 4]))
def test_active_set_matches_its_definition(fs, seed, max_len):
    rng = np.random.default_rng(seed)
    for f in (fs, long_variant(fs, 0)):  # extra 0: extensions overflow int64
        vals = rng.normal(size=len(f)) * (rng.random(len(f)) < 0.7)
        x = Theta(f, vals)
        got = active_set(x, max_len)
        assert list(got.features) == reference_active_set(x, max_len)
        np.testing.assert_array_equal(got.ids, feature_ids(got.features, f.num_labels))


@settings(max_examples=100, deadline=None)
@given(feature_sets())
def test_reachable_states_are_the_breadth_first_closure_of_goto(fs):
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    dfa = fs.dfa
    nc, n = dfa.num_states, dfa.num_labels
    graph = csr_matrix((np.ones(nc * n), (np.repeat(np.arange(nc), n),
                                          dfa.goto.reshape(-1))), shape=(nc, nc))
    want = np.sort(breadth_first_order(graph, dfa.start, return_predecessors=False))
    np.testing.assert_array_equal(dfa.reachable, want)


@settings(max_examples=100, deadline=None)
@given(feature_sets(), feature_sets(), st.integers(0, 2**32 - 1))
def test_sets_built_from_codes_behave_like_sets_built_from_tuples(fs1, fs2, seed):
    """union, restriction, equality and hashing on code-built sets (tuples decoded
    lazily) agree with the tuple definitions, including the object-array path."""
    n = fs1.num_labels
    fs2 = FeatureSet([tuple(min(a, n) if a <= fs2.num_labels else
                            (bos(n) if a == bos(fs2.num_labels) else eos(n)) for a in w)
                      for w in fs2.features], n)  # the same shapes over fs1's alphabet
    for a, b in ((fs1, fs2), (long_variant(fs1, 1), fs2)):
        u = a.union(b)
        assert list(u.features) == canonical_sorted(set(a.features) | set(b.features))
        _INTERNED.clear()  # a fresh object
        lazy = FeatureSet.from_codes(u.codes.copy(), n)
        assert "features" not in lazy.__dict__ and len(lazy) == len(u)
        assert FeatureSet.from_codes(u.codes.copy(), n) is lazy  # interned
        assert lazy == u and hash(lazy) == hash(u)
        assert list(lazy.features) == list(u.features)
        keep = np.random.default_rng(seed).random(len(u)) < 0.5
        r = Theta(u, np.where(keep, 1.0, 0.0)).restrict()
        assert list(r.features.features) == [w for w, k in zip(u.features, keep) if k]
        assert r.features == FeatureSet([w for w, k in zip(u.features, keep) if k], n)
        if not keep.all():
            assert r.features != u
