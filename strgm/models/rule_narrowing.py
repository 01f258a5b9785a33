"""Narrowing the contexts of a learned rule cascade, and dropping the rules this makes
redundant (the rule family of docs/phonology.md): the last moves of the rule
search.

A rule step picks, among the contexts its screening scored, the one of largest DL
decrease; a wider class can win there because the narrower one that fits more words
was never scored (the screening keeps a few classes per site). The words it then
breaks stay wrong, since no later rule pays for fixing them one by one. Polish: with
its held-out words, raising o → u before a final underlying voiced consonant is
learned as ``[+back] → [+high] / _[+voice]#``, which also raises /dom/ to *[dum].
The narrowed context ``[−nasal +voice]`` costs one feature more and fits both.

Move: for each rule of the cascade and each of its contexts C (a class of two or
more segments, not the word edge; left, right and those of width 2), and each natural
class D of one predicate (:mod:`strgm.models.rule_classes`), the context C ∩ D if it
is a natural class of at most two predicates other than C. The change of DL is

    ΔDL = λ · (words wrong after − words wrong before) + cost(C ∩ D) − cost(C),

URs fixed (λ = ``word_cost``). Two more moves undo what a
narrowing makes redundant: dropping a rule (ΔDL = λ · Δwrong − cost of the rule), and
narrowing one rule while dropping another, for the narrowings that get no training
word wrong (a search that learned raising before any voiced consonant may have added a
rule lowering u back before nasals; once the raising excludes nasals, that rule only
costs). The best move with ΔDL < 0 is made, and the moves repeat until none lowers the
DL. Cost per pass: O(R·C·P) cascade applications over the training words for R rules,
C contexts each and P one-predicate classes, and O(R²) more for each rule's ten
cheapest free narrowings.
"""

from __future__ import annotations

from dataclasses import replace

from strgm.models.rule_apply import EDGE, SegmentRule
from strgm.models.rule_classes import NaturalClass

#: the context fields of a rule, and whether each is written left of the target
SLOTS = (("left2", True), ("left", True), ("right", False), ("right2", False))


def class_index(sf) -> dict:
    """Member set → the natural class of that extension (single segments included)."""
    out = {frozenset([i + 1]): sf.segment_class(i + 1) for i in range(len(sf.symbols))}
    out.update({c.members: c for c in sf.classes})
    return out


def narrowings(sf, rule: SegmentRule, index: dict) -> list:
    """(rule', Δcost) for every narrowing of one context of ``rule`` (module
    docstring); none for an assimilation."""
    if rule.spread or " / " not in rule.text:
        return []
    ones = [c for c in sf.classes if c.cost == 1.0]
    out = []
    for slot, is_left in SLOTS:
        ctx = getattr(rule, slot)
        old = index.get(ctx) if ctx is not None and EDGE not in ctx else None
        if old is None or len(ctx) < 2:
            continue
        for d in ones:
            new = index.get(ctx & d.members)
            if new is None or new.members == ctx or new.cost > 2.0:
                continue
            text = _retext(rule.text, slot, is_left, old, new)
            if text is not None:
                out.append((replace(rule, **{slot: new.members}, text=text),
                            new.cost - old.cost))
    return out


def _retext(text: str, slot: str, is_left: bool, old: NaturalClass,
            new: NaturalClass):
    """The notation with ``old`` replaced by ``new`` in the context ``slot``: the last
    occurrence left of the target for ``left``, the first for ``left2``, the first
    right of it for ``right``, the last for ``right2`` (None if not found)."""
    head, ctx = text.split(" / ", 1)
    cut = ctx.index("_")
    side = ctx[:cut] if is_left else ctx[cut + 1:]
    at = side.rfind(old.text) if slot in ("left", "right2") else side.find(old.text)
    if at < 0:
        return None
    side = side[:at] + new.text + side[at + len(old.text):]
    ctx = side + ctx[cut:] if is_left else ctx[:cut + 1] + side
    return f"{head} / {ctx}"


def narrow_contexts(s, urs: dict, rules: list, costs=None, max_passes: int = 8,
                    pair_top: int = 10) -> tuple:
    """(rules, ΔDL, notes): ``rules`` after the moves of the module docstring, made
    while they lower the DL, for the search ``s`` (:class:`strgm.models.rule_search.
    _Search`) and URs ``urs``. ΔDL ≤ 0 is the total change; ``notes`` has one history
    entry per move ({"rule", "narrowed" or "dropped", "dl_decrease", "cost"}: the
    cost the move adds to the rules'). ``costs``: each rule's cost; without them no
    rule is dropped. A rule is dropped alone, or with a narrowing of another rule
    that gets no training word wrong (the ``pair_top`` cheapest of each rule)."""
    index = class_index(s.sf)
    rules = list(rules)
    costs = None if costs is None else list(costs)
    wrong = _wrong(s, urs, rules)
    total, notes = 0.0, []
    for _ in range(max_passes):
        best = None
        for trial, dcost, note, w in _moves(s, urs, rules, costs, index, wrong, pair_top):
            if w is None:
                w = _wrong(s, urs, trial[0])
            delta = s.word_cost * (w - wrong) + dcost
            if delta < 0 and (best is None or delta < best[0]):
                best = (delta, trial, w, dcost, note)
        if best is None:
            break
        delta, (rules, costs), wrong, dcost, note = best
        notes.append({**note, "dl_decrease": -delta, "cost": dcost})
        total += delta
    return rules, total, notes


def _wrong(s, urs: dict, rules: list) -> int:
    """Training words the cascade ``rules`` gets wrong from ``urs``."""
    return int((~s.correct(s.outputs(urs, rules))).sum())


def _moves(s, urs, rules, costs, index, wrong, pair_top):
    """((rules', costs'), Δcost, note, words wrong or None) for every move of the
    module docstring."""
    def drop(rs, cs, j):
        return rs[:j] + rs[j + 1:], None if cs is None else cs[:j] + cs[j + 1:]
    for j in range(len(rules)) if costs is not None else ():
        yield drop(rules, costs, j), -costs[j], {"rule": None,
                                                 "dropped": rules[j].text}, None
    for i, rule in enumerate(rules):
        free = []
        for new, dcost in narrowings(s.sf, rule, index):
            trial = rules[:i] + [new] + rules[i + 1:]
            cs = None if costs is None else costs[:i] + [costs[i] + dcost] + costs[i + 1:]
            w = _wrong(s, urs, trial)
            yield (trial, cs), dcost, {"rule": new.text, "narrowed": rule.text}, w
            if costs is not None and len(rules) > 1 and w <= wrong:
                free.append((dcost, len(free), new, trial, cs))
        for dcost, _, new, trial, cs in sorted(free)[:pair_top]:
            for j in range(len(rules)):
                if j != i:
                    yield drop(trial, cs, j), dcost - costs[j], \
                        {"rule": new.text, "narrowed": rule.text,
                         "dropped": rules[j].text}, None
