"""Rewrite-rule phonologies from ``pynini.cdrewrite`` (for synthetic data with known
answers, and as deterministic factors).

A :class:`Rule` rewrites any string of ``target`` to ``replacement`` between ``left`` and
``right`` contexts; each is a set of label strings (an empty tuple means ε). Contexts may
use the boundary labels BOS/EOS through ``at_start`` / ``at_end``. A cascade applies the
rules in order (obligatory, left-to-right), giving an unweighted function Σ* → Σ*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pynini

from fst_factors.errors import InputError
from fst_factors.wfsa import guard


def _accep_std(strings: Sequence[tuple[int, ...]]) -> pynini.Fst:
    f = pynini.Fst(arc_type="standard")
    root = f.add_state()
    f.set_start(root)
    for s in strings:
        q = root
        for a in s:
            nxt = f.add_state()
            f.add_arc(q, pynini.Arc(int(a), int(a), pynini.Weight.one("tropical"), nxt))
            q = nxt
        f.set_final(q)
    return pynini.rmepsilon(pynini.determinize(pynini.rmepsilon(f))) if strings else f


@dataclass(frozen=True)
class Rule:
    """target -> replacement / left _ right (all sets of label strings)."""

    target: tuple[tuple[int, ...], ...]
    replacement: tuple[int, ...]
    left: tuple[tuple[int, ...], ...] = field(default=((),))
    right: tuple[tuple[int, ...], ...] = field(default=((),))
    at_start: bool = False
    at_end: bool = False
    name: str = ""


def sigma_star_std(num_labels: int) -> pynini.Fst:
    """Σ* over labels 1..num_labels as one tropical state (an identity transducer)."""
    f = pynini.Fst(arc_type="standard")
    s = f.add_state()
    f.set_start(s)
    f.set_final(s)
    for a in range(1, num_labels + 1):
        f.add_arc(s, pynini.Arc(a, a, pynini.Weight.one("tropical"), s))
    return f


def rule_cascade(rules: Sequence[Rule], num_labels: int) -> pynini.Fst:
    """Compose the rules' cdrewrite transducers in order; a log64 transducer (weights 1)."""
    sigma = sigma_star_std(num_labels)
    out = sigma
    for r in rules:
        for s in r.target + (r.replacement,):
            if any(not 1 <= a <= num_labels for a in s):
                raise InputError(f"rule {r.name or r}: label outside 1..{num_labels}")
        tau = pynini.cross(_accep_std(r.target), _accep_std([r.replacement]))
        left = _accep_std(r.left)
        right = _accep_std(r.right)
        if r.at_start:
            left = pynini.concat(pynini.accep("[BOS]"), left)
        if r.at_end:
            right = pynini.concat(right, pynini.accep("[EOS]"))
        rule = pynini.cdrewrite(tau, left, right, sigma)
        out = guard.compose(out, rule, op=f"composition with rule {r.name or r}")
        out = pynini.arcsort(pynini.optimize(out), sort_type="olabel")
    return pynini.arcmap(out, map_type="to_log64") if out.arc_type() != "log64" else out
