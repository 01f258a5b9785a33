"""With φ ≡ 1 (λ = 0) the LT sampler's stationary distribution is the HDP-HMM posterior:
compared with an independent reference sampler (the weak-limit blocked sampler of Fox et
al. 2008, which normalises π and has no u, q) on the same data."""

import warnings

import numpy as np
import pytest

from strgm.errors import TruncationWarning
from strgm.hmm import Categorical, HMMSampler, HMMSettings
from strgm.hmm.auxiliary import table_counts
from strgm.hmm.data import Sequences
from strgm.hmm.forward import sample_states
from strgm.hmm.transitions import jump_counts

L, V, ALPHA, GAMMA, ETA = 3, 3, 2.0, 1.5, 0.5
SEQS = [[0, 0, 1, 1, 2], [2, 2, 2, 0], [1, 1, 0, 0, 0], [0, 1, 2], [2, 2, 1, 1]]


def _stats(z, beta, offsets) -> list:
    same = np.ones(len(z) - 1, dtype=bool)
    same[offsets[1:-1] - 1] = False
    return [np.mean(z[:-1][same] == z[1:][same]), len(np.unique(z)), np.max(beta),
            float(z[0] == z[offsets[1] - 1])]


def reference_chain(data, n, rng) -> np.ndarray:
    beta = np.full(L, 1.0 / L)
    P = rng.dirichlet(np.ones(L), size=L + 1)
    theta = rng.dirichlet(np.ones(V), size=L)
    out = []
    for _ in range(n):
        z, _ = sample_states(data, P[-1], P[:-1], None, np.log(theta).T[data.x], rng)
        counts, _ = jump_counts(data, z, L)
        m = table_counts(counts, np.tile(ALPHA * beta, (L + 1, 1)), rng)
        beta = rng.dirichlet(GAMMA / L + m.sum(axis=0))
        P = np.array([rng.dirichlet(ALPHA * beta + c) for c in counts])
        P = np.maximum(P, 1e-300)
        P /= P.sum(axis=1, keepdims=True)
        em = np.bincount(z * V + data.x, minlength=L * V).reshape(L, V)
        theta = np.array([rng.dirichlet(ETA + c) for c in em])
        out.append(_stats(z, beta, data.offsets))
    return np.array(out)


def lt_chain(data, n, lam, seed) -> np.ndarray:
    st = HMMSettings(model="lt", L=L, alpha=ALPHA, gamma=GAMMA, lam=lam, eta=ETA,
                     model_length=False, sample_hypers=False)
    kernel = HMMSampler(data, st, Categorical(V, ETA))
    state = kernel.init(seed)
    out = []
    for _ in range(n):
        state = kernel.sample(state)
        out.append(_stats(state.z, state.beta, data.offsets))
    return np.array(out)


def _z(a, b, batches=40):
    def se(x):
        bm = x[: len(x) // batches * batches].reshape(batches, -1, x.shape[1]).mean(axis=1)
        return bm.var(axis=0, ddof=1) / batches
    return (a.mean(axis=0) - b.mean(axis=0)) / np.sqrt(se(a) + se(b))


@pytest.fixture(scope="module")
def reference():
    data = Sequences.from_list([np.array(s) for s in SEQS])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        return data, reference_chain(data, 8000, np.random.default_rng(5))


def test_lt_with_unit_kernel_equals_hdp_hmm(reference):
    data, ref = reference
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        lt = lt_chain(data, 8000, 0.0, 6)
    assert np.all(np.abs(_z(lt, ref)) < 4), _z(lt, ref)


def test_negative_control_local_kernel_differs(reference):
    data, ref = reference
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        lt = lt_chain(data, 2000, 3.0, 6)  # max |z| 10.3 at 2000 sweeps (15.7 at 8000)
    assert np.max(np.abs(_z(lt, ref))) > 6, _z(lt, ref)
