"""Block-Jacobi message passing (strgm.inference.blocks): exact beliefs on a tree against
brute-force enumeration, one block = the scheduler's own run, the result independent of
the order and place the blocks run in, and one-line errors for bad plans.

Negative controls: blocks that never see each other's messages miss the exact beliefs;
a pool that drops one block's messages is told apart."""

import itertools
import math

import numpy as np
import pynini
import pytest

import strgm.transducers as ff
from strgm.alphabet import Alphabet
from strgm.errors import OptionError
from strgm.graph import FactorGraph
from strgm.inference import blocks as blk
from strgm.inference import infer
from strgm.inference.blocks import SerialPool, block_jacobi, plan_blocks
from strgm.wfsa import compose, log_partition, string_acceptor, weighted_strings

PRIORS = {"A": {(1,): 0.5, (1, 2): 0.3, (2,): 0.2},
          "B": {(2,): 0.6, (2, 2): 0.4},
          "C": {(1,): 0.7, (2, 1): 0.3}}
OBSERVED = {"S1": (1, 2), "S2": (1, 2, 1)}
WORDS = {"W1": ("A", "B"), "W2": ("A", "C")}
BLOCKS = [["concat:W1", "edit:W1"], ["concat:W2", "edit:W2"]]


def _edit():
    return ff.edit_transducer(2, ff.EditParams(0.8))


def tree_graph() -> FactorGraph:
    """A tree: W1 = A·B and W2 = A·C, each observed through a noisy edit transducer; A is
    shared by the two blocks of :data:`BLOCKS`."""
    g = FactorGraph(Alphabet("ab"))
    for v, p in PRIORS.items():
        g.add_variable(v)
        g.add_unary(f"prior:{v}", v, weighted_strings({s: -math.log(q) for s, q in p.items()}))
    for w, parts in WORDS.items():
        s = "S" + w[1:]
        g.add_variable(w)
        g.add_variable(s, observed=OBSERVED[s])
        g.add_concat(f"concat:{w}", list(parts), w)
        g.add_binary(f"edit:{w}", w, s, _edit())
    return g


def _log_t(u: tuple, s: tuple) -> float:
    return log_partition(compose(compose(string_acceptor(u), _edit()), string_acceptor(s)))


def brute_posteriors() -> dict:
    """Exact marginals of A, B, C by enumerating their finite supports."""
    joint = {}
    for a, b, c in itertools.product(PRIORS["A"], PRIORS["B"], PRIORS["C"]):
        lw = sum(math.log(PRIORS[v][x]) for v, x in zip("ABC", (a, b, c)))
        lw += _log_t(a + b, OBSERVED["S1"]) + _log_t(a + c, OBSERVED["S2"])
        joint[(a, b, c)] = lw
    z = np.logaddexp.reduce(list(joint.values()))
    out = {v: {} for v in "ABC"}
    for (a, b, c), lw in joint.items():
        for v, x in zip("ABC", (a, b, c)):
            out[v][x] = out[v].get(x, 0.0) + math.exp(lw - z)
    return out


def _assert_exact(res, want, tol=1e-9):
    for v, dist in want.items():
        b = res.belief(v)
        for x, p in dist.items():
            assert b.prob(x) == pytest.approx(p, abs=tol), (v, x)


def test_blocks_reach_the_exact_beliefs_on_a_tree():
    want = brute_posteriors()
    res = block_jacobi(tree_graph(), BLOCKS, "bp", max_iters=6)
    assert res.converged and res.settings["blocks"] == 2
    _assert_exact(res, want)
    assert res.extra["bytes_sent"] > 0 and res.extra["bytes_received"] > 0


def test_negative_control_blocks_that_never_exchange_miss_the_exact_beliefs(monkeypatch):
    real = blk._round_payload

    def isolated(graph, plan, b, side, r, *rest):
        p = real(graph, plan, b, side, r, *rest)
        own = set(plan.blocks[b])
        mine = {n for spec in p["factors"] for n in [spec[1]]
                if n in own or n.startswith("prior:") or n.startswith("(")}
        p["factors"] = [s for s in p["factors"] if s[1] in mine]
        p["warm"] = [w for w in p["warm"] if w[1] in mine]
        return p

    monkeypatch.setattr(blk, "_round_payload", isolated)
    res = block_jacobi(tree_graph(), BLOCKS, "bp", max_iters=6)
    with pytest.raises(AssertionError):
        _assert_exact(res, brute_posteriors())


def small_paradigm_graph():
    from strgm.datasets.paradigm import Paradigm, ParadigmEntry
    from strgm.models.phonology import build_phonology_model

    rows = [("R1",), ("R1", "PL"), ("R1", "GEN"), ("R2",), ("R2", "PL"), ("R3", "GEN"),
            ("R3", "PL")]
    surf = ["kat", "katz", "katin", "map", "maps", "dogin", "dogz"]
    entries = tuple(ParadigmEntry(m, s) for m, s in zip(rows, surf))
    pm = build_phonology_model(Paradigm(entries, "<test>"), boundary="+")
    keys = [e.key for e in entries]
    blocks = [[n for k in keys if k.startswith(r) for n in (f"concat:{k}", f"phonology:{k}")
               if n in pm.graph.factors] for r in ("R1", "R2", "R3")]
    return pm, blocks


def _same_beliefs(a, b, names, tol):
    for v in names:
        x, y = dict(a.belief(v).kbest_labels(5)), dict(b.belief(v).kbest_labels(5))
        assert set(x) == set(y), v
        for s in x:
            assert x[s] == pytest.approx(y[s], abs=tol), v


def test_one_block_is_the_schedulers_own_run():
    pm, blocks = small_paradigm_graph()
    ref = infer(pm.graph, "pruned", max_iters=4)
    one = block_jacobi(pm.graph, [sum(blocks, [])], "pruned", max_iters=4)
    assert one.deltas == ref.deltas and one.iterations == ref.iterations
    _same_beliefs(one, ref, pm.morpheme_vars.values(), 1e-12)


class _ReversedPool(SerialPool):
    """Runs the blocks last first (as a cluster might), results in the callers' order."""

    def map(self, fn, items, *shared, key="strgm", workers=None):
        return [fn(i, *shared) for i in items[::-1]][::-1]


class _LossyPool(SerialPool):
    """Broken: the last block's messages never come back."""

    def map(self, fn, items, *shared, key="strgm", workers=None):
        out = [fn(i, *shared) for i in items]
        if "block" in key:
            out[-1] = {**out[-1], "messages": [], "caches": []}
        return out


def _belief_bytes(res, names):
    return [res.belief(v).fst.write_to_string() for v in names]


def test_the_result_does_not_depend_on_the_order_blocks_run_in():
    pm, blocks = small_paradigm_graph()
    a = block_jacobi(pm.graph, blocks, "pruned", max_iters=4)
    b = block_jacobi(pm.graph, blocks, "pruned", max_iters=4, pool=_ReversedPool())
    names = list(pm.morpheme_vars.values())
    assert a.deltas == b.deltas and _belief_bytes(a, names) == _belief_bytes(b, names)
    c = block_jacobi(pm.graph, blocks, "pruned", max_iters=4, pool=_LossyPool())
    assert _belief_bytes(a, names) != _belief_bytes(c, names)


class _ForgetfulPool(SerialPool):
    """Every round runs in a fresh process (as after a worker's restart): nothing is
    held from earlier rounds, so every block first reports the machines it lacks."""

    calls = 0

    def map(self, fn, items, *shared, key="strgm", workers=None):
        from strgm.inference import block_task

        block_task._DECODED.clear()
        block_task._SIZE[0] = 0
        out = [fn(i, *shared) for i in items]
        _ForgetfulPool.calls += sum("missing" in o for o in out)
        return out


def test_blocks_that_lost_what_they_held_get_the_bytes_and_the_same_result():
    pm, blocks = small_paradigm_graph()
    a = block_jacobi(pm.graph, blocks, "pruned", max_iters=4)
    b = block_jacobi(pm.graph, blocks, "pruned", max_iters=4, pool=_ForgetfulPool())
    names = list(pm.morpheme_vars.values())
    assert _ForgetfulPool.calls > 0 and b.extra["blocks_resent"] > 0  # the fallback ran
    assert a.extra["blocks_resent"] == 0
    assert a.deltas == b.deltas and _belief_bytes(a, names) == _belief_bytes(b, names)
    assert b.extra["bytes_sent"] > a.extra["bytes_sent"]  # lean payloads saved bytes


def test_split_pruned_bp_agrees_with_the_unsplit_run():
    pm, blocks = small_paradigm_graph()
    ref = infer(pm.graph, "pruned", max_iters=6)
    res = block_jacobi(pm.graph, blocks, "pruned", max_iters=6)
    assert res.converged
    _same_beliefs(res, ref, pm.morpheme_vars.values(), 1e-6)


def test_a_block_round_is_a_pure_function():
    pm, blocks = small_paradigm_graph()
    seen = []

    class Recording(SerialPool):
        def map(self, fn, items, *shared, key="strgm", workers=None):
            out = [fn(i, *shared) for i in items]
            if key.endswith("round1"):
                seen.append((out, [fn(i, *shared) for i in items]))
            return out

    block_jacobi(pm.graph, blocks, "pruned", max_iters=3, pool=Recording())
    first, again = seen[0]
    for x, y in zip(first, again):
        assert x["messages"] == y["messages"] and x["delta"] == y["delta"]


def test_bad_plans_and_methods_are_one_line_option_errors():
    g = tree_graph()
    cases = [([["concat:W1", "edit:W1", "nope"], BLOCKS[1]], "nope"),
             ([BLOCKS[0], BLOCKS[0] + BLOCKS[1]], "concat:W1"),
             ([BLOCKS[0]], "concat:W2")]
    for plan, needle in cases:
        with pytest.raises(OptionError, match="blocks") as e:
            plan_blocks(g, plan)
        assert needle in str(e.value) and "\n" not in str(e.value)
    assert plan_blocks(g, [BLOCKS[0] + ["prior:A"], BLOCKS[1]]).blocks == \
        (tuple(BLOCKS[0]), tuple(BLOCKS[1]))
    with pytest.raises(OptionError, match="method.*pep"):
        block_jacobi(g, BLOCKS, "pep")
    with pytest.raises(OptionError, match="max_iters"):
        block_jacobi(g, BLOCKS, "bp", max_iters=0)


def test_factors_with_one_latent_neighbour_are_constant():
    g = tree_graph()
    res = block_jacobi(g, BLOCKS, "bp", max_iters=4)
    plan = plan_blocks(g, BLOCKS)
    assert {"edit:W1", "edit:W2", "prior:A"} <= plan.constant
    assert "concat:W1" not in plan.constant
    assert isinstance(res.belief("W1").fst, pynini.Fst)


MADE = []


def _edit_recipe(p):
    """The tree's edit machine, made from its one parameter (a recipe's function)."""
    MADE.append(p)
    return ff.edit_transducer(2, ff.EditParams(p))


def _fresh_process(monkeypatch):
    """As in a new worker process: no machine held yet."""
    from collections import OrderedDict

    from strgm.inference import block_task

    monkeypatch.setattr(block_task, "_DECODED", OrderedDict())
    monkeypatch.setattr(block_task, "_SIZE", [0])


def test_a_machine_with_a_recipe_is_made_where_the_blocks_run_not_sent(monkeypatch):
    sent = block_jacobi(tree_graph(), BLOCKS)
    _fresh_process(monkeypatch)
    MADE.clear()
    g = tree_graph()
    recipes = [(g.factors[n].fst, _edit_recipe, 0.8) for n in ("edit:W1", "edit:W2")]
    made = block_jacobi(g, BLOCKS, recipes=recipes)
    assert MADE == [0.8]  # the two factors' machines have one digest: made once here
    assert made.deltas == sent.deltas
    assert _belief_bytes(made, "ABC") == _belief_bytes(sent, "ABC")
    assert made.extra["bytes_scattered"] == \
        sent.extra["bytes_scattered"] - len(_edit().write_to_string())


def test_negative_control_a_recipe_that_makes_another_machine_is_refused(monkeypatch):
    from strgm.errors import StrgmError

    _fresh_process(monkeypatch)
    g = tree_graph()
    with pytest.raises(StrgmError, match="made by _edit_recipe here differs") as e:
        block_jacobi(g, BLOCKS, recipes=[(g.factors["edit:W1"].fst, _edit_recipe, 0.7)])
    assert "\n" not in str(e.value)
