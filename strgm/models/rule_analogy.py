"""Proportional analogy among the forms the training words cannot tell apart, under a
learned rule cascade (the rule family of docs/phonology.md).

Under a neutralising rule a held-out word may have several forms F(w) that fit the
training words equally well (:mod:`strgm.models.rule_ambiguity`): Catalan [san] seen
alone is /san/ or /sant/ under t-deletion after n, and the feminine is then [sanə] or
[santə]. The rules cannot choose; the other words of the paradigm can. Textbook data
(and lexicons) have regularities the rules do not state: in Odden's Catalan every root
whose masculine ends in [n] has a feminine in [-ntə] or [-ndə]. This module scores each
form of F(w) by the proportions the training words support, in the manner of the
minimal generalisation learner (Albright & Hayes 2003): a change between two cells,
with one segment of context.

Proportions. Let w have morphemes M_w and let v be a training word sharing the morphemes
S = M_w ∩ M_v ≠ ∅ with it, with surface x. The cell change is (A, B) = (M_v − S,
M_w − S). A *supporting pair* is two training words v', w' of another stem S' (S' ≠ ∅,
S' ∩ M_w = ∅) with M_v' = S' ∪ A and M_w' = S' ∪ B, surfaces x', y'. Writing
x' = P·a, y' = P·b with P their longest common prefix, the pair proposes

    x = Q·a  ↦  f = Q·b,

and supports f when x ends in a, f ∈ F(w), and Q and P end in the same segment (one
segment of context before the change, so that a change is carried only to a word that
looks like its source there, and never by the cell's affix alone: English [roɪŋ] →
[roz] does not make [lɪftɪŋ] → [lɪftz]).

Weights. s(f) = [f is the cascade's own prediction] + Σ_v #{supporting pairs of f}:
the rules' choice counts as one supporter, so that with no analogy it stays (and ties
go to it, then to the earlier form). :func:`analogy_choice` ranks F(w) by s with the
weights s(f) / Σ_F s; the prediction is the first. Those weights give 1 to the cascade's
form whenever no pair speaks: the probabilities the family choice
(:mod:`strgm.workflows.family_choice`) spreads the rules' mass with, and the commands
print, are the Dirichlet–multinomial posterior of :mod:`strgm.models.rule_calibration`
(same order). A decided word (|F(w)| = 1) keeps q = 1 on its form.

Cost: O(Σ_v N) dictionary lookups per held-out word (N training words), segment tuples
throughout.
"""

from __future__ import annotations

from typing import Mapping, Sequence


def _common_prefix(a: tuple, b: tuple) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def proportion(x1: tuple, x2: tuple) -> tuple:
    """(P, a, b): x1 = P·a, x2 = P·b with P the longest common prefix."""
    n = _common_prefix(x1, x2)
    return x1[:n], x1[n:], x2[n:]


def _pairs(train: Sequence, a_cell: frozenset, b_cell: frozenset, avoid: frozenset) -> list:
    """Surfaces (x', y') of training words v', w' of one stem S' with M_v' = S' ∪ A and
    M_w' = S' ∪ B (module docstring), S' non-empty and disjoint from ``avoid``."""
    by_set = {frozenset(ms): s for ms, s in train}
    out = []
    for ms, x in train:
        m = frozenset(ms)
        stem = m - a_cell
        if not stem or len(stem) + len(a_cell) != len(m) or stem & (avoid | b_cell):
            continue
        y = by_set.get(stem | b_cell)
        if y is not None and stem | b_cell != m:
            out.append((x, y))
    return out


def analogy_support(train: Sequence, morphemes: Sequence[str], forms: Sequence) -> dict:
    """s(f) of the module docstring for every f in ``forms`` (F(w), the cascade's
    prediction first): ``train`` is [(morphemes, surface segments)], ``morphemes`` the
    held-out word's, forms are segment tuples."""
    score = pair_support(train, morphemes, forms)
    if score:
        score[tuple(forms[0])] += 1
    return score


def pair_support(train: Sequence, morphemes: Sequence[str], forms: Sequence) -> dict:
    """The number of supporting pairs of every f in ``forms`` (s(f) without the
    cascade's vote; all 0 when ``forms`` has fewer than two forms)."""
    forms = [tuple(f) for f in forms]
    score = {f: 0 for f in forms}
    if len(forms) < 2:
        return score
    mw = frozenset(morphemes)
    for ms, x in train:
        shared = mw & frozenset(ms)
        if not shared:
            continue
        a_cell, b_cell = frozenset(ms) - shared, mw - shared
        for x1, y1 in _pairs(train, a_cell, b_cell, mw):
            p, a, b = proportion(tuple(x1), tuple(y1))
            x = tuple(x)
            if len(x) <= len(a) or not p or x[len(x) - len(a):] != a:
                continue
            q = x[:len(x) - len(a)]
            f = q + b
            if f in score and q[-1] == p[-1]:
                score[f] += 1
    return score


def analogy_choice(train: Sequence, heldout: Mapping, forms: Mapping) -> dict:
    """Held-out key → [(form, s(form) / Σ s)], best first (ties: the cascade's
    prediction, then the order of F(w)); ``heldout``: key → morphemes, ``forms``: key →
    F(w) as segment tuples, the prediction first (:func:`strgm.models.rule_ambiguity.
    heldout_forms`)."""
    out = {}
    for key, fs in forms.items():
        items = list(analogy_support(train, heldout[key], fs).items())
        total = sum(w for _, w in items)
        ranked = sorted(range(len(items)), key=lambda i: (-items[i][1], i))
        out[key] = [(items[i][0], items[i][1] / total) for i in ranked]
    return out
