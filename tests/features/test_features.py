"""Oracles for n-gram features: ENCODE, exact log Z_θ / E_q[f], E_p[f] under any WFSA."""

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
from tests.features.feature_oracles import all_strings, feature_matrix
from strgm.errors import DivergenceError, InputError
from strgm.features import (FeatureSet, Theta, encode, fst_from_arrays, ngram_features,
                            p_moments, q_moments)
from strgm.features.moments import CompositionCache
from fst_factors.wfsa import (arc_table, compose, intersect, log_partition, score_strings,
                        weighted_strings)

N = 2
# a mixed-order set: bigrams, a trigram, a BOS-anchored trigram and a long feature
FEATS = ngram_features(2, N) + [(1, 2, 1), (3, 1, 2), (2, 2, 4), (1, 1, 2, 1)]


def random_theta(seed=0, shift=-1.5):
    fs = FeatureSet(FEATS, N)
    rng = np.random.default_rng(seed)
    return Theta(fs, rng.normal(size=len(fs)) * 0.4 + shift)


def test_encode_scores_every_string_by_theta_dot_f():
    th = random_theta()
    strings = all_strings(N, 7)
    got = score_strings(encode(th), strings)
    want = feature_matrix(th.features.features, strings, N) @ th.values
    np.testing.assert_allclose(got, want, atol=1e-10)


def test_encode_is_deterministic_and_complete():
    th = random_theta()
    f = encode(th)
    assert f.properties(pynini.I_DETERMINISTIC, True) == pynini.I_DETERMINISTIC
    t = arc_table(f)
    assert np.all(np.bincount(t.src, minlength=t.num_states) == N)


def test_q_moments_match_brute_force():
    th = random_theta(1, shift=-2.5)
    m = q_moments(th)
    strings = all_strings(N, 12)  # the tail beyond length 12 is < 1e-10 here
    F = feature_matrix(th.features.features, strings, N)
    lw = F @ th.values
    assert m.log_z == pytest.approx(np.logaddexp.reduce(lw), abs=1e-8)
    p = np.exp(lw - m.log_z)
    np.testing.assert_allclose(m.expectations, p @ F, atol=1e-7)
    assert m.log_z == pytest.approx(log_partition(encode(th)), abs=1e-7)


def test_divergent_theta_raises():
    fs = FeatureSet([(1,), (2,)], N)
    with pytest.raises(DivergenceError):
        q_moments(Theta(fs, [0.0, -0.1]))  # e^0 + e^-0.1 > 1: Z = inf
    q_moments(Theta(fs, [-1.0, -1.0]))  # fine


def large_theta(shift, seed=3, n=13):
    """A complete trigram θ over n labels: its DFA has more than moments._DENSE_MAX
    states, so q_moments takes the BiCGSTAB route when the compiled kernel's
    q_solves.COMPILED_MAX is set below that."""
    from strgm.projection.closed_form import order_feature_set

    fs = order_feature_set(3, n)
    rng = np.random.default_rng(seed)
    vals = rng.normal(size=len(fs)) * 0.3
    vals[fs.lengths == 1] += shift
    return Theta(fs, vals)


def test_krylov_q_moments_equal_the_dense_solve(monkeypatch):
    import strgm.features.moments as M
    import strgm.features.q_solves as Q

    th = large_theta(-np.log(13 * 2.0))
    assert len(th.features.dfa.reachable) > M._DENSE_MAX
    monkeypatch.setattr(Q, "COMPILED_MAX", 0)  # the numpy/scipy route, not the kernel
    with monkeypatch.context() as m:  # neither q_moments nor BiCGSTAB's fallback
        for mod in (M, Q):
            m.setattr(mod, "_solve_sparse", lambda *a: pytest.fail("LU used"))
        got = q_moments(th)
    monkeypatch.setattr(M, "_DENSE_MAX", 10 ** 6)  # the brute-force-tested dense path
    want = q_moments(th)
    assert got.log_z == pytest.approx(want.log_z, abs=1e-11)
    np.testing.assert_allclose(got.expectations, want.expectations, rtol=1e-9, atol=1e-12)
    assert got.log_z == pytest.approx(log_partition(encode(th)), abs=1e-7)


def test_krylov_falls_back_to_the_lu_and_is_never_fooled(monkeypatch):
    import scipy.sparse.linalg as spla
    import strgm.features.moments as M
    import strgm.features.q_solves as Q

    th = large_theta(-np.log(13 * 2.0))
    monkeypatch.setattr(M, "_DENSE_MAX", 10 ** 6)
    monkeypatch.setattr(Q, "COMPILED_MAX", 0)  # the numpy/scipy route, not the kernel
    want = q_moments(th)
    monkeypatch.undo()
    monkeypatch.setattr(Q, "COMPILED_MAX", 0)
    calls = []

    def first_only(mat, b, **kw):  # certify with an exact x, then "fail" every solve
        calls.append(1)
        return (spla.spsolve(mat.tocsc(), b), 0) if len(calls) == 1 else (b * 0, 1)
    monkeypatch.setattr(Q.spla, "bicgstab", first_only)
    got = q_moments(th)
    assert len(calls) == 3  # β and α each tried once, then the LU answered
    np.testing.assert_allclose(got.expectations, want.expectations, rtol=1e-9, atol=1e-12)
    # a divergent θ: an exact solve of (I − P) x = 1 exists but cannot be positive with
    # P x < x, so the certificate rejects it and the LU reports Z = ∞
    monkeypatch.setattr(Q.spla, "bicgstab",
                        lambda mat, b, **kw: (spla.spsolve(mat.tocsc(), b), 0))
    with pytest.raises(DivergenceError):
        q_moments(large_theta(-np.log(13 * 0.7)))
    monkeypatch.undo()
    with pytest.raises(DivergenceError):
        q_moments(large_theta(-np.log(13 * 0.7)))
    monkeypatch.setattr(Q, "COMPILED_MAX", 0)
    with pytest.raises(DivergenceError):
        q_moments(large_theta(-np.log(13 * 0.7)))


def test_p_moments_acyclic_wfsa_match_brute_force():
    items = {(1, 2): 0.3, (2, 2, 1): 1.0, (): 2.0, (1, 1, 2, 1): 0.7}
    p = weighted_strings(items)
    fs = FeatureSet(FEATS, N)
    m = p_moments(p, fs)
    strings = list(items)
    w = np.exp(-np.array(list(items.values())))
    want = (w / w.sum()) @ feature_matrix(fs.features, strings, N)
    np.testing.assert_allclose(m.expectations, want, atol=1e-9)
    assert m.log_z == pytest.approx(np.log(w.sum()))


def test_p_moments_cyclic_wfsa_with_context_theta():
    # p = prior ∘ (edit transducer to an observed string) : cyclic, ambiguous
    prior = ff.geometric_unigram_prior(N, mean_length=0.4)
    msg = pynini.project(compose(ff.edit_transducer(N, ff.EditParams(0.7)),
                                 weighted_strings({(1, 2): 0.0})), "input")
    p = intersect(prior, pynini.rmepsilon(msg))
    th = random_theta(2, shift=0.0) * 0.3
    fs = th.features
    m = p_moments(p, fs, th)
    strings = all_strings(N, 11)
    F = feature_matrix(fs.features, strings, N)
    lw = score_strings(p, strings) + F @ th.values
    assert m.log_z == pytest.approx(np.logaddexp.reduce(lw), abs=1e-6)
    pr = np.exp(lw - np.logaddexp.reduce(lw))
    np.testing.assert_allclose(m.expectations, pr @ F, atol=1e-6)


def cyclic_message() -> pynini.Fst:
    """A cyclic WFSA: a prior ⊙ (edit transducer ∘ one string), input side."""
    prior = ff.geometric_unigram_prior(N, mean_length=0.4)
    msg = pynini.project(compose(ff.edit_transducer(N, ff.EditParams(0.7)),
                                 weighted_strings({(2, 1): 0.0})), "input")
    return intersect(prior, pynini.rmepsilon(msg))


def brute_force_expectations(p: pynini.Fst, theta: Theta) -> np.ndarray:
    """E[f] under p ⊙ ENCODE(θ) by enumerating strings up to length 11."""
    strings = all_strings(N, 11)
    F = feature_matrix(theta.features.features, strings, N)
    lw = score_strings(p, strings) + F @ theta.values
    return np.exp(lw - np.logaddexp.reduce(lw)) @ F


def test_p_moments_reweights_a_cached_topology_exactly():
    """The same p with two different θ (the cached composition re-weighted) agrees with
    fresh compositions and with brute force."""
    p = cyclic_message()
    for seed in (4, 5, 6):
        th = random_theta(seed, shift=0.0) * 0.3
        fs = th.features
        cached = p_moments(p, fs, th)
        fresh = p_moments(p.copy(), fs, th)
        np.testing.assert_allclose(cached.expectations, fresh.expectations, atol=1e-12)
        np.testing.assert_allclose(cached.expectations, brute_force_expectations(p, th),
                                   atol=1e-6)


def test_one_composition_grown_to_a_cover_serves_changing_feature_sets(monkeypatch):
    """A CompositionCache composes p once per growth of its cover: feature sets whose
    prefixes are contexts of the cover are served without recomposing, and their moments
    (weights and expectations placed on the finer DFA) equal a fresh composition with
    their own DFA and brute force (the composition route: the compiled p̂ that p_moments
    tries first is switched off)."""
    import strgm.features.moments as moments

    monkeypatch.setattr(moments, "FAST_P_HAT", False)
    p = cyclic_message()
    b, e = N + 1, N + 2
    uni = [(1,), (2,), (e,)]
    sets = [FeatureSet(uni + [(1, 2), (2, 1, 2)], N),          # contexts ε, 1, 2, 21
            FeatureSet(uni + [(b, 1), (1, 1, e)], N),          # adds BOS and 11
            FeatureSet(uni + [(2, 1, 2), (b, 2), (1, e)], N),  # served by the cover
            FeatureSet(uni + [(2, 2, 2, 1)], N)]               # grows it again
    cache = CompositionCache()
    rng = np.random.default_rng(7)
    built = []
    for fs in sets:
        base = Theta(fs, rng.normal(size=len(fs)) * 0.3 - 0.2)
        got = p_moments(p, fs, base, compositions=cache)
        built.append(cache.built)
        fresh = p_moments(p.copy(), fs, base)
        np.testing.assert_allclose(got.expectations, fresh.expectations, rtol=1e-10)
        assert got.log_z == pytest.approx(fresh.log_z, abs=1e-10)
        np.testing.assert_allclose(got.expectations, brute_force_expectations(p, base),
                                   atol=1e-6)
    assert built == [1, 2, 2, 3]
    assert CompositionCache().get(p, sets[0], "p").cover.dfa.num_states < \
        cache.get(p, sets[0], "p").cover.dfa.num_states


def test_composition_cache_evicts_least_recently_used_beyond_its_arc_budget():
    fs = FeatureSet(ngram_features(2, N), N)
    msgs = [weighted_strings({(1, 2) * k: 0.0, (2,): 0.5}) for k in (1, 2, 3)]
    sizes = [CompositionCache().get(m, fs, "m").table.num_arcs for m in msgs]
    cache = CompositionCache(max_arcs=sizes[0] + sizes[1] + sizes[2] - 1)
    for m in msgs[:2]:
        cache.get(m, fs, "m")
    cache.get(msgs[0], fs, "m")                   # now msgs[1] is least recently used
    cache.get(msgs[2], fs, "m")                   # over budget: msgs[1] goes
    assert cache.arcs == sizes[0] + sizes[2] and cache.built == 3
    cache.get(msgs[0], fs, "m")
    assert cache.built == 3                       # still cached
    cache.get(msgs[1], fs, "m")
    assert cache.built == 4                       # was evicted: composed again
    assert cache.arcs == sizes[0] + sizes[1]      # ... and pushed msgs[2] out
    cache.discard(msgs[0])
    assert cache.arcs == sizes[1]
    cache.get(msgs[0], fs, "m")
    assert cache.built == 5                       # discarded: composed again


def test_p_moments_of_encode_equal_q_moments():
    th = random_theta(3)
    m1, m2 = q_moments(th), p_moments(encode(th), th.features)
    np.testing.assert_allclose(m1.expectations, m2.expectations, atol=1e-7)


def test_theta_arithmetic_aligns_supports():
    a = Theta.from_dict({(1,): 1.0, (1, 2): 2.0}, N)
    b = Theta.from_dict({(2,): 3.0, (1, 2): -2.0}, N)
    c = a + b
    assert c.to_dict() == {(1,): 1.0, (2,): 3.0}
    assert (c - b).allclose(a)
    assert c.restrict().nnz == len(c.restrict())


def test_align_is_a_gather_and_refuses_to_drop_weight():
    a = Theta.from_dict({(1,): 1.0, (1, 2): 2.0, (2,): 0.0}, N)
    wide = FeatureSet([(1,), (2,), (3,), (1, 2), (2, 1)], N)
    got = a.align(wide)
    assert got.to_dict(nonzero=False) == {(1,): 1.0, (2,): 0.0, (3,): 0.0, (1, 2): 2.0,
                                          (2, 1): 0.0}
    assert a.features.positions_in(wide).tolist() == [0, 1, 3]
    assert wide.positions_in(a.features).tolist() == [0, 1, -1, 2, -1]
    narrow = FeatureSet([(1,), (2,)], N)
    assert a.align(narrow, strict=False).to_dict() == {(1,): 1.0}
    with pytest.raises(InputError, match=r"\(1, 2\) with weight 2.0"):
        a.align(narrow)
    assert a.align(FeatureSet([(1,), (1, 2)], N)).to_dict() == {(1,): 1.0, (1, 2): 2.0}


def test_feature_ids_are_unique_including_long_features():
    from strgm.features.symbols import feature_ids

    rng = np.random.default_rng(1)
    feats = sorted({tuple(int(a) for a in rng.integers(1, N + 3, rng.integers(1, 40)))
                    for _ in range(3000)})
    ids = feature_ids(feats, N)
    assert len(set(ids.tolist())) == len(feats) and (ids < 0).any() and (ids > 0).any()
    again = feature_ids(feats[::-1], N)  # same id for the same feature, in any set
    np.testing.assert_array_equal(again, ids[::-1])


def test_bad_features_are_rejected():
    with pytest.raises(InputError):
        FeatureSet([(1, 3)], N)  # BOS inside
    with pytest.raises(InputError):
        FeatureSet([(4, 1)], N)  # EOS not last
    with pytest.raises(InputError):
        FeatureSet([(9,)], N)


def test_fst_from_arrays_roundtrip():
    th = random_theta(4)
    f = encode(th)
    t = arc_table(f)
    g = fst_from_arrays(t.num_states, t.start, t.src, t.dst, t.ilabel, t.olabel, t.weight,
                        t.final)
    assert pynini.equal(f, g)
