"""Gibbs sampling of the hierarchical Dirichlet backoff model (Chinese restaurant
franchise, Teh et al. 2006 §5.1), with the concentrations sampled by Antoniak's
auxiliary variables (Dawson 2015, eqs. 60-61).

Model, over the context tree of :mod:`strgm.grammars.smoothing.hierarchy`::

    G_top ~ DP(α_K(top) · H),  H uniform over the top node's V outcomes,
    G_u | G_parent(u) ~ DP(α_K(u) · G_parent(u)),
    each observed rule (full context u, outcome o):  o ~ G_u,

with the G's integrated out.  State: at every node u, the customers of each outcome o
sit at tables (their sizes); every table at u is one customer of o at u's parent
(Teh et al. 2006 §5.1).  Cell (u, o) holds c_u(o) customers at m_u(o) tables.

One sweep removes and reseats every data customer in turn (O(total customers × depth);
the loops are compiled with numba, because each move depends on the previous one):

* remove: pick one of the cell's tables with probability ∝ its size, shrink it; an
  emptied table is removed and its customer removed from the parent cell, recursively;
* add: join an existing table with probability ∝ its size, or open a new table with
  probability ∝ α_K(u) · π_parent(u)(o), where π is the predictive of
  :func:`~strgm.grammars.smoothing.hierarchy.chain_predictive` on the current state
  (π_u(o) = (c_u(o) + α_K π_parent(o)) / (c_u + α_K); H(o) = 1/V above the top); a new
  table adds a customer to the parent cell, recursively.

Concentrations.  With n_u customers at m_u tables at node u, the likelihood of α_K is
Π_{u in level K} α^{m_u} Γ(α)/Γ(α + n_u) (Antoniak 1974; Dawson 2015, eq. 60), and
Γ(α)/Γ(α+n) = Γ(n)^{-1} ∫_0^1 w^{α−1} (1 − w)^{n−1} dw (eq. 61).  So, with a
Gamma(shape a, rate b) prior, one Gibbs step is

    w_u ~ Beta(α_K, n_u)  for every node u of level K with n_u > 0,
    α_K ~ Gamma(a + Σ_u m_u, b − Σ_u log w_u).

(Escobar & West 1995 write the same likelihood with w ~ Beta(α + 1, n) and a two-part
mixture; both augmentations leave the exact posterior invariant.)

The Monte Carlo estimate of the smoothed rule probabilities averages the predictive of
every candidate rule over the states after burn-in (Dawson 2015, "Instead of these
heuristic approximations ... Gibbs sampling the m, w and α").
"""

from __future__ import annotations

import numpy as np

from strgm.grammars.smoothing.hierarchy import Hierarchy, chain_predictive
from strgm.validate import check_float, check_int
from strgm.compiled import njit

__all__ = ["Seating", "sample_alpha", "gibbs_sweeps", "run_hdp", "PRIOR", "ALPHA0"]

#: Default Gamma(shape, rate) prior of every α_K.
PRIOR = (1.0, 1.0)
#: α of the initial seating: close to where the sampled α settles on treebank rules, so
#: no sweeps are spent climbing there (docs/decisions/grammar_smoothing_defaults.md).
ALPHA0 = 10.0


@njit(cache=True)
def _parent_pi(cell, cell_node, cell_parent, node_parent, ccount, ncust, alpha_node,
               top_v):
    """π_parent(u)(o) for the cell (u, o): the backoff recursion from H down."""
    stack = np.empty(64, np.int64)
    k = 0
    p = cell_parent[cell]
    while p >= 0:
        stack[k] = p
        k += 1
        p = cell_parent[p]
    pi = 1.0 / top_v[cell_node[cell]]
    for j in range(k - 1, -1, -1):
        c = stack[j]
        u = cell_node[c]
        pi = (ccount[c] + alpha_node[u] * pi) / (ncust[u] + alpha_node[u])
    return pi


@njit(cache=True)
def _add(cell, cell_node, cell_parent, node_parent, off, ntab, sizes, ccount,
         ncust, ntables, alpha_node, top_v):
    """Seat one customer at ``cell`` (module docstring), recursively upwards."""
    while cell >= 0:
        u = cell_node[cell]
        a = alpha_node[u] * _parent_pi(cell, cell_node, cell_parent, node_parent, ccount,
                                       ncust, alpha_node, top_v)
        r = np.random.random() * (ccount[cell] + a)
        ccount[cell] += 1
        ncust[u] += 1
        if r < ccount[cell] - 1:
            o = off[cell]
            for k in range(ntab[cell]):
                r -= sizes[o + k]
                if r < 0.0 or k == ntab[cell] - 1:
                    sizes[o + k] += 1
                    break
            return
        sizes[off[cell] + ntab[cell]] = 1
        ntab[cell] += 1
        ntables[u] += 1
        cell = cell_parent[cell]


@njit(cache=True)
def _remove(cell, cell_node, cell_parent, off, ntab, sizes, ccount, ncust, ntables):
    """Remove one customer from ``cell`` (a table chosen ∝ its size), recursively."""
    while cell >= 0:
        u = cell_node[cell]
        o = off[cell]
        r = np.random.random() * ccount[cell]
        k = 0
        for k in range(ntab[cell]):
            r -= sizes[o + k]
            if r < 0.0:
                break
        sizes[o + k] -= 1
        ccount[cell] -= 1
        ncust[u] -= 1
        if sizes[o + k] > 0:
            return
        last = ntab[cell] - 1
        sizes[o + k] = sizes[o + last]
        sizes[o + last] = 0
        ntab[cell] = last
        ntables[u] -= 1
        cell = cell_parent[cell]


@njit(cache=True)
def _sweep(customers, seed, init, cell_node, cell_parent, node_parent, off, ntab, sizes,
           ccount, ncust, ntables, alpha_node, top_v):
    """One Gibbs sweep over ``customers`` (their data cells), or the initial seating
    when ``init``."""
    np.random.seed(seed)
    for i in range(len(customers)):
        c = customers[i]
        if not init:
            _remove(c, cell_node, cell_parent, off, ntab, sizes, ccount, ncust,
                    ntables)
        _add(c, cell_node, cell_parent, node_parent, off, ntab, sizes, ccount, ncust,
             ntables, alpha_node, top_v)


class Seating:
    """The sampler's state over a :class:`Hierarchy`: table sizes per cell (each cell's
    slab holds as many tables as the data below it), customers and tables per cell and
    node, and one α per level."""

    def __init__(self, h: Hierarchy, alpha0: float = 1.0):
        self.h = h
        counts = h.leaf_count
        if np.any(counts != np.round(counts)):
            raise ValueError("the HDP sampler needs integer rule counts")
        pooled, _, _ = h.pooled_counts()
        self.cap = pooled.astype(np.int64)
        self.off = np.concatenate([[0], np.cumsum(self.cap)[:-1]]).astype(np.int64)
        self.sizes = np.zeros(int(self.cap.sum()) + 1, dtype=np.int64)
        self.ntab = np.zeros(len(counts), dtype=np.int64)
        self.ccount = np.zeros(len(counts), dtype=np.float64)
        self.ncust = np.zeros(h.n_nodes, dtype=np.float64)
        self.ntables = np.zeros(h.n_nodes, dtype=np.int64)
        self.alpha = np.full(len(h.levels), float(alpha0))
        self.customers = np.repeat(np.arange(len(counts)), counts.astype(np.int64))

    def sweep(self, seed: int, init: bool = False) -> None:
        """One Gibbs sweep (or the initial sequential seating)."""
        h = self.h
        _sweep(self.customers, seed, init, h.cell_node, h.cell_parent, h.node_parent,
               self.off, self.ntab, self.sizes, self.ccount, self.ncust, self.ntables,
               self.alpha[h.node_level], h.top_size.astype(np.float64))

    def predictive(self) -> np.ndarray:
        """π(outcome | full context) of every candidate pair in this state."""
        return chain_predictive(self.h, self.ccount, self.ncust,
                                self.alpha[self.h.node_level])


def sample_alpha(alpha: float, n: np.ndarray, m: np.ndarray, rng, prior=PRIOR,
                 steps: int = 1) -> float:
    """``steps`` Gibbs steps of α for restaurants with ``n`` customers at ``m`` tables
    (arrays; n > 0): w_u ~ Beta(α, n_u), α ~ Gamma(a + Σ m, rate b − Σ log w)
    (module docstring, Dawson 2015, eq. 61)."""
    a, b = prior
    for _ in range(steps):
        w = rng.beta(alpha, n)
        alpha = rng.gamma(a + m.sum(), 1.0 / (b - np.log(np.maximum(w, 1e-300)).sum()))
    return float(alpha)


def gibbs_sweeps(h: Hierarchy, iters: int, seed: int, prior=PRIOR, alpha0: float = ALPHA0):
    """The Gibbs chain of the franchise on ``h``: initial sequential seating with every
    α_K = ``alpha0``, then ``iters`` sweeps, each followed by one α step per level.
    Yields ``(sweep index, seating)`` after every sweep (the seating is updated in place:
    copy what is kept).  Deterministic in ``seed``.  O(iters × customers × depth)."""
    rng = np.random.default_rng(seed)
    s = Seating(h, alpha0)
    s.sweep(int(rng.integers(2**31)), init=True)
    for it in range(iters):
        s.sweep(int(rng.integers(2**31)))
        for k in range(len(h.levels)):
            on = (h.node_level == k) & (s.ncust > 0)
            s.alpha[k] = sample_alpha(s.alpha[k], s.ncust[on], s.ntables[on], rng, prior)
        yield it, s


def run_hdp(h: Hierarchy, iters: int = 200, seed: int = 0, burn: int | None = None,
            prior=PRIOR, alpha0: float = ALPHA0) -> tuple:
    """(mean predictive of every candidate pair over the sweeps after ``burn``
    (default iters // 2), trace dict) of :func:`gibbs_sweeps`."""
    iters = check_int("iters", iters, min=1)
    seed = check_int("seed", seed, min=0)
    check_float("prior shape", prior[0], min=0, min_open=True)
    check_float("prior rate", prior[1], min=0, min_open=True)
    burn = iters // 2 if burn is None else check_int("burn", burn, min=0, max=iters - 1)
    total = np.zeros(len(h.pair_lhs))
    trace = {"alpha": [], "tables": []}
    for it, s in gibbs_sweeps(h, iters, seed, prior, alpha0):
        trace["alpha"].append(s.alpha.tolist())
        trace["tables"].append(int(s.ntables.sum()))
        if it >= burn:
            total += s.predictive()
    return total / (iters - burn), trace
