"""The passes of an EP visit (strgm/inference/ep_passes.py): round robin takes every
pending message once per pass; block Gauss–Seidel takes all passes on one message before
the next."""

from strgm.inference.ep_passes import pass_units, run_passes


def test_round_robin_and_block_passes_run_in_their_fixed_orders():
    calls = []
    run_passes(pass_units(["f", "g"], 5, block=False), 5, lambda f, cache: calls.append(f))
    assert calls == ["f", "g"] * 5
    calls = []
    run_passes(pass_units(["f", "g"], 3, block=True), 3, lambda f, cache: calls.append(f))
    assert calls == ["f", "f", "f", "g", "g", "g"]


def test_block_units_have_their_own_caches_and_a_lone_message_keeps_one():
    units = pass_units(["f", "g"], 3, block=True)
    assert [[f for f, _ in u] for u in units] == [["f"], ["g"]]
    assert units[0][0][1] is not units[1][0][1]
    assert pass_units(["f"], 3, block=False)[0][0][1] == {}
    assert pass_units(["f", "g"], 3, block=False)[0][0][1] is None
