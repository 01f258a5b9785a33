"""The learned-HMM object: WFSA export against the forward algorithm, posterior
averaging, pruning."""

import itertools

import numpy as np
import pynini
import pytest

from tests.hmm.brute import random_hmm, string_prob
from strgm.hmm import Categorical
from strgm.hmm.data import Sequences
from strgm.hmm.model import HMM, HMMPosterior
from fst_factors.wfsa.construct import string_acceptor
from fst_factors.wfsa.core import shortest_distance


def _hmm(seed, L=3, V=3):
    p0, P, s, theta = random_hmm(L, V, np.random.default_rng(seed))
    return HMM(p0, P, s, {"theta": theta}, Categorical(V, 1.0))


def _fst_logprob(fst, labels) -> float:
    """log of the weight of ``labels`` in ``fst`` (composition with the string)."""
    c = pynini.compose(string_acceptor(tuple(labels)), fst)
    if c.start() < 0:
        return -np.inf
    return -float(shortest_distance(c, reverse=True, delta=1e-14)[c.start()])


def test_wfsa_scores_every_string_up_to_length_5_as_forward():
    h = _hmm(0, L=3, V=2)
    fst = h.to_wfsa()
    for T in range(1, 6):
        strings = [np.array(x) for x in itertools.product(range(2), repeat=T)]
        ll = h.log_likelihoods(Sequences.from_list(strings))
        for x, l in zip(strings, ll):
            assert _fst_logprob(fst, list(x + 1)) == pytest.approx(l, abs=1e-9)
    assert _fst_logprob(fst, []) == -np.inf


def test_wfsa_negative_control_forgetting_stop():
    h = _hmm(0, L=3, V=2)
    bad = HMM(h.p0, h.P, np.zeros_like(h.stop) + 1e-300, h.params, h.emissions)
    x = np.array([0, 1, 1])
    assert _fst_logprob(bad.to_wfsa(), [1, 2, 2]) != pytest.approx(
        h.log_likelihoods(Sequences.from_list([x]))[0], abs=1e-3)


def test_wfsa_total_mass_is_one():
    h = _hmm(1, L=4, V=3)
    fst = h.to_wfsa()
    assert shortest_distance(fst, reverse=True, delta=1e-14)[0] == pytest.approx(0.0, abs=1e-8)


def test_posterior_predictive_is_the_sample_average():
    hs = [_hmm(i) for i in range(3)]
    post = HMMPosterior(tuple(hs), ("a", "b", "c"), None)
    x = [0, 2, 1]
    want = np.log(np.mean([string_prob(x, h.p0, h.P, h.stop, h.params["theta"]) for h in hs]))
    got = post.log_likelihoods(Sequences.from_list([np.array(x)]))[0]
    assert got == pytest.approx(want, abs=1e-10)
    m = post.mean()
    assert np.allclose(m.P, np.mean([h.P for h in hs], axis=0))


def test_pruned_model_is_the_sum_over_kept_paths():
    h = _hmm(2, L=3, V=2)
    occ = h.occupancy()
    kept = h.pruned(np.sort(occ)[1])  # drop the least visited state
    assert len(kept.p0) == 2
    x = np.array([0, 1])
    full = h.log_likelihoods(Sequences.from_list([x]))[0]
    assert kept.log_likelihoods(Sequences.from_list([x]))[0] < full
