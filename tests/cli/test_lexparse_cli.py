"""``strgm treebank grammar --lexicalized`` and ``strgm lexparse``: the written model
parses as the library does, every sentence gets a line, bad inputs are one-line errors."""

from __future__ import annotations

import pytest

from strgm.grammars.lexicalized.files import load_lexicalized
from strgm.grammars.lexicalized.prune import parse_pruned
from strgm.grammars.ptb import parse_trees, tree_leaves
from tests.robustness.harness import assert_clean_error, run_cli


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("lex")
    out = d / "lex.npz"
    o = run_cli(["treebank", "grammar", "example:trees", "--lexicalized",
                 "--smoothing", "collins", "--out", out])
    assert o.code == 0, o.stderr
    assert "smoothing collins" in o.stderr and out.exists()
    return out, d


def test_lexparse_prints_the_librarys_parse_of_every_sentence(model):
    out, d = model
    o = run_cli(["treebank", "yield", "example:trees"])
    sentences = [s.split() for s in o.stdout.splitlines()]
    corpus = d / "s.txt"
    corpus.write_text(o.stdout)
    o = run_cli(["lexparse", out, corpus, "--quiet"])
    assert o.code == 0, o.stderr
    lines = o.stdout.splitlines()
    assert len(lines) == len(sentences)
    g, pcfg = load_lexicalized(out)
    for words, line in zip(sentences, lines):
        tree = parse_trees(line)[0]
        assert tree[0] == "TOP" and list(tree_leaves(tree)) == words
        want, _, _ = parse_pruned(g, words, pcfg)
        assert tree[1] == want


def test_lexicalized_refuses_the_pcfg_only_options(model, tmp_path):
    o = run_cli(["treebank", "grammar", "example:trees", "--lexicalized", "--parent",
                 "--out", tmp_path / "x.npz"], watch=tmp_path)
    assert_clean_error(o, "--lexicalized", "--parent")


def test_lexparse_names_a_file_that_is_not_a_model(tmp_path):
    bad = tmp_path / "g.npz"
    bad.write_text("(S (NP x))\n")
    corpus = tmp_path / "s.txt"
    corpus.write_text("a b\n")
    o = run_cli(["lexparse", bad, corpus], watch=tmp_path)
    assert_clean_error(o, "g.npz")
