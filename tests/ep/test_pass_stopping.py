"""The passes of an EP visit (strgm/inference/ep_passes.py): the fixed schedule is
unchanged when the residual stop is off, and with it a unit stops right after the first
pass that moved θ_V by at most ``pass_tol``."""

import numpy as np
import pytest

from strgm.errors import StrgmError
from strgm.features import FeatureSet, Theta
from strgm.inference import infer
from strgm.inference.ep_passes import pass_units, run_passes, theta_moved
from test_ep import tree_graph

FS = FeatureSet([(1,), (2,), (1, 2)], 2)


class Contracting:
    """θ_V after n updates: θ* + 0.5^n·(θ0 − θ*), the path of a contracting fixed-point
    iteration; every update is recorded."""

    def __init__(self):
        self.calls, self.n = [], 0

    def update(self, f, cache):
        self.calls.append(f)
        self.n += 1

    def theta(self):
        return Theta(FS, np.array([1.0, -1.0, 0.5]) + 0.5 ** self.n * np.array([4.0, 2.0, 1.0]))


def test_without_the_stop_every_pass_runs_in_the_fixed_order():
    c = Contracting()
    saved = run_passes(pass_units(["f", "g"], 5, block=False), 5, c.update, c.theta, 0.0)
    assert saved == 0 and c.calls == ["f", "g"] * 5
    c = Contracting()
    run_passes(pass_units(["f", "g"], 3, block=True), 3, c.update, c.theta, 0.0)
    assert c.calls == ["f", "f", "f", "g", "g", "g"]


@pytest.mark.parametrize("tol", [0.3, 0.05, 1e-3])
def test_a_unit_stops_after_the_first_pass_that_moved_theta_at_most_tol(tol):
    c = Contracting()
    passes = 30
    saved = run_passes(pass_units(["f", "g"], passes, block=False), passes, c.update,
                       c.theta, tol)
    done = len(c.calls) // 2
    # a pass of two updates moves the largest coordinate by 4·(0.5^(2k-2) − 0.5^(2k))
    moved = [4 * (0.5 ** (2 * k - 2) - 0.5 ** (2 * k)) for k in range(1, passes + 1)]
    first = next(k for k, m in enumerate(moved, 1) if m <= tol)
    assert done == first and saved == 2 * (passes - first)
    # control: one pass fewer would have stopped at a pass that moved more than tol
    assert moved[first - 2] > tol


def test_theta_moved_aligns_the_feature_sets():
    a = Theta(FeatureSet([(1,)], 2), np.array([1.0]))
    b = Theta(FeatureSet([(2,)], 2), np.array([0.25]))
    assert theta_moved(a, b) == 1.0 and theta_moved(a, a) == 0.0


def test_pep_with_a_tiny_pass_tol_equals_the_fixed_schedule():
    g = tree_graph("abab")
    fixed = infer(g, "pep", relay=False, max_iters=3, tol=0)
    stop = infer(g, "pep", relay=False, max_iters=3, tol=0, pass_tol=1e-15)
    loose = infer(g, "pep", relay=False, max_iters=3, tol=0, pass_tol=0.05)
    w = (1, 2, 1, 2)
    assert stop.belief("W").prob(w) == pytest.approx(fixed.belief("W").prob(w), abs=1e-12)
    assert loose.extra["updates_saved"] > 0
    assert loose.extra["updates"] + loose.extra["updates_saved"] == fixed.extra["updates"]


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), True, "0.1"])
def test_bad_pass_tol_is_a_one_line_error(bad):
    with pytest.raises(StrgmError, match="pass_tol") as e:
        infer(tree_graph("ab"), "pep", pass_tol=bad)
    assert "\n" not in str(e.value)
