"""Held-out forms the training words cannot decide under a rule cascade
(strgm.models.rule_ambiguity), against brute force over every UR up to a length bound.

Oracles: the one-edit neighbourhood equals every tuple at Levenshtein distance ≤ 1
found by enumeration; the forms of a held-out word equal those of every UR combination
(enumerated up to length 4 and filtered by the definition) that fits the training words
as well as the learned URs. Negative controls: without final devoicing the same word is
decided; a neighbourhood without insertions misses tuples the enumeration finds.
"""

from __future__ import annotations

import itertools

from strgm.models.rule_ambiguity import consistent_urs, heldout_forms, one_edit
from strgm.models.rule_apply import EDGE, SegmentRule, apply_rules, pack, unpack

SYM = ["a", "b", "d", "i", "t"]
L = {s: i + 1 for i, s in enumerate(SYM)}
N = len(SYM)
DEVOICE = SegmentRule(mapping=((L["d"], L["t"]),), right=frozenset([EDGE]),
                      text="d → t / _#")


def lab(text: str) -> tuple:
    return tuple(L[c] for c in text)


def levenshtein(a, b) -> int:
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def test_one_edit_is_the_levenshtein_ball_of_radius_one():
    u = lab("bad")
    want = {v for k in range(len(u) - 1, len(u) + 2)
            for v in itertools.product(range(1, N + 1), repeat=k) if levenshtein(u, v) <= 1}
    got = one_edit(u, N)
    assert got[0] == u and len(got) == len(set(got)) and set(got) == want
    # negative control: substitutions and deletions alone miss the insertions
    no_ins = {v for v in got if len(v) <= len(u)}
    assert no_ins != want


# R1 is seen only bare ([bat]: /bat/ or /bad/ under devoicing); R2 also before -i
# ([tad], [tadi]... i.e. /tad/ is decided); SUF is -i.
TRAIN = [(("R1",), lab("bat")), (("R2",), lab("tat")), (("R2", "SUF"), lab("tadi"))]
URS = {"R1": lab("bat"), "R2": lab("tad"), "SUF": lab("i")}
HELD = {"R1 SUF": ("R1", "SUF"), "R2 SUF": ("R2", "SUF")}


def surface(rules, ur) -> tuple:
    return unpack(apply_rules(rules, pack([ur], N), N), N)[0]


def brute_force_forms(rules, key) -> set:
    """Every UR of each morpheme of the word, up to length 4, within one edit of the
    learned UR and fitting as many of its training words as the learned UR, combined."""
    options = []
    for m in HELD[key]:
        rows = [(ms, s) for ms, s in TRAIN if m in ms]

        def fit(u):
            return sum(surface(rules, [a for t in ms for a in (u if t == m else URS[t])])
                       == s for ms, s in rows)
        cands = [v for k in range(1, 5) for v in itertools.product(range(1, N + 1), repeat=k)
                 if levenshtein(v, URS[m]) <= 1]
        options.append([v for v in cands if fit(v) >= fit(URS[m])])
    return {surface(rules, [a for u in combo for a in u]) for combo in itertools.product(*options)}


def test_heldout_forms_equal_brute_force_and_devoicing_leaves_r1_open():
    got = heldout_forms(TRAIN, URS, [DEVOICE], HELD, N)
    for key in HELD:
        assert set(got[key]) == brute_force_forms([DEVOICE], key)
    assert got["R1 SUF"][0] == lab("bati")  # the learned URs' prediction first
    assert set(got["R1 SUF"]) == {lab("bati"), lab("badi")}  # undecided
    assert got["R2 SUF"] == [lab("tadi")]  # decided by [tadi]
    assert consistent_urs(TRAIN, URS, [DEVOICE], "R2", N) == [lab("tad")]
    # negative control: with no rule nothing neutralises, and R1 is decided
    plain = heldout_forms(TRAIN, URS, [], HELD, N)
    assert plain["R1 SUF"] == [lab("bati")]
    assert set(plain["R1 SUF"]) == brute_force_forms([], "R1 SUF")
