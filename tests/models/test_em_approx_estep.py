"""EP and PEP as the E-step of phonology EM.

Oracle: on a tree-shaped paradigm (morphemes shared between words, no loop) BP with the
exact WFSA messages gives the exact expected edit counts; EP's counts must approach them
as its feature order grows, and PEP's must be close. Then a whole EM run with an EP
(and, marked slow, a PEP) E-step must recover the synthetic rules."""

import importlib
import warnings

import numpy as np
import pytest

from fst_factors.transducers.contextual_edit import ContextSpec
from fst_factors.alphabet import Alphabet
from strgm.datasets.paradigm import Paradigm
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import e_step

# A–w1–X–w2–B and A–w3–Y: a tree, so BP is exact
TREE = [(("A", "X"), "abb"), (("B", "X"), "bab"), (("A", "Y"), "aba"), (("C",), "b")]


def _counts(method, **opts):
    model = PhonologyEditModel(Alphabet(["a", "b"]), ContextSpec(1, 1, 0, False),
                               {"context": "exact", "right_context": "exact",
                                "output_context": "exact", "max_sub_distance": None}
                               ).initial(0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts, log_evidence, _, _ = e_step(model, Paradigm.from_pairs(TREE), method,
                                            dict(opts, max_iters=30))
    return counts, log_evidence


def test_ep_and_pep_estep_counts_approach_the_exact_counts():
    exact, ll = _counts("bp")
    err = {}
    # closed-form EP: the exact fit per visit, so on a tree its error falls with the order
    # (the default gradient EP takes η = 0.05 steps and is still moving after 30
    # iterations: 0.047 for order 2, 0.029 for order 3)
    closed = {"projection": "closed"}
    for name, method, opts in [("ep1", "ep", {"order": 1, **closed}),
                               ("ep2", "ep", {"order": 2, **closed}),
                               ("ep3", "ep", {"order": 3, **closed}), ("pep", "pep", {})]:
        c, ll_m = _counts(method, **opts)
        assert np.all(np.isfinite(c)) and np.all(c >= 0)
        assert c.sum() == pytest.approx(exact.sum(), rel=0.01)  # one edit sequence per word
        err[name] = np.abs(c - exact).sum() / exact.sum()
    assert err["ep1"] > err["ep2"] > err["ep3"], err
    assert err["ep3"] < 0.005 and err["pep"] < 0.06, err
    assert err["ep1"] > 0.05  # the comparison can tell approximations apart


def _bench():
    return importlib.import_module("benchmarks.phonology.synthetic")


@pytest.mark.parametrize("method", ["ep", pytest.param("pep", marks=pytest.mark.slow)])
def test_em_with_an_approximate_estep_learns_the_rules(method):
    """32 synthetic words (voicing assimilation + final devoicing), 20% held out: the
    untrained model gets no alternation right (test_synthetic_phonology.py)."""
    r = _bench().evaluate(n_words=32, seed=1, inventory="small", em_iters=3, holdout=0.2,
                          method=method)
    assert r["heldout_alternating"] >= 2
    assert r["exact_match"] >= 0.95, r["per_word"]
    assert r["rule_accuracy"] >= 0.95 and r["alternation_accuracy"] >= 0.9
    assert r["objective"][-1] > r["objective"][0]
