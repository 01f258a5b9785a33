import json
import os

import pytest

from strgm.cli import main

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data",
                      "phonology")

TOY = ("R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\nR3\tsim\nR3 PAST\tsimd\n"
       "R4\tliv\nR4 PAST\tlivd\n")


def test_infer_prints_tables_and_writes_json(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY + "R5\tbʌz\nR5 PAST\t?\n", encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["infer", str(f), "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Underlying forms" in text and "Predicted surface forms" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["method"] == "pruned"
    assert data["morphemes"]["PAST"][0][0] == "d"
    assert data["morphemes"]["R3"][0][0] == "sim"
    assert data["words"]["R5 PAST"][0][0] == "bʌzd"
    assert {"inference_seconds", "iterations", "converged"} <= set(data["timing"])


def test_infer_holdout_reports_accuracy(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    out = tmp_path / "o.json"
    assert main(["infer", str(f), "--holdout", "0.25", "--seed", "1", "--json", str(out),
                 "--quiet"]) == 0
    assert "exact match" in capsys.readouterr().out
    h = json.loads(out.read_text(encoding="utf-8"))["holdout"]
    assert h["n"] == 2 and 0.0 <= h["exact_match"] <= 1.0 and h["mean_neg_logp"] >= 0


def test_bad_input_exits_2_with_located_message(tmp_path, capsys):
    f = tmp_path / "bad.tsv"
    f.write_text("R1\tro\nR1 PAST\trod\tx\n", encoding="utf-8")
    assert main(["infer", str(f), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "strgm: error:" in err and "bad.tsv:2:" in err


def test_graph_dot_export(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    assert main(["graph", str(f), "--dot", "-"]) == 0
    assert capsys.readouterr().out.startswith("graph strgm {")


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
def test_textbook_english_roots_recover_bare_forms(tmp_path):
    """Acceptance: the 1-best UR of >= 90% of the roots equals their bare surface form."""
    path = os.path.join(SHARED, "Odden_1.12_English.tsv")
    out = tmp_path / "en.json"
    assert main(["infer", path, "--method", "pruned", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    bare = {}
    for line in open(path, encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            m, s = line.rstrip("\n").split("\t")
            if len(m.split()) == 1:
                bare[m] = s
    hits = sum(data["morphemes"][r][0][0] == s for r, s in bare.items())
    assert hits / len(bare) >= 0.9


@pytest.mark.parametrize("argv,projection", [
    (["--method", "ep", "--order", "2"], "gradient"),
    (["--method", "ep", "--order", "1", "--projection", "closed"], "closed"),
    (["--method", "pep", "--lambda", "0.02"], "prox"),
    (["--method", "pep", "--projection", "grow"], "grow")])
def test_infer_ep_and_pep_options_reach_the_engine(tmp_path, argv, projection):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    out = tmp_path / "o.json"
    assert main(["infer", str(f), *argv, "--max-iters", "2", "--json", str(out),
                 "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["method"] == argv[1]
    assert data["settings"]["projection"] == projection
    if "--lambda" in argv:
        assert data["settings"]["lam"] == 0.02
    if "--order" in argv:
        assert data["settings"]["order"] == int(argv[3])


def test_infer_rejects_a_projection_of_the_other_method(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    assert main(["infer", str(f), "--method", "ep", "--projection", "prox", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "projection 'prox' is not available for 'ep'" in err and "gradient" in err
