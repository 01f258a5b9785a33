"""Oracle tests for the WFSA layer: every function against brute-force enumeration."""

import math

import numpy as np
import pynini
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import fst_factors.wfsa as W
from fst_factors.errors import DivergenceError
from fst_factors.wfsa.core import new_fst, weight
from tests.fst_factors.wfsa_oracles import (arcs_of, dense_string_logweight,
                                            enumerate_paths, enumerate_strings,
                                            random_acceptor, string_distribution)

SEEDS = st.integers(0, 10_000)


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.booleans())
def test_log_partition_and_scores_match_enumeration_acyclic(seed, eps):
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 5, 2, acyclic=True, eps=eps)
    dist = string_distribution(f, 10)
    z = sum(dist.values())
    lz = W.log_partition(f)
    if z == 0:
        assert lz == -np.inf
        return
    assert lz == pytest.approx(math.log(z), abs=1e-9)
    strings = list(dist) + [(9, 9)]
    scores = W.score_strings(f, strings)
    for s, sc in zip(strings, scores):
        assert sc == (pytest.approx(math.log(dist[s]), abs=1e-9) if s in dist else -np.inf)


def dense_log_partition(f) -> float:
    """Independent oracle for cyclic machines: Z = e_start^T (I - A)^-1 ρ, dense numpy."""
    arcs, finals = arcs_of(f)
    n = f.num_states()
    a = np.zeros((n, n))
    for q, lst in arcs.items():
        for _, _, w, d in lst:
            a[q, d] += math.exp(-w)
    rho = np.array([math.exp(-finals[q]) if q in finals else 0.0 for q in range(n)])
    assert max(abs(np.linalg.eigvals(a))) < 1
    return math.log(np.linalg.solve(np.eye(n) - a, rho)[f.start()])


@settings(max_examples=15, deadline=None)
@given(SEEDS)
def test_log_partition_cyclic_matches_dense_solve(seed):
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 3, 2, acyclic=False, density=0.35)
    if f.copy().connect().num_states() == 0:
        return
    assert W.log_partition(f) == pytest.approx(dense_log_partition(f), abs=1e-8)


def epsilon_cyclic_acceptor(rng, n, labels):
    """Random log64 acceptor whose ε-arcs form cycles (deletion loops), normalisable."""
    f = pynini.Fst(arc_type="log64")
    f.add_states(n)
    f.set_start(0)
    for s_ in range(n):
        for d in range(n):
            for a in range(labels + 1):
                if rng.random() < 0.4:
                    w = round(1.6 + rng.exponential(), 4)  # the oracle reads 9 digits back
                    f.add_arc(s_, pynini.Arc(a, a, pynini.Weight("log64", w), d))
        if rng.random() < 0.5 or s_ == n - 1:
            f.set_final(s_, pynini.Weight("log64", round(rng.exponential(), 4)))
    return f


@settings(max_examples=15, deadline=None)
@given(SEEDS)
def test_scores_with_epsilon_cycles_match_dense_oracle(seed):
    """score_strings on machines with ε-cycles (the composition with the string trie is
    cyclic, so α and β come from the cyclic forward–backward solves)."""
    rng = np.random.default_rng(seed)
    f = epsilon_cyclic_acceptor(rng, 4, 2)
    if W.spectral_margin(f) <= 0.0:
        return
    strings = [(), (1,), (2, 1), (1, 2, 2, 1)]
    got = W.score_strings(f, strings)
    for s_, g in zip(strings, got):
        want = dense_string_logweight(f, 2, s_)
        assert g == want if want == -math.inf else g == pytest.approx(want, abs=1e-9)


def test_divergence_is_detected_not_looped():
    f = W.sigma_star(2, neglogw_per_symbol=-np.log(0.6))  # 2 * 0.6 > 1
    with pytest.raises(DivergenceError):
        W.log_partition(f)
    assert W.spectral_margin(f) == 0.0
    g = W.sigma_star(2, neglogw_per_symbol=-np.log(0.49))  # 0.98 < 1: fine
    assert W.log_partition(g) == pytest.approx(math.log(1 / (1 - 0.98)), abs=1e-6)


def test_normalise():
    f = W.weighted_strings({(1,): 0.5, (1, 2): 2.0})
    g, lz = W.normalise(f)
    assert lz == pytest.approx(math.log(math.exp(-0.5) + math.exp(-2.0)))
    assert W.log_partition(g) == pytest.approx(0.0, abs=1e-12)
    assert W.log_partition(f) == pytest.approx(lz)  # input untouched


@settings(max_examples=20, deadline=None)
@given(SEEDS)
def test_kbest_matches_brute_force_total_weight_order(seed):
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 5, 2, acyclic=True, eps=True)
    dist = string_distribution(f, 10)
    k = 4
    got = W.kbest(f, k)
    want = sorted(dist.items(), key=lambda kv: -kv[1])[:k]
    assert len(got) == len(want)
    for (s, lw), (ws, wv) in zip(got, want):
        assert lw == pytest.approx(math.log(wv), abs=1e-9)
        assert math.log(dist[s]) == pytest.approx(lw, abs=1e-9)


def test_kbest_on_cyclic_ambiguous_machine_terminates_and_is_right():
    # Two paths per string (non-determinisable in general); strings a^n b.
    from fst_factors.wfsa.core import new_fst, weight
    f = new_fst()
    f.add_states(4)
    f.set_start(0)
    f.add_arc(0, pynini.Arc(1, 1, weight(0.1), 1))
    f.add_arc(0, pynini.Arc(1, 1, weight(0.2), 2))
    f.add_arc(1, pynini.Arc(1, 1, weight(1.0), 1))
    f.add_arc(2, pynini.Arc(1, 1, weight(2.0), 2))
    f.add_arc(1, pynini.Arc(2, 2, weight(0.0), 3))
    f.add_arc(2, pynini.Arc(2, 2, weight(0.0), 3))
    f.set_final(3)
    got = W.kbest(f, 3)
    dist = string_distribution(f, 30)
    want = sorted(dist.items(), key=lambda kv: -kv[1])[:3]
    assert [s for s, _ in got] == [s for s, _ in want]
    for (_, lw), (_, wv) in zip(got, want):
        assert lw == pytest.approx(math.log(wv), abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_kbest_on_cyclic_machine_with_epsilons_matches_exhaustive_scoring(seed):
    # ε arcs stay in the cyclic search (no ε-removal). Oracle: exact weights of every
    # string up to length 6; the mass left for longer strings (Z minus their sum) is below
    # the k-th best weight, so no longer string can enter the top k.
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 4, 2, acyclic=False, eps=True)
    short = list(enumerate_strings(2, 6))
    lw = W.score_strings(f, short)
    k = 3
    order = np.argsort(-lw, kind="stable")[:k]
    rest = np.logaddexp.reduce(lw[np.isfinite(lw)])
    tail = np.log(-np.expm1(rest - W.log_partition(f))) + W.log_partition(f)
    assert tail < lw[order[-1]]
    got = W.kbest(f, k)
    assert [s for s, _ in got] == [short[i] for i in order]
    for (_, g), i in zip(got, order):
        assert g == pytest.approx(lw[i], abs=1e-9)


def best_path_costs(f, max_len: int) -> dict:
    """String -> cost of its best path (tropical), for every string of at most
    ``max_len`` labels that the acceptor ``f`` accepts: a label-synchronous search over
    (state, string) with the acyclic ε arcs closed at each length."""
    arcs, finals = arcs_of(f)
    frontier, out = {(f.start(), ()): 0.0}, {}
    for length in range(max_len + 1):
        todo, best = list(frontier.items()), dict(frontier)
        while todo:  # ε closure
            (q, v), c = todo.pop()
            for a, _, w, d in arcs[q]:
                if a == 0 and c + w < best.get((d, v), np.inf):
                    best[(d, v)] = c + w
                    todo.append(((d, v), c + w))
        nxt = {}
        for (q, v), c in best.items():
            if q in finals:
                out[v] = min(out.get(v, np.inf), c + finals[q])
            for a, _, w, d in arcs[q]:
                if a != 0 and length < max_len:
                    nxt[(d, v + (a,))] = min(nxt.get((d, v + (a,)), np.inf), c + w)
        frontier = nxt
    return out


@pytest.mark.parametrize("seed", range(10))
def test_candidate_strings_are_the_best_single_path_strings(seed):
    """The n strings with the best single paths, best first (oracle: every string up to
    8 labels; each labelled arc of these cyclic machines costs ≥ 1.5, so no longer string
    can beat the n-th). Negative control: the n best *paths* alone, without the wider
    searches, spell fewer than n strings on a machine with two paths per string."""
    from fst_factors.wfsa.paths import _spelled, candidate_strings
    from fst_factors.wfsa.core import new_fst, weight

    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 4, 2, acyclic=False, eps=True)
    n, max_len = 5, 8
    costs = best_path_costs(f, max_len)
    want = sorted(costs, key=lambda v: costs[v])[:n]
    assert len(want) == n and costs[want[-1]] < 1.5 * (max_len + 1)
    assert candidate_strings(f, n, prune=None) == want
    twice = new_fst()
    twice.add_states(3)
    twice.set_start(0)
    for d, w in ((1, 0.1), (2, 0.2)):  # two paths spell every string a+ b
        twice.add_arc(0, pynini.Arc(1, 1, weight(w), d))
        twice.add_arc(d, pynini.Arc(1, 1, weight(1.0), d))
        twice.set_final(d)
    std = pynini.arcmap(twice, map_type="to_std")
    assert len(_spelled(pynini.shortestpath(std, nshortest=n))) < n
    assert len(candidate_strings(twice, n, prune=None)) == n


def test_sampling_matches_exact_probabilities():
    f = W.weighted_strings({(1,): 0.0, (2, 1): 1.0, (): 2.0})
    p = np.exp(-np.array([0.0, 1.0, 2.0]))
    p /= p.sum()
    draws = W.sample(f, 6000, seed=3)
    freq = np.array([draws.count(s) for s in [(1,), (2, 1), ()]]) / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.all(np.abs(freq - p) < 4 * se)


def test_sampling_from_cyclic_machine_matches_geometric_length():
    f = W.unigram_acceptor(np.log([0.3]), np.log(0.7))  # |v| ~ Geometric: P(n) = .7 * .3^n
    draws = W.sample(f, 5000, seed=1)
    lens = np.bincount([len(d) for d in draws], minlength=3)[:3] / 5000
    want = np.array([0.7, 0.21, 0.063])
    assert np.all(np.abs(lens - want) < 4 * np.sqrt(want * (1 - want) / 5000))


@settings(max_examples=15, deadline=None)
@given(SEEDS)
def test_entropy_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 4, 2, acyclic=True, eps=True)
    dist = string_distribution(f, 10)
    z = sum(dist.values())
    if z == 0:
        return
    h = -sum(v / z * math.log(v / z) for v in dist.values())
    assert W.entropy(f) == pytest.approx(h, abs=1e-8)


def test_entropy_cyclic_deterministic_exact_and_ambiguous_estimate():
    f = W.unigram_acceptor(np.log([0.2, 0.1]), np.log(0.7))
    # Each string is a sequence of i.i.d. choices among {a: .2, b: .1, stop: .7} ending
    # at the first stop, so H = E[#choices] · H(choice) = H(choice) / 0.7.
    probs = np.array([0.2, 0.1, 0.7])
    h = float(-(probs * np.log(probs)).sum() / 0.7)
    val, se = W.entropy(f, return_stderr=True)
    assert se == 0.0 and val == pytest.approx(h, abs=1e-6)
    g = pynini.union(f, f.copy())  # every string has two paths: ambiguous, cyclic
    est, se = W.entropy(g, return_stderr=True, n_samples=4000)
    assert se > 0 and abs(est - h) < 5 * se + 1e-3


@settings(max_examples=20, deadline=None)
@given(SEEDS)
def test_expected_arc_counts_match_path_enumeration(seed):
    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 4, 2, acyclic=True, eps=True)
    paths = list(enumerate_paths(f, 10))
    z = sum(math.exp(-w) for *_, w, _ in paths)
    if z == 0:
        return
    post = W.expected_arc_counts(f)
    t = post.table
    # map (state, k-th arc of state) to table index
    index = {}
    for i, s in enumerate(t.src):
        index[(int(s), sum(1 for j in range(i) if t.src[j] == s))] = i
    want = np.zeros(t.num_arcs)
    for _, _, w, path in paths:
        for q, k in path:
            want[index[(q, k)]] += math.exp(-w) / z
    np.testing.assert_allclose(post.arc_counts, want, atol=1e-9)
    assert post.log_z == pytest.approx(math.log(z), abs=1e-9)


def test_arc_table_roundtrip_exact_weights():
    f = W.weighted_strings({(1, 2): 0.123456789012345, (3,): 7.0})
    t = W.arc_table(f)
    g = W.from_arc_table(t.num_states, t.start, t.src, t.dst, t.ilabel, t.olabel,
                         t.weight, t.final)
    assert pynini.equal(f, g)
    assert 0.123456789012345 in t.final.tolist()


def dense_arc_counts(f):
    """Oracle for cyclic machines: α, β by dense solves, c(e) = α_src w_e β_dst / Z."""
    t = W.arc_table(f)
    n = t.num_states
    a = np.zeros((n, n))
    np.add.at(a, (t.src, t.dst), np.exp(-t.weight))
    rho = np.exp(-t.final)
    e = np.zeros(n)
    e[t.start] = 1.0
    beta = np.linalg.solve(np.eye(n) - a, rho)
    alpha = np.linalg.solve((np.eye(n) - a).T, e)
    z = beta[t.start]
    return alpha[t.src] * np.exp(-t.weight) * beta[t.dst] / z, math.log(z)


@settings(max_examples=20, deadline=None)
@given(SEEDS, st.booleans())
def test_expected_arc_counts_cyclic_match_dense_solve(seed, by_components):
    """Both cyclic paths (fixed-point iteration, solves by strongly connected component)
    against dense solves; the random machines include dead-end and unreachable states."""
    import fst_factors.wfsa.measure as M

    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 4, 2, acyclic=False, density=0.3)
    if f.copy().connect().num_states() == 0 or W.is_acyclic(f):
        return
    orig = M._iterative_solves
    if by_components:
        M._iterative_solves = lambda *a, **k: None
    try:
        post = W.expected_arc_counts(f)
    finally:
        M._iterative_solves = orig
    want, logz = dense_arc_counts(f)
    np.testing.assert_allclose(post.arc_counts, want, atol=1e-9)
    assert post.log_z == pytest.approx(logz, abs=1e-9)


def test_cyclic_forward_backward_iterates_only_with_a_proof():
    """Nearly nilpotent machines take the iteration; one with ρ = 0.98 needs thousands of
    steps, so the component solves answer; ρ ≥ 1 raises DivergenceError on either path."""
    import fst_factors.wfsa.measure as M

    near_nilpotent = pynini.concat(W.weighted_strings({(1, 2, 1): 0.5}),
                                   W.sigma_star(2, neglogw_per_symbol=5.0))
    t = W.arc_table(near_nilpotent)
    a = sp.csr_matrix((np.exp(-t.weight), (t.src, t.dst)), shape=(t.num_states,) * 2)
    e = np.zeros(t.num_states)
    e[t.start] = 1.0
    assert M._iterative_solves(a, np.exp(-t.final), e) is not None
    assert M._iterative_solves(a, np.exp(-t.final), e, max_iter=2) is None
    post = W.expected_arc_counts(near_nilpotent)
    want, logz = dense_arc_counts(near_nilpotent)
    np.testing.assert_allclose(post.arc_counts, want, rtol=1e-12)
    slow = W.sigma_star(2, neglogw_per_symbol=-np.log(0.49))
    post = W.expected_arc_counts(slow)  # component solves, still exact
    want, logz = dense_arc_counts(slow)
    np.testing.assert_allclose(post.arc_counts, want, rtol=1e-9)
    with pytest.raises(DivergenceError):
        W.expected_arc_counts(W.sigma_star(2, neglogw_per_symbol=-np.log(0.6)))


def test_iteration_gives_up_early_when_it_cannot_finish(monkeypatch):
    """ρ = 0.98 needs ~1,500 steps to a float64 fixed point: the projected count sends
    the machine to the component solves after 32 steps instead of 200."""
    import fst_factors.wfsa.fixed_point as fp
    import fst_factors.wfsa.measure as M

    a, rho, e = _matrix(W.sigma_star(2, neglogw_per_symbol=-np.log(0.49)))
    reached = []
    steps = fp._jacobi_steps

    def counting(*args):
        out = steps(*args)
        reached.append(out[2])  # the step the compiled loop stopped at
        return out

    monkeypatch.setattr(fp, "_jacobi_steps", counting)
    assert M._iterative_solves(a, rho, e) is None
    assert max(reached) == 32  # two checkpoints, then the projection gives up


def _matrix(f):
    t = W.arc_table(f)
    a = sp.csr_matrix((np.exp(-t.weight), (t.src, t.dst)), shape=(t.num_states,) * 2)
    e = np.zeros(t.num_states)
    e[t.start] = 1.0
    return a, np.exp(-t.final), e


def test_iteration_accepts_huge_mass_by_the_second_certificate():
    """Unnormalised messages put masses near e^50 on some states: x = (I − A)⁻¹ 1 then
    certifies nothing in float64 (maxᵢ (Ax)ᵢ/xᵢ rounds to 1), z = (I − A)⁻¹ x does; the
    counts still match the dense oracle."""
    import fst_factors.wfsa.measure as M

    heavy = pynini.concat(W.weighted_strings({(1, 1, 1, 1, 1): -50.0}),
                          W.sigma_star(2, neglogw_per_symbol=3.0))
    a, rho, e = _matrix(heavy)
    x = np.linalg.solve(np.eye(a.shape[0]) - a.toarray(), np.ones(a.shape[0]))
    assert np.max((a @ x) / x) > 1.0 - 1e-6  # the first certificate fails
    assert M._iterative_solves(a, rho, e) is not None
    post = W.expected_arc_counts(heavy)
    want, logz = dense_arc_counts(heavy)
    np.testing.assert_allclose(post.arc_counts, want, rtol=1e-10)
    assert post.log_z == pytest.approx(logz, rel=1e-12)


@pytest.mark.parametrize("rho", [1.0 + 1e-6, 1.2, 50.0])
def test_iteration_proves_divergence_without_the_component_solves(rho, monkeypatch):
    """ρ(A) ≥ 1 is proved from the iterates (A v ≥ v on a shrinking support), also when
    the divergent loop sits between a transient prefix and suffix; the (costlier)
    component solves are not taken."""
    import fst_factors.wfsa.measure as M

    monkeypatch.setattr(M, "factor_by_components",
                        lambda *a, **k: pytest.fail("component solves were used"))
    loop = W.sigma_star(2, neglogw_per_symbol=-np.log(rho / 2))
    f = pynini.concat(pynini.concat(W.weighted_strings({(1, 2): 0.3}), loop),
                      W.weighted_strings({(2,): 1.0, (1, 1): 0.1}))
    with pytest.raises(DivergenceError) as err:
        M._iterative_solves(*_matrix(f))
    assert 1.0 < err.value.radius_at_least <= rho * (1 + 1e-9)  # a proven lower bound
    with pytest.raises(DivergenceError) as err:
        W.expected_arc_counts(f)
    assert err.value.radius_at_least is not None  # kept through the caller's message


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.one_of(st.floats(0.3, 1.7),
                       st.sampled_from([0.999, 0.9999, 1.0001, 1.001])))
def test_iteration_decisions_agree_with_the_spectral_radius(seed, target):
    """On random nonnegative matrices scaled to a chosen ρ: a DivergenceError only when
    ρ ≥ 1, an accepted solve only when ρ < 1, and then the dense solution."""
    import fst_factors.wfsa.measure as M

    rng = np.random.default_rng(seed)
    n = 12
    dense = rng.exponential(size=(n, n)) * (rng.random((n, n)) < 0.25)
    rho_now = max(abs(np.linalg.eigvals(dense)))
    if rho_now == 0:
        return
    dense *= target / rho_now
    rho = max(abs(np.linalg.eigvals(dense)))
    a = sp.csr_matrix(dense)
    b = rng.random(n)
    e = np.zeros(n)
    e[0] = 1.0
    try:
        out = M._iterative_solves(a, b, e, max_iter=400)
    except DivergenceError as err:
        assert rho >= 1.0 - 1e-9
        c = err.radius_at_least
        assert c is None or 1.0 < c <= rho * (1 + 1e-9)
        return
    if out is not None:
        assert rho < 1.0
        np.testing.assert_allclose(out[0], np.linalg.solve(np.eye(n) - dense, b),
                                   rtol=1e-8)


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.floats(0.05, 1.2), st.booleans())
def test_epsilon_cycle_test_agrees_with_the_spectral_radius(seed, scale, labelled):
    """The per-component ε-cycle test equals ρ(A_ε) ≥ 1 computed from eigenvalues; arcs
    with a label (``labelled``) must be ignored."""
    from fst_factors.wfsa.epsilon import epsilon_cycles_diverge

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 12))
    m = int(rng.integers(1, 30))
    src, dst = rng.integers(0, k, m), rng.integers(0, k, m)
    vals = rng.uniform(0.0, scale, m) + 1e-3
    a = np.zeros((k, k))
    np.add.at(a, (src, dst), vals)
    rho = max(abs(np.linalg.eigvals(a)))
    if abs(rho - 1.0) < 1e-6:
        return
    f = pynini.Fst(arc_type="log64")
    f.add_states(k)
    f.set_start(0)
    f.set_final(k - 1)
    for s, d, v in zip(src, dst, vals):
        f.add_arc(int(s), pynini.Arc(0, 0, pynini.Weight("log64", -math.log(v)), int(d)))
        if labelled:  # a heavy labelled copy: no ε-cycle, must not count
            f.add_arc(int(s), pynini.Arc(1, 1, pynini.Weight("log64", -math.log(5.0)), int(d)))
    assert epsilon_cycles_diverge(f) == (rho >= 1.0)


@pytest.mark.parametrize("shuffle", [False, True])
def test_arcs_to_csr_keeps_parallel_arcs(shuffle):
    from fst_factors.wfsa.measure import arcs_to_csr

    rng = np.random.default_rng(3)
    src = np.sort(rng.integers(0, 6, 40))
    dst = rng.integers(0, 6, 40)
    vals = rng.random(40)
    if shuffle:
        perm = rng.permutation(40)
        src, dst, vals = src[perm], dst[perm], vals[perm]
    want = np.zeros((6, 6))
    np.add.at(want, (src, dst), vals)
    np.testing.assert_allclose(arcs_to_csr(src, dst, vals, 6).toarray(), want)


def test_epsilon_cycle_test_ignores_heavy_acyclic_epsilon_paths():
    """Only cycles make ε-removal diverge: a chain of ε-arcs of weight e^30 each (its
    path weight overflows float64, a solve over the whole ε-graph returns inf) around a
    light cycle is finite, and is reported as such; a heavy cycle is not."""
    from fst_factors.wfsa.epsilon import epsilon_cycles_diverge

    def machine(cycle_weight):
        f = pynini.Fst(arc_type="log64")
        f.add_states(32)
        f.set_start(0)
        f.set_final(31)
        for s in range(30):
            f.add_arc(s, pynini.Arc(0, 0, pynini.Weight("log64", -30.0), s + 1))
        f.add_arc(30, pynini.Arc(0, 0, pynini.Weight("log64", -math.log(cycle_weight)), 31))
        f.add_arc(31, pynini.Arc(0, 0, pynini.Weight("log64", 0.0), 30))
        return f

    assert not epsilon_cycles_diverge(machine(0.5))
    assert epsilon_cycles_diverge(machine(1.5))


def _concat_part_message_machine(seed: int, i: int, boundary: bool):
    """project(compose(T_i, μ_whole)) before ε-removal: the machine a concatenation
    factor cleans up for its message to part i (random cyclic part and whole messages)."""
    from fst_factors.transducers.concat import concat_context_transducer

    rng = np.random.default_rng(seed)
    parts = [random_acceptor(rng, 3, 2, acyclic=False) for _ in range(3)]
    whole = random_acceptor(rng, 4, 3 if boundary else 2, acyclic=False, scale=0.5)
    t = concat_context_transducer(parts, i, 2, 3 if boundary else None)
    return pynini.project(W.compose(t, whole), "input")


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.integers(0, 2), st.booleans())
def test_trim_shortcut_keeps_every_string_weight_of_concat_messages(seed, i, boundary):
    """The linear-algebra ε-removal (closures at the ends) is taken for the messages of a
    concatenation factor, and every string keeps its exact weight: all strings up to
    length 4 scored on the ε-free result equal their scores on the original (scored by
    composition and linear solves, no ε-removal), and so does the total weight."""
    from fst_factors.wfsa.core import arc_table
    from fst_factors.wfsa.epsilon import closures_at_ends, trim

    from hypothesis import assume

    c = _concat_part_message_machine(seed, i, boundary)
    assume(c.num_states() > 0)  # the whole's message may reject every concatenation
    t = arc_table(c)
    eps = (t.ilabel == 0) & (t.olabel == 0)
    assert eps.any() and closures_at_ends(t, eps) is not None
    out = trim(c)
    assert not (arc_table(out).ilabel == 0).any()
    strings = list(enumerate_strings(2, 4))
    np.testing.assert_allclose(W.score_strings(out, strings), W.score_strings(c, strings),
                               rtol=1e-9, atol=1e-9)
    if W.spectral_margin(c) > 0.0:
        assert W.log_partition(out) == pytest.approx(W.log_partition(c), abs=1e-9)
    else:  # a random message can have infinite total weight: then so must the result
        with pytest.raises(DivergenceError):
            W.log_partition(out)


@pytest.mark.parametrize("seed,i,boundary", [(800, 0, False)])
def test_trim_shortcut_keeps_an_infinite_total_weight_infinite(seed, i, boundary):
    """The example hypothesis found (a concatenation message of infinite total weight):
    string weights are kept and the result diverges too."""
    test_trim_shortcut_keeps_every_string_weight_of_concat_messages.hypothesis.inner_test(
        seed, i, boundary)


def test_trim_takes_the_general_route_when_epsilon_paths_lead_to_labelled_states():
    """ε-arcs between labelled states (an ε-cycle through them): no shortcut, OpenFst's
    ε-removal, string weights unchanged."""
    from fst_factors.wfsa.core import arc_table, new_fst
    from fst_factors.wfsa.epsilon import closures_at_ends, trim

    f = new_fst()
    f.add_states(3)
    f.set_start(0)
    f.add_arc(0, pynini.Arc(1, 1, W.weight(0.5), 1))
    f.add_arc(1, pynini.Arc(2, 2, W.weight(1.0), 2))
    f.add_arc(2, pynini.Arc(0, 0, W.weight(1.5), 1))  # back to a labelled state
    f.add_arc(1, pynini.Arc(0, 0, W.weight(2.0), 0))
    f.set_final(2, W.weight(0.3))
    t = arc_table(f)
    assert closures_at_ends(t, t.ilabel == 0) is None
    strings = list(enumerate_strings(2, 6))
    np.testing.assert_allclose(W.score_strings(trim(f), strings),
                               W.score_strings(f, strings), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cycle_weight, diverges", [(0.5, False), (1.5, True)])
def test_trim_shortcut_defers_to_the_general_route_on_divergence(cycle_weight, diverges):
    """An ε-suffix (all states ε-only) with a light or heavy ε-cycle after heavy acyclic
    ε-arcs (path weight beyond float64): the light one is removed, the heavy one raises."""
    from fst_factors.errors import DivergenceError
    from fst_factors.wfsa.core import new_fst
    from fst_factors.wfsa.epsilon import trim

    f = new_fst()
    f.add_states(33)
    f.set_start(0)
    f.add_arc(0, pynini.Arc(1, 1, W.weight(0.0), 1))
    for s in range(1, 31):
        f.add_arc(s, pynini.Arc(0, 0, W.weight(-30.0), s + 1))
    f.add_arc(31, pynini.Arc(0, 0, W.weight(-math.log(cycle_weight)), 32))
    f.add_arc(32, pynini.Arc(0, 0, W.weight(-math.log(cycle_weight)), 31))
    f.set_final(32, W.weight(0.0))
    if diverges:
        with pytest.raises(DivergenceError, match="ε-cycles"):
            trim(f, "test message")
    else:
        out = trim(f)
        # log weight: 30 arcs of e^30, then c Σ_k (c²)^k around the cycle
        want = 30 * 30.0 + math.log(cycle_weight) - math.log1p(-cycle_weight ** 2)
        assert W.score_strings(out, [(1,)])[0] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_trimmed_topology_survives_reweighting_and_arc_order(seed):
    """The trimming kept by a caller (:func:`trimmed_topology` of one weighting) gives the
    exact forward–backward of every other weighting of the same arcs, also when the arcs
    are not listed by source state; dead and unreachable states are dropped."""
    import dataclasses

    import fst_factors.wfsa.measure as M
    from fst_factors.wfsa.expectations import table_arc_counts

    rng = np.random.default_rng(seed)
    f = random_acceptor(rng, 7, 2, acyclic=False, density=0.25, scale=1.0)
    dead = f.add_state()  # reachable, never final: trimmed away
    f.add_arc(0, pynini.Arc(1, 1, W.weight(0.3), dead))
    f.add_arc(dead, pynini.Arc(2, 2, W.weight(0.3), dead))
    t = W.arc_table(f)
    topo = M.trimmed_topology(t)
    assert dead not in topo.keep
    for k in range(3):
        w = t.weight + rng.normal(scale=0.3, size=t.num_arcs) * (k > 0)
        order = rng.permutation(t.num_arcs) if k == 2 else np.arange(t.num_arcs)
        tk = dataclasses.replace(t, src=t.src[order], dst=t.dst[order],
                                 ilabel=t.ilabel[order], olabel=t.olabel[order],
                                 weight=w[order])
        kept = M.cyclic_forward_backward(tk, M.trimmed_topology(tk) if k == 2 else topo)
        fresh = M.cyclic_forward_backward(tk)
        for x, y in zip(kept, fresh):
            np.testing.assert_allclose(x, y, rtol=1e-12)
        post = table_arc_counts(tk, None, topology=M.trimmed_topology(tk) if k == 2 else topo)
        want, _ = dense_arc_counts(W.from_arc_table(t.num_states, t.start, t.src, t.dst,
                                                    t.ilabel, t.olabel, w, t.final))
        np.testing.assert_allclose(post.arc_counts, want[order], rtol=1e-9, atol=1e-15)


def _path_weights(fst, max_arcs: int = 6) -> dict:
    """(input, output) -> total weight (probability) of the accepting paths."""
    out: dict = {}
    for ins, outs, w, _ in enumerate_paths(fst, max_arcs):
        key = (tuple(a for a in ins if a), tuple(a for a in outs if a))
        out[key] = out.get(key, 0.0) + math.exp(-w)
    return out


@pytest.mark.parametrize("sort_a,sort_b", [(s, t) for s in (None, "ilabel", "olabel")
                                           for t in (None, "ilabel", "olabel")])
def test_compose_with_operands_sorted_or_not(sort_a, sort_b):
    """W.compose uses an operand sorted on the matched tape as it is and sorts a copy of
    any other: the relation is the enumerated one whatever the arcs' order, and neither
    operand is modified."""
    rng = np.random.default_rng(3)
    a = new_fst()
    a.add_states(3)
    a.set_start(0)
    a.set_final(2, weight(0.1))
    for src, dst in ((0, 1), (1, 2), (0, 2)):
        for i, o in rng.permutation([(1, 3), (2, 1), (3, 2), (1, 1)]):  # unsorted either way
            a.add_arc(src, pynini.Arc(int(i), int(o), weight(float(rng.uniform(0.5, 2))),
                                      dst))
    b = random_acceptor(rng, 3, 3, acyclic=True, density=0.8)
    a = pynini.arcsort(a, sort_a) if sort_a else a
    b = pynini.arcsort(b, sort_b) if sort_b else b
    before = (arcs_of(a), arcs_of(b))
    got = _path_weights(W.compose(a, b))
    ta, tb = _path_weights(a), _path_weights(b)
    want: dict = {}
    for (i, o), p in ta.items():
        if (o, o) in tb:
            want[(i, o)] = want.get((i, o), 0.0) + p * tb[(o, o)]
    assert want and set(got) == set(want)
    assert all(math.isclose(got[k], want[k], rel_tol=1e-9) for k in want)
    assert (arcs_of(a), arcs_of(b)) == before
