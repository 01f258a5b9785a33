"""BP is exact on acyclic factor graphs: beliefs equal brute-force marginals."""

import itertools
import math
import warnings

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
import fst_factors.wfsa as W
from fst_factors.alphabet import Alphabet
from strgm.errors import (DivergenceError, GraphError, InconsistentEvidenceError,
                          InputError, MessageTooLargeError)
from strgm.graph import FactorGraph
from strgm.inference import infer

ALPH = Alphabet(["a", "b"], boundary="+")
EDIT = ff.edit_transducer(2, ff.EditParams(0.8), boundary_label=3)


def bounded_prior(seed, max_len=2):
    """A prior with finite support (strings of length <= max_len) and random weights."""
    rng = np.random.default_rng(seed)
    strings = [s for n in range(max_len + 1) for s in itertools.product((1, 2), repeat=n)]
    return {s: float(rng.exponential()) for s in strings}


def pair_weight(t, u, s):
    return math.exp(W.string_logweight(pynini.project(
        W.compose(W.string_acceptor(u), t), "output"), s))


def tree_graph(p1, p2, observed="ab"):
    g = FactorGraph(ALPH)
    for name, p in (("M1", p1), ("M2", p2)):
        g.add_variable(name)
        g.add_unary(f"prior:{name}", name, W.weighted_strings(p))
    g.add_variable("U")
    g.add_concat("concat", ["M1", "M2"], "U", boundary=True)
    g.add_variable("S", observed=observed)
    g.add_binary("edit", "U", "S", EDIT)
    g.add_variable("S2")  # a latent leaf with infinite support
    g.add_binary("edit2", "M1", "S2", EDIT)
    return g


def brute_force(p1, p2, observed):
    s = ALPH.encode(observed)
    joint = {}
    for m1, w1 in p1.items():
        for m2, w2 in p2.items():
            u = m1 + (3,) + m2
            joint[(m1, m2)] = math.exp(-w1 - w2) * pair_weight(EDIT, u, s)
    z = sum(joint.values())
    marg1, marg2, margu = {}, {}, {}
    for (m1, m2), v in joint.items():
        marg1[m1] = marg1.get(m1, 0) + v / z
        marg2[m2] = marg2.get(m2, 0) + v / z
        margu[m1 + (3,) + m2] = v / z
    return marg1, marg2, margu


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["bp", "pruned"])
def test_beliefs_equal_brute_force_marginals_on_a_tree(seed, method):
    p1, p2 = bounded_prior(seed), bounded_prior(seed + 100)
    g = tree_graph(p1, p2)
    assert g.is_acyclic()
    res = infer(g, method, kbest=20)  # 20 > |support| = 7: pruning prunes nothing
    marg1, marg2, margu = brute_force(p1, p2, "ab")
    for var, marg in (("M1", marg1), ("M2", marg2), ("U", margu)):
        b = res.belief(var)
        for s, p in marg.items():
            assert b.prob(s) == pytest.approx(p, abs=1e-9), (var, s)
        assert sum(p for _, p in b.kbest(50)) == pytest.approx(1.0, abs=1e-9)
    # latent leaf: p(S2 = x) = Σ_m1 P(m1 | evidence) T(m1, x)
    b2 = res.belief("S2")
    for x in [(), (1,), (2, 1), (1, 1, 2)]:
        want = sum(p * pair_weight(EDIT, m1, x) for m1, p in marg1.items())
        assert b2.prob(x) == pytest.approx(want, rel=1e-7)


def test_chain_belief_and_queries():
    p = bounded_prior(5)
    g = FactorGraph(ALPH)
    g.add_variable("M")
    g.add_unary("prior", "M", W.weighted_strings(p))
    g.add_variable("S", observed="ba")
    g.add_binary("edit", "M", "S", EDIT)
    res = infer(g, "bp")
    b = res.belief("M")
    s = ALPH.encode("ba")
    post = {m: math.exp(-w) * pair_weight(EDIT, m, s) for m, w in p.items()}
    z = sum(post.values())
    top = max(post, key=post.get)
    assert b.kbest(1)[0][0] == ALPH.join(top)
    assert b.kbest(1)[0][1] == pytest.approx(post[top] / z)
    h = -sum(v / z * math.log(v / z) for v in post.values())
    assert b.entropy() == pytest.approx(h, abs=1e-9)
    draws = b.sample(3000, seed=0)
    assert draws.count(ALPH.join(top)) / 3000 == pytest.approx(post[top] / z, abs=0.04)
    assert b.fst.arc_type() == "log64"
    assert res.converged and res.iterations <= 2


def test_pruned_prunes_when_k_is_small_but_stays_normalised():
    p1, p2 = bounded_prior(3), bounded_prior(4)
    g = tree_graph(p1, p2)
    g.add_variable("S3", observed="bb")  # degree 3: M2 now multiplies messages
    g.add_binary("edit3", "M2", "S3", EDIT)
    res = infer(g, "pruned", kbest=2)
    b = res.belief("M2")
    assert sum(p for _, p in b.kbest(20)) == pytest.approx(1.0, abs=1e-9)
    assert len(b.kbest(20)) < 7


def test_inconsistent_evidence_is_reported():
    g = FactorGraph(Alphabet(["a", "b"]))
    g.add_variable("M")
    g.add_unary("prior", "M", W.weighted_strings({(1,): 0.0}))
    g.add_variable("S", observed="b")
    g.add_binary("identity", "M", "S", ff.rule_cascade([], 2))
    with pytest.raises(InconsistentEvidenceError, match="'M'"):
        infer(g, "bp").belief("M")


def test_divergent_belief_is_reported():
    g = FactorGraph(Alphabet(["a", "b"]))
    g.add_variable("M")
    g.add_unary("flat", "M", W.sigma_star(2))  # every string weight 1: Z = ∞
    g.add_variable("N")
    g.add_binary("copy", "M", "N", ff.edit_transducer(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DivergenceError, match="'M'"):
            infer(g, "bp", max_iters=2).belief("M")


def test_divergent_epsilon_cycles_raise_instead_of_hanging():
    whole = W.sigma_star(2)
    other = W.sigma_star(2)  # inserted by T_0: its ε-closure diverges
    f = FactorGraph(Alphabet(["a", "b"]))
    for v in ("A", "B", "W"):
        f.add_variable(v)
    f.add_concat("c", ["A", "B"], "W")
    with pytest.raises(DivergenceError):
        f.factors["c"].message_to("A", {"B": other, "W": whole}, 2)


def test_size_guard_suggests_pruned():
    p1, p2 = bounded_prior(0), bounded_prior(1)
    with pytest.raises(MessageTooLargeError, match="pruned"):
        infer(tree_graph(p1, p2), "bp", max_states=3)


def test_graph_validation_errors():
    g = FactorGraph(ALPH)
    g.add_variable("M")
    with pytest.raises(GraphError, match="already exists"):
        g.add_variable("M")
    with pytest.raises(GraphError, match="unknown variable"):
        g.add_unary("p", "X", W.sigma_star(2))
    with pytest.raises(InputError, match="120 'x'"):  # byte 'a' maps; 'x' does not
        g.add_unary("p", "M", pynini.accep("ax"))
    with pytest.raises(GraphError, match="no factor"):
        g.validate()
    g2 = FactorGraph(Alphabet(["a"]))
    g2.add_variable("A")
    g2.add_variable("W")
    with pytest.raises(GraphError, match="boundary"):
        g2.add_concat("c", ["A"], "W", boundary=True)


def test_observe_hide_return_new_graphs_and_dot_export():
    g = tree_graph(bounded_prior(0), bounded_prior(1))
    h = g.hide(["S"])
    assert g.variables["S"].is_observed and not h.variables["S"].is_observed
    o = h.observe({"S": "b"})
    assert o.variables["S"].observed == (2,)
    dot = g.to_dot()
    assert dot.startswith("graph strgm {") and '"f:concat" -- "v:U"' in dot


def test_messages_to_latent_leaves_are_sent_once_after_the_sweeps(monkeypatch):
    """S2 (degree 1) influences no other message: it receives its message once, from the
    final incoming messages, however many sweeps run (its belief is checked against
    brute force above)."""
    from strgm.factors import BinaryFactor

    g = tree_graph(bounded_prior(0), bounded_prior(100))
    sent, to_leaf = [], []
    real, real_leaf = BinaryFactor.message_to, BinaryFactor.message_to_leaf

    def counting(self, var, incoming, num_labels):
        sent.append(var)
        return real(self, var, incoming, num_labels)

    def counting_leaf(self, var, incoming, num_labels):
        to_leaf.append(var)
        return real_leaf(self, var, incoming, num_labels)

    monkeypatch.setattr(BinaryFactor, "message_to", counting)
    monkeypatch.setattr(BinaryFactor, "message_to_leaf", counting_leaf)
    from strgm.inference import PrunedSide, run_sweeps

    # infer() refuses tol < 0; the scheduler itself takes it: never "converged"
    stats = run_sweeps(g, PrunedSide(g, k=20), max_iters=4, tol=-1.0)
    assert stats.iterations == 4
    assert to_leaf == ["S2"] and "S2" not in sent and sent.count("M1") >= 1


def test_leaf_message_keeps_epsilons_and_the_distribution():
    """message_to_leaf skips ε-removal (deletions from a cyclic message make a dense
    ε-graph) but is the same distribution as message_to: every string up to length 3
    scores the same, and so does the total weight."""
    from strgm.factors import BinaryFactor

    f = BinaryFactor("F", input_var="U", output_var="S", fst=EDIT)
    ur = W.sigma_star(2, neglogw_per_symbol=1.5)  # cyclic, like an EP n-gram message
    plain = f.message_to("S", {"U": ur}, 3)
    leaf = f.message_to_leaf("S", {"U": ur}, 3)
    assert any(a.ilabel == 0 for q in leaf.states() for a in leaf.arcs(q))
    assert not any(a.ilabel == 0 for q in plain.states() for a in plain.arcs(q))
    strings = [s for n in range(4) for s in itertools.product((1, 2), repeat=n)]
    np.testing.assert_allclose(W.score_strings(leaf, strings),
                               W.score_strings(plain, strings), rtol=1e-8)
    assert W.log_partition(leaf) == pytest.approx(W.log_partition(plain), rel=1e-8)
