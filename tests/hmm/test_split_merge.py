"""Split–merge moves of the HDP-HMM: the exact transition matrix of the move on tiny data
leaves the collapsed posterior p(z | β, α, κ, x) invariant (p·T = p, by enumeration of
every pair, empty slot and allocation), the drawn allocations have the probabilities the
acceptance uses, and the kernel with the moves passes the Geweke test; each with a broken
variant that fails."""

import itertools
import warnings

import numpy as np
import pytest

import strgm.hmm.split_merge as sm
from tests.hmm.geweke import chain_draws, prior_draws, z_scores
from strgm.errors import InputError, TruncationWarning
from strgm.hmm import Categorical, HMMSampler, HMMSettings, Gaussian
from strgm.hmm.data import Sequences
from strgm.hmm.transitions import concentrations

L, V = 3, 2
DATA = Sequences.from_list([np.array([0, 1]), np.array([1, 1, 0])])
BETA = np.array([0.5, 0.3, 0.2])


def _move(kappa=0.0, stop_prior=(1.0, 2.0)):
    return sm._Move(DATA, concentrations(1.5, BETA, kappa), Categorical(V, 0.7), stop_prior)


def _states():
    return [np.array(z) for z in itertools.product(range(L), repeat=DATA.num_tokens)]


def _transition_matrix(move, accept=None):
    """T[z, z′] of one split–merge proposal and its accept/reject step (``accept``: the
    log acceptance, the module's by default)."""
    accept = accept or sm.log_acceptance
    zs = _states()
    index = {tuple(z): a for a, z in enumerate(zs)}
    N = DATA.num_tokens
    pairs = [(i, j) for i in range(N) for j in range(N) if i != j]
    T = np.zeros((len(zs), len(zs)))
    for a, z in enumerate(zs):
        for i, j in pairs:
            pick = np.exp(sm.pair_log_prob(move, z, i, j)) / N
            for z_new, q in _proposals(move, z, i, j):
                acc = min(1.0, np.exp(accept(move, z, z_new, i, j)))
                T[a, index[tuple(z_new)]] += pick * q * acc
        T[a, a] += 1.0 - T[a].sum()
    return zs, T


def _proposals(move, z, i, j):
    """Every z′ the pair (i, j) can propose from z, with its probability."""
    if z[i] != z[j]:
        z_new = z.copy()
        z_new[z == z[j]] = z[i]
        return [(z_new, 1.0)]
    empties = np.flatnonzero(np.bincount(z, minlength=L) == 0)
    rest = move.tokens(z, i, j)[2:]
    out = []
    for e in empties:
        for sides in itertools.product([0, 1], repeat=len(rest)):
            z_new = z.copy()
            z_new[j] = e
            z_new[rest[np.array(sides, dtype=bool)]] = e
            q = np.exp(sm.allocation_log_prob(move, z, z_new, i, j)) / len(empties)
            out.append((z_new, q))
    return out


def _posterior(move, zs):
    lp = np.array([move.marginal(z) for z in zs])
    p = np.exp(lp - lp.max())
    return p / p.sum()


@pytest.mark.parametrize("kappa,stop_prior", [(0.0, (1.0, 2.0)), (0.8, None)])
def test_move_leaves_the_collapsed_posterior_invariant(kappa, stop_prior):
    move = _move(kappa, stop_prior)
    zs, T = _transition_matrix(move)
    assert np.all(T >= -1e-12) and np.allclose(T.sum(axis=1), 1.0)
    p = _posterior(move, zs)
    assert np.abs(p @ T - p).max() < 1e-12
    assert (np.diag(T) < 1 - 1e-6).sum() > len(zs) // 2  # the move does move


def test_allocation_probabilities_sum_to_one():
    move = _move()
    z = np.array([1, 1, 1, 1, 1])
    for i, j in [(0, 1), (4, 2), (3, 0)]:
        total = sum(q for _, q in _proposals(move, z, i, j))
        assert total == pytest.approx(1.0, abs=1e-12)


def test_drawn_splits_have_the_stated_probabilities():
    move, z, (i, j) = _move(), np.array([2, 2, 2, 2, 2]), (1, 3)
    exact = {tuple(zn): q for zn, q in _proposals(move, z, i, j)}
    rng, n = np.random.default_rng(0), 20000
    counts = {}
    for _ in range(n):
        key = tuple(sm._propose(move, z, i, j, rng))
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) <= set(exact)
    for key, q in exact.items():
        assert abs(counts.get(key, 0) / n - q) < 4 * np.sqrt(q * (1 - q) / n) + 1e-3


def test_negative_control_proposal_probability_ignored(monkeypatch):
    """An acceptance that leaves out q_alloc breaks invariance."""
    move = _move()
    p = _posterior(move, _states())

    def without_q(move, z, z_new, i, j):
        gain = (move.marginal(z_new) - move.marginal(z) + sm.pair_log_prob(move, z_new, i, j)
                - sm.pair_log_prob(move, z, i, j))
        if z[i] == z[j]:
            return gain + np.log(sm._empty(z, L))
        return gain - np.log(sm._empty(z_new, L))

    monkeypatch.setattr(sm, "log_acceptance", without_q)
    _, T = _transition_matrix(move)
    assert np.abs(p @ T - p).max() > 1e-3


def test_pair_probabilities_sum_to_one_and_favour_alike_states():
    move, z = _move(), np.array([0, 0, 1, 2, 2])
    for i in range(DATA.num_tokens):
        total = sum(np.exp(sm.pair_log_prob(move, z, i, j)) for j in range(5) if j != i)
        assert total == pytest.approx(1.0, abs=1e-12)
    # token 0 (symbol 0, state 0 = symbols 0, 1) prefers state 2 (symbols 1, 0) to
    # state 1 (symbol 1 only)
    assert sm.pair_log_prob(move, z, 0, 3) > sm.pair_log_prob(move, z, 0, 2)


def test_negative_control_pair_probability_ignored():
    """An acceptance that treats the partner as drawn uniformly breaks invariance."""
    move = _move()
    p = _posterior(move, _states())

    def without_rho(move, z, z_new, i, j):
        return (sm.log_acceptance(move, z, z_new, i, j) - sm.pair_log_prob(move, z_new, i, j)
                + sm.pair_log_prob(move, z, i, j))

    _, T = _transition_matrix(move, without_rho)
    assert np.abs(p @ T - p).max() > 1e-4


def test_negative_control_empty_slots_ignored(monkeypatch):
    """An acceptance without the 1/E of choosing the new slot breaks invariance."""
    move = _move()
    p = _posterior(move, _states())
    monkeypatch.setattr(sm, "_empty", lambda z, L: 1)
    _, T = _transition_matrix(move)
    assert np.abs(p @ T - p).max() > 1e-4


def test_settings_refuse_the_lt_model_and_vectors():
    with pytest.raises(InputError, match="split_merge.*LT"):
        HMMSettings(model="lt", split_merge=5)
    st = HMMSettings(model="hdp", split_merge=5)
    with pytest.raises(InputError, match="categorical"):
        HMMSampler(Sequences.from_list([np.zeros((3, 2))]), st,
                   Gaussian(np.zeros(2), 1.0, 4.0, np.eye(2)))


def _geweke(n, moves):
    st = HMMSettings(model="hdp", L=3, model_length=False, alpha=2.0, gamma=1.5,
                     a_alpha=2, b_alpha=1, a_gamma=2, b_gamma=1, split_merge=moves)
    em = Categorical(2, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        a = prior_draws(st, em, [3, 3, 2], n, np.random.default_rng(1), True)
        b = chain_draws(st, em, [3, 3, 2], n, np.random.default_rng(2), True)
    return z_scores(a, b)


@pytest.mark.slow
def test_kernel_with_moves_leaves_the_joint_invariant():
    z = _geweke(10000, 3)
    bad = {k: round(v, 2) for k, v in z.items() if abs(v) > 4.0}
    assert not bad, bad


@pytest.mark.slow
def test_negative_control_moves_always_accepted(monkeypatch):
    """A kernel whose moves skip the accept/reject step must fail the same test."""
    monkeypatch.setattr(sm, "log_acceptance", lambda *a: 0.0)
    z = _geweke(3000, 3)
    assert max(abs(v) for v in z.values()) > 8.0
