"""Total weight, normalisation and string scoring for log64 acceptors.

logZ is the log of the total weight Σ_paths Π_arcs exp(-w) (the shortest distance from the
start to the finals in the log semiring, ARCHITECTURE §3). A cyclic automaton can have
infinite total weight; OpenFst's shortest distance would then never terminate, so every
cyclic automaton is first tested for normalisability:

    Z < ∞  ⟺  ρ(A) < 1   (A[q, r] = Σ_{arcs q→r} exp(-w), on the trimmed automaton)
           ⟺  (I - A) x = 1 has a solution with x ≥ 1.

(If such x exists then A x = x - 1 ≤ (1 - 1/max x) x componentwise and the
Collatz–Wielandt bound gives ρ(A) < 1; conversely x = Σ_k A^k 1.) The test is one sparse
LU solve, O(|Q| + |E|) fill on the machines we build.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pynini
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from strgm.errors import DivergenceError
from strgm.wfsa.construct import weighted_strings
from strgm.wfsa.core import ZERO, arc_table, compose, is_acyclic, shortest_distance, weight

#: Convergence threshold for OpenFst's shortest distance on cyclic machines.
CYCLIC_DELTA = 1e-10


def spectral_margin(fst: pynini.Fst) -> float:
    """1 / max(x) for the solution of (I - A) x = 1 on the trimmed automaton.

    Positive (in (0, 1]) exactly when the automaton is normalisable; 0.0 when it is not.
    An acyclic automaton always returns 1.0 without solving anything.
    """
    f = fst.copy().connect()
    if f.num_states() == 0 or is_acyclic(f):
        return 1.0
    margin, _ = _cyclic_solve(f)
    return margin


def _cyclic_solve(f: pynini.Fst) -> tuple[float, float]:
    """(spectral margin, Z) of a trimmed cyclic automaton from one sparse LU of I - A:
    x = (I - A)^{-1} 1 decides normalisability and z = (I - A)^{-1} ρ gives Z = z[start]
    exactly (in probability space; ``nan`` when the weights under/overflow float64)."""
    t = arc_table(f)
    n = t.num_states
    with np.errstate(over="ignore"):
        vals = np.exp(-t.weight)
    if not np.all(np.isfinite(vals)):
        return 0.0, float("nan")
    a = sp.csc_matrix((vals, (t.src, t.dst)), shape=(n, n))
    m = sp.identity(n, format="csc") - a
    with np.errstate(over="ignore", under="ignore"):
        rho = np.exp(-t.final)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lu = spla.splu(m)
            x = lu.solve(np.ones(n))
            z = lu.solve(rho)
        except Exception:  # singular matrix: spectral radius exactly 1
            return 0.0, float("nan")
    if not np.all(np.isfinite(x)) or x.min() < 1.0 - 1e-9:
        return 0.0, float("nan")
    zs = float(z[t.start]) if np.all(np.isfinite(z)) else float("nan")
    return float(1.0 / x.max()), zs


def check_normalisable(fst: pynini.Fst, what: str = "automaton") -> None:
    """Raise :class:`DivergenceError` (naming ``what``) if the total weight is infinite."""
    if spectral_margin(fst) <= 0.0:
        raise DivergenceError(
            f"{what} has infinite total weight (a cycle's weights have spectral radius "
            ">= 1); it cannot be normalised. Give the variable a proper prior, or lower "
            "the weights on its cycles.")


def log_partition(fst: pynini.Fst, what: str = "automaton") -> float:
    """log Z = log Σ_v weight(v): ``-inf`` for the empty language, :class:`DivergenceError`
    when infinite. Uses OpenFst's log-semiring shortest distance (exact on acyclic machines,
    converged to 1e-10 on cyclic ones)."""
    if fst.num_states() == 0 or fst.start() < 0:
        return -np.inf
    f = fst.copy().connect()
    if f.num_states() == 0:
        return -np.inf
    if not is_acyclic(f):
        margin, z = _cyclic_solve(f)
        if margin <= 0.0:
            check_normalisable(f, what)  # raises with the standard message
        if 1e-250 < z < 1e250:
            return float(np.log(z))
        # weights beyond float64 range in probability space: iterate in log space
        d = shortest_distance(f, reverse=True, delta=CYCLIC_DELTA)
        return -float(d[f.start()])
    d = shortest_distance(f, reverse=True)
    return -float(d[f.start()])


def normalise(fst: pynini.Fst, what: str = "automaton") -> tuple[pynini.Fst, float]:
    """(fst / Z, log Z): a new automaton whose total weight is 1, and the removed log Z.

    Raises :class:`DivergenceError` if Z = ∞ and ``ValueError`` if Z = 0."""
    logz = log_partition(fst, what)
    if logz == -np.inf:
        raise ValueError(f"{what} accepts no string: cannot normalise the empty language")
    out = fst.copy()
    for s in out.states():
        w = float(out.final(s))
        if w != ZERO:
            out.set_final(s, weight(w + logz))
    return out, logz


def score_strings(fst: pynini.Fst, strings: Sequence[Sequence[int]]) -> np.ndarray:
    """log weight(v) of each string v under the acceptor (output tape) ``fst``.

    One composition with a marker trie (see :func:`weighted_strings`) scores all strings:
    every accepting path of C = fst ∘ trie reads exactly one marker arc e (output label
    i + 1 for string i), so weight(v_i) = ⊕_{marker arcs e of i} α(src_e) ⊗ w_e ⊗ β(dst_e)
    with α, β the forward/backward distances of C. ``-inf`` for rejected strings.
    O(|C|) plus two shortest-distance passes.
    """
    strings = [tuple(s) for s in strings]
    out = np.full(len(strings), -np.inf)
    if not strings or fst.num_states() == 0:
        return out
    uniq = list(dict.fromkeys(strings))
    trie = weighted_strings([(s, 0.0) for s in uniq], markers=True)
    comp = compose(fst, trie)
    if comp.num_states() == 0:
        return out
    if not is_acyclic(comp):
        check_normalisable(comp, "automaton restricted to the scored strings")
    t = arc_table(comp)
    alpha = shortest_distance(comp)
    beta = shortest_distance(comp, reverse=True)
    mark = t.olabel > 0
    cost = alpha[t.src[mark]] + t.weight[mark] + beta[t.dst[mark]]
    byidx = np.full(len(uniq), -np.inf)
    np.logaddexp.at(byidx, t.olabel[mark] - 1, -cost)
    pos = {s: i for i, s in enumerate(uniq)}
    return byidx[[pos[s] for s in strings]]


def string_logweight(fst: pynini.Fst, labels: Sequence[int]) -> float:
    """log weight of one string (``-inf`` if rejected)."""
    return float(score_strings(fst, [tuple(labels)])[0])
