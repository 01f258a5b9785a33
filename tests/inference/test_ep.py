"""EP / PEP inference: exactness on acyclic graphs, λ→0 limit, every factor type, API.

These tests exercise the θ machinery, so they run textbook EP (``relay=False``: θ at every
latent variable); the default degree-≤2 relay is tested in test_phonology_ep.py."""

import numpy as np
import pytest

import fst_factors.transducers as ff
from tests.features.feature_oracles import all_strings, substitution_transducer
from fst_factors.alphabet import Alphabet
from strgm.errors import StrgmError
from strgm.graph import FactorGraph
from strgm.inference import infer
from strgm.inference.ep import EPSide

N = 2
LATENT = ("M1", "M2", "W")


def tree_graph(surface="aba", boundary=False):
    """M1, M2 ~ prior; W = M1·M2; S = substitution(W) observed. Every BP message is a
    finite set of strings of length ≤ |S| (or a unigram prior), so order |S|+2 n-gram
    features represent them exactly."""
    a = Alphabet("ab", boundary="+" if boundary else None)
    g = FactorGraph(a)
    for v in LATENT:
        g.add_variable(v)
    g.add_variable("S", observed=surface)
    g.add_unary("p1", "M1", ff.geometric_unigram_prior(a.size, 1.0))
    g.add_unary("p2", "M2", ff.geometric_unigram_prior(a.size, 1.0))
    g.add_concat("c", ["M1", "M2"], "W", boundary=boundary)
    g.add_binary("t", "W", "S", substitution_transducer(a.size))
    return g


def max_belief_error(r1, r2, names=LATENT, k=12):
    err = 0.0
    for v in names:
        ref = dict(r1.belief(v).kbest_labels(k))
        other = r2.belief(v)
        err = max(err, max(abs(other.prob(s) - p) for s, p in ref.items()))
    return err


def test_ep_with_rich_features_reproduces_exact_bp_on_a_tree():
    g = tree_graph()
    assert g.is_acyclic()
    bp = infer(g, "bp")
    ep = infer(g, "ep", relay=False, order=5, projection="closed", max_iters=6)
    assert max_belief_error(bp, ep) < 1e-7
    # and a too-poor family does not (the test can fail)
    ep2 = infer(g, "ep", relay=False, order=2, projection="closed", max_iters=6)
    assert max_belief_error(bp, ep2) > 1e-2


def test_ep_reproduces_bp_with_boundary_concatenation():
    g = tree_graph("ab", boundary=True)
    bp = infer(g, "bp")
    ep = infer(g, "ep", relay=False, order=5, projection="closed", max_iters=6)
    assert max_belief_error(bp, ep) < 1e-7


def test_pep_with_lambda_to_zero_matches_fixed_order_ep():
    g = tree_graph("ab")
    ep = infer(g, "ep", relay=False, order=2, projection="closed", max_iters=8, tol=1e-9)
    pep = infer(g, "pep", relay=False, lam=1e-8, max_len=2, eta=0.5, steps=25, K_early=1,
                max_iters=6, tol=1e-9)
    # (the gap shrinks with more steps: 4e-3 at 25 steps/6 iterations, 7e-4 at 100/8,
    # 2e-4 at 300/10; the order-1 answer is 0.4 away)
    assert max_belief_error(ep, pep) < 6e-3
    # while a large λ gives a visibly different (coarser) answer
    coarse = infer(g, "pep", relay=False, lam=0.05, max_len=2, eta=0.5, steps=10, K_early=1, max_iters=4)
    assert max_belief_error(ep, coarse) > 0.1


def test_gradient_ep_approaches_closed_form_ep():
    g = tree_graph("ab")
    cf = infer(g, "ep", relay=False, order=2, projection="closed", max_iters=8, tol=1e-9)
    gr = infer(g, "ep", relay=False, order=2, projection="gradient", eta=0.5, steps=20, max_iters=5,
               tol=1e-9)
    assert max_belief_error(cf, gr) < 1.5e-2  # order-1 EP is 0.4 away


def _xent(r, ref, names=LATENT):
    """mean −log q_V(MAP string of the reference belief)."""
    return np.mean([-r.belief(v).logprob(ref.belief(v).kbest_labels(1)[0][0]) for v in names])


@pytest.mark.parametrize("projection", ["prox", "grow"])
def test_pep_beats_unigram_ep_and_finds_the_whole_word(projection):
    g = tree_graph("abab")
    bp = infer(g, "bp")
    r = infer(g, "pep", relay=False, projection=projection, max_iters=5)
    uni = infer(g, "ep", relay=False, order=1, max_iters=5)
    assert r.belief("W").kbest_labels(1)[0][0] == (1, 2, 1, 2)
    assert _xent(r, bp) < _xent(uni, bp) - 0.3
    assert r.extra["mean_features_per_belief"] > 0
    assert r.to_dict()["method"] == "pep"


def test_ep_handles_an_fst_file_factor_and_edit_transducer(tmp_path):
    a = Alphabet("ab")
    path = str(tmp_path / "phon.fst")
    ff.edit_transducer(a.size, ff.EditParams(0.9)).write(path)
    g = FactorGraph(a)
    g.add_variable("M")
    g.add_variable("S", observed="ab")
    g.add_unary("prior", "M", ff.geometric_unigram_prior(a.size, 2.0))
    g.add_fst_file("phon", path, "M", "S")
    bp = infer(g, "bp")
    for kw in ({"order": 3}, {}):
        r = infer(g, "ep" if kw else "pep", relay=False, max_iters=4, **kw)
        assert r.belief("M").kbest_labels(1)[0][0] == (1, 2)
    ep4 = infer(g, "ep", relay=False, order=4, projection="closed", max_iters=4)
    assert abs(ep4.belief("M").prob("ab") - bp.belief("M").prob("ab")) < 0.05


def test_ep_belief_answers_the_same_queries():
    g = tree_graph("ab")
    b = infer(g, "pep", relay=False, max_iters=3).belief("M1")
    strings = all_strings(N, 15)  # the mass beyond is < 1e-4
    total = np.exp(np.logaddexp.reduce(b.logprobs(strings)))
    assert total == pytest.approx(1.0, abs=1e-4)
    top = b.kbest(3)
    assert len(top) == 3 and top[0][1] >= top[1][1] >= top[2][1]
    assert b.prob(top[0][0]) == pytest.approx(top[0][1])
    assert len(b.sample(5)) == 5
    assert b.entropy() > 0


def test_k_passes_and_anneal_schedule():
    g = tree_graph("ab")
    side = EPSide(g, "pep", anneal=True, lam=0.1, decay=0.5, K_early=7, early_iters=2)
    side.start_iteration(0)
    assert side.K == 7 and side.lam == 0.1 and side.unigram_only
    side.start_iteration(2)
    assert side.K == 1 and side.lam == pytest.approx(0.025) and not side.unigram_only
    many = infer(g, "pep", relay=False, K_early=10, max_iters=2, tol=0)
    few = infer(g, "pep", relay=False, K_early=1, max_iters=2, tol=0)
    assert many.extra["updates"] > few.extra["updates"]
    side = EPSide(g, "pep", K_early=7, K_unigram=3)  # the unigram-only iteration only
    side.start_iteration(0)
    assert side.K == 3
    side.start_iteration(1)
    assert side.K == 7
    first = infer(g, "pep", relay=False, K_unigram=2, max_iters=1, tol=0)
    plain = infer(g, "pep", relay=False, max_iters=1, tol=0)
    assert first.extra["updates"] < plain.extra["updates"]
    with pytest.raises(StrgmError, match="K_unigram"):
        infer(g, "pep", relay=False, K_unigram=0)


def test_bad_options_are_rejected():
    g = tree_graph("ab")
    with pytest.raises(StrgmError):
        infer(g, "ep", relay=False, projection="prox")
    with pytest.raises(StrgmError):
        infer(g, "pep", relay=False, nonsense=1)
    with pytest.raises(StrgmError):
        infer(g, "ep", relay=False, order=0)


def test_damped_updates_skip_only_provably_divergent_dampings(monkeypatch):
    """When a cavity p̂ has infinite mass, EP damps it by e^{-δ|v|}, δ = 0.25, 0.5, …;
    tries with δ ≤ log c for a proven ρ(A) ≥ c are skipped. The same δ must be chosen:
    identical beliefs and repairs as with no bounds at all, with fewer fits."""
    import strgm.errors as errors_mod
    import strgm.inference.ep_repair as repair_mod
    import strgm.projection.interface as interface_mod
    from strgm.datasets.synthetic import synthetic_paradigm
    from strgm.models.phonology import build_phonology_model

    d = synthetic_paradigm(30, seed=0)
    graph = build_phonology_model(d.paradigm, alphabet=d.alphabet).graph
    fits = {"n": 0, "damped": 0}
    real_fit, real_damped = interface_mod.closed_form, EPSide._damped_update

    def counting_fit(*a, **k):
        fits["n"] += 1
        return real_fit(*a, **k)

    def counting_damped(self, var, factor, radius_at_least=None):
        fits["damped"] += 1
        return real_damped(self, var, factor, radius_at_least)

    monkeypatch.setattr(interface_mod, "closed_form", counting_fit)
    monkeypatch.setattr(repair_mod, "closed_form", counting_fit)
    monkeypatch.setattr(EPSide, "_damped_update", counting_damped)
    with_bounds = infer(graph, "ep", order=2, projection="closed", max_iters=3)
    n_with, damped = fits["n"], fits["damped"]
    assert damped > 0  # the situation under test occurs

    real_init = errors_mod.DivergenceError.__init__

    def no_bound(self, *args, radius_at_least=None):
        real_init(self, *args)

    monkeypatch.setattr(errors_mod.DivergenceError, "__init__", no_bound)
    fits["n"] = 0
    without = infer(graph, "ep", order=2, projection="closed", max_iters=3)
    assert fits["n"] > n_with
    assert with_bounds.extra["message_repairs"] == without.extra["message_repairs"]
    kinds = with_bounds.extra["message_repairs_by_kind"]
    assert sum(kinds.values()) == with_bounds.extra["message_repairs"]
    assert kinds.get("damped_update", 0) == damped - with_bounds.extra["skipped_updates"]
    assert max_belief_error(with_bounds, without, names=graph.latent, k=5) == 0.0


def test_ep_keeps_compositions_of_current_messages_only(monkeypatch):
    """A message replaced by its factor is never projected again, so its composition is
    dropped at once (memory stays with the live messages); an unchanged message re-sent
    as the same object keeps its composition (the composition route: the compiled p̂
    that p_moments tries first is switched off)."""
    import strgm.features.moments as moments
    from strgm.datasets.synthetic import synthetic_paradigm

    monkeypatch.setattr(moments, "FAST_P_HAT", False)
    from strgm.models.phonology import build_phonology_model

    d = synthetic_paradigm(20, seed=1)
    graph = build_phonology_model(d.paradigm, alphabet=d.alphabet).graph
    for method, opts in (("ep", {"order": 2}), ("pep", {})):
        side = infer(graph, method, max_iters=3, **opts).side
        cache = side._compositions
        live = [m for msgs in side.mu.values() for m in msgs.values()]
        assert cache.built > len(cache._entries) > 0
        for comp in cache._entries.values():
            assert any(comp.p is m for m in live)
        assert cache.arcs == sum(c.table.num_arcs for c in cache._entries.values())


def test_block_gauss_seidel_reuses_phat_moments_and_agrees(monkeypatch):
    """block=True takes all K passes on one message before the next: its cavity is
    fixed meanwhile, so p̂'s moments are computed fewer times than in round robin; both
    orders reach the same beliefs on a tree (up to the order of the steps)."""
    import strgm.projection.prox as prox

    calls = []
    real = prox.p_moments
    monkeypatch.setattr(prox, "p_moments", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = tree_graph("ab")
    runs = {}
    for block in (False, True):
        calls.clear()
        runs[block] = infer(g, "pep", relay=False, block=block, max_iters=6, tol=0)
        runs[block].calls = len(calls)
    assert runs[True].calls < runs[False].calls
    assert runs[True].extra["updates"] == runs[False].extra["updates"]
    assert max_belief_error(runs[False], runs[True], k=5) < 0.02
    with pytest.raises(StrgmError, match="block"):
        infer(g, "pep", block="yes")
