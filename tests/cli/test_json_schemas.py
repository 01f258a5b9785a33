"""Every JSON output names its format and the strgm version, and validates against the
JSON Schema of its format in strgm/schemas/ (which must itself be a valid schema)."""

import json
from pathlib import Path

import pytest

from tests.robustness.harness import run_cli

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = Path(__file__).resolve().parents[2] / "strgm" / "schemas"  # package data
WORDS = "\n".join(["k a t", "t a k", "a t a", "k a k a", "t a"] * 3) + "\n"
MRG = """( (S (NP (DT the) (NN dog)) (VP (VBD barked))) )
( (S (NP (DT a) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))) )
"""
GRAMMAR = "S --> A B\nS --> A\nA --> a\nB --> b\nA --> A A\n"
PARADIGM = "R1\tkat\nR1 PL\tkatz\nR2\tmap\nR2 PL\tmaps\nR3\tdog\nR3 PL\tdogz\n"
#: formats past version 1 (strgm-train 2: ``holdout`` is the answer printed)
VERSIONS = {"strgm-train": 2}


def _validate(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads((SCHEMAS / f"{doc['format']}.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["strgm_version"] and doc["version"] == VERSIONS.get(doc["format"], 1)
    return doc


def test_every_schema_is_a_valid_schema():
    files = sorted(SCHEMAS.glob("*.schema.json"))
    assert files
    for f in files:
        s = json.loads(f.read_text())
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["properties"]["format"]["const"] + ".schema.json" == f.name


def test_hmm_outputs(tmp_path):
    (tmp_path / "s.txt").write_text(WORDS)
    assert run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                    "--iters", "3", "--states", "4", "--json", tmp_path / "t.json"]).code == 0
    assert _validate(tmp_path / "t.json")["format"] == "strgm-hmm-trace"
    assert run_cli(["hmm", "score", tmp_path / "m.json", tmp_path / "s.txt", "--json",
                    tmp_path / "sc.json"]).code == 0
    assert _validate(tmp_path / "sc.json")["format"] == "strgm-hmm-scores"


def test_grammar_traces(tmp_path):
    (tmp_path / "a.mrg").write_text(MRG)
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "m.json",
                 "--iters", "2", "--trace-json", tmp_path / "t.json", "--quiet"])
    assert o.code == 0, o.stderr
    _validate(tmp_path / "t.json")
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text("a b\na\na a b\n")
    o = run_cli(["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--iters", "2",
                 "--out", tmp_path / "o.lt", "--trace-json", tmp_path / "p.json", "--quiet"])
    assert o.code == 0, o.stderr
    assert _validate(tmp_path / "p.json")["trace"]


def test_infer_and_train(tmp_path):
    # the 6-word paradigm (2 held out, one with an unseen morpheme) instead of
    # example:english-verbs: the same document keys, in a third of the time
    (tmp_path / "w.tsv").write_text(PARADIGM)
    o = run_cli(["infer", tmp_path / "w.tsv", "--holdout", "0.3", "--quiet", "--json",
                 tmp_path / "i.json"])
    assert o.code == 0, o.stderr
    assert _validate(tmp_path / "i.json")["holdout"]["n"] > 0
    o = run_cli(["train", tmp_path / "w.tsv", "--em-iters", "1", "--family", "edit",
                 "--no-tier", "--quiet", "--json", tmp_path / "t.json"])
    assert o.code == 0, o.stderr
    assert _validate(tmp_path / "t.json")["trace"]


def test_treebank_score(tmp_path):
    assert run_cli(["treebank", "grammar", "example:trees", "--out", tmp_path / "g.lt"]).code == 0
    y = run_cli(["treebank", "yield", "example:trees"])
    (tmp_path / "s.txt").write_text(y.stdout)
    p = run_cli(["pcfg", "parse", tmp_path / "g.lt", tmp_path / "s.txt"])
    (tmp_path / "p.txt").write_text(p.stdout)
    s = run_cli(["treebank", "score", "example:trees", tmp_path / "p.txt", "--json"])
    assert s.code == 0, s.stderr
    (tmp_path / "score.json").write_text(s.stdout)
    assert _validate(tmp_path / "score.json")["f1"] > 0.9


def test_rules_and_beliefs(tmp_path):
    (tmp_path / "w.tsv").write_text(PARADIGM)
    o = run_cli(["rules", tmp_path / "w.tsv", "--json", tmp_path / "r.json"])
    assert o.code == 0, o.stderr
    _validate(tmp_path / "r.json")
    o = run_cli(["infer", tmp_path / "w.tsv", "--quiet", "--save-beliefs", tmp_path / "b"])
    assert o.code == 0, o.stderr
    o = run_cli(["beliefs", tmp_path / "b", "--top", "2", "--json", tmp_path / "q.json"])
    assert o.code == 0, o.stderr
    assert _validate(tmp_path / "q.json")["beliefs"]


def test_negative_control_a_document_without_envelope_fails(tmp_path):
    schema = json.loads((SCHEMAS / "strgm-hmm-scores.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"per_symbol": -1.0, "unseen_tokens": 0,
                             "posterior_mean": False, "log_likelihoods": [-1.0]}, schema)
