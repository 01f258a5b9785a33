"""Split–merge moves for the HDP-HMM and the sticky HDP-HMM: Metropolis–Hastings on the
state sequence z that creates or removes a whole state in one step (Jain & Neal 2004;
for HMMs Hughes, Fox & Sudderth 2012), so a chain neither keeps the spurious states of
its start nor waits for single-token moves to build a new one.

**Target.** The move leaves invariant p(z | β, α, κ, x) with the transition rows, the
emission parameters and the stopping probabilities integrated out (φ ≡ 1, so each row of
π normalised is Dirichlet(c_j), c_jk = αβ_k + κ[j = k], docs/hmm.md):

    p(z | ·) ∝ Π_j DM(n_j· ; c_j) · Π_k DM(N_k· ; η) · Π_k B(a + e_k, b + m_k) / B(a, b),

DM the Dirichlet-multinomial, n the jump counts (row L: first states), N the emission
counts, e_k the sequences ending in k and m_k = n_k· the jumps out of k (the last factor
only with a length model).

**Proposal.** A token i, uniformly, and a partner j ≠ i with probability q(j | i, z) ∝
w(z_i, z_j): 1 within z_i's state, BC(z_i, z_j)^τ for another state, BC the
Bhattacharyya coefficient Σ_v √(p_a(v) p_b(v)) of the states' emission distributions
smoothed by η (τ = :data:`PAIR_SHARPNESS`), so that merges pair states that emit alike
(Hughes, Fox & Sudderth 2012 choose anchors by similarity too). If z_i = z_j = s, *split* s: j's new
state is a slot e drawn uniformly among the E empty ones; the other tokens of s, in index
order, go to side k ∈ {s, e} with probability ∝ m_k (N_k[x_t] + η)/(m_k + Vη), the counts
of the tokens already placed (sequential allocation, Dahl 2003; transitions are ignored
by the proposal, not by the target). If z_i ≠ z_j, *merge* z_j's state into z_i's. The
acceptance probability is min(1, R) with

    split: R = p(z′)/p(z) · ρ · E / q_alloc,      merge: R = p(z′)/p(z) · ρ · q_alloc / E′,

ρ = q(j | i, z′)/q(j | i, z), q_alloc the probability that the allocation produces the
split state (for a merge: the one it came from) and E′ the empty slots after the merge.
The reverse of a split of s by (i, j) is the merge by the same pair.

After the moves, :func:`draw_rows` draws π | z, β (each row Sπ_j with π_j/S ~
Dirichlet(c_j + n_j) and S ~ Gamma(Σ_k c_jk)), so the sweep's next steps see a π that
belongs to the new z. Cost per move O(N + L² + L·V) for the two marginals and O(n_s)
for the allocation. ``tests/hmm/test_split_merge.py`` checks p·T = p for the exact
transition matrix of the move on tiny data, with a wrong proposal probability shown to
fail.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln, gammaln

from strgm.hmm.transitions import PI_FLOOR, jump_counts
from strgm.compiled import njit

__all__ = ["log_marginal", "allocation_log_prob", "log_acceptance", "split_merge",
           "draw_rows"]


def _dm(counts: np.ndarray, conc: np.ndarray) -> float:
    """Σ over rows of log DM(counts_r ; conc_r) (the multinomial coefficient left out:
    it is the same for every z)."""
    return float((gammaln(conc.sum(axis=1)) - gammaln(conc.sum(axis=1) + counts.sum(axis=1))
                  ).sum() + (gammaln(conc + counts) - gammaln(conc)).sum())


def log_marginal(data, z: np.ndarray, conc: np.ndarray, emissions, stop_prior) -> float:
    """log p(z | β, α, κ, x) up to a constant (module docstring). ``conc`` (L+1, L) from
    :func:`strgm.hmm.transitions.concentrations`; ``stop_prior`` (a, b) or None."""
    L = conc.shape[1]
    n, ends = jump_counts(data, z, L)
    out = _dm(n, conc)
    N = emissions.counts(z, data.x, L)
    out += _dm(N, np.full(N.shape, emissions.eta))
    if stop_prior is not None:
        a, b = stop_prior
        out += float((betaln(a + ends, b + n[:L].sum(axis=1)) - betaln(a, b)).sum())
    return out


#: τ of the partner weights BC^τ (module docstring): how strongly a merge proposal
#: prefers states that emit alike.
PAIR_SHARPNESS = 10.0

#: Pseudo-count of the proposal's neighbour tables (module docstring).
NEIGHBOUR_PSEUDO = 0.1


@njit(cache=True)
def _allocate(tokens, x, z, s, prev_tok, next_tok, side, draw, u, eta, V, L, eps):  # pragma: no cover - compiled
    """Sequential allocation of ``tokens`` (anchors i, j first, then the rest in index
    order) of state ``s``: side[t] = 1 puts t with j. On ``draw`` the rest's sides are
    drawn from the uniforms ``u``, else read from ``side``. Returns log q_alloc."""
    C = L + 5
    emit = np.zeros((2, V))
    into = np.zeros((2, C))
    out = np.zeros((2, C))
    size = np.zeros(2)
    placed = np.zeros(len(z), dtype=np.bool_)
    side[tokens[0]] = 0
    side[tokens[1]] = 1
    placed[tokens[0]] = True
    placed[tokens[1]] = True
    logq = 0.0
    for r in range(len(tokens)):
        t = tokens[r]
        v = x[t]
        pc = _category(prev_tok[t], z, s, side, placed, L, L + 2)
        nc = _category(next_tok[t], z, s, side, placed, L, L + 4)
        if r >= 2:
            w = np.empty(2)
            for k in range(2):
                w[k] = (size[k] * (emit[k, v] + eta) / (size[k] + V * eta)
                        * (into[k, pc] + eps) / (size[k] + C * eps)
                        * (out[k, nc] + eps) / (size[k] + C * eps))
            p1 = w[1] / (w[0] + w[1])
            if draw:
                side[t] = 1 if u[r - 2] < p1 else 0
            placed[t] = True
            logq += np.log(p1 if side[t] == 1 else 1.0 - p1)
        k = side[t]
        emit[k, v] += 1.0
        into[k, pc] += 1.0
        out[k, nc] += 1.0
        size[k] += 1.0
    return logq


@njit(cache=True)
def _category(r, z, s, side, placed, L, edge):  # pragma: no cover - compiled
    """The proposal's class of neighbour token r: its state outside s, L or L + 1 for a
    placed token of s (by side), L + 3 for one not yet placed, ``edge`` for none."""
    if r < 0:
        return edge
    if z[r] != s:
        return z[r]
    if placed[r]:
        return L + side[r]
    return L + 3


def _neighbours(data) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) token of every token in its sequence, −1 at the edges."""
    N = data.num_tokens
    prev_tok, next_tok = np.arange(-1, N - 1), np.arange(1, N + 1)
    first, last = data.first_last()
    prev_tok[first], next_tok[last] = -1, -1
    return prev_tok.astype(np.int64), next_tok.astype(np.int64)


class _Move:
    """What every proposal of one :func:`split_merge` call shares: the data as int64
    arrays, the neighbours, the concentrations and the priors."""

    def __init__(self, data, conc: np.ndarray, emissions, stop_prior):
        self.data, self.conc, self.emissions, self.stop_prior = data, conc, emissions, stop_prior
        self.L = conc.shape[1]
        self.x = np.asarray(data.x, dtype=np.int64)
        self.prev_tok, self.next_tok = _neighbours(data)

    def tokens(self, merged: np.ndarray, i: int, j: int) -> np.ndarray:
        """The merged state's tokens in allocation order: i, j, then the rest by index."""
        whole = np.flatnonzero(merged == merged[i])
        return np.concatenate([[i, j], whole[(whole != i) & (whole != j)]]).astype(np.int64)

    def allocate(self, merged, tokens, side, u) -> float:
        return float(_allocate(tokens, self.x, np.asarray(merged, dtype=np.int64),
                               int(merged[tokens[0]]), self.prev_tok, self.next_tok, side,
                               u is not None, np.zeros(0) if u is None else u,
                               float(self.emissions.eta), int(self.emissions.V), self.L,
                               NEIGHBOUR_PSEUDO))

    def marginal(self, z) -> float:
        return log_marginal(self.data, z, self.conc, self.emissions, self.stop_prior)


def allocation_log_prob(move: _Move, merged: np.ndarray, parts: np.ndarray, i: int,
                        j: int) -> float:
    """log q_alloc: the probability that the sequential allocation of the state of i and j
    in ``merged``, anchored at i and j, reproduces ``parts``."""
    tokens = move.tokens(merged, i, j)
    side = np.full(len(merged), -1, dtype=np.int64)
    side[tokens] = (parts[tokens] == parts[j]).astype(np.int64)
    return move.allocate(merged, tokens, side, None)


def _pair_weights(move: "_Move", z: np.ndarray, i: int) -> np.ndarray:
    """w(z_i, z_t) for every token t (0 for t = i): 1 within z_i's state, BC^τ for another
    state, BC the Bhattacharyya coefficient of the two states' smoothed emission
    distributions in z (module docstring)."""
    em = move.emissions
    N = em.counts(z, move.data.x, move.L) + em.eta
    root = np.sqrt(N / N.sum(axis=1, keepdims=True))
    s = z[i]
    by_state = np.minimum(root @ root[s], 1.0) ** PAIR_SHARPNESS
    by_state[s] = 1.0
    w = by_state[z]
    w[i] = 0.0
    return w


def pair_log_prob(move: "_Move", z: np.ndarray, i: int, j: int) -> float:
    """log q(j | i, z): the probability of drawing j as i's partner."""
    w = _pair_weights(move, z, i)
    return float(np.log(w[j]) - np.log(w.sum()))


def _empty(z: np.ndarray, L: int) -> int:
    return int((np.bincount(z, minlength=L) == 0).sum())


def log_acceptance(move: _Move, z: np.ndarray, z_new: np.ndarray, i: int, j: int) -> float:
    """log R of the move from z to z_new proposed with the pair (i, j) (module
    docstring): a split when z_i = z_j, else a merge."""
    split = z[i] == z[j]
    merged, parts = (z, z_new) if split else (z_new, z)
    logq = allocation_log_prob(move, merged, parts, i, j)
    gain = (move.marginal(z_new) - move.marginal(z)
            + pair_log_prob(move, z_new, i, j) - pair_log_prob(move, z, i, j))
    if split:
        return gain + np.log(_empty(z, move.L)) - logq
    return gain - np.log(_empty(z_new, move.L)) + logq


def _propose(move: _Move, z: np.ndarray, i: int, j: int, rng):
    """z′ for the pair (i, j), or None (a split with no empty slot)."""
    z_new = z.copy()
    if z[i] != z[j]:
        z_new[z == z[j]] = z[i]
        return z_new
    empties = np.flatnonzero(np.bincount(z, minlength=move.L) == 0)
    if not len(empties):
        return None
    tokens = move.tokens(z, i, j)
    side = np.full(len(z), -1, dtype=np.int64)
    move.allocate(z, tokens, side, rng.random(len(tokens) - 2))
    z_new[tokens[side[tokens] == 1]] = int(rng.choice(empties))
    return z_new


def split_merge(data, z: np.ndarray, conc: np.ndarray, emissions, stop_prior, moves: int,
                rng) -> tuple[np.ndarray, int]:
    """``moves`` split–merge proposals from z; returns (z, number accepted)."""
    move = _Move(data, conc, emissions, stop_prior)
    accepted = 0
    if len(z) < 2:
        return z, 0
    for _ in range(moves):
        i = int(rng.integers(len(z)))
        w = _pair_weights(move, z, i)
        j = int(np.searchsorted(np.cumsum(w), rng.random() * w.sum(), side="right"))
        z_new = _propose(move, z, i, j, rng)
        if z_new is not None and np.log(rng.random()) < log_acceptance(move, z, z_new, i, j):
            z, accepted = z_new, accepted + 1
    return z, accepted


def draw_rows(conc: np.ndarray, n: np.ndarray, rng) -> np.ndarray:
    """π | z, β with π integrated out before: row j is S_j·w_j, w_j ~ Dirichlet(c_j + n_j),
    S_j ~ Gamma(Σ_k c_jk) (module docstring), floored like every π."""
    g = np.maximum(rng.gamma(conc + n), np.finfo(float).tiny)
    w = g / g.sum(axis=1, keepdims=True)
    pi = w * rng.gamma(conc.sum(axis=1))[:, None]
    return np.maximum(pi, PI_FLOOR)
