"""Word-shape signatures: features, back-off chains, determinism, rare-word replacement,
the coarse levels in the grammar, and the parse-time mapping."""

import subprocess
import sys
from pathlib import Path

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import inside
from strgm.grammars.unknown_words import backoff_counts, grammar_known_words, \
    is_signature, map_sentence, map_word, replace_rare, restore_tree, signature, \
    signature_chain, treebank_pcfg

ROOT = Path(__file__).resolve().parents[2]
KNOWN = frozenset({"running", "the", "dog"})


def test_signatures_of_typical_words():
    assert signature("Running", 0, KNOWN) == "<UNK-INITC-KNOWNLC-ing>"
    assert signature("Zorbing", 0, KNOWN) == "<UNK-INITC-ing>"
    assert signature("Zorbing", 3, KNOWN) == "<UNK-CAPS-ing>"
    assert signature("walked") == "<UNK-LC-ed>"
    assert signature("cats") == "<UNK-LC-s>"
    assert signature("glass") == "<UNK-LC>"  # -ss is no plural
    assert signature("1990s") == "<UNK-LC-NUM-s>"
    assert signature("3.5") == "<UNK-NUM>"
    assert signature("IBM") == "<UNK-CAPS>"
    assert signature("well-known") == "<UNK-LC-DASH>"
    assert signature("quickly") == "<UNK-LC-ly>"
    assert signature("%") == "<UNK>"


def test_chain_drops_the_last_feature_down_to_bare_unk():
    assert signature_chain("Running", 0, KNOWN) == [
        "<UNK-INITC-KNOWNLC-ing>", "<UNK-INITC-KNOWNLC>", "<UNK-INITC>", "<UNK>"]
    assert signature_chain("%") == ["<UNK>"]
    assert all(is_signature(s) for s in signature_chain("Well-known1990s", 0, KNOWN))


WORDS = ["Running", "zorbed", "IBM", "1990s", "well-known", "Quickly", "x", "<UNK>"]
SCRIPT = ("from strgm.grammars.unknown_words import signature_chain as c;"
          "print([c(w, i % 2, {'running', 'quickly'}) for i, w in enumerate(WORDS)])")


def test_signatures_are_deterministic_across_processes():
    here = [signature_chain(w, i % 2, {"running", "quickly"}) for i, w in enumerate(WORDS)]
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", SCRIPT.replace("WORDS", repr(WORDS))],
                             capture_output=True, text=True, env={"PYTHONHASHSEED": seed},
                             check=True, cwd=ROOT).stdout
        assert out.strip() == str(here)


def test_map_word_uses_the_finest_signature_the_grammar_has():
    terms = {"dog", "<UNK-LC>", "<UNK>"}
    assert map_word("dog", 1, {"dog"}, terms) == "dog"
    assert map_word("walked", 1, {"dog"}, terms) == "<UNK-LC>"
    assert map_word("<UNK-LC>", 1, {"dog"}, terms) == "<UNK>"  # look-alikes: own shape
    assert map_word("%", 1, {"dog"}, terms) == "<UNK>"
    assert map_word("walked", 1, {"dog"}, {"dog"}) == "walked"  # no signatures: unchanged


TREES = [("S", ("NP", ("DT", "the"), ("NN", "dog")), ("VP", ("VBD", "barked"))),
         ("S", ("NP", ("DT", "the"), ("NN", "dog")), ("VP", ("VBD", "walked")),
          (".", ".")),
         ("S", ("NP", ("NNP", "Rex")), ("VP", ("VBD", "barked"), ("ADVP", ("RB", "loudly"))),
          (".", "."))]


def test_rare_words_become_signatures_and_coarse_levels_get_small_counts():
    rep, known = replace_rare(TREES, 1)
    assert known == {"the", "dog", "barked", "."}
    assert rep[1][2] == ("VP", ("VBD", "<UNK-LC-ed>"))
    assert rep[2][1] == ("NP", ("NNP", "<UNK-INITC>"))
    extra = backoff_counts(TREES, known, 0.01)
    assert extra[("VBD", "<UNK-LC>")] == 0.01 and extra[("VBD", "<UNK>")] == 0.01
    assert extra[("RB", "<UNK>")] == 0.01 and ("DT", "<UNK>") not in extra


def test_treebank_pcfg_parses_any_unknown_word_and_restores_the_sentence():
    g, info = treebank_pcfg(TREES, threshold=1, horizontal=1)
    assert info["trees"] == 3 and info["signatures"] >= 4
    assert ". --> ." not in {str(r) for r in g.rules}  # the tag "." is renamed
    words = ("Fido", "zapped", "oddly", ".")
    mapped = map_sentence(words, grammar_known_words(g), frozenset(g.terminals))
    assert mapped == ("<UNK-INITC>", "<UNK-LC-ed>", "<UNK-LC-ly>", ".")
    r = inside(compile_grammar(g), [mapped]).viterbi()[0]
    assert r is not None
    t = restore_tree(r[0], words, g)
    from strgm.grammars.cfg import tree_yield
    assert tree_yield(t) == words and t[0] == "TOP"
    assert "(. .)" in str(t).replace("'", "").replace(",", "")


def test_no_grammar_word_looks_like_a_signature():
    trees = TREES + [("S", ("NP", ("NN", "<UNK-LC>")), ("VP", ("VBD", "barked")))] * 3
    g, _ = treebank_pcfg(trees, threshold=1)
    assert "<UNK-LC>" not in grammar_known_words(g)
