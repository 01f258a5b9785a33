"""The diagnosis of held-out misses (strgm.models.diagnosis): the decision table against
a hand-written oracle, a deliberately broken table shown to disagree, and a real run in
which every recorded cause follows from the recorded controls."""

import itertools

import pytest

from strgm.datasets.paradigm import Paradigm
from strgm.errors import OptionError
from strgm.models.diagnosis import CLASSES, cause_of, diagnose_holdout

T = "kati"  # the truth
W = "kadi"  # a wrong prediction


def _oracle(unseen, wide, all_obs, all_train, best_obs):
    """The module docstring's definitions, written out independently."""
    if unseen:
        return "unseen"
    if wide:
        return "search"
    if all_obs and not all_train:
        return "data"
    if all_obs and all_train:
        return "learning"
    return "optimum" if best_obs else "family"


def _controls(wide, all_obs, all_train, best_obs):
    return {"wide": T if wide else W, "all_observed": T if all_obs else W,
            "all_from_train": T if all_train else W, "best_observed": T if best_obs else W}


CASES = list(itertools.product([False, True], repeat=5))


@pytest.mark.parametrize("case", CASES)
def test_decision_table_matches_the_definitions(case):
    assert cause_of(T, case[0], _controls(*case[1:])) == _oracle(*case)


def test_a_broken_table_is_caught():
    """Negative control: a table that reads 'data' and 'learning' the wrong way round
    (the training-words control taken as the observed one) disagrees on some case."""
    def broken(truth, unseen, controls):
        swapped = dict(controls, all_observed=controls["all_from_train"],
                       all_from_train=controls["all_observed"])
        return cause_of(truth, unseen, swapped)

    assert any(broken(T, c[0], _controls(*c[1:])) != _oracle(*c) for c in CASES)


def test_every_class_is_reachable():
    assert {_oracle(*c) for c in CASES} == set(CLASSES)


def _devoicing_paradigm():
    """Final devoicing over a, i, t, d, k, g (+ a held-out word with unseen 'o')."""
    roots = {"R1": "bad", "R2": "tak", "R3": "dig", "R4": "kat", "R5": "gid", "R6": "tid"}
    pairs = []
    for r, ur in roots.items():
        bare = ur[:-1] + {"d": "t", "g": "k", "b": "p"}.get(ur[-1], ur[-1])
        pairs += [((r,), bare), ((r, "PL"), ur + "i")]
    pairs.append((("R7",), "tok"))
    pairs.append((("R7", "PL"), "toki"))
    return Paradigm.from_pairs(pairs)


def test_a_real_run_records_causes_that_follow_from_its_controls():
    para = _devoicing_paradigm()
    held = {"R6 PL", "R7", "R7 PL", "R2 PL"}
    d = diagnose_holdout(para, held, em_iters=1, restarts=2, wide_kbest=30, wide_k=16)
    by_key = {w.key: w for w in d.words}
    assert set(by_key) == held and d.n == 4
    for key in ("R7", "R7 PL"):  # 'o' and R7 are in no training word
        assert by_key[key].cause == "unseen" and not by_key[key].correct
    for w in d.words:
        if w.correct:
            assert w.cause is None and w.predicted == w.truth and not w.controls
        else:
            assert w.cause == cause_of(w.truth, w.cause == "unseen", w.controls)
    assert any(w.controls for w in d.words)  # a miss went through the controls
    lost = d.count("unseen") + d.count("data")
    assert d.upper_bound == pytest.approx((4 - lost) / 4)
    assert d.to_dict()["counts"]["unseen"] == 2


def test_options_are_checked():
    with pytest.raises(OptionError, match="restarts"):
        diagnose_holdout(_devoicing_paradigm(), {"R1"}, restarts=0)


def test_the_wide_search_narrows_until_it_fits(monkeypatch):
    """A wide search that outgrows the memory budget is halved (64 → 32) and the width
    used recorded; at 20 the error stands."""
    from strgm.errors import MessageTooLargeError
    from strgm.models import diagnosis

    tried = []

    def fake(model, paradigm, heldout, words, opts, k=8):
        tried.append(opts["kbest"])
        if opts["kbest"] > limit[0]:
            raise MessageTooLargeError("too large")
        return {"w": "x"}

    monkeypatch.setattr(diagnosis, "_predictions", fake)
    limit = [40]
    assert diagnosis._wide_predictions(None, None, set(), [], {}, 64, 32) == ({"w": "x"}, 32)
    assert tried == [64, 32]
    limit[0], tried[:] = 10, []
    with pytest.raises(MessageTooLargeError):
        diagnosis._wide_predictions(None, None, set(), [], {}, 64, 32)
    assert tried == [64, 32, 20]
