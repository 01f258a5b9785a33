"""The scheduler's memo of factor messages under EP/PEP (docs/messages.md).

A factor message whose inputs did not change is not computed again, but EP still
receives it again and re-projects it against the variable's current cavity. Oracle: the
same run with the memo off (every message recomputed) gives the same θ at every
variable. Controls: a side that skips the re-delivery (the unsafe residual scheduling)
gives other θ; a memo keyed on no input versions (a message never recomputed) too.
"""

import numpy as np
import pytest

from tests.inference.test_phonology_ep import small_paradigm
from strgm.factors import BinaryFactor
from strgm.inference import infer
from strgm.inference.ep import EPSide


def theta_moved(before, after) -> float:
    """max |after − before| over the union of the two θ's features (absent entries 0)."""
    fs = before.features.union(after.features)
    d = after.align(fs, strict=False).values - before.align(fs, strict=False).values
    return float(np.max(np.abs(d), initial=0.0))


def _thetas(result, model):
    side = result.side
    return {v: side.theta(v) for v in model.morpheme_vars.values() if side.has_theta(v)}


def _max_gap(a: dict, b: dict) -> float:
    return max(theta_moved(a[v], b[v]) for v in a)


def _run(model, method="pep", **opts):
    return infer(model.graph, method, max_iters=4, tol=0.0, **opts)


@pytest.fixture(scope="module")
def model():
    return small_paradigm(hidden=("R3 PL",))[0]


@pytest.mark.parametrize("method,opts", [("pep", {}), ("ep", {"order": 2})])
def test_memo_equals_recomputing_every_message(model, monkeypatch, method, opts):
    memo = _run(model, method, **opts)
    monkeypatch.setattr(EPSide, "tracks_versions", False)  # the scheduler as before
    every = _run(model, method, **opts)
    assert memo.extra["updates"] == every.extra["updates"]
    assert _max_gap(_thetas(memo, model), _thetas(every, model)) < 1e-12


def test_phonology_messages_to_underlying_forms_are_computed_once(model, monkeypatch):
    calls = {}
    original = BinaryFactor.message_to

    def counted(self, var, incoming, num_labels):
        calls[(self.name, var)] = calls.get((self.name, var), 0) + 1
        return original(self, var, incoming, num_labels)

    monkeypatch.setattr(BinaryFactor, "message_to", counted)
    r = _run(model)
    assert r.iterations == 4
    to_urs = {k: n for k, n in calls.items() if k[1].startswith("U:")}
    assert to_urs and set(to_urs.values()) == {1}  # once in 4 iterations, not once a sweep


def test_skipping_the_redelivery_changes_the_fit(model, monkeypatch):
    memo = _run(model)
    monkeypatch.setattr(EPSide, "redelivers_unchanged", False)
    skipped = _run(model)
    assert skipped.extra["updates"] < memo.extra["updates"]
    assert _max_gap(_thetas(memo, model), _thetas(skipped, model)) > 1e-3


def test_a_memo_blind_to_input_versions_changes_the_fit(model, monkeypatch):
    memo = _thetas(_run(model), model)
    monkeypatch.setattr(EPSide, "version", lambda self, var: 0)
    assert _max_gap(memo, _thetas(_run(model), model)) > 1e-3
