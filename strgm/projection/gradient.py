"""Gradient ascent on the exact cross-entropy objective (PEP §3.1, §6 "Gradient ascent").

    L(θ) = E_p[log q_θ(v)] = θ·E_p[f] − log Z_θ,      ∇L(θ) = E_p[f] − E_{q_θ}[f]

E_p[f] comes from :func:`strgm.features.p_moments` (composition + forward–backward), Z_θ
and E_q[f] from :func:`strgm.features.q_moments` (linear solves). L is concave. A step that
leaves the feasible region {θ : Z_θ < ∞} (PEP footnote 1) is retried with half the step
size (PEP §6, Dreyer 2011 §2.8.2). Each step costs one q_moments, O(LU(|C|) + |C|·N).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pynini

from strgm.errors import DivergenceError
from strgm.features.moments import Moments, p_moments, q_moments
from strgm.features.theta import FeatureSet, Theta


def uniform_theta(features: FeatureSet) -> Theta:
    """θ_a = −log(N+1) on unigram features (symbols and EOS), 0 elsewhere: the
    normalisable distribution q(a|h) = 1/(N+1) (if the unigrams are in the set)."""
    n = features.num_labels
    vals = np.array([-np.log(n + 1) if (len(w) == 1 and w[0] != n + 1) else 0.0
                     for w in features.features])
    return Theta(features, vals)


def objective(theta: Theta, p_expectations: np.ndarray, q: Moments | None = None) -> float:
    """L(θ) = θ·E_p[f] − log Z_θ (E_p over θ's feature set); −inf if Z_θ = ∞."""
    try:
        q = q or q_moments(theta)
    except DivergenceError:
        return -np.inf
    return float(theta.values @ p_expectations - q.log_z)


def gradient(theta: Theta, p_expectations: np.ndarray) -> np.ndarray:
    """∇L(θ) = E_p[f] − E_q[f] over θ's feature set (DivergenceError if Z_θ = ∞)."""
    return p_expectations - q_moments(theta).expectations


@dataclass(frozen=True)
class StepResult:
    theta: Theta
    q: Moments  # moments of the new θ
    eta: float  # step size actually taken
    halvings: int


def gradient_step(theta: Theta, p_expectations: np.ndarray, eta: float = 0.05,
                  q: Moments | None = None, max_halvings: int = 30,
                  mask: np.ndarray | None = None, what: str = "q_theta") -> StepResult:
    """One ascent step θ + η∇L, halving η while Z = ∞ (PEP §6.1).

    ``q``: moments of θ on θ's feature set, if known (saves one linear solve: EP passes
    the moments its previous step returned). ``mask``: features allowed to move (the
    gradient is zeroed elsewhere; EP fits the order-n family inside a larger working
    set). If every halving leaves Z infinite, θ is returned unchanged with eta = 0.
    ``what`` names the distribution in errors."""
    q = q or q_moments(theta, what=what)
    g = p_expectations - q.expectations
    if mask is not None:
        g = np.where(mask, g, 0.0)
    for h in range(max_halvings + 1):
        cand = Theta(theta.features, theta.values + eta * g)
        try:
            return StepResult(cand, q_moments(cand, what=what), eta, h)
        except DivergenceError:
            eta *= 0.5
    return StepResult(theta, q, 0.0, max_halvings)


def gradient_ascent(p: pynini.Fst, features: FeatureSet, theta0: Theta | None = None,
                    eta: float = 0.5, iters: int = 200, tol: float = 1e-8) -> Theta:
    """Maximise L over a fixed feature set from ``theta0`` (default :func:`uniform_theta`,
    which is normalisable). Returns the final θ."""
    ep = p_moments(p, features).expectations
    theta = theta0.align(features) if theta0 is not None else uniform_theta(features)
    q = q_moments(theta)
    for _ in range(iters):
        r = gradient_step(theta, ep, eta, q)
        if np.max(np.abs(ep - r.q.expectations)) < tol:
            return r.theta
        theta, q = r.theta, r.q
    return theta
