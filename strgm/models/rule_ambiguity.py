"""Held-out forms the training words cannot decide, under a learned rule cascade (the
rule family of docs/phonology.md).

Under a neutralising rule the training words may leave a UR open: Russian [porok]
(seen alone) is /porok/ or /poroɡ/ under final devoicing, and the genitive is then
[poroka] or [poroɡa]. The rule search keeps one of them (the one it met first, usually
the surface-true one), and its prediction for the genitive is a guess that only the
held-out form itself could check. This module says where that happens.

For each morpheme m, with the cascade R and the other URs fixed, the *consistent set*
C_m is every UR u within one edit (substitution, deletion or insertion of a segment) of
m's learned UR that gets as many of m's training words right as the learned UR does
(:func:`consistent_urs`). A held-out word w = m_1 … m_k has the *forms*

    F(w) = { R(u_1 ⋯ u_k) : u_i ∈ C_{m_i} },

(:func:`heldout_forms`; at most :data:`MAX_COMBINATIONS` combinations) and is *decided*
when F(w) has one element. When it has several, nothing in the training words prefers
one (they all fit the same training words under the same rules): a learner is right on
such a word by luck, about 1/|F(w)| of the time without further knowledge. Measured on
the shared textbook problems, neither a bigram model of the decided URs nor the edit
phonology's choice beat the search's own choice on these words, so they are reported,
not re-decided.

Cost: O(|Σ| · |u| candidates × m's training words × length) numpy work per morpheme
(:func:`strgm.models.rule_apply.apply_rules` on all candidate rows at once).
"""

from __future__ import annotations

from itertools import islice, product
from typing import Sequence

import numpy as np

from strgm.models.rule_apply import apply_rules, pack, unpack

#: at most this many UR combinations are rewritten for one held-out word
MAX_COMBINATIONS = 256


def one_edit(u: tuple, n: int) -> list:
    """u and every label tuple one substitution, deletion or insertion away (labels
    1..n), u first, no repeats (a UR is never edited to the empty string)."""
    out = {u: None}
    for i in range(len(u) + 1):
        for a in range(1, n + 1):
            out.setdefault(u[:i] + (a,) + u[i:], None)
            if i < len(u) and a != u[i]:
                out.setdefault(u[:i] + (a,) + u[i + 1:], None)
        if i < len(u) and len(u) > 1:
            out.setdefault(u[:i] + u[i + 1:], None)
    return list(out)


def consistent_urs(words: Sequence, urs: dict, rules: Sequence, m: str, n: int) -> list:
    """C_m of the module docstring: the URs within one edit of ``urs[m]`` that get as
    many of m's training words (``words``: [(morphemes, surface labels)]) right under
    ``rules`` as ``urs[m]`` does, the other URs fixed; ``urs[m]`` first. A morpheme in
    no training word keeps its UR alone."""
    rows = [(ms, tuple(s)) for ms, s in words if m in ms]
    if not rows:
        return [urs[m]]
    cands = one_edit(tuple(urs[m]), n)
    mats = [[a for t in ms for a in (c if t == m else urs[t])] for c in cands
            for ms, _ in rows]
    out = unpack(apply_rules(rules, pack(mats, n), n), n)
    right = np.array([sum(out[k * len(rows) + j] == s for j, (_, s) in enumerate(rows))
                      for k in range(len(cands))])
    return [c for c, r in zip(cands, right) if r >= right[0]]


def heldout_forms(words: Sequence, urs: dict, rules: Sequence, heldout: dict,
                  n: int) -> dict:
    """Held-out key → F(w) (module docstring) as label tuples, the learned prediction
    first; ``heldout``: key → the word's morphemes (each with a UR in ``urs``)."""
    sets = {m: consistent_urs(words, urs, rules, m, n)
            for m in sorted({m for ms in heldout.values() for m in ms})}
    out = {}
    for key, ms in heldout.items():
        combos = list(islice(product(*[sets[m] for m in ms]), MAX_COMBINATIONS))
        mats = [[a for u in combo for a in u] for combo in combos]
        forms = unpack(apply_rules(rules, pack(mats, n), n), n)
        out[key] = list(dict.fromkeys(forms))  # the first combination is the learned URs
    return out
