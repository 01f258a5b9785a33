"""Contextual stochastic edit transducer (after Cotterell, Peng & Eisner 2014).

A locally normalised log-linear model of p(surface y | underlying x). Reading x left to
right, at input position i the machine knows the context

    L = class of x_{i-1} (BOS at the start, BND after a boundary)
    K = class of x_i      (EOS at the end)      -- the right context of an insertion
    R = class of x_{i+1}                        -- the right context of an edit of x_i
    O = class of the last output symbol (BOS)
    T = tier: the (back, round) class of the nearest preceding *output* vowel (NONE)

(each window 0 or 1; a window of 0 fixes that component to a single value ``*``). The
right window may also be 2: then K = (class x_i, class x_{i+1}) and
R = (class x_{i+1}, class x_{i+2}) are *pairs* (for processes triggered two segments
to the right, e.g. Kikuria vowel lowering before a suffix -CV), and every template over
K/R exists twice — on the first class of the pair (the window-1 feature, which
generalises) and on the whole pair (template name + ``"2"``). The machine then takes two
locally normalised decisions:

1. insertion decision, context c = (L, O, T, K):  actions INS(b) for every segment b,
   and CONT (consume x_i, or stop when K = EOS):
       p(a | c) = exp(θ·f(c, a)) / Σ_{a'} exp(θ·f(c, a'))
2. edit decision for x_i, context d = (L, O, T, x_i, R): actions y ∈ {x_i (copy)} ∪
   SUB(x_i) ∪ {ε (delete)}, p(y | d) = softmax_y θ·f(d, y).

So p(y | x) = Σ_{edit sequences} Π p(decisions), a proper distribution over y for every
x: both decisions are normalised, and the input pins down the only surviving branch.
This is CPE 2014's model with the action set factored in two (the insertion decision sees
the *class* of x_i, the edit decision its identity); features are sparse indicator
templates over actions, symbols and context classes (see :func:`feature_templates`).

Finite-state compilation. A state is (L, O, T, K), K being a *promise* of the class of
the next input symbol: an arc consuming x_i (input label x_i, output y or ε) exists only
from states with K = class(x_i), and it branches over R, moving to (class(x_i), O', T', R)
with weight −log p(CONT | c) − log p(y | d). Insertion arcs ε:b loop over L and K. A state
with K = EOS (or K = ``*`` when the right window is 0; K = (EOS, EOS) for a window of
2, where a consuming arc from (class x_i, k) branches over R = (k, r) and needs
k = class x_{i+1}) is final with weight
−log p(CONT | c). A boundary label (optional, last label) is always deleted (a
one-action decision) and is visible as context (L = BND, K = BND).

Size: |states| = |L|·|O|·|T|·|K| (|K| squared for a right window of 2),
arcs ≈ |states|·(|Σ| + Σ_{x∈K}|SUB(x)|·|R|): context classes (``strgm.transducers`` takes
them as integer maps; see ``strgm.models.ipa_features``) and restricted substitution
sets keep it small; :func:`compile_fst` can prune (:func:`pruned_log_probs`)
arcs below a probability and renormalise each decision (still locally normalised).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pynini
import scipy.sparse as sp

from strgm.errors import InputError
from strgm.wfsa.core import new_fst, weight

INS, CONT, COPY, SUB, DEL = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class ContextSpec:
    """Window sizes (0 or 1; the right input window also 2) and the tier switch.
    Defaults: CPE 2014's 1/1/1 plus tier."""

    left_input: int = 1
    right_input: int = 1
    left_output: int = 1
    tier: bool = True

    def __post_init__(self):
        for k in ("left_input", "right_input", "left_output"):
            allowed = (0, 1, 2) if k == "right_input" else (0, 1)
            if getattr(self, k) not in allowed:
                raise InputError(f"context window {k} must be one of {allowed}, got "
                                 f"{getattr(self, k)}")


@dataclass(frozen=True)
class SymbolInfo:
    """Per-segment integer maps (index = label − 1, labels 1..n).

    ``in_class``: class for L; ``right_class``: class for K/R; ``out_class``: class for
    O; ``tier``: 0..t−1
    for vowels, −1 otherwise; ``voice``: 0/1 for obstruents, −1 otherwise; ``sub_ok``
    (n×n bool): allowed substitutions x→y; ``change`` (n×n int): id of the set of
    features a substitution changes (−1 if none/unknown). ``boundary``: whether label
    n + 1 is a morpheme boundary."""

    in_class: np.ndarray
    right_class: np.ndarray
    out_class: np.ndarray
    tier: np.ndarray
    voice: np.ndarray
    sub_ok: np.ndarray
    change: np.ndarray
    boundary: bool = False

    @property
    def n(self) -> int:
        return int(len(self.in_class))

    @classmethod
    def plain(cls, n: int, boundary: bool = False) -> "SymbolInfo":
        """Every symbol its own class, no tier/voicing information, all substitutions."""
        eye = np.eye(n, dtype=bool)
        return cls(np.arange(n), np.arange(n), np.arange(n), np.full(n, -1), np.full(n, -1), ~eye,
                   np.full((n, n), -1), boundary)


@dataclass
class EditStructure:
    """θ-independent skeleton: states, events (decisions × actions), features, arcs."""

    spec: ContextSpec
    info: SymbolInfo
    dims: tuple  # (nL, nO, nT, nK)
    num_states: int
    start: int
    # events
    ev_group: np.ndarray  # group id of each event (groups contiguous)
    group_start: np.ndarray
    ev_attrs: dict  # name -> int array (kind, L, O, T, K, x, y, R)
    features: sp.csr_matrix  # events × features
    feature_names: list
    # arcs (the start ε arcs have ev1 = ev2 = -1)
    src: np.ndarray
    dst: np.ndarray
    ilabel: np.ndarray
    olabel: np.ndarray
    ev1: np.ndarray
    ev2: np.ndarray
    final_ev: np.ndarray  # per state: CONT event of a final state, -1 otherwise
    meta: dict = field(default_factory=dict)

    @property
    def num_events(self) -> int:
        return int(len(self.ev_group))

    @property
    def num_features(self) -> int:
        return int(self.features.shape[1])

    @property
    def num_arcs(self) -> int:
        return int(len(self.src))

    def log_probs(self, theta: np.ndarray) -> np.ndarray:
        """log p(event) = θ·f(e) − log Σ_{e' in group} exp θ·f(e')  (vectorised)."""
        s = self.features @ theta
        m = np.maximum.reduceat(s, self.group_start)
        z = np.add.reduceat(np.exp(s - m[self.ev_group]), self.group_start)
        return s - (m + np.log(z))[self.ev_group]

    def arc_weights(self, logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(−log weight of every arc, −log final weight of every state)."""
        w = np.zeros(self.num_arcs)
        m1, m2 = self.ev1 >= 0, self.ev2 >= 0
        w[m1] -= logp[self.ev1[m1]]
        w[m2] -= logp[self.ev2[m2]]
        fin = np.full(self.num_states, np.inf)
        mf = self.final_ev >= 0
        fin[mf] = -logp[self.final_ev[mf]]
        return w, fin


def _state_index(dims, L, O, T, K):
    return np.ravel_multi_index((L, O, T, K), dims)


def build_structure(info: SymbolInfo, spec: ContextSpec = ContextSpec()) -> EditStructure:
    """Enumerate states, decisions, features and arcs (see module docstring)."""
    n = info.n
    if n < 1:
        raise InputError("contextual edit transducer needs at least one segment")
    bnd = n + 1 if info.boundary else None
    n_in = int(info.in_class.max()) + 1
    n_r = int(info.right_class.max()) + 1
    n_out = int(info.out_class.max()) + 1
    n_tier = int(info.tier.max()) + 1 if (info.tier >= 0).any() else 0
    # context ids: L: classes, BOS, BND ; K/R: classes, EOS, BND ; O: classes, BOS ; T: .., NONE
    nL = n_in + 1 + int(bnd is not None) if spec.left_input else 1
    nK1 = n_r + 1 + int(bnd is not None) if spec.right_input else 1  # one symbol's ids
    pair = spec.right_input == 2
    nK = nK1 * nK1 if pair else nK1  # window 2: K = k1·nK1 + k2
    nO = n_out + 1 if spec.left_output else 1
    nT = n_tier + 1 if spec.tier and n_tier else 1
    BOS_L, BND_L, EOS_K, BND_K, BOS_O, NONE_T = n_in, n_in + 1, n_r, n_r + 1, n_out, nT - 1
    dims = (nL, nO, nT, nK)
    S = nL * nO * nT * nK
    labels = np.arange(1, n + 1 + int(bnd is not None))

    def lclass(x):  # after consuming x
        if not spec.left_input:
            return np.zeros_like(x)
        return np.where(x == (bnd or -1), BND_L, info.in_class[np.minimum(x, n) - 1])

    def kclass(x):
        if not spec.right_input:
            return np.zeros_like(x)
        return np.where(x == (bnd or -1), BND_K, info.right_class[np.minimum(x, n) - 1])

    def onext(O, y):
        if not spec.left_output:
            return O
        return np.where(y > 0, info.out_class[np.maximum(y, 1) - 1], O)

    def tnext(T, y):
        if nT == 1:
            return T
        ty = np.where(y > 0, info.tier[np.maximum(y, 1) - 1], -1)
        return np.where(ty >= 0, ty, T)

    # ---- insertion decisions: one group per state, actions INS(1..n), CONT
    st = np.arange(S)
    L, O, T, K = np.unravel_index(st, dims)
    A = n + 1
    ins_L, ins_O, ins_T, ins_K = (np.repeat(a, A) for a in (L, O, T, K))
    ins_y = np.tile(np.append(np.arange(1, n + 1), 0), S)
    ins_kind = np.where(ins_y > 0, INS, CONT)
    ins_group = np.repeat(st, A)
    # ---- edit decisions: groups (L, O, T, x, R); actions copy, subs, delete
    acts = []
    for x in labels:
        if bnd is not None and x == bnd:
            acts.append(np.array([0]))
        else:
            subs = np.flatnonzero(info.sub_ok[x - 1]) + 1
            acts.append(np.concatenate([[x], subs[subs != x], [0]]))
    ctx = np.array(np.meshgrid(np.arange(nL), np.arange(nO), np.arange(nT), np.arange(nK),
                               indexing="ij")).reshape(4, -1)  # (L, O, T, R)
    if pair:  # nothing follows the end: drop the impossible R = (EOS, r ≠ EOS)
        ctx = ctx[:, ~((ctx[3] // nK1 == EOS_K) & (ctx[3] % nK1 != EOS_K))]
    rows = []
    for x, ys in zip(labels, acts):
        k = len(ys)
        c = np.repeat(ctx, k, axis=1)
        rows.append((c, np.full(c.shape[1], x), np.tile(ys, ctx.shape[1])))
    e_L = np.concatenate([r[0][0] for r in rows])
    e_O = np.concatenate([r[0][1] for r in rows])
    e_T = np.concatenate([r[0][2] for r in rows])
    e_R = np.concatenate([r[0][3] for r in rows])
    e_x = np.concatenate([r[1] for r in rows])
    e_y = np.concatenate([r[2] for r in rows])
    e_kind = np.where(e_y == 0, DEL, np.where(e_y == e_x, COPY, SUB))
    # group boundaries: consecutive events with the same (x, L, O, T, R)
    key = np.ravel_multi_index((e_x, e_L, e_O, e_T, e_R),
                               (n + 2, nL, nO, nT, nK))
    new = np.concatenate([[True], key[1:] != key[:-1]])
    e_group = S + np.cumsum(new) - 1
    n_ins = len(ins_y)
    attrs = {
        "kind": np.concatenate([ins_kind, e_kind]),
        "L": np.concatenate([ins_L, e_L]), "O": np.concatenate([ins_O, e_O]),
        "T": np.concatenate([ins_T, e_T]), "K": np.concatenate([ins_K, e_R]),
        "x": np.concatenate([np.zeros(n_ins, dtype=np.int64), e_x]),
        "y": np.concatenate([ins_y, e_y]),
    }
    group = np.concatenate([ins_group, e_group])
    gstart = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    feats, names = _features(attrs, info, bnd, nK1 if pair else None)
    # ---- arcs
    ins_arc = ins_kind == INS
    i_src = ins_group[ins_arc]
    i_y = ins_y[ins_arc]
    i_dst = _state_index(dims, ins_L[ins_arc], onext(ins_O[ins_arc], i_y),
                         tnext(ins_T[ins_arc], i_y), ins_K[ins_arc])
    c_src = _state_index(dims, e_L, e_O, e_T,
                         kclass(e_x) * nK1 + e_R // nK1 if pair else kclass(e_x))
    c_dst = _state_index(dims, lclass(e_x), onext(e_O, e_y), tnext(e_T, e_y), e_R)
    cont_of_state = np.arange(S) * A + n  # CONT event index of each state
    src = np.concatenate([i_src, c_src])
    dst = np.concatenate([i_dst, c_dst])
    il = np.concatenate([np.zeros(len(i_src), dtype=np.int64), e_x])
    ol = np.concatenate([i_y, e_y])
    ev1 = np.concatenate([np.flatnonzero(ins_arc), cont_of_state[c_src]])
    ev2 = np.concatenate([np.full(len(i_src), -1), n_ins + np.arange(len(e_x))])
    final_ev = np.where((K == (EOS_K * nK1 + EOS_K if pair else EOS_K)) | (nK == 1),
                        cont_of_state, -1)
    if not spec.right_input:
        final_ev = cont_of_state.copy()
    # start: BOS contexts; with a right window, ε-branch over the promised class K
    s0_L = BOS_L if spec.left_input else 0
    s0_O = BOS_O if spec.left_output else 0
    starts = _state_index(dims, np.full(nK, s0_L), np.full(nK, s0_O), np.full(nK, NONE_T),
                          np.arange(nK))
    if nK > 1:
        start = S
        num_states = S + 1
        src = np.concatenate([src, np.full(nK, S)])
        dst = np.concatenate([dst, starts])
        il = np.concatenate([il, np.zeros(nK, dtype=np.int64)])
        ol = np.concatenate([ol, np.zeros(nK, dtype=np.int64)])
        ev1 = np.concatenate([ev1, np.full(nK, -1)])
        ev2 = np.concatenate([ev2, np.full(nK, -1)])
        final_ev = np.append(final_ev, -1)
    else:
        start, num_states = int(starts[0]), S
    return EditStructure(spec, info, dims, num_states, start, group, gstart, attrs, feats,
                         names, src, dst, il, ol, ev1, ev2, final_ev,
                         meta={"bos_eos": (BOS_L, BND_L, EOS_K, BND_K, BOS_O, NONE_T)})


def feature_templates() -> list:
    """(name, kinds, attribute tuple) of every feature template. Derived attributes:
    ``vy`` voice of y (obstruents), ``ty`` tier class of y (vowels), ``chg`` the feature
    change of a substitution. Markedness templates (``out_*``) fire for copy *and*
    substitution, so they generalise across symbols: e.g. (vy, R) learns regressive
    voicing assimilation and final devoicing, (ty, T) vowel harmony."""
    return [
        ("ins", (INS,), ()), ("ins_y", (INS,), ("y",)), ("ins_yL", (INS,), ("y", "L")),
        ("ins_yK", (INS,), ("y", "K")), ("ins_yLK", (INS,), ("y", "L", "K")),
        ("ins_yO", (INS,), ("y", "O")), ("ins_LK", (INS,), ("L", "K")),
        ("ins_OK", (INS,), ("O", "K")), ("ins_tyT", (INS,), ("ty", "T")),
        ("cont", (CONT,), ()), ("cont_K", (CONT,), ("K",)),
        ("copy", (COPY,), ()), ("copy_x", (COPY,), ("x",)),
        ("sub", (SUB,), ()), ("sub_xy", (SUB,), ("x", "y")), ("sub_xyR", (SUB,), ("x", "y", "K")),
        ("sub_xyL", (SUB,), ("x", "y", "L")), ("sub_xyO", (SUB,), ("x", "y", "O")),
        ("sub_xyT", (SUB,), ("x", "y", "T")), ("sub_chg", (SUB,), ("chg",)),
        ("sub_chgR", (SUB,), ("chg", "K")), ("sub_chgL", (SUB,), ("chg", "L")),
        ("del", (DEL,), ()), ("del_x", (DEL,), ("x",)), ("del_xR", (DEL,), ("x", "K")),
        ("del_xL", (DEL,), ("x", "L")), ("del_xLR", (DEL,), ("x", "L", "K")),
        ("out_vyR", (COPY, SUB), ("vy", "K")), ("out_vyL", (COPY, SUB), ("vy", "L")),
        ("out_vyO", (COPY, SUB), ("vy", "O")), ("out_tyT", (COPY, SUB), ("ty", "T")),
        ("out_tyTx", (COPY, SUB), ("ty", "T", "x")),
    ]


def _features(attrs: dict, info: SymbolInfo, bnd, pair_base: Optional[int] = None):
    """Sparse indicator features: one column per (template, attribute values) that
    occurs in some event. Events of one-action groups (the boundary) get none. With a
    right window of 2 (``pair_base`` = number of one-symbol K ids), K is a pair id
    k1·pair_base + k2: templates over K use k1, and a copy named ``name + "2"`` uses
    the pair."""
    n = info.n
    x, y, kind = attrs["x"], attrs["y"], attrs["kind"]
    seg_y = (y >= 1) & (y <= n)
    vy = np.where(seg_y, info.voice[np.clip(y, 1, n) - 1], -1)
    ty = np.where(seg_y, info.tier[np.clip(y, 1, n) - 1], -1)
    seg_x = (x >= 1) & (x <= n)
    chg = np.where(seg_x & seg_y, info.change[np.clip(x, 1, n) - 1, np.clip(y, 1, n) - 1], -1)
    derived = {**attrs, "vy": vy, "ty": ty, "chg": chg}
    templates = feature_templates()
    if pair_base is not None:
        derived["K2"] = attrs["K"]  # the pair
        derived["K"] = attrs["K"] // pair_base  # its first class
        templates = templates + [(name + "2", kinds, tuple("K2" if k == "K" else k
                                                          for k in keys))
                                 for name, kinds, keys in templates if "K" in keys]
    live = np.ones(len(x), dtype=bool)
    if bnd is not None:
        live &= x != bnd
    rows, cols, names = [], [], []
    offset = 0
    for name, kinds, keys in templates:
        mask = live & np.isin(kind, kinds)
        for k in keys:
            mask &= derived[k] >= 0
        idx = np.flatnonzero(mask)
        if not len(idx):
            continue
        if keys:
            vals = np.stack([derived[k][idx] for k in keys])
            code = np.ravel_multi_index(tuple(vals), tuple(int(v.max()) + 1 for v in vals))
            uniq, inv = np.unique(code, return_inverse=True)
            for u in uniq:
                names.append((name,) + tuple(int(v) for v in np.unravel_index(
                    u, tuple(int(v.max()) + 1 for v in vals))))
        else:
            inv = np.zeros(len(idx), dtype=np.int64)
            names.append((name,))
        rows.append(idx)
        cols.append(offset + inv.ravel())
        offset += int(inv.max()) + 1
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    f = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(x), offset))
    return f, names


def compile_fst(structure: EditStructure, theta: np.ndarray,
                prune: Optional[float] = None, ids: bool = False) -> pynini.Fst:
    """The log64 WFST for parameters θ.

    ``prune``: drop edit/insertion actions with p < prune and renormalise each decision
    over the kept actions (the result is still locally normalised; copy and CONT are
    always kept). ``ids``: *input* labels are arc ids 1..|arcs| (output labels kept) and
    every final state q gets an extra (|arcs|+1+q):ε arc to a super-final state instead
    of its final weight (used to read expected arc counts off a composed belief; see
    ``strgm.models.training``).
    """
    logp = structure.log_probs(theta)
    if prune:
        logp = pruned_log_probs(structure, logp, prune)
    w, fin = structure.arc_weights(logp)
    keep = np.isfinite(w)
    return build_fst(structure, w, fin, keep, ids)


def pruned_log_probs(structure: EditStructure, logp: np.ndarray, prune: float) -> np.ndarray:
    """Set log p = −inf for actions below ``prune`` (never copy/CONT) and renormalise."""
    kind = structure.ev_attrs["kind"]
    drop = (logp < np.log(prune)) & (kind != COPY) & (kind != CONT)
    lp = np.where(drop, -np.inf, logp)
    g, gs = structure.ev_group, structure.group_start
    m = np.maximum.reduceat(lp, gs)
    z = np.add.reduceat(np.exp(lp - m[g]), gs)
    return lp - (m + np.log(z))[g]


def build_fst(structure: EditStructure, w: np.ndarray, fin: np.ndarray, keep: np.ndarray,
              ids: bool = False) -> pynini.Fst:
    st = structure
    f = new_fst()
    extra = 1 if ids else 0
    f.add_states(st.num_states + extra)
    f.set_start(st.start)
    arcs = np.flatnonzero(keep)
    src = st.src[arcs].tolist()
    dst = st.dst[arcs].tolist()
    il = (arcs + 1).tolist() if ids else st.ilabel[arcs].tolist()
    ol = st.olabel[arcs].tolist()
    ws = w[arcs].tolist()
    Arc = pynini.Arc
    for s, d, i, o, x in zip(src, dst, il, ol, ws):
        f.add_arc(s, Arc(i, o, weight(x), d))
    finals = np.flatnonzero(np.isfinite(fin))
    if ids:
        sink = st.num_states
        f.set_final(sink, weight(0.0))
        for s in finals.tolist():
            f.add_arc(s, Arc(st.num_arcs + 1 + s, 0, weight(fin[s]), sink))
    else:
        for s in finals.tolist():
            f.set_final(s, weight(fin[s]))
    return pynini.arcsort(f, sort_type="olabel" if ids else "ilabel")
