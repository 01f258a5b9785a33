"""Candidate rules for one step of the rule search (:mod:`strgm.models.rule_search`),
read off the errors of the current cascade, and their screening.

From every wrong training row's alignment (current output vs truth), the edits x→y,
x→∅, ∅→y with their neighbours propose rules (:func:`_proposals`): the target is x
alone or a natural class containing x with the same feature change
(:mod:`strgm.models.rule_classes`); contexts are classes containing the neighbours, the
neighbour and the segment beyond it (a window of 2), or for a vowel the nearest vowel
before or after it (a tier rule). A substitution whose new segment agrees with a
neighbour in a feature group it did not agree in before proposes an assimilation
(:func:`_spread_candidates`, ``[nasal] → [α place] / _[α place]``). :func:`screen`
scores each candidate by the search's estimate of the training words right after it and
a UR step, with the rule placed first or last in the cascade. Cost: O(candidates × rows that can change × length).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from strgm.models.rule_apply import EDGE, SegmentRule, apply_rules, unpack
from strgm.models.rule_classes import SEGMENT_COST, SPREAD_FEATURES, NaturalClass
from strgm.models.rule_scores import ANY, ScoreTable

_EDGE = NaturalClass(frozenset([EDGE]), "#", 1.0)


def _align(a: tuple, b: tuple) -> list:
    """Levenshtein alignment of a to b as ops ("sub", i, b_j) / ("del", i) / ("ins", i, b_j)
    (insertion before a[i]); substitutions of a segment by itself are left out."""
    n, m = len(a), len(b)
    d = np.zeros((n + 1, m + 1))
    d[:, 0], d[0, :] = np.arange(n + 1), np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1,
                          d[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    ops, i, j = [], n, m
    while i or j:
        if i and j and d[i, j] == d[i - 1, j - 1] + (a[i - 1] != b[j - 1]):
            if a[i - 1] != b[j - 1]:
                ops.append(("sub", i - 1, b[j - 1]))
            i, j = i - 1, j - 1
        elif i and d[i, j] == d[i - 1, j] + 1:
            ops.append(("del", i - 1))
            i -= 1
        else:
            ops.append(("ins", i, b[j - 1]))
            j -= 1
    return ops[::-1]


def _proposals(s, rules: list, rows_out: np.ndarray, wrong_words: np.ndarray) -> tuple:
    """Three dicts. First: (mapping, insert, text, cost) -> the neighbours seen ("left",
    "right", both as "pairs", the nearest preceding and following vowels of a vowel's
    change: "tier", "tier_right", and counts of (neighbour, segment beyond):
    "wide_left", "wide_right"), from the wrong rows of the words that share a morpheme
    with a word of ``wrong_words`` (a rule may be needed by another UR of a word that
    is right). Second: the same for those changes, with the neighbours read from the
    cascade's *input* (the URs; none while the cascade is empty): a rule placed first
    sees its context before the other rules change it (Polish raising o → u before an
    underlying voiced consonant, which final devoicing then hides). Third: (spread
    feature, side) -> the "targets" x and "neighbours" c of the substitutions x → y
    where y is x with that feature of its neighbour c on that side
    (:func:`_note_spreads`)."""
    props: dict = {}
    spreads: dict = {}
    shared = {m for i in wrong_words for m in s.words[int(i)][0]}
    near = [i for i, (ms, _) in enumerate(s.words) if shared & set(ms)]
    pick = np.flatnonzero(np.isin(s.row_word, near)
                          & ~s.correct(rows_out, gold=s.row_gold))
    for r, o in zip(pick, unpack(rows_out[pick], s.n)):
        for op in _align(o, tuple(s.words[int(s.row_word[r])][1])):
            _note_op(s, props, o, op, spreads)
    under: dict = {}
    for r, u in zip(pick, unpack(s.rows[pick], s.n)) if rules else ():
        for op in _align(u, tuple(s.words[int(s.row_word[r])][1])):
            _note_op(s, under, u, op, None, keep=props)
    return props, under, spreads


def _note_op(s, props: dict, o: tuple, op: tuple, spreads, keep=None) -> None:
    """Record one edit ``op`` of row ``o`` under each of its changes' keys in
    ``props`` (only keys already in ``keep``, if given), and as an assimilation in
    ``spreads`` (if given)."""
    i = op[1]
    left = o[i - 1] if i > 0 else EDGE
    if op[0] == "ins":
        right = o[i] if i < len(o) else EDGE
        keys = [_insertion(s, op[2])]
    else:
        right = o[i + 1] if i + 1 < len(o) else EDGE
        keys = _changes(s, o[i], op[2] if op[0] == "sub" else 0)
    tiers = _tier_neighbours(s, o, i) if op[0] == "sub" else None
    if op[0] == "sub" and spreads is not None:
        _note_spreads(s, spreads, o[i], op[2], left, right)
    for k in keys:
        if keep is not None and k not in keep:
            continue
        seen = props.setdefault(k, {"left": set(), "right": set(), "tier": set(),
                                    "tier_right": set(), "pairs": set(),
                                    "wide_left": Counter(), "wide_right": Counter()})
        seen["left"].add(left)
        seen["right"].add(right)
        seen["pairs"].add((left, right))
        if tiers is not None:
            seen["tier"].add(tiers[0])
            seen["tier_right"].add(tiers[1])
        if op[0] != "ins":
            _count_wide(seen, o, i)


def _note_spreads(s, spreads: dict, x: int, y: int, left: int, right: int) -> None:
    """Record x → y as an assimilation to its left or right neighbour, for each
    feature group of :data:`strgm.models.rule_classes.SPREAD_FEATURES` that explains
    it."""
    for side, c in (("left", left), ("right", right)):
        if c == EDGE:
            continue
        for name in SPREAD_FEATURES:
            if s.sf.assimilate(x, c, name) == y:
                seen = spreads.setdefault((name, side), {"targets": set(),
                                                         "neighbours": set(),
                                                         "before": set()})
                seen["targets"].add(x)
                seen["neighbours"].add(c)
                seen["before"].add(left)


def _tier_neighbours(s, o: tuple, i: int):
    """The nearest vowels before and after position i (EDGE if none); None if o[i]
    is no vowel."""
    if o[i] not in s.vowels:
        return None
    return (next((o[j] for j in range(i - 1, -1, -1) if o[j] in s.vowels), EDGE),
            next((o[j] for j in range(i + 1, len(o)) if o[j] in s.vowels), EDGE))


def _insertion(s, y):
    return ((), y, f"∅ → {s.sf.symbols[y - 1]}", SEGMENT_COST)


def _changes(s, x, y) -> list:
    """The rules' changes that turn x into y (y = 0: delete x): x alone, or each class
    containing x with the same feature change. Classes whose change maps the same
    segments to the same segments are one rule, kept with its cheapest description."""
    sym = s.sf.symbols
    if y == 0:
        return [(tuple((c, 0) for c in sorted(cl.members)), 0,
                 f"{cl.text} → ∅", cl.cost + 1.0) for cl in s.sf.classes_of(x)]
    ch = s.sf.change(x, y)
    best = {((x, y),): (f"{sym[x - 1]} → {sym[y - 1]}", (2 * SEGMENT_COST, 1))}
    for cl in s.sf.classes_of(x)[1:]:
        mp = tuple((c, s.sf.apply_change(c, ch)) for c in sorted(cl.members))
        mp = tuple((c, d) for c, d in mp if d is not None)
        cost = (cl.cost + len(ch), len(cl.members))  # ties: the narrower class
        if mp not in best or best[mp][1] > cost:
            best[mp] = (f"{cl.text} → {s.sf.change_text(ch)}", cost)
    return [(mp, 0, text, cost[0]) for mp, (text, cost) in best.items()]


def _contexts(s, labels: set) -> list:
    opts = {ANY.members: ANY}
    for a in labels:
        for c in ([_EDGE] if a == EDGE else s.sf.classes_of(a)):
            if c.members not in opts or opts[c.members].cost > c.cost:
                opts[c.members] = c
    return list(opts.values())


def _wide_contexts(s, pairs: Counter, far_top: int = 2, near_top: int = 12) -> list:
    """Contexts of width 2 on one side, from the (neighbour, beyond) pairs seen at
    the sites of one change: for each of the ``far_top`` cheapest beyond classes
    (the edge or one predicate) holding at least half of the sites, the
    ``near_top`` neighbour classes (not the edge) holding most of those sites."""
    total = sum(pairs.values())
    far_labels = {f for _, f in pairs}
    fars = [c for c in _contexts(s, far_labels)[1:] if c.cost <= 1 and
            2 * sum(k for (_, f), k in pairs.items() if f in c.members) >= total]
    out = []
    for far in sorted(fars, key=lambda c: (c.cost, len(c.members)))[:far_top]:
        sites = Counter()
        for (a, f), k in pairs.items():
            if f in far.members and a != EDGE:
                sites[a] += k
        nears = [c for c in _contexts(s, set(sites))[1:] if EDGE not in c.members]
        nears.sort(key=lambda c: (-sum(k for a, k in sites.items() if a in c.members),
                                  c.cost, len(c.members)))
        out += [(c, far) for c in nears[:near_top]]
    return out


def screen(s, rules: list, wrong_words: np.ndarray, base: int, progress=None,
           limit=None) -> list:
    """Candidate rules (gain, cost, rule) with their estimated DL decrease (the
    search's ``estimate``), placed first or last in the cascade ``rules``, best first
    (:meth:`strgm.models.rule_scores.ScoreTable.ranked`: one rule per effect on the
    rows): each (target, change) with every left context alone, every right context
    alone, every tier context (the nearest vowel before or after), pairs — the best
    five of each side combined, and for an insertion every pair of classes of the
    neighbours seen around one site —, contexts of width 2 (:func:`_wide_contexts`),
    and the assimilations of :func:`_spread_candidates`. ``progress``: told which
    change is being screened; ``limit``: only the first ``limit`` of the list."""
    rows_out = apply_rules(rules, s.rows, s.n)
    table = ScoreTable(s, rules, rows_out, base)
    props, under, spreads = _proposals(s, rules, rows_out, wrong_words)
    changes = list(props.items()) + list(under.items())
    for k, (change, seen) in enumerate(changes):
        if progress is not None:
            progress(f"screening change {k + 1}/{len(changes)} ({change[2]})")
        _screen_change(s, table, change, seen)
    for (name, side), seen in spreads.items():
        _spread_candidates(s, name, side, seen, table.score_rule)
    return table.ranked(limit)


def _screen_change(s, table: ScoreTable, change: tuple, seen: dict) -> None:
    """Score one change's candidates (:func:`screen`) in two batches: the tier and
    single contexts, then the pairs of the best singles and the contexts of width 2."""
    ins = change[1]
    tiers = [(tc, ANY, "left", ANY, ANY) for tc in _contexts(s, seen["tier"])[1:]]
    tiers += [(ANY, tc, "right", ANY, ANY)
              for tc in _contexts(s, seen["tier_right"])[1:]]
    lcs, rcs = _contexts(s, seen["left"]), _contexts(s, seen["right"])
    gains = table.score_change(change, tiers + [(c, ANY, "", ANY, ANY) for c in lcs]
                               + [(ANY, c, "", ANY, ANY) for c in rcs])
    g_l, g_r = gains[len(tiers):len(tiers) + len(lcs)], gains[len(tiers) + len(lcs):]
    top_l = [lcs[i] for i in sorted(range(len(lcs)), key=lambda i: -g_l[i])[:5]]
    top_r = [rcs[i] for i in sorted(range(len(rcs)), key=lambda i: -g_r[i])[:5]]
    pairs = {(lc, rc) for lc in top_l for rc in top_r}
    if ins:
        for l, r in seen["pairs"]:
            pairs |= {(lc, rc) for lc in _contexts(s, {l})[1:]
                      for rc in _contexts(s, {r})[1:]}
    more = [(lc, rc, "", ANY, ANY) for lc, rc in pairs]
    for side in () if ins or s.window < 2 else ("left", "right"):
        for near, far in _wide_contexts(s, seen["wide_" + side]):
            more.append((near, ANY, "", far, ANY) if side == "left" else
                        (ANY, near, "", ANY, far))
    table.score_change(change, more)


def _spread_candidates(s, name: str, side: str, seen: dict, score_rule) -> None:
    """Score assimilations ``T → [α name] / _C[α name]`` (or ``C[α name]_``) for the
    one-predicate target classes T holding a changed segment and the neighbour
    classes C (any segment, or one predicate) holding a neighbour it agreed with
    (:meth:`strgm.models.rule_classes.SegmentFeatures.assimilate`): every T with any
    neighbour, the three best T with every C, and for a right neighbour the three best
    (T, C) with each left context L (the edge, or one predicate) holding a segment
    seen before a target. Textbook assimilations are of this size ([nasal] → [α
    place], [−son] → [α voice] / _[−son α voice]); wider classes would cost the search
    more than they find. Cost: T's, 1 for the spread feature, 1 for the agreement,
    C's, L's."""
    sf = s.sf

    def score(t, c, lc=ANY):
        triples = tuple((x, b, y) for x in sorted(t.members)
                        for b in (sorted(c.members) if c.members else range(1, s.n + 1))
                        if (y := sf.assimilate(x, b, name)) is not None)
        if not triples:
            return -np.inf
        agree = f"α {name}]"
        ctx = f"[{agree}" if c is ANY else c.text[:-1] + f" {agree}"
        text = f"{t.text} → [{agree} / " + (f"{lc.text}_{ctx}" if side == "right"
                                             else f"{ctx}_")
        return score_rule(SegmentRule(spread=triples, spread_side=side,
                                      left=lc.members or None, text=text),
                          t.cost + 2.0 + c.cost + lc.cost)

    def small(labels):
        return [c for c in _contexts(s, labels) if c.cost <= 1]
    targets = [t for t in small(seen["targets"]) if t is not ANY]
    best = sorted(targets, key=lambda t: -score(t, ANY))[:3]
    pairs = sorted(((t, c) for t in best for c in small(seen["neighbours"])),
                   key=lambda tc: -score(*tc))[:3]
    for t, c in pairs if side == "right" else ():
        for lc in small(seen["before"]):
            if lc is not ANY:
                score(t, c, lc)


def _count_wide(seen: dict, o: tuple, i: int) -> None:
    """Count the (neighbour, segment beyond) pairs on each side of o[i] (the beyond
    segment may be the edge; none when the neighbour is)."""
    if i >= 1:
        seen["wide_left"][(o[i - 1], o[i - 2] if i >= 2 else EDGE)] += 1
    if i + 1 < len(o):
        seen["wide_right"][(o[i + 1], o[i + 2] if i + 2 < len(o) else EDGE)] += 1
