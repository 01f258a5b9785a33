"""The learned-process lines stay readable (strgm.models.processes): a context in which a
process fires almost everywhere is named by the few values it leaves out, ``(not {k p})``,
instead of a long chain ``{b g} | d | [V] | l | …``. Controls: a context taken by few
values still lists them, one taken by all is left out, and the old chain is what the
line would say without the change."""

from strgm.models.processes import Process, _describe


class _FakeNames:
    """Names of context values: L values are segment classes, T values tiers."""

    L = ["{b g}", "d", "[V]", "{k p}", "l", "{m n}", "s", "t", "z", "#"]
    T = ["none", "[−back −round]", "[−back +round]", "[+back −round]", "[+back +round]"]

    def name(self, dim, cid):
        return {"L": self.L, "T": self.T, "O": [""]}[dim][cid]


VALUES = {"L": range(10), "O": range(1), "T": range(5)}
DIMS = ("L", "O", "T")


def _fired(left, tiers):
    return {(l, 0, t) for l in left for t in tiers}


def test_a_context_that_is_almost_everything_is_named_by_what_it_leaves_out():
    desc = _describe(VALUES, _fired([v for v in range(10) if v != 3], [1]), DIMS,
                     _FakeNames())
    assert desc == {"L": "(not {k p})", "O": "", "T": "[−back −round]"}
    line = Process("o", "", desc["L"], "[C −voice]", desc["O"], desc["T"], 0.61, 9,
                   50).notation()
    assert line.startswith("o → ∅ / (not {k p}) _ [C −voice]  [tier [−back −round]]")
    assert line.count("|") == 0
    # control: the chain the line held before, nine alternatives joined by ' | '
    assert " | ".join(_FakeNames.L[v] for v in range(10) if v != 3).count("|") == 8


def test_a_tier_that_is_any_vowel_is_named_by_the_one_it_leaves_out():
    desc = _describe(VALUES, _fired([3], [1, 2, 3, 4]), DIMS, _FakeNames())
    assert desc == {"L": "{k p}", "O": "", "T": "(not none)"}


def test_few_values_are_listed_and_all_values_are_left_out():
    assert _describe(VALUES, _fired([0, 2, 3], [1]), DIMS, _FakeNames())["L"] == \
        "{b g} | [V] | {k p}"
    assert _describe(VALUES, _fired([0, 1], range(5)), DIMS, _FakeNames()) == \
        {"L": "{b g} | d", "O": "", "T": ""}
    assert _describe(VALUES, _fired(range(10), [1]), DIMS, _FakeNames())["L"] == ""
    # not a product of per-dimension sets: no description
    assert _describe(VALUES, {(0, 0, 1), (1, 0, 2)}, DIMS, _FakeNames()) is None
