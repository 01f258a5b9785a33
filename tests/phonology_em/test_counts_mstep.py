import numpy as np
import pytest

from strgm.transducers.contextual_edit import ContextSpec, build_structure, compile_fst
from strgm.models.training import event_counts, id_belief, m_step, q_and_grad
from strgm.wfsa import weighted_strings
from strgm.wfsa.core import arc_table
from helpers_pem import random_theta, tiny_info


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
