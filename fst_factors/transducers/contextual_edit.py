"""Contextual stochastic edit transducer (after Cotterell, Peng & Eisner 2014).

A locally normalised log-linear model of p(surface y | underlying x). Reading x left to
right, at input position i the machine knows the context

    L = class of x_{i-1} (BOS at the start, BND after a boundary)
    K = class of x_i      (EOS at the end)      -- the right context of an insertion
    R = class of x_{i+1}                        -- the right context of an edit of x_i
    O = class of the last output symbol (BOS)
    T = tier: the (back, round) class of the nearest preceding *output* vowel (NONE)
        that is not transparent: a vowel with ``tier_trigger`` false is skipped, as a
        neutral vowel is in Hungarian or Finnish back harmony

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
arcs ≈ |states|·(|Σ| + Σ_{x∈K}|SUB(x)|·|R|): context classes (taken here as integer
maps; strgm derives them from IPA features) and restricted substitution
sets keep it small; :func:`compile_fst` can prune (:func:`pruned_log_probs`)
arcs below a probability and renormalise each decision (still locally normalised).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pynini
import scipy.sparse as sp

from fst_factors.errors import InputError
from fst_factors.transducers.edit_actions import CONT, COPY, DEL, INS, SUB
from fst_factors.transducers.edit_features import (feature_templates,  # noqa: F401
                                                   indicator_features)
from fst_factors.transducers.edit_layout import Layout
from fst_factors.wfsa.core import from_arc_table


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
    n + 1 is a morpheme boundary. ``tier_trigger`` (bool per segment, default: the vowels
    with ``tier`` ≥ 0): whether writing the segment sets the tier context T; a vowel with
    a tier class but no trigger is *transparent* — it carries its class for the features
    of its own output but the harmony context passes through it."""

    in_class: np.ndarray
    right_class: np.ndarray
    out_class: np.ndarray
    tier: np.ndarray
    voice: np.ndarray
    sub_ok: np.ndarray
    change: np.ndarray
    boundary: bool = False
    tier_trigger: Optional[np.ndarray] = None
    height: Optional[np.ndarray] = None
    tier_features: bool = False

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


def _insertion_events(lay: Layout) -> dict:
    """One decision per state (L, O, T, K); actions INS(1..n), then CONT."""
    st = np.arange(lay.S)
    L, O, T, K = np.unravel_index(st, lay.dims)
    A = lay.n + 1
    y = np.tile(np.append(np.arange(1, lay.n + 1), 0), lay.S)
    return {"L": np.repeat(L, A), "O": np.repeat(O, A), "T": np.repeat(T, A),
            "K": np.repeat(K, A), "y": y, "kind": np.where(y > 0, INS, CONT),
            "group": np.repeat(st, A)}


def _edit_events(lay: Layout) -> dict:
    """One decision per (L, O, T, x, R); actions copy, the allowed substitutions,
    delete (only delete for the boundary). Group ids follow the insertion groups."""
    info, bnd = lay.info, lay.bnd
    acts = []
    for x in lay.labels:
        if bnd is not None and x == bnd:
            acts.append(np.array([0]))
        else:
            subs = np.flatnonzero(info.sub_ok[x - 1]) + 1
            acts.append(np.concatenate([[x], subs[subs != x], [0]]))
    ctx = np.array(np.meshgrid(np.arange(lay.nL), np.arange(lay.nO), np.arange(lay.nT),
                               np.arange(lay.nK), indexing="ij")).reshape(4, -1)
    if lay.pair:  # nothing follows the end: drop the impossible R = (EOS, r ≠ EOS)
        eos = lay.EOS_K
        ctx = ctx[:, ~((ctx[3] // lay.nK1 == eos) & (ctx[3] % lay.nK1 != eos))]
    cs, xs, ys = [], [], []
    for x, acts_x in zip(lay.labels, acts):
        c = np.repeat(ctx, len(acts_x), axis=1)
        cs.append(c)
        xs.append(np.full(c.shape[1], x))
        ys.append(np.tile(acts_x, ctx.shape[1]))
    c = np.concatenate(cs, axis=1)
    ev = {"L": c[0], "O": c[1], "T": c[2], "R": c[3], "x": np.concatenate(xs),
          "y": np.concatenate(ys)}
    ev["kind"] = np.where(ev["y"] == 0, DEL, np.where(ev["y"] == ev["x"], COPY, SUB))
    # group boundaries: consecutive events with the same (x, L, O, T, R)
    key = np.ravel_multi_index((ev["x"], ev["L"], ev["O"], ev["T"], ev["R"]),
                               (lay.n + 2, lay.nL, lay.nO, lay.nT, lay.nK))
    ev["group"] = lay.S + np.cumsum(np.concatenate([[True], key[1:] != key[:-1]])) - 1
    return ev


def _arcs(lay: Layout, ins: dict, ed: dict) -> dict:
    """Insertion arcs ε:y (weight of the INS event) and consuming arcs x:y (weights of
    the state's CONT event and of the edit event), plus each state's final event."""
    n_ins = len(ins["y"])
    ins_arc = ins["kind"] == INS
    i_src, i_y = ins["group"][ins_arc], ins["y"][ins_arc]
    i_dst = lay.index(ins["L"][ins_arc], lay.onext(ins["O"][ins_arc], i_y),
                      lay.tnext(ins["T"][ins_arc], i_y), ins["K"][ins_arc])
    e_x, e_y = ed["x"], ed["y"]
    promised = lay.kclass(e_x) * lay.nK1 + ed["R"] // lay.nK1 if lay.pair \
        else lay.kclass(e_x)
    c_src = lay.index(ed["L"], ed["O"], ed["T"], promised)
    c_dst = lay.index(lay.lclass(e_x), lay.onext(ed["O"], e_y), lay.tnext(ed["T"], e_y),
                      ed["R"])
    cont_of_state = np.arange(lay.S) * (lay.n + 1) + lay.n  # CONT event of each state
    K = np.unravel_index(np.arange(lay.S), lay.dims)[3]
    end = lay.EOS_K * lay.nK1 + lay.EOS_K if lay.pair else lay.EOS_K
    final_ev = np.where((K == end) | (lay.nK == 1), cont_of_state, -1)
    if not lay.spec.right_input:
        final_ev = cont_of_state.copy()
    return {"src": np.concatenate([i_src, c_src]), "dst": np.concatenate([i_dst, c_dst]),
            "il": np.concatenate([np.zeros(len(i_src), dtype=np.int64), e_x]),
            "ol": np.concatenate([i_y, e_y]),
            "ev1": np.concatenate([np.flatnonzero(ins_arc), cont_of_state[c_src]]),
            "ev2": np.concatenate([np.full(len(i_src), -1), n_ins + np.arange(len(e_x))]),
            "final_ev": final_ev}


def _add_start(lay: Layout, arcs: dict) -> tuple[int, int]:
    """(start state, number of states): the BOS context; with a right window, a new
    start state with ε-arcs to every promised class K (appended to ``arcs``)."""
    nK = lay.nK
    starts = lay.index(np.full(nK, lay.BOS_L if lay.spec.left_input else 0),
                       np.full(nK, lay.BOS_O if lay.spec.left_output else 0),
                       np.full(nK, lay.NONE_T), np.arange(nK))
    if nK == 1:
        return int(starts[0]), lay.S
    for key, extra in (("src", np.full(nK, lay.S)), ("dst", starts),
                       ("il", np.zeros(nK, dtype=np.int64)),
                       ("ol", np.zeros(nK, dtype=np.int64)), ("ev1", np.full(nK, -1)),
                       ("ev2", np.full(nK, -1)), ("final_ev", np.array([-1]))):
        arcs[key] = np.concatenate([arcs[key], extra])
    return lay.S, lay.S + 1


def build_structure(info: SymbolInfo, spec: ContextSpec = ContextSpec()) -> EditStructure:
    """Enumerate states, decisions, features and arcs (see module docstring).
    Cost: O(|states|·|Σ| + |edit events|), all numpy."""
    lay = Layout(info, spec)
    ins, ed = _insertion_events(lay), _edit_events(lay)
    n_ins = len(ins["y"])
    attrs = {
        "kind": np.concatenate([ins["kind"], ed["kind"]]),
        "L": np.concatenate([ins["L"], ed["L"]]), "O": np.concatenate([ins["O"], ed["O"]]),
        "T": np.concatenate([ins["T"], ed["T"]]), "K": np.concatenate([ins["K"], ed["R"]]),
        "x": np.concatenate([np.zeros(n_ins, dtype=np.int64), ed["x"]]),
        "y": np.concatenate([ins["y"], ed["y"]]),
    }
    group = np.concatenate([ins["group"], ed["group"]])
    gstart = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    feats, names = indicator_features(attrs, info, lay.bnd, lay.nK1 if lay.pair else None,
                                      lay.nT)
    arcs = _arcs(lay, ins, ed)
    start, num_states = _add_start(lay, arcs)
    return EditStructure(spec, info, lay.dims, num_states, start, group, gstart, attrs,
                         feats, names, arcs["src"], arcs["dst"], arcs["il"], arcs["ol"],
                         arcs["ev1"], arcs["ev2"], arcs["final_ev"],
                         meta={"bos_eos": (lay.BOS_L, lay.BND_L, lay.EOS_K, lay.BND_K,
                                           lay.BOS_O, lay.NONE_T)})


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
    """The WFST of the arcs ``keep`` with −log weights ``w`` and final weights ``fin``,
    sorted on the input tape (on the output tape with ``ids``: :func:`compile_fst`).
    Built from arrays through OpenFst's binary format (:func:`fst_factors.wfsa.core.
    from_arc_table`): O(|E|) numpy work, no per-arc Python."""
    st = structure
    arcs = np.flatnonzero(keep)
    src, dst, ol, ws = st.src[arcs], st.dst[arcs], st.olabel[arcs], w[arcs]
    il = arcs + 1 if ids else st.ilabel[arcs]
    finals = np.flatnonzero(np.isfinite(fin))
    n = st.num_states + (1 if ids else 0)
    final = np.full(n, np.inf)
    if ids:  # every final state's weight moves onto an id arc into one super-final state
        sink = st.num_states
        final[sink] = 0.0
        src = np.concatenate([src, finals])
        dst = np.concatenate([dst, np.full(finals.size, sink)])
        il = np.concatenate([il, st.num_arcs + 1 + finals])
        ol = np.concatenate([ol, np.zeros(finals.size, dtype=ol.dtype)])
        ws = np.concatenate([ws, fin[finals]])
    else:
        final[finals] = fin[finals]
    f = from_arc_table(n, st.start, src, dst, il, ol, ws, final)
    return pynini.arcsort(f, sort_type="olabel" if ids else "ilabel")
