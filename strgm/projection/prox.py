"""Proximal gradient with the tree-structured group lasso (PEP §6.1, eq. 9).

Penalty. Ω(θ) = Σ_u ‖θ_{G_u}‖₂ over all strings u, where the group G_u holds every
feature with prefix u (u = ε included; a feature w = abd belongs to the groups of ε, a, ab,
abd). The groups form a tree (the prefix trie), so the proximal operator

    prox_{tΩ}(y) = argmin_x ½‖x − y‖² + t·Ω(x)

is the composition of the group soft-thresholdings g ← g·max(0, 1 − t/‖g‖₂) applied from
the deepest groups up to the root (Jenatton et al. 2011, Prop. 2). We compute it in one
bottom-up pass (squared norms of the partially shrunk subtrees, n²_u = x_u² +
Σ_{children c} s_c²·n²_c, s_u = max(0, 1 − t/n_u)) and one top-down pass (each feature is
multiplied by the product of the s of its prefixes): O(Σ_w |w|).

Active set (Schmidt & Murphy 2010; PEP Fig. 2). θ is an infinite vector; only features
that are nonzero or on the frontier can move: the frontier holds the unigrams (children
of the always-active root ε; the constant features BOS and EOS also count as active —
their gradient is always 0, so they would otherwise block every BOS·x and x·EOS) and the
one-symbol extensions w·a of nonzero w whose suffix (w·a)[1:] is also nonzero (the
conjunction test, PEP footnote 7). Features beyond ``max_len`` are never activated.
So the active set deepens by one trie level per step.

Step (PEP §7: one step per visit, η = 0.05, λ = 0.01):
    x ← prox_{ηλΩ}(x + η (E_p[f] − E_q[f])) on the active set, halving η while Z = ∞.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError
from strgm.features.moments import CompositionCache, Moments, p_moments, q_moments
from strgm.features import codes
from strgm.features.symbols import bos, eos
from strgm.features.theta import FeatureSet, Theta
from strgm.compiled import njit


@dataclass(frozen=True)
class _Tree:
    parent: np.ndarray  # node -> parent node (root: -1)
    levels: list  # node index arrays by depth, depth 0 = [root]
    feat_node: np.ndarray  # feature i -> its own node


@lru_cache(maxsize=512)
def _tree(fs: FeatureSet) -> _Tree:
    """The prefix trie of ``fs`` (root ε, then every prefix in canonical order), from the
    features' integer codes (:mod:`strgm.features.codes`): compiled for int64 codes
    (:func:`strgm.features.codes.trie_arrays`), else :func:`_tree_reference`."""
    if fs.codes.dtype != np.int64 or len(fs) == 0:
        return _tree_reference(fs)
    parent, depth, feat_node = codes.trie_arrays(fs.codes, codes.base(fs.num_labels))
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]
    return _Tree(parent, levels, feat_node)


def _tree_reference(fs: FeatureSet) -> _Tree:
    """:func:`_tree` by the numpy prefix closure and lookups (any dtype)."""
    n = fs.num_labels
    nodes, depth = codes.prefix_closure(fs.codes, fs.lengths, n, proper=False)
    look = codes.Lookup(nodes)
    parent = look.find(codes.parents(nodes, depth, n))
    parent[0] = -1
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]
    return _Tree(parent, levels, look.find(fs.codes))


def _node_values(theta: Theta, tree: _Tree) -> np.ndarray:
    v = np.zeros(tree.parent.shape[0])
    v[tree.feat_node] = theta.values
    return v


def penalty(theta: Theta) -> float:
    """Ω(θ) of eq. (9)."""
    if len(theta) == 0:
        return 0.0
    tree = _tree(theta.features)
    n2 = _node_values(theta, tree) ** 2
    for lev in reversed(tree.levels[1:]):
        np.add.at(n2, tree.parent[lev], n2[lev])
    return float(np.sqrt(n2).sum())


@njit(cache=True)
def _prox_scales(parent, feat_node, values, t):  # pragma: no cover - compiled
    """The factor of every feature in prox_{tΩ} (module docstring): one reverse pass over
    the trie nodes in canonical order (children after their parents, so a node's
    subtree is finished when it is reached) and one forward pass."""
    nn = parent.shape[0]
    n2 = np.zeros(nn)
    for i in range(feat_node.shape[0]):
        n2[feat_node[i]] = values[i] * values[i]
    s = np.empty(nn)
    for i in range(nn - 1, -1, -1):
        nrm = np.sqrt(n2[i])
        s[i] = max(0.0, 1.0 - t / nrm) if nrm > 0 else 0.0
        if parent[i] >= 0:
            n2[parent[i]] += s[i] * s[i] * n2[i]
    for i in range(1, nn):
        s[i] *= s[parent[i]]
    out = np.empty(feat_node.shape[0])
    for i in range(feat_node.shape[0]):
        out[i] = values[i] * s[feat_node[i]]
    return out


def tree_prox(theta: Theta, t: float) -> Theta:
    """prox_{tΩ}(θ) (exact, see module docstring). Returns a new Theta on the same set.
    Compiled (:func:`_prox_scales`); :func:`tree_prox_reference` is the numpy one."""
    if len(theta) == 0 or t <= 0:
        return theta
    tree = _tree(theta.features)
    return Theta(theta.features, _prox_scales(tree.parent, tree.feat_node, theta.values,
                                              float(t)))


def tree_prox_reference(theta: Theta, t: float) -> Theta:
    """:func:`tree_prox` level by level in numpy (the reference of the tests)."""
    if len(theta) == 0 or t <= 0:
        return theta
    tree = _tree(theta.features)
    v = _node_values(theta, tree)
    n2 = v ** 2
    s = np.ones_like(v)
    for lev in reversed(tree.levels):
        nrm = np.sqrt(n2[lev])
        with np.errstate(divide="ignore"):
            s[lev] = np.where(nrm > 0, np.maximum(0.0, 1.0 - t / nrm), 0.0)
        par = tree.parent[lev]
        ok = par >= 0
        np.add.at(n2, par[ok], (s[lev] ** 2 * n2[lev])[ok])
    scale = s.copy()
    for lev in tree.levels[1:]:
        scale[lev] *= scale[tree.parent[lev]]
    return Theta(theta.features, theta.values * scale[tree.feat_node])


def active_set(x: Theta, max_len: Optional[int] = None) -> FeatureSet:
    """Nonzero features of x plus the frontier (see module docstring).

    On integer codes (:mod:`strgm.features.codes`): with S = nonzero ∪ {EOS}, the
    extension w·a of a root w is kept when the code of w[1:]·a — (code(w) div B) +
    a·B^{|w|-1} — is in S. O(|roots|·(N+1)) numpy work. When every entry of x is
    nonzero (θ restricted to its support, as PEP's messages are) the answer depends on
    x's feature set only and is remembered on it (sets are interned,
    :meth:`FeatureSet.from_codes`: 81% of PEP's active sets repeat an earlier one)."""
    if len(x) and x.values.all():
        memo = x.features.__dict__.setdefault("_active", {})
        if max_len not in memo:
            memo[max_len] = _active_set(x, max_len)
        return memo[max_len]
    return _active_set(x, max_len)


def _active_set(x: Theta, max_len: Optional[int]) -> FeatureSet:
    """:func:`active_set` computed (the reference its memo is tested against): compiled
    (:func:`_active_codes`) when every code fits in int64, else
    :func:`_active_set_reference`."""
    n = x.num_labels
    fs = x.features
    nz = x.values != 0.0
    longest = int(fs.lengths[nz].max(initial=1))
    if fs.codes.dtype != np.int64 or codes.dtype_for(longest + 1, n) != np.int64:
        return _active_set_reference(x, max_len)
    out = _active_codes(np.ascontiguousarray(fs.codes[nz]), fs.lengths[nz], n,
                        -1 if max_len is None else int(max_len),
                        codes.powers(n, longest + 1, np.int64))
    return FeatureSet.from_codes(out, n)


@njit(cache=True)
def _active_codes(c, ln, n, max_len, pw):  # pragma: no cover - compiled
    """The codes of the active set (module docstring) of the nonzero features ``c``
    (lengths ``ln``; ``pw`` = B^0 … B^(longest+1); ``max_len`` −1 for none), in
    canonical order: the features, the unigrams, EOS and the extensions w·a of the roots
    (ε's stand-in BOS included) whose suffix is present."""
    b, e, base_ = n + 1, n + 2, n + 3
    present = np.sort(np.append(c, e))
    ext = np.empty((c.shape[0] + 1) * (n + 1), np.int64)
    m = 0
    for i in range(c.shape[0] + 1):
        r, k = (c[i], ln[i]) if i < c.shape[0] else (b, 1)
        if i < c.shape[0] and (c[i] // pw[k - 1] == e or c[i] == b):
            continue
        if max_len >= 0 and k >= max_len:
            continue
        for a in range(1, n + 2):
            sym = a if a <= n else e
            suf = r // base_ + sym * pw[k - 1]
            j = np.searchsorted(present, suf)
            if j < present.shape[0] and present[j] == suf:
                ext[m] = r + sym * pw[k]
                m += 1
    pool = np.concatenate((c, np.arange(1, n + 1), np.array([e]), ext[:m]))
    out = codes._reversed(np.unique(codes._reversed(pool, base_)[0]), base_)[0]
    return out[out != b]


def _active_set_reference(x: Theta, max_len: Optional[int]) -> FeatureSet:
    """:func:`_active_set` in numpy (any dtype)."""
    n = x.num_labels
    b, e = bos(n), eos(n)
    fs = x.features
    nz = x.values != 0.0
    c, ln = fs.codes[nz], fs.lengths[nz]
    longest = int(ln.max(initial=1))
    dt = codes.dtype_for(longest + 1, n)
    if dt == object:
        c = c.astype(object)
    last = codes.last_labels(c, ln, n)
    is_root = (last != e) & (c != b)
    roots = np.concatenate([c[is_root], np.array([b], dtype=c.dtype)])
    root_len = np.concatenate([ln[is_root], [1]])
    if max_len is not None:
        keep = root_len < max_len
        roots, root_len = roots[keep], root_len[keep]
    syms = np.concatenate([np.arange(1, n + 1), [e]]).astype(c.dtype)
    pw = codes.powers(n, longest + 1, dt)
    ext = roots[:, None] + syms[None, :] * pw[root_len][:, None]
    suffix = (roots // codes.base(n))[:, None] + syms[None, :] * pw[root_len - 1][:, None]
    present = np.concatenate([c, np.array([e], dtype=c.dtype)])
    ext = ext[_member(suffix, np.sort(present))]
    unigrams = np.arange(1, n + 1).astype(c.dtype)
    out, _ = codes.canonical_unique(
        np.concatenate([c, unigrams, np.array([e], dtype=c.dtype), ext]), n)
    return FeatureSet.from_codes(out[out != b], n)


def _member(x: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """x ∈ sorted_set elementwise, by binary search (np.isin sorts both sides)."""
    j = np.minimum(np.searchsorted(sorted_set, x), len(sorted_set) - 1)
    return sorted_set[j] == x


@dataclass(frozen=True)
class ProxStep:
    x: Theta  # the new θ_{F→V} (restricted to its nonzero features)
    theta: Theta  # θ_V = base + x
    q: Moments  # moments of θ_V on its working set
    eta: float
    p: Moments  # moments of p̂ used
    active: Optional[FeatureSet] = None  # the active set the step moved on


def prox_step(p: pynini.Fst, x: Theta, base: Optional[Theta], lam: float, eta: float = 0.05,
              max_len: Optional[int] = None, p_cache: Optional[Moments] = None,
              max_halvings: int = 30, what: str = "automaton",
              q_cache: Optional[tuple[Theta, Moments]] = None,
              compositions: Optional[CompositionCache] = None) -> ProxStep:
    """One proximal-gradient step on D(p̂ ‖ q_{base+x}) + λΩ(x), p̂ ∝ p ⊙ ENCODE(base).

    ``p_cache``: moments of p̂ from an earlier call with the same (p, base); reused when
    its feature set covers the working set (saves the composition). ``q_cache``: (θ,
    moments of q_θ) from an earlier step (its ``(theta, q)``); reused when θ = base + x
    and the moments cover the working set (saves one linear solve per step).
    ``compositions``: where p's composition with the feature DFA is kept across steps
    (:class:`strgm.features.moments.CompositionCache`; its cover grows with the working
    set, so K passes compose each message about once).
    """
    act = active_set(x, max_len)
    work, pm, xa, b, _, g = _gradient(p, x, base, act, p_cache, q_cache, what,
                                      compositions)
    for _ in range(max_halvings + 1):
        y = Theta(work, xa.values + eta * g)
        xn = tree_prox(y, eta * lam)
        try:
            qn = q_moments(b + xn, what=what)
        except DivergenceError:
            eta *= 0.5
            continue
        xr = xn.restrict()
        return ProxStep(xr, b + xn, qn, eta, pm, act)
    raise DivergenceError(f"{what}: no step size keeps Z_theta finite")


def _gradient(p, x: Theta, base: Optional[Theta], act: FeatureSet, p_cache, q_cache,
              what: str, compositions) -> tuple:
    """(working set, p̂ moments, x and base on it, θ = base + x, gradient E_p̂[f] − E_q[f]
    zeroed outside ``act``) for :func:`prox_step`."""
    work = act if base is None else act.union(base.features)
    work = work.union(x.features)
    pm = None
    if p_cache is not None:
        pm = p_cache if covers(p_cache, work) else \
            (p_cache.on(work) if isinstance(p, pynini.Fst) else None)
    if pm is None:
        pm = p_moments(p, work, base, what=what, compositions=compositions)
    ep = _on(pm, work)
    xa = x.align(work, strict=False)
    b = Theta(work) if base is None else base.align(work)
    cur = b + xa
    if q_cache is not None and covers(q_cache[1], work) and same_theta(q_cache[0], cur):
        eq = _on(q_cache[1], work)
    else:
        eq = q_moments(cur, what=what).expectations
    g = np.where(work.positions_in(act) >= 0, ep - eq, 0.0)
    return work, pm, xa, b, cur, g


def covers(m: Moments, fs: FeatureSet) -> bool:
    """True when the moments ``m`` include every feature of ``fs``."""
    return m.features is fs or bool((fs.positions_in(m.features) >= 0).all())


def same_theta(a: Theta, b: Theta, tol: float = 1e-12) -> bool:
    """True when a and b are the same vector (up to ``tol``; absent entries are 0)."""
    if a is b:
        return True
    fs = a.features.union(b.features)
    return bool(np.max(np.abs(a.align(fs, strict=False).values
                              - b.align(fs, strict=False).values), initial=0.0) <= tol)


def _on(m: Moments, fs: FeatureSet) -> np.ndarray:
    if m.features is fs or m.features == fs:
        return m.expectations
    return m.expectations[fs.positions_in(m.features)]


def proximal_projection(p: pynini.Fst, num_labels: int, lam: float = 0.01, eta: float = 0.5,
                        iters: int = 200, max_len: Optional[int] = None,
                        theta0: Optional[Theta] = None, tol: float = 1e-9) -> Theta:
    """Approximately minimise D(p ‖ q_θ) + λΩ(θ) (eq. 3 with eq. 9) from θ0 (default: the
    closed-form unigram fit of p) by repeated :func:`prox_step`. Returns θ restricted to its nonzero features."""
    if theta0 is None:
        from strgm.projection.closed_form import closed_form, order_feature_set

        theta0, _ = closed_form(p, order_feature_set(1, num_labels))
    x = theta0.restrict()
    cache = None
    for _ in range(iters):
        r = prox_step(p, x, None, lam, eta, max_len, cache)
        cache = r.p
        delta = r.x.align(r.x.features.union(x.features), strict=False).values - \
            x.align(r.x.features.union(x.features), strict=False).values
        x, eta = r.x, r.eta
        if np.max(np.abs(delta), initial=0.0) < tol:
            break
    return x

