"""Multi-level activation in PEP-prox (strgm/projection/prox.py, ``levels``): the step
equals a proximal step on an active set built by hand from the gradient threshold, it
reaches deeper features in one step, and it keeps the projection's optimum."""

import numpy as np
import pytest

from strgm.errors import StrgmError
from strgm.features import Theta, p_moments, q_moments
from strgm.inference import infer
from strgm.projection import (active_set, closed_form, objective, order_feature_set, penalty,
                              proximal_projection, tree_prox)
from strgm.projection.prox import prox_step
from test_ep import tree_graph
from test_projection import N, target


def unigram_start(p):
    x, _ = closed_form(p, order_feature_set(1, N))
    return x.restrict()


def gradient_on(p, x, act):
    """(working set, E_p̂[f] − E_q[f] on it, zero outside ``act``), from the moments."""
    work = act.union(x.features)
    ep = p_moments(p, work).expectations
    eq = q_moments(x.align(work, strict=False)).expectations
    return work, np.where(work.positions_in(act) >= 0, ep - eq, 0.0)


def hand_active_set(p, x, lam, threshold):
    """One deepening of the active set: frontier features with |g| > ``threshold``
    count as nonzero, and their extensions join."""
    act = active_set(x)
    work, g = gradient_on(p, x, act)
    hot = (x.align(work, strict=False).values != 0) | (
        (work.positions_in(act) >= 0) & (np.abs(g) > threshold))
    return act.union(active_set(Theta(work, hot.astype(float)).restrict()))


@pytest.mark.parametrize("lam", [0.03, 0.08])
def test_two_level_step_is_a_prox_step_on_the_hand_built_active_set(lam):
    p, eta = target(), 0.2
    x = unigram_start(p)
    act2 = hand_active_set(p, x, lam, threshold=lam)
    work, g = gradient_on(p, x, act2)
    want = tree_prox(Theta(work, x.align(work, strict=False).values + eta * g),
                     eta * lam).restrict()
    got = prox_step(p, x, None, lam, eta, levels=2)
    assert set(got.active) == set(act2)
    assert set(got.x.features) == set(want.features)
    np.testing.assert_allclose(got.x.align(want.features).values, want.values, atol=1e-12)
    # the threshold matters: λ·η (a plausible slip) or no threshold builds other sets
    assert set(hand_active_set(p, x, lam, threshold=eta * lam)) != set(got.active)
    assert set(hand_active_set(p, x, lam, threshold=-1.0)) != set(got.active)


def test_more_levels_reach_deeper_features_in_one_step():
    p = target()
    x = unigram_start(p)
    longest = {lv: max(len(w) for w in prox_step(p, x, None, 0.01, 0.5, levels=lv).x.features)
               for lv in (1, 2, 3)}
    assert longest[1] < longest[2] < longest[3]


def test_levels_one_is_the_single_level_step():
    p = target()
    x = unigram_start(p)
    one = prox_step(p, x, None, 0.01, 0.5)
    assert set(one.active) == set(active_set(x))
    again = prox_step(p, x, None, 0.01, 0.5, levels=1).x
    assert again.features == one.x.features
    np.testing.assert_array_equal(again.values, one.x.values)


def test_multi_level_projection_reaches_the_same_optimum():
    """Prox-gradient converges to the minimiser of the convex D(p‖q_θ) + λΩ(θ) whatever
    active-set rule it grows by, so both end at the same objective value."""
    p, lam = target(), 0.03

    def value(x, fs):
        ep = p_moments(p, fs).expectations
        return -objective(x.align(fs, strict=False), ep) + lam * penalty(x)  # D + λΩ + c

    one = proximal_projection(p, N, lam=lam, eta=0.5, iters=400, max_len=3)
    three = proximal_projection(p, N, lam=lam, eta=0.5, iters=400, max_len=3, levels=3)
    fs = one.features.union(three.features)
    assert value(three, fs) == pytest.approx(value(one, fs), abs=1e-7)
    # control: a few steps from the start are not at the optimum
    early = proximal_projection(p, N, lam=lam, eta=0.5, iters=2, max_len=3)
    assert value(early, fs.union(early.features)) > value(one, fs) + 1e-4


def test_pep_runs_with_multi_level_activation_and_finds_the_word():
    """λ = 0.05 stops one-level growth short of the whole word (features must reach
    length 5) under round-robin passes; two levels per step find it. (Block passes, the
    default, find it with one level: 20 steps in a row on one message.)"""
    g = tree_graph("abab")
    one = infer(g, "pep", relay=False, lam=0.05, max_iters=5, block=False)
    two = infer(g, "pep", relay=False, lam=0.05, max_iters=5, activation_levels=2,
                block=False)
    assert one.belief("W").kbest_labels(1)[0][0] != (1, 2, 1, 2)
    assert two.belief("W").kbest_labels(1)[0][0] == (1, 2, 1, 2)
    assert two.settings["activation_levels"] == 2


@pytest.mark.parametrize("bad", [0, 5, -1, 2.0, True, "2"])
def test_bad_activation_levels_are_one_line_errors(bad):
    with pytest.raises(StrgmError, match="activation_levels") as e:
        infer(tree_graph("ab"), "pep", activation_levels=bad)
    assert "\n" not in str(e.value)
