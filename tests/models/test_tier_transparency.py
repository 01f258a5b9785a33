"""Transparent (neutral) vowels on the harmony tier: the transducer's tier skips them, the
training words choose them, and a harmony paradigm with neutral vowels is learned."""

import numpy as np
import pytest

from fst_factors.alphabet import Alphabet
from strgm.datasets.synthetic_harmony import (BACK, NEUTRAL, harmonise,
                                               neutral_harmony_paradigm)
from strgm.errors import InputError, OptionError
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.ipa_features import symbol_info
from strgm.models.tier_choice import (choose_transparent, transparent_candidates,
                                      with_transparent)
from fst_factors.transducers.contextual_edit import ContextSpec
from fst_factors.transducers.edit_layout import Layout
from strgm.workflows.training import train_paradigm

SYMS = ["k", "a", "i", "e", "y"]


def _tier_after(transparent, word):
    """The tier context after writing ``word`` (brute force over Layout.tnext)."""
    info = symbol_info(SYMS, transparent=transparent)
    lay = Layout(info, ContextSpec())
    T = lay.NONE_T
    for ch in word:
        T = int(lay.tnext(np.array([T]), np.array([SYMS.index(ch) + 1]))[0])
    return T, info


@pytest.mark.parametrize("word", ["kaki", "kake", "kakie", "ki", "kyki", "kiky"])
def test_the_tier_skips_transparent_vowels_and_only_them(word):
    T, info = _tier_after(("i", "e"), word)
    decisive = [c for c in word if c in "ay"]  # the non-neutral vowels
    want = info.tier[SYMS.index(decisive[-1])] if decisive else Layout(
        info, ContextSpec()).NONE_T
    assert T == want
    # negative control: without transparency the last vowel of any kind decides
    T0, info0 = _tier_after((), word)
    last = [c for c in word if c in "aiey"][-1]
    assert T0 == info0.tier[SYMS.index(last)]
    if word[-1] in "ie" and decisive:
        assert T0 != T  # the two tiers really differ here


def test_transparent_must_name_vowels():
    with pytest.raises(InputError, match="'k' is not a vowel"):
        symbol_info(SYMS, transparent=("k",))
    with pytest.raises(OptionError, match="transparent"):
        train_paradigm(neutral_harmony_paradigm(4), transparent="ie")


def test_candidates():
    assert transparent_candidates(["a", "o", "i", "e", "y"]) == [(), ("i", "e"), ("i",)]
    assert transparent_candidates(["a", "i"]) == [(), ("i",)]
    assert transparent_candidates(["i", "e"]) == [(), ("i",)]  # never all vowels
    assert transparent_candidates(["i"]) == [()]
    assert transparent_candidates(["p", "t"]) == [()]


def test_saved_model_keeps_its_transparent_vowels(tmp_path):
    m = with_transparent(PhonologyEditModel(Alphabet(SYMS)).initial(), ("i", "e"))
    m.save(str(tmp_path / "m.json"))
    back = PhonologyEditModel.load(str(tmp_path / "m.json"))
    assert back.classes["transparent"] == ("i", "e")
    assert np.array_equal(back.structure.info.tier_trigger, m.structure.info.tier_trigger)
    assert not back.structure.info.tier_trigger[SYMS.index("i")]


def test_harmonise_is_the_textbook_rule():
    assert harmonise("kasin", "nek") == "nak"  # i skipped, a decides
    assert harmonise("kisin", "nek") == "nek"  # neutral only: front
    assert harmonise("kyten", "nek") == "nek"
    assert harmonise("kotyn", "nek") == "nek"  # the last non-neutral vowel is front


def _held_out(para):
    """INE forms of roots whose last vowel is neutral after a back vowel: only a tier that
    skips the neutral vowel predicts them."""
    return sorted(e.key for e in para.entries if e.morphemes[-1] == "INE"
                  and e.surface[3] in NEUTRAL and e.surface[1] in BACK)


@pytest.mark.slow  # about 70 s (one screening EM per candidate set)
def test_training_words_choose_the_neutral_vowels():
    para = neutral_harmony_paradigm(14, seed=1)
    held = set(_held_out(para))
    assert held
    sc = choose_transparent(para, held, PhonologyEditModel(para.alphabet()).initial(),
                            screen_words=24)
    model, scores = sc.model, sc.scores
    assert model.classes["transparent"] == ("i", "e") or \
        set(model.classes["transparent"]) == {"i", "e"}
    best = dict((c, o) for c, o in scores)
    assert best[model.classes["transparent"]] == max(best.values())


@pytest.mark.slow
def test_a_neutral_vowel_harmony_paradigm_is_learned():
    """Acceptance: learned transparency predicts every held-out back+neutral root right;
    the fixed nearest-vowel tier does not."""
    para = neutral_harmony_paradigm(40, seed=0)
    held = _held_out(para)
    runs = {t: train_paradigm(para, "pruned", held, transparent=t, em_iters=3,
                              infer_opts={"max_iters": 3}) for t in ("auto", ())}
    assert set(runs["auto"].train.model.classes["transparent"]) == {"i", "e"}
    assert runs["auto"].scores.exact_match == 1.0
    assert runs[()].scores.exact_match < 1.0


def test_the_screening_candidates_share_one_e_step():
    """Every candidate's copy-biased start defines one distribution, so the counts read
    off the shared messages in a candidate's templates equal those of its own E-step
    (the screening's premise); a start with another copy probability does not share."""
    from strgm.models.em import e_step, e_step_messages
    from strgm.models.tier_choice import screening_words
    from strgm.models.training import expected_counts

    para = neutral_harmony_paradigm(4, seed=0)
    train = screening_words(para, set(), 8, 0)
    base = PhonologyEditModel(para.alphabet()).initial()
    starts = [with_transparent(base, c) for c in transparent_candidates(
        base.alphabet.segment_symbols)]
    assert len(starts) >= 2
    opts = {"max_iters": 2}
    shared = e_step_messages(starts[0], train, "pruned", opts)[0]
    for m in starts[1:]:
        mine, ll = e_step(m, train, "pruned", opts)[:2]
        got, ll_shared = expected_counts(m.structure, m.theta, shared)
        assert abs(ll - ll_shared) < 1e-8
        assert np.allclose(got, mine, atol=1e-8)
    other = with_transparent(base, starts[1].classes["transparent"], p_copy=0.9)
    mine, ll = e_step(other, train, "pruned", opts)[:2]
    got, ll_shared = expected_counts(other.structure, other.theta, shared)
    assert abs(ll - ll_shared) > 1e-3


def test_em_begins_with_the_screening_iteration():
    """When the screening ran on every training word (the default), EM's first iteration
    is the screening's winner (same distribution, same counts, same M-step): the same
    trace and θ as running it again, with the E-step alone or with counts and M-step
    reused; the messages of another distribution (p_copy 0.9) give another trace, and so
    does a reused M-step from another candidate (the negative controls)."""
    from strgm.models.em import FirstStep, e_step_messages, split, train_phonology

    para = neutral_harmony_paradigm(4, seed=0)
    base = PhonologyEditModel(para.alphabet()).initial()
    opts = {"max_iters": 2}
    sc = choose_transparent(para, set(), base, infer_opts=opts)
    assert sc.words.entries == split(para, set()).entries and sc.first_step is not None
    run = lambda first, iters=1: train_phonology(  # noqa: E731
        para, model=sc.model, em_iters=iters, infer_opts=opts, first_step=first)
    again = run(None)
    objectives = [round(e["objective"], 8) for e in again.trace]
    for first in (sc.first_step, FirstStep(sc.first_step.messages)):
        reused = run(first)
        assert [round(e["objective"], 8) for e in reused.trace] == objectives
        assert np.allclose(reused.model.theta, again.model.theta, atol=1e-6)
    other = e_step_messages(with_transparent(base, (), p_copy=0.9), sc.words, "pruned", opts)
    # the control compares first E-steps only: no M-step and second E-step after it
    wrong = run(FirstStep(other), iters=0)
    assert abs(wrong.trace[0]["objective"] - again.trace[0]["objective"]) > 1e-3
    f = sc.first_step
    moved = run(FirstStep(f.messages, f.counts, f.ll, 0.5 * f.theta, f.q))
    assert abs(moved.trace[-1]["objective"] - again.trace[-1]["objective"]) > 1e-3
