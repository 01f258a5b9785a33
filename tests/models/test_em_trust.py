"""EM a user can trust: each iteration is reported as it happens, a fall of the objective
(impossible with an exact E-step) is flagged and warned about, and restarts keep the run
with the best training objective."""

import warnings

import numpy as np
import pytest

from strgm.datasets.paradigm import Paradigm
from strgm.errors import ObjectiveDecreaseWarning, OptionError
from strgm.models import em
from strgm.models.restarts import best_index, perturbed, train_with_restarts
from tests.models.test_em import PAIRS, _model


def _fake_e_step(lls):
    """The real E-step, but reporting the log evidences ``lls`` in turn."""
    it = iter(lls)
    real = em.e_step

    def fake(model, train, method, infer_opts, progress=None, messages=None, ur_prior=None):
        counts, _, res, pm = real(model, train, method, infer_opts, ur_prior=ur_prior)
        return counts, next(it), res, pm
    return fake


@pytest.mark.parametrize("lls,fell", [([-10.0, -9.0, -8.5], []), ([-10.0, -9.0, -9.5], [2])])
def test_a_falling_objective_is_flagged_and_warned_about(monkeypatch, lls, fell):
    monkeypatch.setattr(em, "e_step", _fake_e_step(lls))
    seen = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = em.train_phonology(Paradigm.from_pairs(PAIRS), model=_model().initial(0.9),
                               method="bp", em_iters=2, l2=0.0, tol=0.0, report=seen.append)
    assert [e["iteration"] for e in seen] == [0, 1, 2]  # reported as they happened
    assert [e["iteration"] for e in r.trace if e.get("decreased")] == fell
    falls = [x for x in w if issubclass(x.category, ObjectiveDecreaseWarning)]
    assert len(falls) == len(fell)
    if fell:
        assert "fell from -9.000 to -9.500" in str(falls[0].message)


def test_exact_em_never_reports_a_fall():
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ObjectiveDecreaseWarning)
        em.train_phonology(Paradigm.from_pairs(PAIRS), model=_model().initial(0.9),
                           method="bp", em_iters=3, l2=0.5, tol=0.0, report=seen.append)
    assert len(seen) == 4 and not any(e.get("decreased") for e in seen)


def test_best_index_takes_the_highest_and_the_first_on_ties():
    assert best_index([-3.0, -1.0, -2.0]) == 1
    assert best_index([-1.0, -1.0]) == 0


def test_restarts_keep_the_best_training_objective():
    """Each restart is a real EM run from its own start; the kept one has the highest
    final objective. Negative control: the starts differ, and so do the objectives, so a
    driver that kept restart 0 (or the last) would be caught whenever it is not best."""
    para = Paradigm.from_pairs(PAIRS)
    kw = dict(method="bp", em_iters=2, l2=0.5, tol=0.0, model=_model().initial(0.9))
    r = train_with_restarts(para, restarts=4, restart_scale=1.0, restart_seed=7, **kw)
    assert len(r.restart_objectives) == 4
    assert len(set(np.round(r.restart_objectives, 9))) > 1
    assert r.restart == int(np.argmax(r.restart_objectives))
    assert r.trace[-1]["objective"] == max(r.restart_objectives)
    # the kept run is reproduced by training from its own start
    start = kw.pop("model")
    start = start if r.restart == 0 else perturbed(start, 1.0, [7, r.restart])
    again = em.train_phonology(para, model=start, **kw)
    assert np.array_equal(again.model.theta, r.model.theta)
    # one restart is plain EM
    one = train_with_restarts(para, restarts=1, model=start, **kw)
    assert np.array_equal(one.model.theta, again.model.theta) and one.restart == 0


def test_restarts_run_as_chains_of_the_shared_runner():
    """The restarts are the tasks of strgm.chains.runner.map_chains on the pool given:
    a pool that runs them in reverse order and puts them back gives the same answer
    as the serial one; a pool that drops the last task (control) changes the
    restart objectives."""
    from strgm.chains.runner import SerialPool
    para = Paradigm.from_pairs(PAIRS)
    kw = dict(method="bp", em_iters=1, l2=0.5, tol=0.0, model=_model().initial(0.9),
              restarts=3, restart_scale=1.0, restart_seed=3)

    class Reversed(SerialPool):
        seen: list = []

        def map(self, fn, items, *shared, key="strgm"):
            self.seen.append(key)
            return [fn(i, *shared) for i in reversed(items)][::-1]

    class Dropping(SerialPool):
        def map(self, fn, items, *shared, key="strgm"):
            return [fn(i, *shared) for i in items[:-1]]
    serial = train_with_restarts(para, **kw)
    pool = Reversed()
    pooled = train_with_restarts(para, pool=pool, **kw)
    assert pool.seen == ["strgm-em-restart"]
    assert pooled.restart_objectives == serial.restart_objectives
    assert np.array_equal(pooled.model.theta, serial.model.theta)
    assert train_with_restarts(para, pool=Dropping(), **kw).restart_objectives != \
        serial.restart_objectives


@pytest.mark.parametrize("kw,name", [({"restarts": 0}, "restarts"),
                                     ({"restart_scale": float("nan")}, "restart_scale"),
                                     ({"restarts": 2, "checkpoint": "ck.json"}, "restarts")])
def test_restart_options_are_checked(tmp_path, kw, name):
    if "checkpoint" in kw:
        kw["checkpoint"] = str(tmp_path / kw["checkpoint"])
    with pytest.raises(OptionError, match=name):
        train_with_restarts(Paradigm.from_pairs(PAIRS), method="bp", em_iters=1, **kw)
    assert not (tmp_path / "ck.json").exists()


def test_every_phase_of_an_iteration_reports_progress():
    """Inference, the count pass and the M-step all speak (a long E-step or M-step is
    never silent), each message tagged with its iteration; a broken pass-through (the
    E-step's progress dropped, as it once was) would lose the inference messages."""
    said = []
    em.train_phonology(Paradigm.from_pairs(PAIRS), model=_model().initial(0.9),
                       method="pruned", em_iters=1, l2=0.5, progress=said.append)
    for it in (0, 1):
        mine = [m for m in said if m.startswith(f"EM iteration {it}/1: ")]
        assert any("E-step (pruned)" in m for m in mine)
        assert any("expected edit counts: word 4/4" in m for m in mine)
        assert any(m != mine[0] and "E-step" not in m and "counts" not in m
                   and "M-step" not in m for m in mine), "no message from inference"
    assert any(m.startswith("EM iteration 0/1: M-step (L-BFGS): evaluation 1, Q =")
               for m in said)
    assert not any(m.startswith("EM iteration 1/1: M-step") for m in said)  # stopped
