"""EP / PEP on the phonology model (default: exact relay at degree ≤ 2 variables).

The θ approximation then sits only at morphemes shared by several words (a prior plus
≥ 2 words); word URs and held-out words keep exact WFSA messages (see strgm.inference.ep).
"""

import numpy as np
import pytest

from tests.inference.test_ep import LATENT, max_belief_error, tree_graph
from strgm.datasets.paradigm import Paradigm
from strgm.inference import infer
from strgm.models.phonology import build_phonology_model

ROOTS = {"R1": "pata", "R2": "kimo", "R3": "lusa"}
SUFFIX = ("PL", "ne")


def small_paradigm(hidden=()):
    pairs = []
    for r, ur in ROOTS.items():
        pairs.append(((r,), ur))
        pairs.append(((r, SUFFIX[0]), ur + SUFFIX[1]))
    gold = dict(ROOTS)
    gold[SUFFIX[0]] = SUFFIX[1]
    return build_phonology_model(Paradigm.from_pairs(pairs), hidden=hidden), gold


def test_relay_makes_degree_two_variables_exact():
    # every latent variable of this tree has degree 2, so relayed EP is exact BP even
    # with unigram features — while textbook EP (θ everywhere) with unigrams is not
    g = tree_graph()
    bp = infer(g, "bp")
    relayed = infer(g, "ep", order=1, max_iters=3)
    assert relayed.extra["relayed_variables"] == len(LATENT)
    assert max_belief_error(bp, relayed) < 1e-7
    textbook = infer(g, "ep", order=1, relay=False, max_iters=3)
    assert max_belief_error(bp, textbook) > 1e-2


@pytest.mark.parametrize("method,opts", [("ep", {"order": 2}),
                                         ("ep", {"order": 2, "projection": "closed"}),
                                         ("pep", {}), ("pep", {"projection": "grow"})])
def test_ep_on_phonology_finds_gold_urs_like_pruned_bp(method, opts):
    model, gold = small_paradigm()
    pruned = infer(model.graph, "pruned", kbest=20, max_iters=4)
    r = infer(model.graph, method, max_iters=4, **opts)
    top = {m: r.belief(v).kbest(1)[0][0] for m, v in model.morpheme_vars.items()}
    assert sum(top[m] == gold[m] for m in gold) >= len(gold) - 1
    ref = {m: pruned.belief(v).kbest(1)[0][0] for m, v in model.morpheme_vars.items()}
    assert sum(top[m] == ref[m] for m in gold) >= len(gold) - 1
    xent = np.mean([-r.belief(model.morpheme_vars[m]).logprob(u) for m, u in gold.items()])
    xent_pruned = np.mean([-pruned.belief(model.morpheme_vars[m]).logprob(u)
                           for m, u in gold.items()])
    if (method, opts) == ("ep", {"order": 2}):
        # gradient EP (the default) moves θ by η = 0.05 per step, so after 4 iterations
        # a bigram belief is still broad (1.8 nats here, 1.5 after 12; closed-form EP-2
        # 0.35, PEP 0.1). It must still beat the unigram family (7.4 nats) clearly.
        uni = infer(model.graph, "ep", order=1, max_iters=4)
        assert xent < np.mean([-uni.belief(model.morpheme_vars[m]).logprob(u)
                               for m, u in gold.items()]) - 3.0
    else:
        assert xent < xent_pruned + 1.0
    # the suffix (degree 4: prior + 3 words) is approximated by θ, roots too
    assert r.extra["relayed_variables"] == 3  # the three word URs
    assert r.extra["mean_features_per_belief"] > 0


def test_heldout_word_gets_an_exact_belief():
    model, gold = small_paradigm(hidden=["R2 PL"])
    r = infer(model.graph, "pep", max_iters=4)
    b = r.belief(model.word_vars["R2 PL"])
    assert b.kbest(1)[0][0] == "kimone"


def _per_word_copies(model):
    """The same graph built as before the phonology was shared: every word's factor and
    every morpheme's prior converted (copied) on its own by ``add_binary``/``add_unary``."""
    from strgm.graph import FactorGraph

    g = FactorGraph(model.alphabet)
    for name, v in model.graph.variables.items():
        g.add_variable(name, observed=v.observed)
    for name, f in model.graph.factors.items():
        if f.kind == "binary":
            g.add_binary(name, f.input_var, f.output_var, model.phonology)
        elif f.kind == "unary":
            g.add_unary(name, f.var, f.fst.copy())
        else:
            g.add_factor(f)
    return g


def test_every_word_shares_one_phonology_machine_with_the_same_beliefs():
    import fst_factors.transducers as ff

    model, _ = small_paradigm()
    machines = {id(f.fst) for f in model.graph.factors.values() if f.kind == "binary"}
    priors = {id(f.fst) for f in model.graph.factors.values() if f.kind == "unary"}
    assert len(machines) == 1 and len(priors) == 1
    assert next(f.fst for f in model.graph.factors.values() if f.kind == "binary") \
        is not model.phonology  # converted once: the caller's machine is not held
    copies = _per_word_copies(model)
    # control: the graph built word by word holds one machine per word and prior
    assert len({id(f.fst) for f in copies.factors.values() if f.kind == "binary"}) \
        == len(model.word_vars) == 6
    for method, opts in (("pruned", {"kbest": 20}), ("pep", {})):
        a = infer(model.graph, method, max_iters=3, **opts)
        b = infer(copies, method, max_iters=3, **opts)
        for v in model.morpheme_vars.values():
            got, want = a.belief(v).kbest(3), b.belief(v).kbest(3)
            assert [s for s, _ in got] == [s for s, _ in want]
            assert np.allclose([p for _, p in got], [p for _, p in want], rtol=1e-9)
    # a phonology given as a machine is converted once as well (to the alphabet's labels)
    given = build_phonology_model(model.paradigm, phonology=ff.edit_transducer(
        model.alphabet.num_segments, ff.EditParams(0.9)))
    assert len({id(f.fst) for f in given.graph.factors.values() if f.kind == "binary"}) == 1
