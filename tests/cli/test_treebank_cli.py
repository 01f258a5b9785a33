"""``strgm treebank grammar|yield|score`` and ``strgm pcfg parse`` on treebank grammars:
outputs, one-line errors naming file and line, nothing half-written."""

import json
from pathlib import Path

import pytest

from strgm.grammars.johnson_format import read_grammar
from tests.robustness.harness import assert_clean_error, run_cli

MRG = """( (S (NP-SBJ (DT The) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .)) )
( (S (NP-SBJ-1 (DT the) (NN dog)) (VP (VBD walked) (NP (-NONE- *-1))) (. .)) )
( (S (NP-SBJ (NNP Rex)) (VP (VBD barked) (PP (IN at) (NP (DT the) (JJ big) (JJ red)
   (NN cat)))) (. .)) )
( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)) (. .)) )
"""
WSJ = Path("/work/shared/data/treebank/wsj")


@pytest.fixture
def tb(tmp_path):
    d = tmp_path / "tb"
    d.mkdir()
    (d / "a.mrg").write_text(MRG)
    (d / "b.mrg").write_text(MRG.splitlines()[0] + "\n")
    return d, tmp_path


def _grammar(tb, *extra):
    d, tmp = tb
    out = tmp / "g.lt"
    o = run_cli(["treebank", "grammar", d, "--out", out, *extra])
    assert o.code == 0, o.stderr
    return out, o


def test_grammar_writes_johnson_format_and_a_summary(tb):
    out, o = _grammar(tb)
    assert o.stdout == ""
    line, wrote = o.stderr.strip().splitlines()
    assert line.startswith("5 trees, ") and line.endswith(" signatures")
    assert wrote == f"wrote {out}"
    g = read_grammar(out)
    assert g.start == "TOP" and "<UNK>" in g.terminals
    assert all(len(r.rhs) <= 2 for r in g.rules)
    assert "*-1" not in g.terminals and "NP-SBJ" not in g.nonterminals


def test_markov_none_and_start_symbol(tb):
    out, _ = _grammar(tb, "--markov", "none", "--start", "ROOT", "--unk-threshold", "0")
    g = read_grammar(out)
    assert g.start == "ROOT" and "NP|<JJ,JJ,NN>" in g.nonterminals
    assert not any(t.startswith("<UNK") for t in g.terminals)


def test_parse_restores_words_and_removes_binarisation_nodes(tb):
    out, _ = _grammar(tb)
    d, tmp = tb
    sents = tmp / "s.txt"
    sents.write_text("The cat barked at the big red dog .\nZorro sat loudly .\nthe the\n")
    scores = tmp / "scores.tsv"
    o = run_cli(["pcfg", "parse", out, sents, "--scores", scores, "--decode", "maxrule"])
    assert o.code == 0, o.stderr
    lines = o.stdout.splitlines()
    assert len(lines) == 3 and lines[2] == "(no parse)" and "lines [3]" in o.stderr
    assert lines[0].startswith("(TOP (S (NP (DT The) (NN cat))") and "|<" not in o.stdout
    assert "(NP (DT the) (JJ big) (JJ red) (NN dog))" in lines[0]
    assert "Zorro" in lines[1] and "(. .)" in lines[1] and "\t" not in o.stdout
    rows = scores.read_text().splitlines()
    assert rows[0] == "line\tparsed\tscore\tlog_prob" and rows[3].startswith("3\t0\t")


def test_yield_and_score_round_trip(tb):
    d, tmp = tb
    out, _ = _grammar(tb)
    o = run_cli(["treebank", "yield", d, "--max-length", "5"])
    assert o.stdout.splitlines() == ["The dog barked loudly .", "the dog walked .",
                                     "The cat sat .", "The dog barked loudly ."]
    sents = tmp / "s.txt"
    sents.write_text(o.stdout)
    parsed = tmp / "p.txt"
    p = run_cli(["pcfg", "parse", out, sents])
    parsed.write_text(p.stdout)
    s = run_cli(["treebank", "score", d, parsed, "--max-length", "5", "--json"])
    assert s.code == 0, s.stderr
    r = json.loads(s.stdout)
    assert r["sentences"] == 4 and r["skipped_long"] == 1 and r["failed"] == 0
    assert r["f1"] == 1.0 and r["exact_match"] == 1.0
    text = run_cli(["treebank", "score", d, parsed, "--max-length", "5"]).stdout
    assert "F1 100.00" in text


@pytest.mark.parametrize("content,line", [
    ("( (S (NP (DT a)) )\n", 1),          # unbalanced
    ("( (S (NN a)) )\n( (S (NN b)))\n)\n", 3),   # stray ')'
    ("", None),                              # empty file
])
def test_malformed_trees_leave_no_grammar(tmp_path, content, line):
    bad = tmp_path / "bad.mrg"
    bad.write_text(content)
    out = tmp_path / "g.lt"
    o = run_cli(["treebank", "grammar", bad, "--out", out], watch=tmp_path)
    assert_clean_error(o, f"{bad}:{line}:" if line else str(bad))
    assert not out.exists()


def test_bad_option_values_are_one_line_errors(tb):
    d, tmp = tb
    for opt, val in (("--markov", "two"), ("--markov", "-1"), ("--unk-threshold", "-2")):
        o = run_cli(["treebank", "grammar", d, "--out", tmp / "g.lt", opt, val], watch=tmp)
        assert_clean_error(o, opt)
    o = run_cli(["treebank", "grammar", tmp / "nothere", "--out", tmp / "g.lt"], watch=tmp)
    assert_clean_error(o, "nothere")
    o = run_cli(["treebank", "grammar", d, "--out", tmp / "g.lt", "--start", "NP"], watch=tmp)
    assert_clean_error(o, "start", "NP")


def test_max_length_is_checked_before_parsing(tb):
    out, _ = _grammar(tb)
    d, tmp = tb
    sents = tmp / "s.txt"
    sents.write_text("The cat sat .\nThe dog barked loudly at the cat .\n")
    o = run_cli(["pcfg", "parse", out, sents, "--max-length", "5", "--scores",
                 tmp / "sc.tsv"], watch=tmp)
    assert_clean_error(o, f"{sents}:2:", "--max-length")
    assert o.stdout == ""
    assert_clean_error(run_cli(["pcfg", "parse", out, sents, "--decode", "best"]),
                       "--decode")


def test_score_errors_name_file_and_line(tb):
    d, tmp = tb
    parsed = tmp / "p.txt"
    parsed.write_text("(S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .))\n")
    assert_clean_error(run_cli(["treebank", "score", d, parsed]), str(parsed), "1 parsed")
    parsed.write_text("(S (NP (DT The) (NN cat)) (VP (VBD barked) (ADVP (RB loudly))) "
                      "(. .))\n" + "(no parse)\n" * 4)
    assert_clean_error(run_cli(["treebank", "score", d, parsed]), f"{parsed}:1:", "word 2")
    parsed.write_text("(S (NN a)\n")
    assert_clean_error(run_cli(["treebank", "score", d, parsed]), f"{parsed}:1:")


@pytest.mark.slow
@pytest.mark.skipif(not WSJ.exists(), reason="WSJ sample not present")
def test_wsj_train_parse_score(tmp_path):
    files = sorted(WSJ.glob("wsj_00[0-3]*.mrg"))
    out = tmp_path / "g.lt"
    assert run_cli(["treebank", "grammar", *files[:-3], "--out", out]).code == 0
    test = files[-3:]
    y = run_cli(["treebank", "yield", *test, "--max-length", "15"])
    sents = tmp_path / "s.txt"
    sents.write_text(y.stdout)
    p = run_cli(["pcfg", "parse", out, sents])
    parsed = tmp_path / "p.txt"
    parsed.write_text(p.stdout)
    r = json.loads(run_cli(["treebank", "score", *test, parsed, "--max-length", "15",
                            "--json"]).stdout)
    assert r["sentences"] == len(y.stdout.splitlines()) > 5
    assert r["failed"] <= r["sentences"] // 10 and r["f1"] > 0.6  # a small grammar


def test_hdp_smoothing_with_parent_annotation(tb):
    out, o = _grammar(tb, "--smoothing", "hdp", "--parent", "--iters", "5", "--seed", "3")
    g = read_grammar(out)
    assert "NP^S" in g.nonterminals and "NP^S|<JJ>" not in g.nonterminals
    assert any(r.lhs == "NP^PP" for r in g.rules)
    theta = g.probabilities()
    for lhs in ("NP^S", "S", "VP^S"):
        assert abs(theta[g.lhs_index == g.nt_index[lhs]].sum() - 1) < 1e-9
    again, _ = _grammar(tb, "--smoothing", "hdp", "--parent", "--iters", "5", "--seed", "3")
    assert again.read_text() == out.read_text()
    d, tmp = tb
    sents = tmp / "s.txt"
    sents.write_text("The cat barked at the big red dog .\n")
    p = run_cli(["pcfg", "parse", out, sents])
    assert p.code == 0 and "^" not in p.stdout.replace("(. .)", "") and "|<" not in p.stdout
    assert p.stdout.startswith("(TOP (S (NP (DT The) (NN cat))")


def test_collins_smoothing_and_parent_only(tb):
    out, _ = _grammar(tb, "--smoothing", "collins", "--collins-b", "0.5", "--parent",
                      "--extra", "0")
    plain, _ = _grammar(tb, "--parent")
    g, g0 = read_grammar(out), read_grammar(plain)
    assert {(r.lhs, r.rhs) for r in g.rules} == {(r.lhs, r.rhs) for r in g0.rules}


@pytest.mark.parametrize("opt,val", [
    ("--smoothing", "foo"), ("--iters", "0"), ("--iters", "-3"), ("--seed", "-1"),
    ("--collins-b", "-1"), ("--collins-b", "0"), ("--extra", "-2"), ("--iters", "many"),
])
def test_bad_smoothing_options_give_one_line(tb, opt, val):
    d, tmp = tb
    o = run_cli(["treebank", "grammar", d, "--out", tmp / "g.lt", "--smoothing", "hdp",
                 opt, val], watch=tmp)
    assert_clean_error(o, opt)


def test_smoothing_needs_right_factoring(tb):
    d, tmp = tb
    o = run_cli(["treebank", "grammar", d, "--out", tmp / "g.lt", "--smoothing", "collins",
                 "--factor", "left"], watch=tmp)
    assert_clean_error(o, "--factor", "left")
