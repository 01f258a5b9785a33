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

_ANY = NaturalClass(frozenset(), "", 0.0)  # marker: unrestricted context
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
    opts = {_ANY.members: _ANY}
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
    search's ``estimate``), placed first or last in the cascade ``rules``, best first:
    each (target, change) with every left context alone, every right context alone,
    every tier context (the nearest vowel before or after), pairs — the best five of
    each side combined, and for an insertion every pair of classes of the neighbours
    seen around one site —, contexts of width 2 (:func:`_wide_contexts`), and the
    assimilations of :func:`_spread_candidates`. Of rules with the same effect on
    every row, only the first (cheapest, then narrowest: :func:`extent`) is kept, so
    the exact checks go to different analyses. ``progress``: told which change is
    being screened; ``limit``: only the first ``limit`` of the list."""
    rows_out = apply_rules(rules, s.rows, s.n)
    scored: dict = {}
    score_rule = _scorer(s, rules, rows_out, scored, base)
    props, under, spreads = _proposals(s, rules, rows_out, wrong_words)
    changes = list(props.items()) + list(under.items())
    for k, ((mp, ins, text, cost), seen) in enumerate(changes):
        if progress is not None:
            progress(f"screening change {k + 1}/{len(changes)} ({text})")
        def score(lc, rc, tier="", lc2=_ANY, rc2=_ANY):
            if ins and lc is _ANY and rc is _ANY:
                return -np.inf
            rule = SegmentRule(mp, ins, lc.members or None, rc.members or None,
                               _rule_text(text, lc, rc, tier, lc2, rc2),
                               s.vowels if tier else None, tier or "left",
                               lc2.members or None, rc2.members or None)
            return score_rule(rule, cost + lc.cost + rc.cost + float(bool(tier)) +
                              lc2.cost + rc2.cost + float(lc2 is not _ANY) +
                              float(rc2 is not _ANY))
        for tc in _contexts(s, seen["tier"])[1:]:  # tier contexts (not unrestricted)
            score(tc, _ANY, tier="left")
        for tc in _contexts(s, seen["tier_right"])[1:]:
            score(_ANY, tc, tier="right")
        lcs, rcs = _contexts(s, seen["left"]), _contexts(s, seen["right"])
        top_l = sorted(lcs, key=lambda c: -score(c, _ANY))[:5]
        top_r = sorted(rcs, key=lambda c: -score(_ANY, c))[:5]
        pairs = {(lc, rc) for lc in top_l for rc in top_r}
        if ins:
            for l, r in seen["pairs"]:
                pairs |= {(lc, rc) for lc in _contexts(s, {l})[1:]
                          for rc in _contexts(s, {r})[1:]}
        for lc, rc in pairs:
            score(lc, rc)
        for side in () if ins or s.window < 2 else ("left", "right"):
            for near, far in _wide_contexts(s, seen["wide_" + side]):
                score(near, _ANY, lc2=far) if side == "left" else \
                    score(_ANY, near, rc2=far)
    for (name, side), seen in spreads.items():
        _spread_candidates(s, name, side, seen, score_rule)
    out, effects = [], set()
    for g, c, r, sig in _ranked(s, scored):  # one rule per effect on the rows: rivals
        if limit is not None and len(out) >= limit:  # that right and wrong the same
            break  # rows would waste exact checks
        if sig not in effects:
            effects.add(sig)
            out.append((g, c, r))
    return out


def _ranked(s, scored: dict):
    """(gain, cost, rule, signature) of every scored rule, in the order of (−gain,
    cost, :func:`extent`, repr of the rule), as a generator: the repr, slow to build,
    is only made within a run of equal leading keys, when the run is reached."""
    items = [(g, c, r, sig) for r, (g, c, sig) in scored.items()]
    keys = [(-g, c, extent(r, s.n)) for g, c, r, _ in items]
    order = sorted(range(len(items)), key=keys.__getitem__)
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and keys[order[j]] == keys[order[i]]:
            j += 1
        run = [items[k] for k in order[i:j]]
        yield from run if len(run) == 1 else sorted(run, key=lambda t: repr(t[2]))
        i = j


def _scorer(s, rules: list, rows_out: np.ndarray, scored: dict, base: int):
    """score_rule(rule, cost) -> the estimated DL decrease of adding ``rule`` (first or
    last in ``rules``; ``base`` training words right without it), memoised in ``scored``
    (rule -> (gain, cost, signature of the rows it gets right in either place)). The
    rows are checked by the compiled :class:`strgm.models.rule_screening.
    CandidateScorer`, or by ``s.rows_ok_after`` and ``s.estimate`` (its reference) for
    a rule it does not cover."""
    ok_out = s.correct(rows_out, gold=s.row_gold)
    has_out, has_in = presence(rows_out, s.n), presence(s.rows, s.n)
    compiled = s.candidate_scorer(rules, rows_out, ok_out)

    def score_rule(rule: SegmentRule, rcost: float) -> float:
        if rule not in scored:
            got = compiled(rule)
            if got is not None:
                ok_last, ok_first, est = got
            else:  # the reference (rules the kernels do not cover)
                ok_last = s.rows_ok_after(rule, rows_out, has_out, ok_out)
                ok_first = s.rows_ok_after(rule, s.rows, has_in, ok_out, rules) \
                    if rules else ok_last
                est = max(s.estimate(ok_first), s.estimate(ok_last))
            scored[rule] = (s.word_cost * (est - base) - rcost, rcost,
                            np.packbits(ok_last).tobytes() + b"|" +
                            np.packbits(ok_first).tobytes())
        return scored[rule][0]
    return score_rule


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

    def score(t, c, lc=_ANY):
        triples = tuple((x, b, y) for x in sorted(t.members)
                        for b in (sorted(c.members) if c.members else range(1, s.n + 1))
                        if (y := sf.assimilate(x, b, name)) is not None)
        if not triples:
            return -np.inf
        agree = f"α {name}]"
        ctx = f"[{agree}" if c is _ANY else c.text[:-1] + f" {agree}"
        text = f"{t.text} → [{agree} / " + (f"{lc.text}_{ctx}" if side == "right"
                                             else f"{ctx}_")
        return score_rule(SegmentRule(spread=triples, spread_side=side,
                                      left=lc.members or None, text=text),
                          t.cost + 2.0 + c.cost + lc.cost)

    def small(labels):
        return [c for c in _contexts(s, labels) if c.cost <= 1]
    targets = [t for t in small(seen["targets"]) if t is not _ANY]
    best = sorted(targets, key=lambda t: -score(t, _ANY))[:3]
    pairs = sorted(((t, c) for t in best for c in small(seen["neighbours"])),
                   key=lambda tc: -score(*tc))[:3]
    for t, c in pairs if side == "right" else ():
        for lc in small(seen["before"]):
            if lc is not _ANY:
                score(t, c, lc)


def extent(rule: SegmentRule, n: int) -> int:
    """How many segments the rule's target and contexts admit. Among rules that do
    the same to every training row, the narrowest is kept (the subset principle: the
    most restrictive hypothesis the data allow — [+ant stop], not [+ant −cont], for
    English ə-epenthesis, whose training words have no /n+d/)."""
    if rule.spread:
        return len({t[0] for t in rule.spread}) + len({t[1] for t in rule.spread})
    return len(rule.mapping) + sum(n + 2 if c is None else len(c) for c in (
        rule.left, rule.right, rule.left2, rule.right2))


def _count_wide(seen: dict, o: tuple, i: int) -> None:
    """Count the (neighbour, segment beyond) pairs on each side of o[i] (the beyond
    segment may be the edge; none when the neighbour is)."""
    if i >= 1:
        seen["wide_left"][(o[i - 1], o[i - 2] if i >= 2 else EDGE)] += 1
    if i + 1 < len(o):
        seen["wide_right"][(o[i + 1], o[i + 2] if i + 2 < len(o) else EDGE)] += 1


def presence(mat: np.ndarray, n: int) -> np.ndarray:
    """rows × labels (0..n+1): whether the label occurs in the row."""
    has = np.zeros((len(mat), n + 2), dtype=bool)
    has[np.arange(len(mat))[:, None], mat] = True
    return has


def _rule_text(change: str, lc: NaturalClass, rc: NaturalClass, tier: str = "",
               lc2: NaturalClass = _ANY, rc2: NaturalClass = _ANY) -> str:
    """``x → y / L2 L _ R R2``; a tier context is written ``L …_`` or ``_… R`` (any
    consonants between)."""
    if not lc.text and not rc.text:
        return change
    gap_l = " …" if tier == "left" else ""
    gap_r = "… " if tier == "right" else ""
    return f"{change} / {lc2.text}{lc.text}{gap_l}_{gap_r}{rc.text}{rc2.text}"
