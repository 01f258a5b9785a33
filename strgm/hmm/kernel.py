"""The Gibbs kernel of the infinite HMMs: ``init(seed)`` and ``sample(state)``.

One sweep (docs/hmm.md) visits, in this order,

1. z | π, φ, θ, x — forward filtering, backward sampling, u and q integrated out;
2. (LT only) ℓ and λ | z, π — Metropolis–Hastings, u and q integrated out
   (:mod:`strgm.hmm.locations`); (hdp and sticky, with ``split_merge`` > 0) that many
   split–merge moves on z with π, θ and the stopping probabilities integrated out, then
   π | z, β (:mod:`strgm.hmm.split_merge`);
3. u | z, π, φ and q | u, π, φ (Dawson 2015, eqs. 41, 44);
4. the table counts m (and the sticky overrides w) | n + q, α, β, κ with π integrated;
   then γ | m̄ (β integrated, slice sampling), α | m̄, u and κ | w, u (Gamma), β | γ, m̄
   (Dirichlet), and last π | everything (Gamma, eq. 47). Drawing π last makes this a
   valid partially collapsed Gibbs block (van Dyk & Park 2008);
5. θ | z, x (conjugate), and the stopping probabilities stop_k ~ Beta(a_end + ends_k,
   b_end + jumps_k).

Each step draws from a conditional of the joint posterior, so the posterior is the
kernel's stationary distribution; the Geweke test in ``tests/hmm`` checks this. With
``model="hdp"`` φ ≡ 1 and q ≡ 0; with ``"sticky"`` φ ≡ 1 and κ > 0. Cost per sweep:
O(N·L²) for step 1, O(L³·D) for step 2, O(Σ(n + q)) for the table counts, O(N + L·V)
for the emissions. Each trace row records the number of states in use;
:func:`strgm.hmm.training.run_chain` warns when the last sweep uses all L.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import numpy as np

from strgm.errors import InputError
from strgm.hmm.auxiliary import log_gamma_posterior, slice_log
from strgm.hmm.data import Sequences
from strgm.hmm.emissions import emitter
from strgm.hmm.forward import sample_states
from strgm.hmm.locations import move_locations, move_scale
from strgm.hmm.prior import dirichlet, draw_parameters
from strgm.hmm.split_merge import draw_rows, split_merge
from strgm.hmm.state import HMMState
from strgm.hmm.transitions import concentrations, draw_pi, draw_tables, failed_jumps, \
    holding_times, jump_counts, jump_probabilities, similarity

__all__ = ["HMMSampler"]


class HMMSampler:
    """Gibbs kernel of an infinite HMM over ``data`` (a :class:`Sequences`)."""

    def __init__(self, data: Sequences, settings, emissions):
        if settings.split_merge and emissions.kind != "categorical":
            raise InputError("option split_merge: split-merge moves need categorical "
                             "emissions (symbols), not real vectors")
        self.data = data
        self.settings = settings
        self.emissions = emissions
        h = hashlib.sha1(json.dumps([settings.to_dict(), emissions.to_dict()],
                                    sort_keys=True).encode())
        h.update(np.ascontiguousarray(data.offsets).tobytes())
        h.update(np.ascontiguousarray(data.x).tobytes())
        self.fingerprint = h.hexdigest()

    def with_data(self, x: np.ndarray) -> "HMMSampler":
        """The same kernel for new observations of the same lengths (Geweke tests)."""
        return HMMSampler(Sequences(x, self.data.offsets), self.settings, self.emissions)

    def init(self, seed: int, start: str | None = None) -> HMMState:
        """A chain's first state. ``"symbols"`` (the default for categorical emissions):
        each token's state is its symbol's — the bigram model, states ranked by symbol
        frequency, the symbols beyond the L − 1 most frequent sharing the last state —
        then every parameter drawn given those states (steps 3–5). ``"random"`` (the
        default for vectors): every token's state uniform over the L states, so the
        chain starts with all states in use. ``"prior"``: every parameter from the prior,
        z given them. The hyperparameters start at their initial values, ℓ from its
        prior (docs/hmm.md compares the starts)."""
        rng = np.random.default_rng(seed)
        par = draw_parameters(self.settings, self.emissions, rng)
        if start is None:
            start = "symbols" if self.emissions.kind == "categorical" else "random"
        if start == "prior":
            return self._states_given(par, rng)
        if start == "symbols" and self.emissions.kind == "categorical":
            z = _symbol_states(self.data.x, self.emissions.V, self.settings.L)
        elif start == "random":
            z = rng.integers(0, self.settings.L, size=self.data.num_tokens)
        else:
            raise InputError(f"unknown start {start!r} (expected 'symbols' with symbols, "
                             "'random' or 'prior')")
        shell = HMMState(iteration=0, z=z, u=np.zeros(self.settings.L + 1),
                         q=np.zeros_like(par["pi"]), rng_state={},
                         fingerprint=self.fingerprint, **par)
        fields, _ = self._given_states(shell, z, par["ell"], par["lam"], rng)
        return HMMState(iteration=0, z=z, ell=par["ell"], lam=par["lam"],
                        rng_state=rng.bit_generator.state, fingerprint=self.fingerprint,
                        **fields)

    def from_parameters(self, par: dict, rng) -> HMMState:
        """A state holding the parameters ``par`` (as :func:`draw_parameters` returns
        them), z drawn given them and u, q given z."""
        return self._states_given(par, rng)

    def _states_given(self, par, rng) -> HMMState:
        s = self.settings
        phi = similarity(par["ell"], par["lam"], s.local)
        p0, P = jump_probabilities(par["pi"], phi)
        loglik = emitter(self.emissions, par["params"], self.data.x)
        z, _ = sample_states(self.data, p0, P, par["stop"] if s.model_length else None,
                             loglik, rng)
        n, _ = jump_counts(self.data, z, s.L)
        u = holding_times(n, par["pi"], phi, rng)
        q = failed_jumps(par["pi"], phi, u, rng)
        return HMMState(iteration=0, z=z, u=u, q=q, rng_state=rng.bit_generator.state,
                        fingerprint=self.fingerprint, **par)

    def sample(self, state: HMMState) -> HMMState:
        """One sweep (module docstring); returns a new state."""
        s, data, L = self.settings, self.data, self.settings.L
        rng = state.rng()
        phi = similarity(state.ell, state.lam, s.local)
        p0, P = jump_probabilities(state.pi, phi)
        stop = state.stop if s.model_length else None
        z, loglik = sample_states(data, p0, P, stop,
                                  emitter(self.emissions, state.params, data.x), rng)
        ell, lam, acc = state.ell, state.lam, 0
        if s.split_merge:
            z, state = self._split_merge(state, z, rng)
        if s.local:
            n, _ = jump_counts(data, z, L)
            ell, acc = move_locations(n, state.pi, ell, lam, s.loc_step, rng)
            if s.sample_hypers:
                lam, _ = move_scale(n, state.pi, ell, lam, s.a_lam, s.b_lam, s.lam_step, rng)
        fields, q_total = self._given_states(state, z, ell, lam, rng)
        used = len(np.unique(z))
        row = {"iteration": state.iteration + 1, "loglik": loglik, "states": used,
               "alpha": fields["alpha"], "gamma": fields["gamma"],
               "kappa": fields["kappa"], "lam": float(lam), "q": q_total,
               "loc_accept": acc / L if s.local else None}
        return HMMState(iteration=state.iteration + 1, z=z, ell=ell, lam=float(lam),
                        rng_state=rng.bit_generator.state,
                        accepted=state.accepted + acc,
                        proposed=state.proposed + (L if s.local else 0),
                        fingerprint=state.fingerprint, trace=state.trace + [row],
                        samples=state.samples, settings=state.settings, **fields)

    def _split_merge(self, state, z, rng) -> tuple[np.ndarray, HMMState]:
        """Step 2 for hdp/sticky: the moves, then π | z, β in place of the old π."""
        s = self.settings
        conc = concentrations(state.alpha, state.beta, state.kappa)
        stop_prior = (s.a_end, s.b_end) if s.model_length else None
        z, _ = split_merge(self.data, z, conc, self.emissions, stop_prior, s.split_merge,
                           rng)
        n, _ = jump_counts(self.data, z, s.L)
        return z, replace(state, pi=draw_rows(conc, n, rng))

    def _given_states(self, state, z, ell, lam, rng) -> tuple[dict, float]:
        """Steps 3–5 of the sweep given z, ℓ, λ and the current π: the new u, q, α, γ,
        κ, β, π, emission parameters and stopping probabilities (as HMMState fields),
        and the total number of failed jumps."""
        s, L = self.settings, self.settings.L
        n, ends = jump_counts(self.data, z, L)
        phi = similarity(ell, lam, s.local)
        u = holding_times(n, state.pi, phi, rng)
        q = failed_jumps(state.pi, phi, u, rng)
        hyper = self._hyper_block(n + q, u, state, rng)
        pi = draw_pi(concentrations(hyper["alpha"], hyper["beta"], hyper["kappa"]),
                     n + q, u, rng)
        params = self.emissions.posterior_draw(z, self.data.x, L, rng)
        stop = (rng.beta(s.a_end + ends, s.b_end + n[:L].sum(axis=1)) if s.model_length
                else state.stop)
        return dict(pi=pi, params=params, stop=stop, u=u, q=q, **hyper), float(q.sum())

    def _hyper_block(self, N, u, state, rng) -> dict:
        """m̄, w | N; then γ, α, κ | m̄, w, u and β | γ, m̄ (module docstring, step 4)."""
        s, L = self.settings, self.settings.L
        m_bar, w = draw_tables(N, state.alpha, state.beta, state.kappa, rng)
        dish = m_bar.sum(axis=0)
        alpha, gamma, kappa = state.alpha, state.gamma, state.kappa
        if s.sample_hypers:
            gamma = slice_log(lambda g: log_gamma_posterior(g, dish, s.a_gamma, s.b_gamma),
                              gamma, rng)
            alpha = rng.gamma(s.a_alpha + m_bar.sum()) / (s.b_alpha + np.log1p(u).sum())
            if s.sticky:
                kappa = rng.gamma(s.a_kappa + w.sum()) / (s.b_kappa + np.log1p(u[:L]).sum())
        beta = dirichlet(gamma / L + dish, rng)
        return {"alpha": float(alpha), "gamma": float(gamma), "kappa": float(kappa),
                "beta": beta}

    def check_state(self, state: HMMState) -> None:
        """InputError unless ``state`` belongs to this kernel's data and settings."""
        if state.fingerprint != self.fingerprint:
            raise InputError("checkpoint was made with different data or settings")
        L, S = self.settings.L, self.data
        shapes = {"z": (S.num_tokens,), "pi": (L + 1, L), "beta": (L,), "q": (L + 1, L),
                  "u": (L + 1,), "ell": (L, self.settings.loc_dim)}
        for key, shape in shapes.items():
            if np.shape(getattr(state, key)) != shape:
                raise InputError(f"field {key!r} has shape {np.shape(getattr(state, key))}, "
                                 f"expected {shape}")
        if np.any(state.z >= L):
            raise InputError(f"field 'z' holds a state ≥ L = {L}")


def _symbol_states(x: np.ndarray, V: int, L: int) -> np.ndarray:
    """The "symbols" start: state = the symbol's frequency rank, capped at L − 1."""
    rank = np.empty(V, dtype=np.int64)
    rank[np.argsort(-np.bincount(x, minlength=V), kind="stable")] = np.arange(V)
    return np.minimum(rank[x], L - 1)
