"""EM for the phonology: expected edit counts from factor beliefs, L2 M-step, driver.

E-step. Inference (any method) on the factor graph of the *training* words gives, for
each observed word w, the message μ_{U→F} into its phonology factor F. The factor belief
is b_F(u, s_w) ∝ μ_{U→F}(u)·T_θ(s_w | u). Expected arc counts of T_θ under b_F come from
forward–backward (:func:`fst_factors.wfsa.expectations.expected_arc_counts`) on the acceptor
over T's *arc ids*

    B_w = in-project( relabel_out( in-project(T_θ^{ids} ∘ s_w), id → x(id) ) ∘ μ_{U→F} )

(T^{ids} has the arc id on its input tape; relabelling the output back to the arc's input
symbol lets μ_U check the underlying string). Each path of B_w is one path of T_θ, with
weight μ_U(u)·(its T weight), so c(arc) = Σ_w posterior_w(arc) and log Z(B_w) =
log Σ_u μ_U(u) T_θ(s_w | u). Arc counts map to decision events (ev1, ev2, final_ev).

M-step (one phonology tied across all words): maximise the penalised expected
complete-data log-likelihood

    Q(θ) = Σ_e c_e log p_θ(e) − (λ/2)‖θ‖²,  log p_θ(e) = θ·f_e − log Σ_{e'∈g(e)} exp θ·f_e'
    ∇Q = Σ_e c_e f_e − Σ_g C_g Σ_{e∈g} p_θ(e) f_e − λθ,   C_g = Σ_{e∈g} c_e

with scipy L-BFGS over the groups with C_g > 0 (the others do not enter Q). With an L1
weight μ > 0 the M-step maximises Q(θ) − μ‖θ‖₁ instead, so that only the contexts the
data need get a weight: θ = u − v with u, v ≥ 0 and the smooth objective
−Q(u − v) + μ·Σ(u + v) minimised by L-BFGS-B under the bounds (the standard split; at its
optimum u_i·v_i = 0, and the KKT conditions of the L1 problem hold — tested).

Objective trace: at each E-step, ℓ̂(θ_t) = Σ_w log Z(B_w) − (λ/2)‖θ_t‖². When μ_{U→F} is
the exact normalised prior of U (e.g. single-morpheme words, exact BP) ℓ̂ is the exact
penalised marginal log-likelihood and EM cannot decrease it (tested); with loopy/pruned
inference it is the usual approximation.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pynini
from scipy.optimize import minimize

from strgm.progress import Status
from fst_factors.transducers.contextual_edit import EditStructure
from fst_factors.wfsa.operations import compose
from fst_factors.wfsa.expectations import expected_arc_counts
from fst_factors.wfsa.construct import string_acceptor


# ---------------------------------------------------------------- expected counts
def id_belief(t_ids: pynini.Fst, structure: EditStructure, mu_u: pynini.Fst,
              surface: tuple) -> pynini.Fst:
    """The acceptor B over T's arc ids (module docstring) for one observed surface."""
    g = compose(t_ids, string_acceptor(surface))
    a = pynini.project(g, "input")
    n_arcs = structure.num_arcs
    ids = np.unique(_labels(a))
    ids = ids[ids > 0]
    inl = np.where(ids <= n_arcs, structure.ilabel[np.minimum(ids, n_arcs) - 1], 0)
    a.relabel_pairs(opairs=list(zip(ids.tolist(), inl.tolist())))
    return pynini.project(compose(a, mu_u), "input")


def _labels(fst: pynini.Fst) -> np.ndarray:
    from fst_factors.wfsa.core import arc_table

    return arc_table(fst).ilabel


def event_counts(structure: EditStructure, b: pynini.Fst) -> tuple[np.ndarray, float]:
    """(expected count of every decision event under B, log Z(B))."""
    c, log_z = id_counts(structure, b)
    return events_of(structure, c), log_z


def id_counts(structure: EditStructure, b: pynini.Fst) -> tuple[np.ndarray, float]:
    """(expected count of every id of B — 0, T's arcs 1…|E|, then T's final states —,
    log Z(B)). Linear in the posterior, so counts of many beliefs may be summed before
    :func:`events_of` maps them to events once."""
    post = expected_arc_counts(b, what="phonology factor belief")
    return np.bincount(post.table.ilabel, weights=post.arc_counts,
                       minlength=structure.num_arcs + structure.num_states + 1), post.log_z


def events_of(structure: EditStructure, c: np.ndarray) -> np.ndarray:
    """Event counts of the id counts ``c`` (:func:`id_counts`): each arc of T counts for
    its one or two decision events, each final state for its stop event."""
    arc_c, fin_c = c[1:structure.num_arcs + 1], c[structure.num_arcs + 1:]
    ev = np.zeros(structure.num_events)
    for evs in (structure.ev1, structure.ev2):
        m = evs >= 0
        ev += np.bincount(evs[m], weights=arc_c[m], minlength=structure.num_events)
    mf = structure.final_ev >= 0
    ev += np.bincount(structure.final_ev[mf], weights=fin_c[:structure.num_states][mf],
                      minlength=structure.num_events)
    return ev


def expected_counts(structure: EditStructure, theta: np.ndarray, pairs: list,
                    progress: Optional[Callable[[str], None]] = None,
                    t_ids: Optional[pynini.Fst] = None) -> tuple[np.ndarray, float]:
    """Σ over (μ_U acceptor, surface labels) pairs of event counts, and Σ log Z.
    ``progress(message)`` hears of every word (it decides how often to show one);
    ``t_ids``: T_θ over arc ids, when already compiled."""
    from fst_factors.transducers.contextual_edit import compile_fst

    if t_ids is None:
        t_ids = compile_fst(structure, theta, ids=True)
    total = np.zeros(structure.num_arcs + structure.num_states + 1)
    ll = 0.0
    for i, (mu, s) in enumerate(pairs):
        if progress:
            progress(Status(f"expected edit counts: word {i + 1}/{len(pairs)}", i + 1,
                            len(pairs), "expected counts"))
        c, lz = id_counts(structure, id_belief(t_ids, structure, mu, s))
        total += c
        ll += lz
    return events_of(structure, total), ll


# ---------------------------------------------------------------- M-step
def q_and_grad(structure: EditStructure, counts: np.ndarray, theta: np.ndarray,
               l2: float, active: Optional[np.ndarray] = None) -> tuple[float, np.ndarray]:
    """Q(θ) and ∇Q (module docstring). ``active``: boolean mask of events to use (all
    events of the groups with positive count); default computed from ``counts``."""
    if active is None:
        active = active_events(structure, counts)
    F = structure.features[active]
    c = counts[active]
    g = structure.ev_group[active]
    s = F @ theta
    starts = np.flatnonzero(np.concatenate([[True], g[1:] != g[:-1]]))
    gid = np.cumsum(np.concatenate([[True], g[1:] != g[:-1]])) - 1
    m = np.maximum.reduceat(s, starts)
    e = np.exp(s - m[gid])
    z = np.add.reduceat(e, starts)
    p = e / z[gid]
    logp = s - (m + np.log(z))[gid]
    C = np.add.reduceat(c, starts)
    q = float(c @ logp) - 0.5 * l2 * float(theta @ theta)
    grad = F.T @ (c - C[gid] * p) - l2 * theta
    return q, grad


def active_events(structure: EditStructure, counts: np.ndarray) -> np.ndarray:
    C = np.add.reduceat(counts, structure.group_start)
    return np.repeat(C > 1e-12, np.diff(np.append(structure.group_start, len(counts))))


def m_step(structure: EditStructure, counts: np.ndarray, theta0: np.ndarray,
           l2: float = 0.1, max_iter: int = 200,
           progress: Optional[Callable[[str], None]] = None,
           l1: float = 0.0) -> tuple[np.ndarray, float]:
    """argmax_θ Q(θ) − l1·‖θ‖₁ by L-BFGS(-B) from θ₀ (module docstring); never returns a
    θ with a lower value than θ₀. Returns (θ, Q(θ) − l1·‖θ‖₁). ``progress(message)``
    hears of every evaluation of Q."""
    active = active_events(structure, counts)
    calls = [0]

    def fun(th):
        q, g = q_and_grad(structure, counts, th, l2, active)
        calls[0] += 1
        if progress:
            progress(f"M-step (L-BFGS): evaluation {calls[0]}, Q = {q:.3f}")
        return -q, -g

    n = len(theta0)
    if l1 > 0:
        def split_fun(uv):
            f, g = fun(uv[:n] - uv[n:])
            return f + l1 * float(uv.sum()), np.concatenate([g + l1, -g + l1])

        uv0 = np.concatenate([np.maximum(theta0, 0), np.maximum(-theta0, 0)])
        q0 = -split_fun(uv0)[0]
        res = minimize(split_fun, uv0, jac=True, method="L-BFGS-B",
                       bounds=[(0, None)] * (2 * n),
                       options={"maxiter": max_iter, "gtol": 1e-6})
        theta = res.x[:n] - res.x[n:]
    else:
        q0 = -fun(theta0)[0]
        res = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "gtol": 1e-6})
        theta = res.x
    q1 = -float(res.fun)
    return (theta, q1) if q1 >= q0 else (theta0.copy(), q0)
