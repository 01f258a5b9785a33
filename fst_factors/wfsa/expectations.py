"""Forward–backward on log64 automata: expected arc counts and entropy.

Expected arc counts (docs/messages.md): c(e) = α(src)·w(e)·β(dst)/Z, with α, β the forward
and reverse shortest distances in the log semiring. In -log space with a, b, w:
    c(e) = exp(-(a[src] + w[e] + b[dst]) + (-logZ)), c_final(q) = exp(-(a[q] + ρ[q]) - logZ)
This one routine underlies expected n-gram counts, EM for transducers and gradients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pynini

from fst_factors.errors import DivergenceError
from fst_factors.wfsa import guard
from fst_factors.wfsa.interrupts import native
from fst_factors.wfsa.core import (ArcTable, ZERO, acyclic_distances, arc_table, from_arc_table,
                              is_acyclic, shortest_distance, topological_levels)
from fst_factors.wfsa.measure import (TrimmedTopology, check_normalisable,
                                cyclic_forward_backward, divergence_message, score_strings)
from fst_factors.wfsa.paths import sample


@dataclass(frozen=True)
class ArcPosteriors:
    """Expected counts of every arc and of stopping at every state, under weight/Z."""

    table: ArcTable
    arc_counts: np.ndarray
    final_counts: np.ndarray
    log_z: float
    alpha: np.ndarray  # -log forward weights
    beta: np.ndarray  # -log backward weights


def expected_arc_counts(fst: pynini.Fst, what: str = "automaton") -> ArcPosteriors:
    """Forward–backward: expected traversal counts of each arc of ``fst`` (as given, not
    trimmed, so arc indices match ``arc_table(fst)``). O(|Q| + |E|) on acyclic machines
    (vectorised level passes); on cyclic ones linear solves of I − A give the
    normalisability test, α and β together (:func:`fst_factors.wfsa.measure.
    cyclic_forward_backward`: certified fixed-point iteration, else solves by strongly
    connected component), with
    OpenFst's log-space shortest distance as the fallback when the weights leave
    float64's range.
    Raises :class:`DivergenceError` if Z = ∞ and ``ValueError`` if Z = 0."""
    t = arc_table(fst)
    if t.start < 0:
        raise ValueError(f"{what} accepts no string")
    levels = topological_levels(t) if is_acyclic(fst) else None
    return table_arc_counts(t, levels, what)


def table_arc_counts(t: ArcTable, levels: Optional[np.ndarray],
                     what: str = "automaton",
                     topology: Optional[TrimmedTopology] = None) -> ArcPosteriors:
    """:func:`expected_arc_counts` on an arc table; ``levels`` = its topological levels
    when acyclic (:func:`fst_factors.wfsa.core.topological_levels`), ``None`` when cyclic.
    Lets callers that re-weight one topology many times skip rebuilding the automaton
    and, when cyclic, the trimming (``topology``: :func:`fst_factors.wfsa.measure.
    trimmed_topology` of t)."""
    if t.start < 0:
        raise ValueError(f"{what} accepts no string")
    if levels is not None:
        alpha = acyclic_distances(t, reverse=False, levels=levels)
        beta = acyclic_distances(t, reverse=True, levels=levels)
    else:
        try:
            fb = cyclic_forward_backward(t, topology)
        except DivergenceError as e:
            raise DivergenceError(divergence_message(what),
                                  radius_at_least=e.radius_at_least) from None
        if fb is not None:
            with np.errstate(divide="ignore"):
                alpha, beta = -np.log(fb[0]), -np.log(fb[1])
        else:  # weights beyond float64 in probability space: iterate in log space
            fst = from_arc_table(t.num_states, t.start, t.src, t.dst, t.ilabel, t.olabel,
                                 t.weight, t.final)
            check_normalisable(fst, what)
            alpha = shortest_distance(fst, reverse=False, delta=1e-10)
            beta = shortest_distance(fst, reverse=True, delta=1e-10)
    neg_logz = beta[t.start]
    if neg_logz == ZERO:
        raise ValueError(f"{what} accepts no string")
    with np.errstate(invalid="ignore"):
        arc = np.exp(neg_logz - (alpha[t.src] + t.weight + beta[t.dst]))
        fin = np.exp(neg_logz - (alpha + t.final))
    arc = np.nan_to_num(arc, nan=0.0, posinf=0.0)
    fin = np.nan_to_num(fin, nan=0.0, posinf=0.0)
    return ArcPosteriors(t, arc, fin, -float(neg_logz), alpha, beta)


def path_entropy(fst: pynini.Fst) -> float:
    """Entropy (nats) of the distribution over *paths*: H = log Z + E[Σ w(e)] + E[ρ]."""
    post = expected_arc_counts(fst)
    t = post.table
    fin = np.where(np.isfinite(t.final), t.final, 0.0)
    return float(post.log_z + post.arc_counts @ t.weight + post.final_counts @ fin)


def entropy(fst: pynini.Fst, n_samples: int = 2000, seed: int = 0,
            return_stderr: bool = False):
    """Entropy (nats) of the normalised string distribution weight(v)/Z.

    Exact when each string has one path: the automaton is made epsilon-free and, if
    acyclic, determinised in the log semiring (always possible), or is already
    deterministic. Otherwise (a cyclic ambiguous automaton, which may not be
    determinisable) it is a Monte-Carlo estimate -mean log p(v_i) over exact samples, and
    ``return_stderr=True`` returns (estimate, standard error); stderr is 0.0 when exact.
    """
    f = guard.rmepsilon(pynini.project(fst.copy(), "output")).connect()
    if f.num_states() == 0:
        raise ValueError("entropy of the empty language is undefined")
    exact = None
    if is_acyclic(f):
        with native():
            det = pynini.determinize(f, delta=1e-12)
        exact = path_entropy(det)
    elif f.properties(pynini.I_DETERMINISTIC, True) == pynini.I_DETERMINISTIC:
        exact = path_entropy(f)
    if exact is not None:
        return (exact, 0.0) if return_stderr else exact
    from fst_factors.wfsa.measure import log_partition

    logz = log_partition(f)
    draws = sample(f, n_samples, seed)
    uniq = list(dict.fromkeys(draws))
    lp = dict(zip(uniq, score_strings(f, uniq) - logz))
    vals = -np.array([lp[d] for d in draws])
    est = float(vals.mean())
    se = float(vals.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else float("inf")
    return (est, se) if return_stderr else est
