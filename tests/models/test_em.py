"""EM driver: the objective never decreases, checkpoints restore the complete state (an
interrupted and resumed run is byte-identical to an uninterrupted one at every iteration
boundary), saved models and checkpoints are strict JSON and damaged ones are refused."""

import json

import numpy as np
import pytest

from fst_factors.transducers.contextual_edit import ContextSpec
from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError, OptionError
from strgm.models import em
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import train_phonology
from strgm.models.em_checkpoint import load_checkpoint

# single-morpheme words, exact BP: log-evidence is the exact marginal log-likelihood
PAIRS = [(("A",), "ab"), (("B",), "ba"), (("C",), "aab"), (("D",), "b")]
N = 4  # EM iterations of the resume tests


def _model():
    from fst_factors.alphabet import Alphabet

    return PhonologyEditModel(Alphabet(["a", "b"]), ContextSpec(1, 1, 0, False),
                              {"context": "exact", "right_context": "exact",
                               "output_context": "exact", "max_sub_distance": None})


def _train(tmp, name, **kw):
    kw.setdefault("model", _model().initial(0.9))
    kw = dict(dict(method="bp", em_iters=N, l2=0.5, tol=0.0), **kw)
    return train_phonology(Paradigm.from_pairs(PAIRS), checkpoint=str(tmp / name), **kw)


def _outputs(r, tmp, name):
    """(saved model bytes, JSON trace bytes): what a user keeps of a run."""
    r.model.save(str(tmp / f"{name}.model.json"), {"method": "bp"})
    return ((tmp / f"{name}.model.json").read_bytes(),
            json.dumps(r.trace, allow_nan=False).encode())


def test_em_objective_never_decreases(tmp_path):
    """Successive iterations: objective(θ_{t+1}) ≥ objective(θ_t), and each trace entry is
    the objective of the θ of that iteration evaluated afresh (em_iters=0 from the θ
    checkpointed after iteration t-1), so the trace is not compared with itself."""
    snaps = []
    real = em._write_checkpoint
    em._write_checkpoint = lambda p, ck: (snaps.append(ck.model), real(p, ck))
    try:
        r = _train(tmp_path, "ck.json")
    finally:
        em._write_checkpoint = real
    obj = [e["objective"] for e in r.trace]
    assert len(obj) == N + 1
    assert all(b >= a - 1e-7 for a, b in zip(obj, obj[1:])), obj
    assert obj[-1] > obj[0] + 0.1
    for t in range(1, N + 1):  # snaps[t - 1] holds θ_t
        fresh = train_phonology(Paradigm.from_pairs(PAIRS), method="bp", em_iters=0,
                                l2=0.5, model=snaps[t - 1])
        assert fresh.trace[0]["objective"] == obj[t]
    assert not np.array_equal(snaps[0].theta, snaps[-1].theta)


def test_resume_is_byte_identical_at_every_iteration_boundary(tmp_path):
    """Interrupt after every checkpoint write (the file as it was at that moment), resume
    to N iterations: model file, trace and final checkpoint equal the uninterrupted
    run's byte for byte. Also: stop at k iterations, then extend to N."""
    states = []
    real = em._write_checkpoint

    def keep(path, ck):
        real(path, ck)
        states.append(open(path, "rb").read())

    em._write_checkpoint = keep
    try:
        full = _train(tmp_path, "full.json")
    finally:
        em._write_checkpoint = real
    want = _outputs(full, tmp_path, "full")
    final_ck = (tmp_path / "full.json").read_bytes()
    assert len(states) == N + 1 and states[-1] == final_ck
    for k, state in enumerate(states):
        (tmp_path / f"at{k}.json").write_bytes(state)
        r = _train(tmp_path, f"at{k}.json", resume=str(tmp_path / f"at{k}.json"))
        assert _outputs(r, tmp_path, f"at{k}") == want, f"resumed at boundary {k}"
        assert (tmp_path / f"at{k}.json").read_bytes() == final_ck
        assert r.result is not None  # the final E-step's result is always returned
    # resuming a finished run with --checkpoint elsewhere writes the final state there
    _train(tmp_path, "copy.json", resume=str(tmp_path / "at0.json"))
    assert (tmp_path / "copy.json").read_bytes() == final_ck
    for k in range(1, N):
        _train(tmp_path, f"k{k}.json", em_iters=k)
        r = _train(tmp_path, f"k{k}.json", resume=str(tmp_path / f"k{k}.json"))
        assert _outputs(r, tmp_path, f"k{k}") == want, f"extended from {k} iterations"


def test_resume_restores_the_convergence_state(tmp_path):
    """With a tolerance that stops the run at iteration c < N, resuming from any
    checkpoint stops at c too (a resume that forgot the previous objective ran on)."""
    full = _train(tmp_path, "ref.json")
    obj = [e["objective"] for e in full.trace]
    rel = [abs(b - a) / abs(a) for a, b in zip(obj, obj[1:])]
    c = 2  # stop when the change into iteration 2 is small enough, not before
    tol = (rel[c - 1] + max(rel[c - 2], rel[c - 1]) * 1.0001) / 2 \
        if rel[c - 2] > rel[c - 1] else None
    if tol is None:
        pytest.skip("objective changes do not shrink on this data")
    states = []
    real = em._write_checkpoint
    em._write_checkpoint = lambda p, ck: (real(p, ck), states.append(open(p, "rb").read()))
    try:
        stopped = _train(tmp_path, "c.json", tol=tol)
    finally:
        em._write_checkpoint = real
    assert stopped.stop == "converged" and len(stopped.trace) == c + 1
    for k, state in enumerate(states):
        (tmp_path / "r.json").write_bytes(state)
        r = _train(tmp_path, "r.json", tol=tol, resume=str(tmp_path / "r.json"))
        assert r.trace == stopped.trace and r.stop == "converged", k
        assert np.array_equal(r.model.theta, stopped.model.theta)


def test_resume_refuses_other_settings_and_too_few_iterations(tmp_path):
    _train(tmp_path, "ck.json", em_iters=2)
    ck = str(tmp_path / "ck.json")
    with pytest.raises(InputError, match=r"l2 \(--l2\) = 0.5, this run has 1.0"):
        _train(tmp_path, "other.json", l2=1.0, resume=ck)
    with pytest.raises(InputError, match="other training words"):
        train_phonology(Paradigm.from_pairs(PAIRS[:3]), method="bp", em_iters=N, l2=0.5,
                        tol=0.0, resume=ck)
    with pytest.raises(InputError, match="iteration 2, past em_iters = 1"):
        _train(tmp_path, "other.json", em_iters=1, resume=ck)
    with pytest.raises(InputError, match=r"l1 \(--l1\) = 0.0, this run has 0.2"):
        _train(tmp_path, "other.json", l1=0.2, resume=ck)
    _train(tmp_path, "l1.json", em_iters=1, l1=0.2)
    with pytest.raises(InputError, match=r"l1 \(--l1\) = 0.2, this run has 0.0"):
        _train(tmp_path, "other.json", resume=str(tmp_path / "l1.json"))
    assert not (tmp_path / "other.json").exists()


def test_l1_objective_and_sparsity(tmp_path):
    """With l1 the reported objective carries −l1‖θ‖₁, EM never lowers it (exact BP),
    and the trained θ has fewer non-zero weights than without."""
    r = _train(tmp_path, "a.json", l1=0.3)
    objs = [e["objective"] for e in r.trace]
    assert all(b >= a - 1e-7 for a, b in zip(objs, objs[1:]))
    fresh = train_phonology(Paradigm.from_pairs(PAIRS), model=r.model, method="bp",
                            em_iters=0, l2=0.5, l1=0.3)
    ll = fresh.trace[0]["log_evidence"]
    th = r.model.theta
    assert fresh.trace[0]["objective"] == pytest.approx(
        ll - 0.25 * float(th @ th) - 0.3 * float(np.abs(th).sum()))
    dense = _train(tmp_path, "b.json")
    assert np.sum(np.abs(th) > 1e-6) < np.sum(np.abs(dense.model.theta) > 1e-6)


@pytest.mark.parametrize("kw,name", [({"l2": -1}, "l2"), ({"l2": float("nan")}, "l2"),
                                     ({"em_iters": -3}, "em_iters"),
                                     ({"tol": float("inf")}, "tol"),
                                     ({"method": "gibbs"}, "method"),
                                     ({"em_iters": 1.5}, "em_iters"),
                                     ({"l1": -0.1}, "l1"), ({"l1": float("nan")}, "l1")])
def test_train_keywords_are_checked(tmp_path, kw, name):
    with pytest.raises(OptionError, match=f"option {name}:"):
        _train(tmp_path, "x.json", **kw)
    assert not (tmp_path / "x.json").exists()


def _checkpoint_text(tmp_path):
    _train(tmp_path, "good.json", em_iters=1)
    return (tmp_path / "good.json").read_text(encoding="utf-8")


def _damage(text, how):
    d = json.loads(text)
    if how == "truncated":
        return text[: len(text) // 2]
    if how == "nan_literal":
        return text.replace(str(d["trace"][0]["objective"]), "NaN", 1)
    if how == "nan_weight":
        d["model"]["theta"][0][1] = "NaN"
    elif how == "unknown_feature":
        d["model"]["theta"][0][0] = ["no-such-feature"]
    elif how == "short_trace":
        d["trace"] = d["trace"][:1]
    elif how == "bad_iteration":
        d["iteration"] = -1
    elif how == "bad_stop":
        d["stop"] = "maybe"
    elif how == "other_format":
        d["format"] = "strgm-em-checkpoint-v9"
    elif how == "trace_nan":
        d["trace"][0]["objective"] = "NaN"
    return json.dumps(d)


@pytest.mark.parametrize("how", ["truncated", "nan_literal", "nan_weight", "unknown_feature",
                                 "short_trace", "bad_iteration", "bad_stop", "other_format",
                                 "trace_nan"])
def test_damaged_checkpoint_is_refused_naming_the_file(tmp_path, how):
    bad = tmp_path / f"{how}.json"
    bad.write_text(_damage(_checkpoint_text(tmp_path), how), encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_checkpoint(str(bad))
    assert str(bad) in str(e.value)


def test_save_load_roundtrip(tmp_path):
    m = _model().initial(0.9)
    m = m.with_theta(m.theta + np.random.default_rng(0).normal(0, 0.1, len(m.theta)))
    p = tmp_path / "m.json"
    m.save(str(p))
    m2 = PhonologyEditModel.load(str(p))
    assert np.array_equal(m2.theta, m.theta)  # exact: floats are written in full
    assert list(tmp_path.iterdir()) == [p]  # no temporary file left


@pytest.mark.parametrize("value,detail", [(float("nan"), "non-finite"),
                                          ("Infinity", "non-finite"),
                                          ("heavy", "damaged")])
def test_model_load_refuses_bad_weights(tmp_path, value, detail):
    m = _model().initial(0.9)
    d = m.to_dict()
    d["theta"][0][1] = value
    p = tmp_path / "m.json"
    p.write_text(json.dumps(d), encoding="utf-8")  # float nan: Python's bare NaN
    with pytest.raises(InputError, match=detail if value == value else "not JSON") as e:
        PhonologyEditModel.load(str(p))
    assert str(p) in str(e.value)
    bad_classes = dict(m.to_dict(), classes={"context": "weird"})
    p.write_text(json.dumps(bad_classes), encoding="utf-8")
    with pytest.raises(InputError, match="damaged.*weird"):
        PhonologyEditModel.load(str(p))
