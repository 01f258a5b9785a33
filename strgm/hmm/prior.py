"""Draws from the generative model: parameters from their priors, then sequences.

Used to initialise chains, to make synthetic data with known states, and by the Geweke
test (marginal-conditional simulation). The order follows the seed (Dawson 2015,
eqs. 35–39) in the weak limit:

    (α, γ, κ, λ) ~ their Gamma priors  (or fixed at the settings' values)
    β ~ Dirichlet(γ/L, …, γ/L);  ℓ_k ~ N(0, I_D);  π_kk' ~ Gamma(αβ_k' + κ[k = k'], 1)
    stop_k ~ Beta(a_end, b_end);  θ_k ~ the emission prior
    z_1 ~ a_{start·}/Σ,  z_t | z_{t−1} ~ a_{z_{t−1}·}/Σ,  x_t ~ F(θ_{z_t}),

the length either given or ended with probability stop_{z_t} after each symbol.
"""

from __future__ import annotations

import numpy as np

from strgm.hmm.data import Sequences
from strgm.hmm.forward import sample_rows
from strgm.hmm.transitions import concentrations, draw_pi, jump_probabilities, similarity

__all__ = ["draw_parameters", "draw_sequences", "dirichlet"]


def dirichlet(a: np.ndarray, rng) -> np.ndarray:
    """One Dirichlet(a) draw, every component floored at the smallest normal float."""
    g = np.maximum(rng.gamma(a), np.finfo(float).tiny)
    return g / g.sum()


def draw_parameters(settings, emissions, rng, draw_hypers: bool = False) -> dict:
    """Every parameter of the model from its prior, as a dict with keys alpha, gamma,
    kappa, lam, beta, ell, pi, stop (empty without ``model_length``) and params."""
    s, L = settings, settings.L
    if draw_hypers:
        alpha = rng.gamma(s.a_alpha) / s.b_alpha
        gamma = rng.gamma(s.a_gamma) / s.b_gamma
        kappa = rng.gamma(s.a_kappa) / s.b_kappa if s.sticky else 0.0
        lam = rng.gamma(s.a_lam) / s.b_lam if s.local else s.lam
    else:
        alpha, gamma = s.alpha, s.gamma
        kappa = s.kappa if s.sticky else 0.0
        lam = s.lam
    beta = dirichlet(np.full(L, gamma / L), rng)
    ell = rng.standard_normal((L, s.loc_dim))
    c = concentrations(alpha, beta, kappa)
    pi = draw_pi(c, np.zeros_like(c, dtype=np.int64), np.zeros(L + 1), rng)
    stop = rng.beta(s.a_end, s.b_end, size=L) if s.model_length else np.zeros(0)
    return {"alpha": float(alpha), "gamma": float(gamma), "kappa": float(kappa),
            "lam": float(lam), "beta": beta, "ell": ell, "pi": pi, "stop": stop,
            "params": emissions.prior_draw(L, rng)}


def draw_sequences(par: dict, settings, emissions, rng, lengths=None, num: int = 0,
                   max_length: int = 200) -> tuple[Sequences, np.ndarray]:
    """(sequences, their states z): ``lengths`` given, or (with ``model_length``)
    ``num`` sequences ended by the stopping probabilities, cut at ``max_length``."""
    p0, P = jump_probabilities(par["pi"], similarity(par["ell"], par["lam"], settings.local))
    if lengths is None:
        lengths, steps = _run_chains(p0, P, par["stop"], num, max_length, rng)
    else:
        lengths = np.asarray(lengths, dtype=np.int64)
        steps = _run_chains(p0, P, None, len(lengths), int(lengths.max()), rng,
                            lengths)[1]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    z = np.empty(offsets[-1], dtype=np.int64)
    for t, (alive, states) in enumerate(steps):
        z[offsets[alive] + t] = states
    x = emissions.draw_data(par["params"], z, rng)
    return Sequences(x, offsets), z


def _run_chains(p0, P, stop, num, max_length, rng, lengths=None):
    """(lengths, [(alive sequence ids, their states)] per time step) of ``num`` chains:
    ended by ``stop`` after each symbol, or run to the given ``lengths``."""
    cur = sample_rows(np.tile(p0, (num, 1)), rng)
    alive = np.arange(num)
    steps = [(alive, cur)]
    out = np.ones(num, dtype=np.int64)
    for t in range(1, max_length):
        go_on = (rng.random(len(alive)) >= stop[cur] if lengths is None
                 else lengths[alive] > t)
        alive, cur = alive[go_on], cur[go_on]
        if not len(alive):
            break
        cur = sample_rows(P[cur], rng)
        out[alive] += 1
        steps.append((alive, cur))
    return out, steps
