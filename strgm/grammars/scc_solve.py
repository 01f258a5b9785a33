"""Inside and outside matrices of the intersection grammar, solved component by component.

:mod:`strgm.grammars.factor_moments` needs, for every compiled nonterminal X, the least
solution Z_X (K×K) of

    Z_X = L_X + Σ_{X→B} θ_r Z_B + Σ_{X→B C} θ_r Z_B Z_C        (L_X: the lexical rules)

and the outside matrices, the least solution of the linear system

    O_Y = G_Y + Σ_{X→Y} θ_r O_X + Σ_{X→Y C} θ_r O_X Z_Cᵀ + Σ_{X→B Y} θ_r Z_Bᵀ O_X.

Z_X depends on the Z of X's children. The strongly connected components (SCCs) of that
dependency graph, taken in topological order (children first), turn one system over all
nonterminals into one small system per SCC whose other unknowns are already known:

* a nonterminal on no cycle (no rule reaches it back) is one direct evaluation;
* an SCC in which every rule has at most one SCC member on its right-hand side is
  *linear*: U_i = C_i + Σ_t c_t L_t U_{j_t} R_t (L_t, R_t known K×K matrices or I). When
  every R_t = I (the SCC members are right children, e.g. tail recursion Word → Piece
  Word | Piece, so Z_W = θ₁ Z_P Z_W + θ₀ Z_P), stacking the members gives one
  (nK)×(nK) solve (I − A) U = C with K right-hand sides, O((nK)³); every L_t = I is the
  same on the transposes; otherwise the Kronecker form (I − Σ_t c_t L_t ⊗ R_tᵀ) vec U =
  vec C, O((nK²)³), when nK² ≤ ``KRON_MAX``;
* an SCC that is nonlinear (X → B C with B and C both in it, e.g. S → S S), or linear but
  too large for its direct solve, or whose direct solve is singular, is iterated from
  U = C (Kleene for the inside, the Neumann series for the outside) over its own
  members only (:func:`fixed_point`).

The outside system has the same SCCs with the edges reversed, so it is solved in the
opposite order (parents first), always linear.

Divergence. For C ≥ 0 and a non-negative linear map A, the least solution is the series
Σ_n Aⁿ C. If (I − A) is nonsingular and its solution U is ≥ 0, the partial sums are
bounded by U (S_{n+1} = C + A S_n ≤ C + A U = U), so the series converges to a solution,
which is U by uniqueness; conversely a finite least solution is a non-negative solution.
A direct solve whose U has an entry below −``NEG_TOL`` · max|U| therefore means Z = ∞
(:class:`~strgm.errors.DivergenceError`); rounding noise above that is clipped to 0.

The sweep count returned with the matrices is Σ over SCCs of 1 (direct evaluation or
direct solve) or the number of fixed-point iterations.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from strgm.errors import DivergenceError

__all__ = ["components", "fixed_point", "scc_inside", "scc_outside", "KRON_MAX",
           "BLOCK_MAX", "NEG_TOL"]

#: largest number of unknowns n·K² of a Kronecker-form solve (its matrix is that squared,
#: its LU O((nK²)³): at 600 about 10⁸ flops, the cost of some hundred sweeps at that K)
KRON_MAX = 600
#: largest n·K of a stacked (block) solve
BLOCK_MAX = 4000
#: a direct solution with an entry below −NEG_TOL · max|U| means divergence (docstring)
NEG_TOL = 1e-9

_DIVERGES = ("PCFG factor: {} diverges (P_G ⊙ μ has infinite total weight); give a "
             "length bound (max_len)")


def fixed_point(step, x0, what: str, max_iters: int, tol: float):
    """Iterate x ← step(x) from x0 until the relative sup-norm change is ≤ ``tol``;
    (x, iterations). Raises DivergenceError on overflow or after ``max_iters``."""
    x = x0
    for it in range(max_iters):
        with np.errstate(over="ignore", invalid="ignore"):
            y = step(x)
        if not np.all(np.isfinite(y)) or y.max(initial=0.0) > 1e250:
            raise DivergenceError(_DIVERGES.format(what))
        d = np.abs(y - x).max(initial=0.0)
        x = y
        if d <= tol * max(1.0, np.abs(y).max(initial=0.0)):
            return x, it + 1
    raise DivergenceError(f"PCFG factor: {what} did not converge in {max_iters} iterations "
                          "(critical or supercritical grammar ⊙ message); give a length "
                          "bound (max_len)")


def components(cg) -> list:
    """SCCs of the dependency graph X → B, C (rules X → B C, X → B) as sorted int arrays,
    children first (reverse topological order). O(N_X + R)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(cg.n_nts))
    g.add_edges_from(zip(cg.un_parent.tolist(), cg.un_child.tolist()))
    g.add_edges_from(zip(cg.bin_parent.tolist(), cg.bin_left.tolist()))
    g.add_edges_from(zip(cg.bin_parent.tolist(), cg.bin_right.tolist()))
    dag = nx.condensation(g)
    return [np.array(sorted(dag.nodes[c]["members"]), dtype=int)
            for c in reversed(list(nx.topological_sort(dag)))]


def _mask(cg, members):
    m = np.zeros(cg.n_nts, dtype=bool)
    m[members] = True
    return m


def _inside_eval(cg, w, base, Z, ins):
    """Right-hand sides of the inside equations of the nonterminals in mask ``ins``
    at Z (in member order): one Kleene sweep over the SCC, O(R_bin(S) K³)."""
    wb, wu, _ = w
    Y = np.zeros_like(Z)
    Y[ins] = base[ins]
    e = ins[cg.un_parent]
    if e.any():
        np.add.at(Y, cg.un_parent[e], wu[e, None, None] * Z[cg.un_child[e]])
    e = ins[cg.bin_parent]
    if e.any():
        np.add.at(Y, cg.bin_parent[e],
                  wb[e, None, None] * np.matmul(Z[cg.bin_left[e]], Z[cg.bin_right[e]]))
    return Y[ins]


def _inside_terms(cg, w, Z, ins):
    """The SCC's terms (equation nt, unknown nt, c, L, R) — c L Z_unknown R, None = I —
    or None when a rule has two SCC members on its right-hand side (nonlinear)."""
    wb, wu, _ = w
    terms = [(cg.un_parent[e], cg.un_child[e], wu[e], None, None)
             for e in np.flatnonzero(ins[cg.un_parent] & ins[cg.un_child])]
    for e in np.flatnonzero(ins[cg.bin_parent]):
        p, left, right = cg.bin_parent[e], cg.bin_left[e], cg.bin_right[e]
        if ins[left] and ins[right]:
            return None
        if ins[left]:
            terms.append((p, left, wb[e], None, Z[right]))
        elif ins[right]:
            terms.append((p, right, wb[e], Z[left], None))
    return terms


def _outside_eval(cg, w, Z, G, O, ins):
    """Right-hand sides of the outside equations of the nonterminals in mask ``ins`` at
    O (in member order): one Neumann sweep over the SCC."""
    wb, wu, _ = w
    Y = np.zeros_like(O)
    Y[ins] = G[ins]
    e = ins[cg.un_child]
    if e.any():
        np.add.at(Y, cg.un_child[e], wu[e, None, None] * O[cg.un_parent[e]])
    e = ins[cg.bin_left]
    if e.any():
        np.add.at(Y, cg.bin_left[e], np.matmul(O[cg.bin_parent[e]] * wb[e, None, None],
                                               np.swapaxes(Z[cg.bin_right[e]], 1, 2)))
    e = ins[cg.bin_right]
    if e.any():
        np.add.at(Y, cg.bin_right[e], np.matmul(np.swapaxes(Z[cg.bin_left[e]], 1, 2),
                                                O[cg.bin_parent[e]] * wb[e, None, None]))
    return Y[ins]


def _outside_terms(cg, w, Z, ins):
    """The SCC's outside terms (equation nt = child, unknown nt = parent, c, L, R)."""
    wb, wu, _ = w
    terms = [(cg.un_child[e], cg.un_parent[e], wu[e], None, None)
             for e in np.flatnonzero(ins[cg.un_parent] & ins[cg.un_child])]
    for e in np.flatnonzero(ins[cg.bin_parent]):
        p, left, right = cg.bin_parent[e], cg.bin_left[e], cg.bin_right[e]
        if ins[left]:
            terms.append((left, p, wb[e], None, Z[right].T))
        if ins[right]:
            terms.append((right, p, wb[e], Z[left].T, None))
    return terms


def _block_solve(const, terms):
    """U_i = C_i + Σ c L U_j (L None = I) as one (nK)×(nK) solve; None if too large or
    singular."""
    n, K = const.shape[:2]
    if n * K > BLOCK_MAX:
        return None
    A = np.eye(n * K)
    for i, j, c, L in terms:
        A[i * K:(i + 1) * K, j * K:(j + 1) * K] -= c * (np.eye(K) if L is None else L)
    try:
        return np.linalg.solve(A, const.reshape(n * K, K)).reshape(n, K, K)
    except np.linalg.LinAlgError:
        return None


def _kron_solve(const, terms):
    """U_i = C_i + Σ c L U_j R in vec form, (I − Σ c L ⊗ Rᵀ) vec U = vec C (row-major
    vec); None if n K² > KRON_MAX or singular."""
    n, K = const.shape[:2]
    K2 = K * K
    if n * K2 > KRON_MAX:
        return None
    eye = np.eye(K)
    A = np.eye(n * K2)
    for i, j, c, L, R in terms:
        A[i * K2:(i + 1) * K2, j * K2:(j + 1) * K2] -= c * np.kron(
            eye if L is None else L, (eye if R is None else R).T)
    try:
        return np.linalg.solve(A, const.reshape(-1)).reshape(n, K, K)
    except np.linalg.LinAlgError:
        return None


def linear_solve(members, const, terms, what: str):
    """Least solution of the linear SCC system U_i = C_i + Σ_t c_t L_t U_{j_t} R_t by a
    direct solve (module docstring), or None when no direct solve applies. Raises
    DivergenceError when the solution is not ≥ 0 or overflows."""
    pos = {int(x): i for i, x in enumerate(members)}
    if all(t[4] is None for t in terms):
        U = _block_solve(const, [(pos[int(p)], pos[int(j)], c, L) for p, j, c, L, _ in terms])
    elif all(t[3] is None for t in terms):
        U = _block_solve(const.transpose(0, 2, 1),
                         [(pos[int(p)], pos[int(j)], c, None if R is None else R.T)
                          for p, j, c, _, R in terms])
        U = None if U is None else U.transpose(0, 2, 1)
    else:
        U = _kron_solve(const, [(pos[int(p)], pos[int(j)], c, L, R)
                                for p, j, c, L, R in terms])
    if U is None:
        return None
    scale = np.abs(U).max(initial=0.0)
    if not np.all(np.isfinite(U)) or scale > 1e250 or U.min(initial=0.0) < -NEG_TOL * scale:
        raise DivergenceError(_DIVERGES.format(what))
    return np.maximum(U, 0.0)


def _component(members, const, terms, step, what, max_iters, tol):
    """(values, sweeps) of one SCC: const (no recursion), a direct linear solve, or the
    fixed point of ``step`` from const."""
    if terms is not None and not terms:
        return const, 1
    if terms is not None:
        U = linear_solve(members, const, terms, what)
        if U is not None:
            return U, 1
    return fixed_point(step, const, what, max_iters, tol)


def scc_inside(cg, w, base, comps, max_iters: int, tol: float):
    """(Z, sweeps): the least inside solution, SCC by SCC in ``comps`` order (children
    first). ``base`` (N_X, K, K): the lexical terms L_X."""
    Z = np.zeros_like(base)
    total = 0
    what = "the intersection grammar's inside fixed point"
    for members in comps:
        ins = _mask(cg, members)

        def step(U, members=members, ins=ins):
            Z[members] = U
            return _inside_eval(cg, w, base, Z, ins)
        const = _inside_eval(cg, w, base, Z, ins)
        Z[members], n = _component(members, const, _inside_terms(cg, w, Z, ins), step,
                                   what, max_iters, tol)
        total += n
    return Z, total


def scc_outside(cg, w, Z, G, comps, max_iters: int, tol: float):
    """(O, sweeps): the outside matrices, SCC by SCC in reverse ``comps`` order (parents
    first). ``G``: the seed (e_s φᵀ at the start symbol)."""
    O = np.zeros_like(G)
    total = 0
    what = "the intersection grammar's outside fixed point"
    for members in reversed(comps):
        ins = _mask(cg, members)

        def step(U, members=members, ins=ins):
            O[members] = U
            return _outside_eval(cg, w, Z, G, O, ins)
        const = _outside_eval(cg, w, Z, G, O, ins)
        O[members], n = _component(members, const, _outside_terms(cg, w, Z, ins), step,
                                   what, max_iters, tol)
        total += n
    return O, total
