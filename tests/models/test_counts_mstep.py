import numpy as np
import pytest

from fst_factors.transducers.contextual_edit import ContextSpec, build_structure, compile_fst
from strgm.models.training import event_counts, id_belief, m_step, q_and_grad
from fst_factors.wfsa import weighted_strings
from fst_factors.wfsa.core import arc_table
from tests.fst_factors.contextual_edit_oracles import random_theta, tiny_info


def brute_counts(st, theta, urs, surface):
    """Enumerate all paths of u ∘ T ∘ s for each UR u (acyclic: a string output pins the
    number of insertions) and add path posteriors to their decision events."""
    fst = compile_fst(st, theta, ids=True)
    t = arc_table(fst)
    n_arcs = st.num_arcs
    counts = np.zeros(st.num_events)
    paths = []
    for u, wu in urs:
        # DFS over T paths consuming u and emitting surface
        stack = [(t.start, 0, 0, 0.0, [])]
        while stack:
            q, i, j, w, ids = stack.pop()
            for k in np.flatnonzero(t.src == q):
                lab = t.ilabel[k]
                if lab > n_arcs:  # final arc
                    if i == len(u) and j == len(surface):
                        paths.append((w + t.weight[k] + wu, ids + [lab]))
                    continue
                x, y = st.ilabel[lab - 1], st.olabel[lab - 1]
                if x and (i >= len(u) or u[i] != x):
                    continue
                if y and (j >= len(surface) or surface[j] != y):
                    continue
                stack.append((t.dst[k], i + (x > 0), j + (y > 0), w + t.weight[k], ids + [lab]))
    ws = np.array([p[0] for p in paths])
    z = np.logaddexp.reduce(-ws)
    for w, ids in paths:
        post = np.exp(-w - z)
        for lab in ids:
            if lab <= n_arcs:
                for e in (st.ev1[lab - 1], st.ev2[lab - 1]):
                    if e >= 0:
                        counts[e] += post
            else:
                counts[st.final_ev[lab - n_arcs - 1]] += post
    return counts, z


@pytest.mark.parametrize("spec", [ContextSpec(), ContextSpec(1, 2, 1, True)])
def test_expected_counts_match_brute_force(spec):
    st = build_structure(tiny_info(2), spec)
    th = random_theta(st, 5)
    urs = [((1, 2), 0.3), ((2,), 1.2), ((1, 1, 2), 2.0)]
    surface = (2, 1)
    mu = weighted_strings(urs)
    c, lz = event_counts(st, id_belief(compile_fst(st, th, ids=True), st, mu, surface))
    cb, zb = brute_counts(st, th, urs, surface)
    assert np.allclose(c, cb, atol=1e-8)
    assert abs(lz - zb) < 1e-8
    assert c.sum() > 1


@pytest.mark.parametrize("spec", [ContextSpec(), ContextSpec(1, 2, 1, True)])
def test_counts_of_many_words_are_summed_then_mapped_to_events(spec):
    """expected_counts adds the words' id counts and maps them to events once: the
    brute-force counts of each word, summed, and Σ log Z. Control: the per-word sum
    without the final states' stop events differs (the map covers both kinds of id)."""
    from strgm.models.training import expected_counts

    st = build_structure(tiny_info(2), spec)
    th = random_theta(st, 3)
    words = [([((1, 2), 0.3), ((2,), 1.2)], (2, 1)), ([((1,), 0.1), ((1, 1), 0.9)], (1,)),
             ([((2, 2), 0.5)], (2, 2, 1))]
    got, ll = expected_counts(st, th, [(weighted_strings(u), s) for u, s in words])
    want = [brute_counts(st, th, u, s) for u, s in words]
    assert np.allclose(got, sum(c for c, _ in want), atol=1e-8)
    assert abs(ll - sum(z for _, z in want)) < 1e-8
    stops = np.zeros(st.num_events, dtype=bool)
    stops[st.final_ev[st.final_ev >= 0]] = True
    no_stops = sum(np.where(stops, 0.0, c) for c, _ in want)
    assert not np.allclose(got, no_stops, atol=1e-8)


def test_gradient_matches_finite_differences():
    st = build_structure(tiny_info(2), ContextSpec())
    rng = np.random.default_rng(0)
    counts = np.where(rng.random(st.num_events) < 0.05, rng.random(st.num_events) * 3, 0.0)
    th = random_theta(st, 7, 0.5)
    q, g = q_and_grad(st, counts, th, 0.3)
    for i in rng.choice(st.num_features, 25, replace=False):
        e = np.zeros_like(th)
        e[i] = 1e-5
        fd = (q_and_grad(st, counts, th + e, 0.3)[0] - q_and_grad(st, counts, th - e, 0.3)[0]) / 2e-5
        assert abs(fd - g[i]) < 1e-5 * max(1, abs(g[i])), (i, fd, g[i])


def test_m_step_increases_q():
    st = build_structure(tiny_info(2), ContextSpec())
    rng = np.random.default_rng(1)
    counts = np.where(rng.random(st.num_events) < 0.05, rng.random(st.num_events), 0.0)
    th0 = np.zeros(st.num_features)
    th1, q1 = m_step(st, counts, th0, l2=0.1)
    assert q1 > q_and_grad(st, counts, th0, 0.1)[0] + 1e-3
    assert abs(np.linalg.norm(q_and_grad(st, counts, th1, 0.1)[1])) < 1e-3


def _kkt_violation(st, counts, th, l2, l1):
    """Largest violation of the L1 optimality conditions of max Q(θ) − l1‖θ‖₁:
    ∇Q_i = l1·sign θ_i where θ_i ≠ 0, |∇Q_i| ≤ l1 where θ_i = 0."""
    g = q_and_grad(st, counts, th, l2)[1]
    nz = np.abs(th) > 1e-6
    return max(np.max(np.abs(g[nz] - l1 * np.sign(th[nz])), initial=0.0),
               np.max(np.abs(g[~nz]) - l1, initial=0.0))


def test_l1_m_step_meets_the_optimality_conditions_and_is_sparse():
    """Oracle: the KKT conditions of the convex L1 problem hold at the M-step's answer;
    the L2-only answer (a deliberately wrong solver for this problem) violates them."""
    st = build_structure(tiny_info(2), ContextSpec())
    rng = np.random.default_rng(3)
    counts = np.where(rng.random(st.num_events) < 0.05, rng.random(st.num_events) * 4, 0.0)
    th0 = random_theta(st, 4, 0.3)
    l2, l1 = 0.1, 0.5
    th1, val = m_step(st, counts, th0, l2=l2, l1=l1, max_iter=2000)
    assert _kkt_violation(st, counts, th1, l2, l1) < 1e-3
    assert val == pytest.approx(q_and_grad(st, counts, th1, l2)[0] - l1 * np.abs(th1).sum())
    dense, _ = m_step(st, counts, th0, l2=l2)
    assert _kkt_violation(st, counts, dense, l2, l1) > 0.1  # negative control
    assert np.sum(np.abs(th1) > 1e-6) < np.sum(np.abs(dense) > 1e-6)
    assert np.sum(np.abs(th1) < 1e-6) > st.num_features // 2  # most features are off
