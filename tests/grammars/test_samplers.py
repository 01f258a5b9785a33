"""Samplers: empirical posteriors over trees vs the exact collapsed posterior (enumerated),
a Geweke test for the Gibbs sampler, negative controls, checkpoint/resume."""

from collections import Counter

import numpy as np
import pytest

from tests.grammars.pcfg_oracles import R, exact_collapsed_posterior
from strgm.grammars.cfg import Grammar, compile_grammar
from strgm.safe_io import strict_json
from strgm.grammars.samplers import (CollapsedMH, GibbsPCFG, SamplerState, collapsed_log_prob,
                                     generate, run, sample_dirichlet)

# "a a" has 4 parses (P/Q for each A); within-sentence priming makes PP and QQ dominate
G = Grammar([R("S", "A", "A"), R("S", "A"), R("A", "P"), R("A", "Q"), R("P", "a"),
             R("Q", "a")])
CORPUS = [("a", "a"), ("a",), ("a", "a")]
ALPHA = 0.1
SWEEPS = 4000
SWAP = {2: 3, 3: 2, 4: 5, 5: 4}  # P <-> Q leaves the posterior invariant


def _sym(d):
    """Fold each joint state with its P<->Q mirror image, so that the (slow) switching
    between the all-P and all-Q modes does not dominate the sampling error."""
    out = {}
    for k, v in d.items():
        k2 = tuple(tuple(SWAP.get(r, r) for r in t) for t in k)
        c = min(k, k2)
        out[c] = out.get(c, 0) + v
    return out


def _exact():
    post = exact_collapsed_posterior(G, CORPUS, G.pseudocounts(ALPHA))
    from strgm.grammars.cfg import tree_rules
    return {tuple(tuple(tree_rules(G, t)) for t in k): v for k, v in post.items()}


def _empirical(kernel, sweeps, burn=100, seed=1):
    st = kernel.init(seed)
    res = run(kernel, st, sweeps, burn_in=burn, collect=lambda s: tuple(s.trees))
    c = Counter(res.samples)
    n = len(res.samples)
    return {k: v / n for k, v in c.items()}, res


def _tv(p, q):
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0) - q.get(k, 0)) for k in keys)


def test_exact_posterior_is_far_from_proposal():
    exact = _exact()
    assert len(exact) == 32
    assert max(exact.values()) > 4 * min(exact.values())


@pytest.mark.slow  # 4000 corrected MH sweeps (68.7 s in a loaded full run). The default
# suite keeps MH against enumeration on this grammar and corpus
# (test_mh_acceptance_stats.py: per-sweep move statistics vs their exact stationary
# expectations, with controls) and this oracle's control below.
def test_mh_matches_exact_collapsed_posterior():
    exact = _exact()
    emp, res = _empirical(CollapsedMH(G, CORPUS, alpha=ALPHA), SWEEPS)
    assert set(emp) <= set(exact)
    assert _tv(_sym(emp), _sym(exact)) < 0.03
    acc = res.state.accepted / res.state.proposed
    assert 0.3 < acc < 0.99  # the correction does reject


def test_mh_without_correction_is_detected():
    exact = _exact()
    emp, _ = _empirical(CollapsedMH(G, CORPUS, alpha=ALPHA, accept_all=True), SWEEPS)
    assert _tv(_sym(emp), _sym(exact)) > 0.035


def test_gibbs_matches_exact_collapsed_posterior():
    exact = _exact()
    emp, _ = _empirical(GibbsPCFG(G, CORPUS, alpha=ALPHA), SWEEPS)
    assert _tv(_sym(emp), _sym(exact)) < 0.03


# ---------------------------------------------------------------- Geweke (2004) test
GG = Grammar([R("S", "A", "B"), R("S", "B", "A"), R("S", "X"), R("A", "a"), R("A", "b"),
              R("B", "a"), R("B", "b"), R("X", "a", "b"), R("X", "b", "a"), R("X", "a", "a")])


def _stats(theta, rule_lists):
    f = np.zeros(len(GG.rules))
    for rl in rule_lists:
        for r in rl:
            f[r] += 1
    return np.array([theta[0], theta[2], theta[3], theta[0] ** 2, f[0], f[2], f[3] + f[5]])


def _geweke(kernel_alpha, n=1500, m=2, seed=0):
    rng = np.random.default_rng(seed)
    al = GG.pseudocounts(1.0)
    lhs, nl = GG.lhs_index, GG.n_lhs
    cg = compile_grammar(GG)
    # marginal-conditional simulator
    mc = []
    for _ in range(n):
        th = sample_dirichlet(rng, al, lhs, nl)
        gen = [generate(GG, th, rng) for _ in range(m)]
        mc.append(_stats(th, [r for _, r in gen]))
    # successive-conditional simulator: posterior kernel given w, then (t, w) ~ p(. | θ)
    th = sample_dirichlet(rng, al, lhs, nl)
    gen = [generate(GG, th, rng) for _ in range(m)]
    sc = []
    for it in range(n):
        from strgm.grammars.cfg import tree_yield
        corpus = [tree_yield(t) for t, _ in gen]
        k = GibbsPCFG(GG, corpus, alpha=kernel_alpha, compiled=cg)
        st = SamplerState("gibbs", 0, [tuple(r) for _, r in gen],
                          np.bincount(np.concatenate([r for _, r in gen]),
                                      minlength=len(GG.rules)).astype(float),
                          GG.pseudocounts(kernel_alpha), th, rng.bit_generator.state,
                          fingerprint=k.fingerprint)
        st = k.sample(st)
        rng.bit_generator.state = st.rng_state
        th = st.theta
        sc.append(_stats(th, st.trees))
        gen = [generate(GG, th, rng) for _ in range(m)]
    mc, sc = np.array(mc), np.array(sc)
    # batch-means standard error for the chain
    nb = 30
    bm = sc[: n // nb * nb].reshape(nb, -1, sc.shape[1]).mean(axis=1)
    se = np.sqrt(mc.var(axis=0) / n + bm.var(axis=0, ddof=1) / nb)
    return (sc.mean(axis=0) - mc.mean(axis=0)) / se


def test_geweke_gibbs():
    z = _geweke(1.0)
    assert np.all(np.abs(z) < 4.0), z


def test_geweke_detects_wrong_prior():
    z = _geweke(3.0)
    assert np.max(np.abs(z)) > 6.0, z


# ---------------------------------------------------------------- state handling
@pytest.mark.parametrize("suffix", [".json", ".npz"])
@pytest.mark.parametrize("cls", [CollapsedMH, GibbsPCFG])
def test_checkpoint_resume_is_exact(tmp_path, suffix, cls):
    k = cls(G, CORPUS, alpha=ALPHA)
    s0 = k.init(3)
    straight = run(k, s0, 20, burn_in=5)
    half = run(k, s0, 10, burn_in=5, checkpoint=tmp_path / ("c" + suffix))
    loaded = SamplerState.load(tmp_path / ("c" + suffix))
    resumed = run(k, loaded, 10, burn_in=5)
    same = strict_json(resumed.state.to_dict()) == strict_json(straight.state.to_dict())
    assert same  # trees, counts, θ, α, RNG state, acceptance counters, sums, trace
    assert resumed.trace == straight.trace and len(resumed.trace) == 20
    np.testing.assert_array_equal(resumed.theta_mean, straight.theta_mean)
    assert half.state.iteration == 10 and resumed.state.iteration == 20


def test_sample_does_not_mutate_and_is_seeded():
    k = CollapsedMH(G, CORPUS, alpha=ALPHA)
    s0 = k.init(0)
    snap = s0.to_dict()
    a = k.sample(s0)
    assert s0.to_dict() == snap
    assert k.sample(s0).to_dict() == a.to_dict()


def test_checkpoint_from_other_corpus_is_rejected(tmp_path):
    from strgm.errors import InputError
    k = CollapsedMH(G, CORPUS, alpha=ALPHA)
    s = k.init(0)
    with pytest.raises(InputError, match="different"):
        CollapsedMH(G, CORPUS[:2], alpha=ALPHA).sample(s)


def test_alpha_resampling_moves_and_counts_stay_consistent():
    k = CollapsedMH(G, CORPUS * 3, alpha=1.0, resample_alpha=True)
    res = run(k, k.init(0), 30)
    al = [r["alpha"] for r in res.trace]
    assert len(set(al)) > 5
    f = np.zeros(len(G.rules))
    for t in res.state.trees:
        f += np.bincount(t, minlength=len(G.rules))
    np.testing.assert_allclose(res.state.counts, f)
    lp = collapsed_log_prob(f, res.state.alpha, G.lhs_index, G.n_lhs)
    assert res.trace[-1]["log_p_trees"] == pytest.approx(lp)


# ------------------------------------------------- per-sentence streams of tree draws
def test_gibbs_trees_do_not_depend_on_how_sentences_are_batched():
    """Each sentence draws from its own stream, so batches of 1 and of 64 give the same
    chain (what lets the draws run on sentence shards). Negative control: one stream
    shared by the sentences of a chart gives other trees once the batches change."""
    from strgm.grammars.chart import inside

    corpus = [("a", "a"), ("a",), ("a", "a"), ("a",), ("a", "a"), ("a", "a")]
    runs = []
    for bs in (1, 64):
        k = GibbsPCFG(G, corpus, alpha=ALPHA, batch_size=bs)
        s = k.init(3)
        for _ in range(4):
            s = k.sample(s)
        runs.append(s)
    assert runs[0].trees == runs[1].trees
    np.testing.assert_array_equal(runs[0].theta, runs[1].theta)
    cg, th = compile_grammar(G), G.probabilities()
    pairs = [s for s in corpus if len(s) == 2]
    one = [d[0][1] for s in pairs for d in inside(cg, [s], th).sample(np.random.default_rng(0))]
    rng = np.random.default_rng(0)
    together = [d[0][1] for d in inside(cg, pairs, th).sample(rng)]
    assert one != together
