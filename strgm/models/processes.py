"""What a trained phonology learned, in phonological notation: ``d → t / _ #``.

The contextual edit transducer (:mod:`fst_factors.transducers.contextual_edit`) is a set of
locally normalised decisions. For every substitution, deletion and insertion event e in
context c = (L, O, T, R) it gives p(e | c). A *process* is an event that wins its
decision, p > ``min_prob`` (default ½), in some contexts; it is written

    x → y / L _ R   [after output O] [tier T]

where each context is named by the features its segments share (``[C −voice]``), by its
members when there are few (``{t d}``), by ``#`` (word edge) or ``+`` (morpheme boundary),
and left out when the process fires in every value of that context; when it fires in
most values but not all, the context is named by the values it leaves out,
``(not {k p})``. When the contexts where it fires do not form such a product, the line
says in how many of the contexts with that right context it fires. Processes are ranked
by their mean probability over the contexts where they fire, then by how many contexts
that is. Cost: one pass over the events (numpy), then a Python pass over the few winning
ones.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Optional

import numpy as np

from strgm.models.edit_model import PhonologyEditModel
from strgm.models.ipa_features import feature_table
from fst_factors.transducers.edit_actions import DEL, INS, SUB
from strgm.validate import check_float, check_int

_BOOLEAN = ("voice", "sib", "high", "low", "back", "round", "long", "nas", "asp")


@dataclass(frozen=True)
class Process:
    """One learned process (module docstring)."""

    target: str  # x ('' for an insertion)
    result: str  # y ('' for a deletion)
    left: str  # the left input context ('' when unrestricted)
    right: str  # the right input context ('' when unrestricted)
    after_output: str  # the last output segment's class ('' when unrestricted)
    tier: str  # the harmony tier value ('' when unrestricted)
    probability: float  # mean p over the contexts where it fires
    contexts: int  # how many contexts it fires in
    of_contexts: int  # how many contexts share its right context

    def notation(self) -> str:
        rule = f"{self.target or '∅'} → {self.result or '∅'} / {self.left}_{self.right}"
        rule = rule.replace("/ _", "/ _").replace("_", " _ ").replace("  ", " ").rstrip()
        extra = [f"after output {self.after_output}" if self.after_output else "",
                 f"tier {self.tier}" if self.tier else ""]
        extra = ", ".join(e for e in extra if e)
        where = "" if self.contexts == self.of_contexts or self.left or extra else \
            f" where it applies: {self.contexts} of {self.of_contexts} contexts"
        return (f"{rule}{'  [' + extra + ']' if extra else ''}  "
                f"(p = {self.probability:.2f}{where})")

    def to_dict(self) -> dict:
        return {"rule": self.notation(), "target": self.target, "result": self.result,
                "left": self.left, "right": self.right, "after_output": self.after_output,
                "tier": self.tier, "probability": self.probability,
                "contexts": self.contexts}


def _shared_features(segments: list, table: dict) -> str:
    """``[C −voice]``: the feature values every segment has in common, leaving out those
    that every segment of the inventory of that type has (all vowels are voiced)."""
    bundles = [table[s] for s in segments]
    same_type = [b for b in table.values() if b.get("type") == bundles[0].get("type")]
    kinds = {b.get("type") for b in bundles}
    parts = [{"consonant": "C", "vowel": "V"}.get(kinds.pop(), "")] if len(kinds) == 1 \
        else []
    for key in ("place", "manner"):
        vals = {b.get(key) for b in bundles}
        if len(vals) == 1 and None not in vals:
            parts.append(vals.pop())
    for key in _BOOLEAN:
        vals = {bool(b.get(key, False)) for b in bundles}
        everywhere = {bool(b.get(key, False)) for b in same_type}
        if len(vals) == 1 and any(key in b for b in bundles) and len(everywhere) > 1:
            parts.append(("+" if vals.pop() else "−") + key)
    return "[" + " ".join(p for p in parts if p) + "]"


class _Names:
    """Names of the context ids of one model (module docstring)."""

    def __init__(self, model: PhonologyEditModel):
        st = model.structure
        self.segments = list(model.alphabet.segment_symbols)
        self.table = feature_table(self.segments, warn=False)
        self.bos_l, self.bnd_l, self.eos_k, self.bnd_k, self.bos_o, self.none_t = \
            st.meta["bos_eos"]
        info, spec = st.info, st.spec
        self.pair = spec.right_input == 2
        self.nK1 = st.dims[3] if not self.pair else int(round(st.dims[3] ** 0.5))
        self.maps = {"L": info.in_class if spec.left_input else None,
                     "R": info.right_class if spec.right_input else None,
                     "O": info.out_class if spec.left_output else None,
                     "T": info.tier if st.dims[2] > 1 else None}

    def segment_class(self, dim: str, cid: int) -> str:
        members = [s for s, c in zip(self.segments, self.maps[dim]) if c == cid]
        if len(members) <= 3:
            return "{" + " ".join(members) + "}" if len(members) > 1 else members[0]
        return _shared_features(members, self.table)

    def name(self, dim: str, cid: int) -> str:
        if self.maps[dim] is None:
            return ""
        if dim == "T":
            return "none" if cid == self.none_t else \
                f"[{'+' if cid // 2 else '−'}back {'+' if cid % 2 else '−'}round]"
        if dim == "R" and self.pair:
            return f"{self.name_one('R', cid // self.nK1)} {self.name_one('R', cid % self.nK1)}"
        return self.name_one(dim, cid)

    def name_one(self, dim: str, cid: int) -> str:
        edge = {"L": {self.bos_l: "#", self.bnd_l: "+"}, "R": {self.eos_k: "#",
                                                              self.bnd_k: "+"},
                "O": {self.bos_o: "#"}}[dim]
        return edge.get(cid) or self.segment_class(dim, cid)


def _describe(values: dict, fired: set, dims: tuple, names: _Names) -> Optional[dict]:
    """Per dimension, the names of the values the fired contexts take: '' when that is
    every value, ``(not X | Y)`` naming the values it leaves out when those are fewer
    (and it takes more than two), else ``X | Y``; None when the fired contexts are not a
    product of such sets."""
    proj = [sorted({c[i] for c in fired}) for i in range(len(dims))]
    if len(fired) != int(np.prod([len(p) for p in proj])):
        return None
    out = {}
    for d, p in zip(dims, proj):
        rest = [v for v in values[d] if v not in p]
        if not rest:
            out[d] = ""
        elif len(p) > 2 and len(rest) < len(p):
            out[d] = "(not " + " | ".join(names.name(d, v) for v in rest) + ")"
        else:
            out[d] = " | ".join(names.name(d, v) for v in p)
    return out


def learned_processes(model: PhonologyEditModel, min_prob: float = 0.5,
                      top: int = 10) -> list[Process]:
    """The ``top`` strongest processes of ``model`` (module docstring)."""
    min_prob = check_float("min_prob", min_prob, min=0, max=1)
    top = check_int("top", top, min=1)
    st = model.structure
    p = np.exp(st.log_probs(model.theta))
    a = st.ev_attrs
    live = np.isin(a["kind"], (SUB, DEL, INS)) & (p > min_prob)
    if model.alphabet.boundary is not None:
        live &= a["x"] != model.alphabet.size  # the boundary's deletion is not a process
    names = _Names(model)
    segs = [""] + names.segments
    groups: dict = defaultdict(dict)
    for i in np.flatnonzero(live):
        key = (int(a["kind"][i]), int(a["x"][i]), int(a["y"][i]), int(a["K"][i]))
        groups[key][(int(a["L"][i]), int(a["O"][i]), int(a["T"][i]))] = float(p[i])
    dims = ("L", "O", "T")
    values = {d: range(n) for d, n in zip(dims, st.dims[:3])}
    out = []
    for (kind, x, y, k), fired in groups.items():
        total = int(np.prod([len(values[d]) for d in dims]))
        desc = _describe(values, set(fired), dims, names) or {d: "" for d in dims}
        sym = lambda lab: segs[lab] if 0 < lab < len(segs) else ""  # noqa: E731
        out.append(Process(sym(x) if kind != INS else "", sym(y), desc["L"],
                           names.name("R", k), desc["O"], desc["T"],
                           float(np.mean(list(fired.values()))), len(fired), total))
    out.sort(key=lambda pr: (-pr.probability, -pr.contexts, pr.notation()))
    return out[:top]
