"""``strgm plot KIND INPUT... --out FILE``: every picture from the files the commands
write; bad inputs and options are one-line errors before anything is drawn."""

import json

import pytest

from tests.robustness.harness import assert_clean_error, run_cli

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"
WORDS = "R1\tkat\nR1 PL\tkatz\nR2\tdog\nR2 PL\tdogz\nR3\tpit\nR3 PL\tpits\n"
TREES = "(S (NP (DT the) (NN dog)) (VP (VBD barked)))\n(S (NP (NNP Kim)) (VP (VBD ran)))\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("draw")
    (d / "w.tsv").write_text(WORDS)
    (d / "t.mrg").write_text(TREES)
    for name, extra in (("bp", []), ("pep", ["--method", "pep", "--max-iters", "2"])):
        o = run_cli(["infer", d / "w.tsv", "--holdout", "0.3", "--json", d / f"{name}.json",
                     "--quiet", *extra])
        assert o.code == 0, o.stderr
    o = run_cli(["train", d / "w.tsv", "--holdout", "0.3", "--em-iters", "1", "--no-tier",
                 "--json", d / "train.json", "--quiet"])
    assert o.code == 0, o.stderr
    return d


@pytest.mark.parametrize("kind,inputs", [
    ("tradeoff", ["bp.json", "pep.json"]), ("predictions", ["train.json"]),
    ("convergence", ["bp.json", "train.json"]), ("urs", ["bp.json"]), ("tree", ["t.mrg"])])
def test_each_kind_draws(runs, tmp_path, kind, inputs):
    out = tmp_path / f"{kind}.png"
    o = run_cli(["plot", kind, *[runs / f for f in inputs], "--out", out])
    assert o.code == 0, o.stderr
    assert out.read_bytes()[:8] == PNG


def test_infer_json_records_the_belief_changes(runs):
    doc = json.loads((runs / "bp.json").read_text())
    assert len(doc["timing"]["belief_changes"]) == doc["timing"]["iterations"]


def test_urs_default_is_the_least_certain_morpheme():
    from strgm.cli.draw import _urs

    doc = {"morphemes": {"A": [["a", 0.9]], "B": [["b", 0.4], ["c", 0.3]], "C": [["x", 0.6]]}}
    assert _urs(doc, "f.json", None, 5) == ("B", [["b", 0.4], ["c", 0.3]])
    assert _urs(doc, "f.json", "C", 5)[0] == "C"  # the choice is the data's, not the order


@pytest.mark.parametrize("args,words", [
    (["urs", "bp.json", "--morpheme", "NOPE"], ["--morpheme", "NOPE"]),
    (["tree", "t.mrg", "--index", "3"], ["--index", "2 tree"]),
    (["predictions", "bp.json", "pep.json"], ["one file"]),
    (["tradeoff", "t.mrg"], ["t.mrg", "not JSON"]),
    (["predictions", "nothing.json"], ["nothing.json"]),
])
def test_bad_inputs_are_one_line_errors(runs, tmp_path, args, words):
    args = [runs / a if a.endswith((".json", ".mrg")) else a for a in args]
    o = run_cli(["plot", *args, "--out", tmp_path / "x.png"], watch=tmp_path)
    assert_clean_error(o, *words)


def test_a_file_without_held_out_scores(runs, tmp_path):
    doc = json.loads((runs / "bp.json").read_text())
    del doc["holdout"]
    (tmp_path / "n.json").write_text(json.dumps(doc))
    o = run_cli(["plot", "tradeoff", tmp_path / "n.json", "--out", tmp_path / "x.png"],
                watch=tmp_path)
    assert_clean_error(o, "n.json", "--holdout")


def test_bad_out_path_is_refused_first(runs, tmp_path):
    o = run_cli(["plot", "urs", runs / "bp.json", "--out", tmp_path / "x.xyz"], watch=tmp_path)
    assert_clean_error(o, "--out", "x.xyz")
