"""The forward algorithm, FFBS and Viterbi against brute-force enumeration."""

import numpy as np
import pytest

from tests.hmm.brute import path_probs, random_hmm, string_prob
from strgm.hmm import forward
from strgm.hmm.data import Sequences
from strgm.hmm.forward import log_likelihoods, sample_states, viterbi

SEQS = [[0, 1, 1], [2], [1, 0], [0, 0, 2, 1], [2, 2, 0]]


@pytest.mark.parametrize("stop", [True, False])
def test_forward_equals_enumeration(stop):
    rng = np.random.default_rng(0)
    p0, P, s, theta = random_hmm(3, 3, rng, stop)
    seqs = Sequences.from_list([np.array(x) for x in SEQS])
    ll = log_likelihoods(seqs, p0, P, s, np.log(theta).T[seqs.x])
    exact = [np.log(string_prob(x, p0, P, s, theta)) for x in SEQS]
    assert np.allclose(ll, exact, rtol=0, atol=1e-10)


def test_forward_survives_long_sequences():
    rng = np.random.default_rng(1)
    p0, P, s, theta = random_hmm(4, 3, rng)
    x = rng.integers(0, 3, size=3000)
    seqs = Sequences.from_list([x])
    ll = log_likelihoods(seqs, p0, P, s, np.log(theta).T[seqs.x])
    assert np.isfinite(ll[0]) and ll[0] < -1000


def _ffbs_histogram(sampler, n=20000):
    rng = np.random.default_rng(2)
    p0, P, s, theta = random_hmm(2, 2, rng)
    x = [0, 1, 1]
    seqs = Sequences.from_list([np.array(x)] * n)
    z = sampler(seqs, p0, P, s, np.log(theta).T[seqs.x], rng)
    if isinstance(z, tuple):
        z = z[0]
    paths = z.reshape(n, 3)
    exact = path_probs(x, p0, P, s, theta)
    total = sum(exact.values())
    tv = 0.5 * sum(abs(np.mean(np.all(paths == np.array(k), axis=1)) - v / total)
                   for k, v in exact.items())
    return tv


def test_ffbs_draws_the_exact_posterior():
    assert _ffbs_histogram(sample_states) < 0.015


def test_ffbs_negative_control_filtering_marginals_fail():
    """Sampling each z_t from its filtered marginal, without backward conditioning,
    is a different distribution and must fail the same check."""
    def broken(seqs, p0, P, stop, loglik, rng):
        e, _ = forward._emissions(loglik)
        z = np.empty(seqs.num_tokens, dtype=np.int64)
        for T, _, pos in seqs.batches():
            a, _ = forward._filter(p0, forward.jump_matrix(P, stop), e[pos])
            for t in range(T):
                z[pos[:, t]] = forward.sample_rows(a[:, t], rng)
        return z
    assert _ffbs_histogram(broken) > 0.05


@pytest.mark.parametrize("stop", [True, False])
def test_viterbi_equals_enumeration(stop):
    rng = np.random.default_rng(3)
    p0, P, s, theta = random_hmm(3, 3, rng, stop)
    seqs = Sequences.from_list([np.array(x) for x in SEQS])
    z, best = viterbi(seqs, p0, P, s, np.log(theta).T[seqs.x])
    for i, x in enumerate(SEQS):
        probs = path_probs(x, p0, P, s, theta)
        arg = max(probs, key=probs.get)
        assert tuple(seqs.sequence(i) * 0 + z[seqs.offsets[i]:seqs.offsets[i + 1]]) == arg
        assert best[i] == pytest.approx(np.log(probs[arg]), abs=1e-10)


def test_chunked_batches_give_the_same_results(monkeypatch):
    """Cutting the length batches into chunks changes neither likelihoods nor Viterbi."""
    rng = np.random.default_rng(4)
    p0, P, s, theta = random_hmm(3, 3, rng)
    seqs = Sequences.from_list([np.array(x) for x in SEQS * 7])
    ll = np.log(theta).T[seqs.x]
    whole = log_likelihoods(seqs, p0, P, s, ll), viterbi(seqs, p0, P, s, ll)[0]
    monkeypatch.setattr(forward, "MAX_CELLS", 10)
    cut = log_likelihoods(seqs, p0, P, s, ll), viterbi(seqs, p0, P, s, ll)[0]
    assert np.allclose(whole[0], cut[0]) and np.array_equal(whole[1], cut[1])
