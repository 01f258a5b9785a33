"""The bracket scorer against hand-scored trees (evalb COLLINS.prm conventions), with
negative controls: a scorer without the punctuation rule, the ADVP = PRT rule or multiset
matching gives other numbers."""

from collections import Counter

import pytest

import strgm.grammars.bracket_score as bs
from strgm.errors import InputError
from strgm.grammars.bracket_score import brackets, evalb_tree, read_parsed, score_corpus, \
    score_sentence
from strgm.grammars.ptb import parse_trees


def T(s):
    return parse_trees(s)[0]


def test_punctuation_words_are_removed_before_spans():
    # gold S(0,2) NP(0,1) VP(1,2); test's VP also covers "." -> VP(1,2) after removal
    g = T("(S (NP (NNP John)) (VP (VBD left)) (. .))")
    t = T("(S (NP (NNP John)) (VP (VBD left) (. .)))")
    s = score_sentence(g, t)
    assert (s.gold, s.test, s.matched, s.exact) == (3, 3, 3, True)
    assert (s.words, s.tags_correct, s.length) == (2, 2, 3)


def test_negative_control_without_the_punctuation_rule(monkeypatch):
    g = T("(S (NP (NNP John)) (VP (VBD left)) (. .))")
    t = T("(S (NP (NNP John)) (VP (VBD left) (. .)))")
    monkeypatch.setattr(bs, "PUNCTUATION", frozenset())
    s = score_sentence(g, t)
    assert (s.gold, s.test, s.matched) == (3, 3, 2)  # VP(1,2) vs VP(1,3)


def test_advp_equals_prt_and_control(monkeypatch):
    g = T("(S (NP (PRP He)) (VP (VBD gave) (PRT (RP up))))")
    t = T("(S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up))))")
    assert score_sentence(g, t).matched == 4  # S, NP, VP, PRT = ADVP
    monkeypatch.setattr(bs, "EQUIVALENT", {})
    assert score_sentence(g, t).matched == 3


def test_unary_duplicates_are_a_multiset():
    g = T("(S (NP (NP (DT the) (NN dog))) (VP (VBZ barks)))")
    t = T("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    assert brackets(evalb_tree(g), [1, 1, 1]) == Counter(
        {("S", 0, 3): 1, ("NP", 0, 2): 2, ("VP", 2, 3): 1})
    s = score_sentence(g, t)
    assert (s.gold, s.test, s.matched, s.exact) == (4, 3, 3, False)
    # by hand: P = 3/3, R = 3/4, F1 = 6/7
    c = score_corpus([g], [t])
    assert c.precision == 1.0 and c.recall == 0.75 and c.f1 == pytest.approx(6 / 7)


def test_top_none_and_function_tags_are_deleted():
    g = T("( (S (NP-SBJ (-NONE- *)) (VP (VB Go)) (. .)) )")
    t = T("(TOP (S (VP (VB Go)) (. .)))")
    s = score_sentence(g, t)
    assert (s.gold, s.test, s.matched, s.exact, s.length) == (2, 2, 2, True, 2)


def test_corpus_totals_failures_and_tagging():
    g1 = T("(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))")
    t1 = T("(S (NP (DT The)) (VP (NN cat) (VBD sat) (. .)))")  # S matches; tags 3/3
    g2 = T("(S (NP (PRP It)) (VP (VBD rained)))")
    c = score_corpus([g1, g2, g2], [t1, None, g2])
    # gold 3 + 3 + 3, test 3 + 0 + 3, matched 1 + 0 + 3
    assert (c.gold, c.test, c.matched, c.failed, c.exact) == (9, 6, 4, 1, 1)
    assert c.precision == pytest.approx(4 / 6) and c.recall == pytest.approx(4 / 9)
    assert c.summary()["exact_match"] == pytest.approx(1 / 3)
    assert (c.words, c.tags_correct) == (7, 5)  # the failed sentence's 2 words count wrong


def test_length_cut_off_counts_punctuation_but_not_traces():
    g = T("(S (NP (NNP John) (-NONE- *)) (VP (VBD left)) (. .))")  # 3 words
    assert score_corpus([g], [g], max_length=3).sentences == 1
    c = score_corpus([g], [g], max_length=2)
    assert c.sentences == 0 and c.skipped_long == 1


def test_word_mismatch_and_count_mismatch_are_input_errors():
    g = T("(S (NP (NNP John)) (VP (VBD left)))")
    with pytest.raises(InputError, match=r"p\.txt:7: .*word 2"):
        score_sentence(g, T("(S (NP (NNP John)) (VP (VBD right)))"), "p.txt", 7)
    with pytest.raises(InputError, match="1 test trees for 2 gold"):
        score_corpus([g, g], [g])


def test_read_parsed(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("(S (NP (NN a)))\n(no parse)\n\n")
    trees, lines = read_parsed(p)
    assert trees[1] is None and lines == [1, 2]
    p.write_text("(S (NP (NN a)))\n(S (NP (NN a))\n")
    with pytest.raises(InputError, match=f"{p}:2:"):
        read_parsed(p)
    p.write_text("(S (NN a))\n\n(S (NN b))\n")
    with pytest.raises(InputError, match=f"{p}:2: blank"):
        read_parsed(p)
    p.write_text("(S (NN a)) (S (NN b))\n")
    with pytest.raises(InputError, match=f"{p}:1: expected one tree"):
        read_parsed(p)
    p.write_text("")
    with pytest.raises(InputError, match="no trees"):
        read_parsed(p)
