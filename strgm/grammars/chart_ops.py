"""Numerics and operators of the span charts (:mod:`strgm.grammars.chart`).

Scaled vectors: each chart cell stores a vector with max entry 1 and a log scale
(max-subtraction), so products of children need one exp per (start, split) pair, not per
nonterminal (:func:`_normalise`, :func:`_sadd`). :class:`_Structure` holds the
weight-independent scatter matrices and event groupings of a compiled grammar (cached on
it); :class:`_Operators` adds the event weights of one θ and the unary closure
U* = (I − U)^{-1}, refused when the spectral radius of U is ≥ 1 (infinite weight of unary
chains).  The spectral radius is the largest over the strongly connected components of the
unary graph (U is block-triangular in their topological order), so only those small blocks
are decomposed.  Up to ``DENSE_UNARY_MAX`` unary nonterminals U* is a dense matrix; above,
(I − U) is factored once by sparse LU and every closure is a pair of sparse triangular
solves, O(nnz(L + U)) per chart cell instead of O(K²) (a TSG's transform has thousands of
unary nonterminals, c → sign(e), with a nearly acyclic unary graph). :func:`chart_bytes` is the memory model of a chart, :func:`chart_limit` the limit
that applies to a compiled grammar.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from strgm.errors import GrammarError
from strgm.grammars.cfg import CompiledGrammar

__all__ = ["DEFAULT_MAX_CHART_BYTES", "DEFAULT_MAX_TEMP_BYTES", "chart_bytes", "chart_limit"]

DEFAULT_MAX_CHART_BYTES = 2 * 1024 ** 3
DEFAULT_MAX_TEMP_BYTES = 256 * 1024 ** 2
#: above this many unary nonterminals the closure is a sparse LU solve, not a dense U*
DENSE_UNARY_MAX = 400


def unary_spectral_radius(U) -> float:
    """ρ(U) of a sparse non-negative square matrix: the largest spectral radius of its
    diagonal blocks over the strongly connected components (the others are 0)."""
    U = sp.csr_matrix(U)
    n_comp, comp = connected_components(U, directed=True, connection="strong")
    rho = float(np.max(np.abs(U.diagonal()), initial=0.0))
    sizes = np.bincount(comp, minlength=n_comp)
    for c in np.flatnonzero(sizes > 1):
        idx = np.flatnonzero(comp == c)
        block = U[idx][:, idx].toarray()
        rho = max(rho, float(np.max(np.abs(np.linalg.eigvals(block)))))
    return rho


def _log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


def _normalise(val, sc):
    """Rescale rows of ``val`` (…, N) so their max is 1; adjust log scale ``sc`` (…)."""
    mx = val.max(axis=-1)
    ok = mx > 0
    safe = np.where(ok, mx, 1.0)
    return val / safe[..., None], np.where(ok, sc + _log(safe), -np.inf)


def _sadd(v1, s1, v2, s2):
    """(v1, s1) + (v2, s2) for scaled vectors (values · exp(scale))."""
    m = np.maximum(s1, s2)
    mf = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(invalid="ignore"):
        a = np.where(np.isfinite(s1), np.exp(s1 - mf), 0.0)
        b = np.where(np.isfinite(s2), np.exp(s2 - mf), 0.0)
    return _normalise(v1 * a[..., None] + v2 * b[..., None], m)


class _Structure:
    """Weight-independent matrices of a compiled grammar (cached on it)."""

    def __init__(self, cg: CompiledGrammar):
        N = cg.n_nts
        Rb = len(cg.bin_parent)
        # transposed scatter matrices (N, Rb): parent / left child / right child of events
        self.Pp = sp.csr_matrix((np.ones(Rb), (cg.bin_parent, np.arange(Rb))), shape=(N, Rb))
        self.Pl = sp.csr_matrix((np.ones(Rb), (cg.bin_left, np.arange(Rb))), shape=(N, Rb))
        self.Pr = sp.csr_matrix((np.ones(Rb), (cg.bin_right, np.arange(Rb))), shape=(N, Rb))
        nodes = np.unique(np.concatenate([cg.un_parent, cg.un_child]))
        self.un_nodes = nodes
        pos = {int(x): i for i, x in enumerate(nodes)}
        self.un_pp = np.array([pos[int(x)] for x in cg.un_parent], dtype=np.int64)
        self.un_pc = np.array([pos[int(x)] for x in cg.un_child], dtype=np.int64)
        by = defaultdict(list)
        for e, p in enumerate(cg.bin_parent):
            by[int(p)].append(e)
        self.bin_by_parent = {k: np.array(v) for k, v in by.items()}
        by = defaultdict(list)
        for e, p in enumerate(cg.un_parent):
            by[int(p)].append(e)
        self.un_by_parent = {k: np.array(v) for k, v in by.items()}
        order = np.argsort(cg.bin_parent, kind="stable")
        self.bin_order = order
        par_sorted = cg.bin_parent[order]
        self.bin_group_start = np.flatnonzero(np.r_[True, par_sorted[1:] != par_sorted[:-1]]) \
            if Rb else np.zeros(0, dtype=np.int64)
        self.bin_group_parent = par_sorted[self.bin_group_start] if Rb else np.zeros(0, np.int64)
        uo = np.argsort(cg.un_parent, kind="stable")
        self.un_order = uo
        ps = cg.un_parent[uo]
        self.un_group_start = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]]) if len(uo) \
            else np.zeros(0, dtype=np.int64)
        self.un_group_parent = ps[self.un_group_start] if len(uo) else np.zeros(0, np.int64)


class _Operators:
    """Structure (cached per compiled grammar) plus the event weights of one θ."""

    def __init__(self, cg: CompiledGrammar, theta: np.ndarray):
        self.cg = cg
        st = cg._cache.get("structure")
        if st is None:
            st = cg._cache["structure"] = _Structure(cg)
        self.__dict__.update({k: v for k, v in st.__dict__.items()})
        wb, wu, wl = cg.event_weights(theta)
        self.wb, self.wu, self.wl = wb, wu, wl
        self.logwb, self.logwu, self.logwl = _log(wb), _log(wu), _log(wl)
        K = len(self.un_nodes)
        self.Ustar, self.lu = np.zeros((0, 0)), None
        if K:
            U = sp.csr_matrix((wu, (self.un_pp, self.un_pc)), shape=(K, K))
            rho = unary_spectral_radius(U)
            if rho >= 1 - 1e-12:
                raise GrammarError(f"unary rules have spectral radius {rho:.6g} >= 1: the unary "
                                   "closure (I - U)^-1 diverges (infinite weight of unary chains)")
            if K <= DENSE_UNARY_MAX:
                self.Ustar = np.clip(np.linalg.inv(np.eye(K) - U.toarray()), 0.0, None)
            else:
                self.lu = splu(sp.csc_matrix(sp.identity(K) - U))

    def _close(self, val, trans: bool):
        """val with its unary-node columns replaced by U* v (``trans``: U*ᵀ v) per row."""
        if not len(self.un_nodes):
            return val
        val = val.copy()
        sub = val[..., self.un_nodes]
        if self.lu is None:
            val[..., self.un_nodes] = sub @ (self.Ustar if trans else self.Ustar.T)
            return val
        flat = sub.reshape(-1, sub.shape[-1])
        if flat.shape[0]:
            res = self.lu.solve(np.ascontiguousarray(flat.T), trans="T" if trans else "N")
            val[..., self.un_nodes] = np.clip(res.T, 0.0, None).reshape(sub.shape)
        return val

    def close_in(self, val):
        """Inside closure: q = U* p per cell (in(p) = pre(p) + Σ_c U_pc in(c))."""
        return self._close(val, trans=False)

    def close_out(self, val):
        """Outside closure: o = U*ᵀ ō per cell."""
        return self._close(val, trans=True)


def _scatter(X, PT):
    """Dense (M, R) times sparse (R, N) given as its transpose PT (N, R) -> dense (M, N)."""
    return np.asarray(PT.dot(X.T).T)


def chart_limit(cg: CompiledGrammar) -> float:
    """The chart memory limit of ``cg`` (its ``max_chart_bytes``, else the default)."""
    v = getattr(cg, "max_chart_bytes", None)
    return DEFAULT_MAX_CHART_BYTES if v is None else v


def chart_bytes(n_nts: int, n: int, batch: int = 1) -> float:
    """Estimated bytes of the chart of ``batch`` sentences of length ``n`` (six
    (B, S_w, N) float arrays per width: pre-inside, inside, outside values and scales)."""
    return 6 * 8 * batch * n_nts * n * (n + 1) / 2
