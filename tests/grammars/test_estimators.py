"""EM / MAP-EM / VB / CVB: monotonicity, fixed points, exact one-step updates."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import digamma

from tests.grammars.pcfg_oracles import R, brute_force
from strgm.grammars.cfg import Grammar
from strgm.grammars.estimators import cvb, em, fit, map_em, vb

G = Grammar([R("S", "A", "B"), R("S", "B", "A"), R("S", "S", "S"), R("S", "A"),
             R("A", "a"), R("A", "b"), R("A", "A", "A"),
             R("B", "a"), R("B", "b"), R("B", "a", "b")])
CORPUS = [tuple(x) for x in ["ab", "ba", "aab", "abb", "a", "bab", "abab"]]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_em_never_decreases_likelihood(seed):
    rng = np.random.default_rng(seed)
    theta0 = rng.gamma(1.0, size=len(G.rules))
    res = em(G, CORPUS, iters=8, theta0=G.with_weights(theta0).probabilities())
    nlp = [r["neg_log_prob"] for r in res.trace]
    assert all(b <= a + 1e-9 for a, b in zip(nlp, nlp[1:])), nlp
    assert nlp[-1] < nlp[0]


def _brute_counts(g, corpus, theta):
    return sum(brute_force(g, s, theta)[1] for s in corpus)


def test_one_step_updates_match_formulas():
    theta = G.probabilities()
    E = _brute_counts(G, CORPUS, theta)
    lhs, nl = G.lhs_index, G.n_lhs
    norm = lambda v: v / np.bincount(lhs, weights=v, minlength=nl)[lhs]
    np.testing.assert_allclose(em(G, CORPUS, iters=1).theta, norm(E), rtol=1e-8)
    alpha = 1.5
    np.testing.assert_allclose(map_em(G, CORPUS, alpha=alpha, iters=1).theta,
                               norm(np.maximum(0, E + alpha - 1)), rtol=1e-8)
    # VB: check the E-step weights of iteration 2 through the reported -log P
    a = E + 0.3
    vbw = np.exp(digamma(a) - digamma(np.bincount(lhs, weights=a, minlength=nl)[lhs]))
    r = vb(G, CORPUS, alpha=0.3, iters=1)
    lz = sum(brute_force(G, s, vbw)[0] for s in CORPUS)
    assert r.trace[1]["neg_log_prob"] == pytest.approx(-lz, rel=1e-9)
    np.testing.assert_allclose(r.theta, norm(_brute_counts(G, CORPUS, vbw) + 0.3), rtol=1e-8)


def test_map_em_reports_rules_driven_to_zero():
    g = Grammar([R("S", "A"), R("S", "C1"), R("S", "C2"), R("A", "a"), R("C1", "c"),
                 R("C2", "c")])
    corpus = [("a",)] * 5 + [("c",)]
    res = map_em(g, corpus, alpha=0.4, iters=5)
    # "c" has two parses with expected count 0.5 each; 0.5 + alpha - 1 < 0 zeroes both
    assert res.unparsable == [5]
    assert any("unparsable" in n for n in res.notes)
    assert res.trace[-1]["unparsable"] == 1


def test_cvb_single_sentence_matches_cvb_formula():
    """With two sentences, the first CVB update for sentence i uses θ from the other."""
    g = Grammar([R("S", "A", "A"), R("S", "B"), R("A", "a"), R("A", "b"), R("B", "a", "a"),
                 R("B", "a", "b")])
    corpus = [("a", "a"), ("a", "b")]
    alpha = 0.2
    res = cvb(g, corpus, alpha=alpha, iters=1, seed=0)
    # replay by hand in the same order
    rng = np.random.default_rng(0)
    order = rng.permutation([0, 1])
    th0 = g.probabilities()
    per = [brute_force(g, s, th0)[1] for s in corpus]
    C = per[0] + per[1]
    lhs, nl = g.lhs_index, g.n_lhs
    for i in order:
        rest = C - per[i]
        a = rest + alpha
        th = a / np.bincount(lhs, weights=a, minlength=nl)[lhs]
        per[i] = brute_force(g, corpus[i], th)[1]
        C = rest + per[i]
    np.testing.assert_allclose(res.counts, C, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(res.theta, (C + alpha) / np.bincount(lhs, weights=C + alpha,
                                                                     minlength=nl)[lhs])


def test_cvb_and_vb_improve_on_initial_grammar_and_heldout():
    held = [tuple("ab"), tuple("bab")]
    for m in ("vb", "cvb"):
        r = fit(m, G, CORPUS, alpha=0.1, iters=5, heldout=held)
        assert r.trace[-1]["neg_log_prob"] < r.trace[0]["neg_log_prob"]
        assert np.isfinite(r.trace[-1]["heldout_perplexity"])
        np.testing.assert_allclose(np.bincount(G.lhs_index, weights=r.theta), 1.0)


# ---------------------------------------------------------------- one driver: checkpoint / resume
from strgm.errors import InputError  # noqa: E402
from strgm.grammars.estimators import KERNELS, EstimatorState, run  # noqa: E402
from strgm.safe_io import strict_json  # noqa: E402

HELD = [tuple("ab"), tuple("bb")]


def _kernel(method):
    kw = {} if method == "em" else {"alpha": 0.5}
    return KERNELS[method](G, CORPUS, heldout=HELD, **kw)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb"])
def test_resume_at_every_iteration_boundary_is_byte_identical(tmp_path, method, suffix):
    """Deterministic kernels resume exactly: stopping after t updates, saving, loading and
    finishing gives the uninterrupted run's state byte for byte, for every t."""
    k = _kernel(method)
    s0 = k.init(**({"seed": 4} if method == "cvb" else {}))
    n = 5
    straight = run(k, s0, n)
    want = strict_json(straight.to_dict())
    for t in range(n + 1):
        ck = tmp_path / f"c{t}{suffix}"
        half = run(k, s0, t, checkpoint=ck)
        assert half.iteration == t and ck.exists()
        resumed = run(k, EstimatorState.load(ck, kernel=k), n - t)
        assert strict_json(resumed.to_dict()) == want
    assert len(straight.trace) == n + 1


@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb"])
def test_driver_agrees_with_fit(method):
    """fit() is init + run: same θ, trace (minus wall-clock seconds) and notes."""
    kw = {} if method == "em" else {"alpha": 0.5}
    r = fit(method, G, CORPUS, iters=4, heldout=HELD, **kw)
    k = _kernel(method)
    st_ = run(k, k.init(), 4)
    got = k.result(st_)
    np.testing.assert_array_equal(got.theta, r.theta)
    assert got.trace == [{a: b for a, b in row.items() if a != "seconds"} for row in r.trace]
    assert got.notes == r.notes and got.unparsable == r.unparsable
    assert all("seconds" in row for row in r.trace)


def test_em_tolerance_stops_the_driver():
    k = KERNELS["em"](G, CORPUS, tol=1e-3)
    s = run(k, k.init(), 200)
    assert s.converged and s.iteration < 200
    assert run(k, s, 10).iteration == s.iteration  # a converged state stays put


def test_estimator_checkpoint_from_other_run_is_refused(tmp_path):
    k = _kernel("em")
    run(k, k.init(), 2, checkpoint=tmp_path / "c.json")
    with pytest.raises(InputError, match="c.json: estimator checkpoint does not fit"):
        EstimatorState.load(tmp_path / "c.json", kernel=_kernel("vb"))
    other = KERNELS["em"](G, CORPUS[:-1], heldout=HELD)
    with pytest.raises(InputError, match="different grammar, corpus"):
        EstimatorState.load(tmp_path / "c.json", kernel=other)
    (tmp_path / "d.json").write_text('{"kind": "em"}')
    with pytest.raises(InputError, match="d.json: damaged estimator checkpoint"):
        EstimatorState.load(tmp_path / "d.json")
