"""Assimilation (feature-copying) rules of the rule family and the UR candidates that
let the search find them: ``[nasal] → [α place] / _[α place]`` copies the place of the
following segment, including a place no training word showed after the target. The
batch applier's agreement with the compiled transducer is tested in
test_rule_family.py; paradigms here are of our own making."""

import json
from collections import Counter

import pytest

from strgm.datasets.rule_problems import nasal_prefixed_paradigm
from strgm.errors import InputError
from strgm.models import rule_proposals
from strgm.models.rule_apply import EDGE, SegmentRule, pack, rules_fst, unpack
from strgm.models.rule_classes import SegmentFeatures
from strgm.models.rule_phonology import (grammar_from_dict, grammar_to_dict, residues,
                                         train_rule_phonology)
from strgm.models.rule_search import RuleGrammar

SYMS = list("abdeiklmnopstuzŋɡɲʧʤ")
LAB = {s: i + 1 for i, s in enumerate(SYMS)}


def test_assimilation_copies_a_feature_group_of_the_neighbour():
    sf = SegmentFeatures(SYMS)
    got = {(x, c, f): sf.assimilate(LAB[x], LAB[c], f) for x, c, f in [
        ("n", "p", "place"), ("n", "k", "place"), ("m", "t", "place"),
        ("n", "ʧ", "place"), ("n", "a", "place"), ("n", "t", "place"),
        ("t", "d", "voice"), ("ʧ", "n", "voice"), ("d", "k", "voice")]}
    name = {k: None if v is None else SYMS[v - 1] for k, v in got.items()}
    assert name == {("n", "p", "place"): "m", ("n", "k", "place"): "ŋ",
                    ("m", "t", "place"): "n", ("n", "ʧ", "place"): "ɲ",
                    ("n", "a", "place"): None,  # a vowel has no consonant place
                    ("n", "t", "place"): None,  # already agrees: no change
                    ("t", "d", "voice"): "d", ("ʧ", "n", "voice"): "ʤ",
                    ("d", "k", "voice"): "t"}


def test_the_palatal_nasal_needs_the_coronal_palatal_equivalence():
    """Control for the one place that the IPA table names differently on the nasal
    and on the affricate (ɲ: pal; ʧ: cor −ant): copying ʧ's place literally gives a
    bundle no segment has."""
    sf = SegmentFeatures(SYMS)
    literal = {**sf.bundles[LAB["n"] - 1], "place": "cor", "ant": False}
    assert sf._lookup(literal) is None
    assert sf.assimilate(LAB["n"], LAB["ʧ"], "place") == LAB["ɲ"]


def _enc(w):
    return tuple(LAB[c] for c in w)


def test_residues_strip_the_other_morphemes_forms():
    """A root seen only after a prefix whose allomorph cut gave it the prefix's nasal:
    the prefix's other form /n/ leaves the root's /disko/; pieces are never empty."""
    words = [(("3", "R1"), _enc("ndisko")), (("3", "R2"), _enc("ŋɡau")),
             (("R2",), _enc("ɡau")), (("3", "R3"), _enc("n"))]
    allo = {"3": Counter({(): 2, _enc("n"): 1}), "R1": Counter({_enc("ndisko"): 1}),
            "R2": Counter({_enc("ɡau"): 2}), "R3": Counter({_enc("n"): 1})}
    got = residues(words, allo)
    assert _enc("disko") in got["R1"] and _enc("ndisko") in got["R1"]
    assert got["3"][_enc("ŋ")] == 1  # ŋɡau minus the root's ɡau
    assert all(len(piece) > 0 for c in got.values() for piece in c)
    assert got["R3"] == Counter({_enc("n"): 1})  # from ∅ only: n minus /n/ is empty


def test_spread_rules_survive_saving_and_compile():
    sf = SegmentFeatures(SYMS)
    nasals = [LAB[c] for c in "mnŋɲ"]
    rule = SegmentRule(spread=tuple((x, c, y) for x in nasals for c in range(1, len(SYMS) + 1)
                                    if (y := sf.assimilate(x, c, "place")) is not None),
                       left=frozenset([EDGE]), text="#[nasal] → [α place] / _[α place]")
    g = RuleGrammar(SYMS, {"3": _enc("n"), "R": _enc("ʧupi")}, [rule], 1, 1, 4.0)
    again = grammar_from_dict(json.loads(json.dumps(grammar_to_dict(g))))
    assert again.rules == g.rules
    assert again.predict(["3", "R"]) == "ɲʧupi"
    assert g.predict(["R", "3"]) == "ʧupin"  # the left context: only after the edge
    fst = rules_fst([rule], len(SYMS))
    assert fst.num_states() > 0
    bad = grammar_to_dict(g)
    bad["rules"][0]["spread_side"] = "left"  # a left-reading rule takes no left context
    with pytest.raises(InputError, match="damaged"):
        grammar_from_dict(bad)


def test_batch_rows_of_a_spread_rule():
    sf = SegmentFeatures(SYMS)
    rule = SegmentRule(spread=tuple((x, c, y) for x in (LAB["n"],)
                                    for c in range(1, len(SYMS) + 1)
                                    if (y := sf.assimilate(x, c, "place")) is not None))
    from strgm.models.rule_apply import apply_rule
    out = unpack(apply_rule(rule, pack([_enc("anpa"), _enc("ankan"), _enc("nʧ")],
                                       len(SYMS)), len(SYMS)), len(SYMS))
    assert ["".join(SYMS[a - 1] for a in w) for w in out] == ["ampa", "aŋkan", "ɲʧ"]


_STEMS = ("pelu", "kasa", "ɡena", "ʧupi", "sofa", "kilo", "dumo", "tiko")


def _place_learner(monkeypatch, spread: bool):
    if not spread:
        monkeypatch.setattr(rule_proposals, "SPREAD_FEATURES", {})
    para = nasal_prefixed_paradigm(_STEMS)
    return train_rule_phonology(para, ["3 R03"], beam=2)


@pytest.mark.slow
def test_an_assimilation_rule_reaches_a_place_no_training_word_shows(monkeypatch):
    """/n+ʧupi/ is held out, and no other stem begins with ʧ: only a rule that copies
    the place of the next segment predicts its palatal nasal [ɲ…]. The search learns
    one, with every training word right."""
    run = _place_learner(monkeypatch, spread=True)
    assert any(r.spread for r in run.grammar.rules)
    assert run.grammar.train_exact == 1.0
    assert run.predictions()["3 R03"].startswith("ɲ")


@pytest.mark.slow
def test_without_assimilation_rules_the_unseen_place_is_missed(monkeypatch):
    """Negative control: the same search with no spread proposals learns one rule per
    place seen (labial, velar) and leaves the nasal before ʧ unassimilated."""
    run = _place_learner(monkeypatch, spread=False)
    assert not any(r.spread for r in run.grammar.rules)
    assert not run.predictions()["3 R03"].startswith("ɲ")
