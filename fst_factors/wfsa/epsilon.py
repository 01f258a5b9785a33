"""ε-removal with divergence detection, and a linear-algebra shortcut for ε-regions at
the ends of the paths.

ε-removal of an acceptor replaces every state q by its ε-closure: with
D = (I − A_ε)⁻¹ the matrix of total ε-path weights (A_ε[q, r] = Σ_{ε-arcs q→r} e^{−w}),
q gets the non-ε arcs of every r, weighted D[q, r], and the final weight Σ_r D[q, r] ρ_r.
OpenFst's ``rmepsilon`` computes one closure per state by shortest distance. It never
returns when ρ(A_ε) ≥ 1 (infinite ε-path weight), which :func:`epsilon_cycles_diverge`
tests first.

**Closures at the ends.** The messages of a concatenation factor to one part are
project(compose(context, μ_whole)): the other parts are read *before* and *after* the
part, on ε input arcs. The ε-region is then the product of the other parts' messages
with μ_whole — 5,000–11,000 states on trigram EP over English — while the result has a
handful of states, and OpenFst's per-state closures took a third of the run time. In such
a machine the ε-closures matter only at the two ends:

* a state q that survives ε-removal (the start, or the target of a non-ε arc) other than
  the start reaches no state with non-ε arcs ("labelled") by ε-paths, so its closure
  only adds final weight: ρ'_q = β_q with β = (I − A_ε)⁻¹ ρ, one linear solve for all q;
* the start's closure may reach labelled states r: a new start state gets the non-ε arcs
  of every such r, weighted α_r, with α = (I − A_ε)⁻ᵀ e_start, and final weight β_start.

Both solves go through :func:`fst_factors.wfsa.measure.cyclic_forward_backward`'s machinery
(fixed-point iteration, else strongly connected components), which certifies
ρ(A_ε) < 1. When the condition fails (a surviving state's ε-paths lead to a labelled
state), the solves fail, or the weights leave float64's range, the general route runs
instead: the divergence test, then ``rmepsilon``. Cost: O(depth · |E_ε|) against one shortest-distance
computation per state.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini
import scipy.sparse as sp

from fst_factors.errors import DivergenceError
from fst_factors.wfsa import guard
from fst_factors.wfsa.components import check_components
from fst_factors.wfsa.core import ArcTable, arc_table, from_arc_table, is_acyclic
from fst_factors.wfsa.fixed_point import finite_path_sums
from fst_factors.wfsa.measure import arcs_to_csr, reachable

#: exp(−w) must stay well inside float64 for the shortcut's probability-space solves.
_MAX_EXPONENT = 600.0


def epsilon_cycles_diverge(fst: pynini.Fst) -> bool:
    """True when the ε-arcs alone have a cycle structure of infinite total weight.

    ε-removal sums the ε-paths between every pair of states in the log semiring; OpenFst
    never returns when that sum is infinite. The test is ρ(A_ε) ≥ 1 for the matrix of
    ε-arc weights. ρ(A_ε) is the largest spectral radius of its diagonal blocks on the
    strongly connected components, so only the cyclic components are examined
    (:func:`fst_factors.wfsa.components.check_components`: a self-loop alone diverges iff its
    weight is ≥ 1, a larger component unless a vector y > 0 with A y < y certifies it).
    Cost O(|E_ε|) plus Σ_C |C|³ — small next to one LU of the whole ε-graph, which fills
    in badly on compositions with n-gram DFAs (a 3,369-state ε-graph with 3·10⁵ arcs has
    components of ≤ 400 states)."""
    t = arc_table(fst)
    return _epsilon_graph_diverges(t, (t.ilabel == 0) & (t.olabel == 0))


def _epsilon_graph_diverges(t: ArcTable, eps: np.ndarray) -> bool:
    """:func:`epsilon_cycles_diverge` on an arc table with its ε-arcs marked."""
    if not eps.any():
        return False
    src, dst = t.src[eps], t.dst[eps]
    with np.errstate(over="ignore"):
        vals = np.exp(-t.weight[eps])
    if not np.all(np.isfinite(vals)):
        return True
    nodes, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    k = len(nodes)
    a = sp.csr_matrix((vals, (inv[: len(src)], inv[len(src):])), shape=(k, k))
    try:
        check_components(a, "ε-graph")
    except DivergenceError:
        return True
    return False


def trim(fst: pynini.Fst, what: str = "automaton") -> pynini.Fst:
    """Epsilon-free, connected copy: the usual clean-up after composition/projection.

    Cyclic machines whose ε-closures matter only at the ends (module docstring) take the
    linear-algebra shortcut; the rest go to OpenFst's ``rmepsilon``. Raises
    :class:`strgm.errors.DivergenceError` instead of hanging when the ε-paths have
    infinite total weight (e.g. a non-normalisable message inserted by a concatenation)."""
    if is_acyclic(fst):
        return guard.rmepsilon(fst).connect()
    t = arc_table(fst)
    eps = (t.ilabel == 0) & (t.olabel == 0)
    if not eps.any():
        return fst.copy().connect()
    fast = closures_at_ends(t, eps)
    if fast is not None:
        return fast
    if _epsilon_graph_diverges(t, eps):
        raise _divergent(what)
    return guard.rmepsilon(fst).connect()


def _divergent(what: str) -> DivergenceError:
    return DivergenceError(f"{what}: its ε-cycles have infinite total weight (a "
                           "non-normalisable message); ε-removal would not terminate")


def closures_at_ends(t: ArcTable, eps: np.ndarray) -> Optional[pynini.Fst]:
    """The ε-free, connected equivalent of the acceptor ``t`` when its ε-closures matter
    only at the start and at the final weights (module docstring), else ``None``.

    ``eps`` marks the ε-arcs. ``None`` also when the solves fail (ρ(A_ε) ≥ 1, or path
    sums beyond float64): :func:`trim` then decides with the general route."""
    n = t.num_states
    if t.start < 0:
        return None
    lab = ~eps
    labelled = np.zeros(n, dtype=bool)
    labelled[t.src[lab]] = True
    survives = np.zeros(n, dtype=bool)
    survives[t.dst[lab]] = True  # the old start stays an ordinary state; a new one leads
    g = arcs_to_csr(t.src[eps], t.dst[eps], np.ones(int(eps.sum())), n)
    seeds = np.unique(t.dst[eps & survives[t.src]])
    if (reachable(g, seeds) & labelled).any():
        return None
    w_eps = t.weight[eps]
    fin = np.isfinite(t.final)
    if (np.abs(w_eps).max() > _MAX_EXPONENT or not fin.any()
            or np.abs(t.final[fin]).max() > _MAX_EXPONENT):
        return None
    a = arcs_to_csr(t.src[eps], t.dst[eps], np.exp(-w_eps), n)
    rho = np.where(fin, np.exp(-np.where(fin, t.final, 0.0)), 0.0)
    e = np.zeros(n)
    e[t.start] = 1.0
    # None also when path sums merely overflow float64 (heavy acyclic ε-chains): the
    # general route decides
    solved = finite_path_sums(a, rho, e)
    if solved is None:
        return None
    beta, alpha = solved
    # the new start (state n): the non-ε arcs of every labelled r in its closure
    reach = labelled & (alpha > 0.0)
    from_start = lab & reach[t.src]
    with np.errstate(divide="ignore"):
        neg_log_alpha = -np.log(alpha)
        final = np.append(-np.log(beta), -np.log(beta[t.start]))
    src = np.concatenate([t.src[lab], np.full(int(from_start.sum()), n)])
    dst = np.concatenate([t.dst[lab], t.dst[from_start]])
    labels = np.concatenate([t.ilabel[lab], t.ilabel[from_start]])
    olabels = np.concatenate([t.olabel[lab], t.olabel[from_start]])
    weights = np.concatenate([t.weight[lab],
                              t.weight[from_start] + neg_log_alpha[t.src[from_start]]])
    return from_arc_table(n + 1, n, src, dst, labels, olabels, weights, final).connect()
