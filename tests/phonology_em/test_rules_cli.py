"""``strgm rules`` and ``strgm train --family``: the learned cascade is printed, saved
and read back with the same predictions; the family choice reaches ``--json``."""

import json

from strgm.cli import main
from strgm.models.rule_phonology import grammar_from_dict

DEVOICING = "".join(
    f"{r}\t{s[:-1] + {'b': 'p', 'd': 't', 'z': 's'}.get(s[-1], s[-1])}\n{r} PL\t{s}i\n"
    f"{r} GEN\t{s}a\n"
    for r, s in [("R1", "rob"), ("R2", "kad"), ("R3", "baz"), ("R4", "sat"), ("R5", "nok"),
                 ("R6", "tez"), ("R7", "gud"), ("R8", "kas"), ("R9", "dob"), ("R10", "pit"),
                 ("R11", "mub"), ("R12", "lid")])


def _file(tmp_path):
    f = tmp_path / "dev.tsv"
    f.write_text(DEVOICING, encoding="utf-8")
    return f


def test_rules_learns_saves_and_reuses_a_grammar(tmp_path, capsys):
    f = _file(tmp_path)
    g, js = tmp_path / "g.json", tmp_path / "out.json"
    assert main(["rules", str(f), "--holdout", "0.15", "--seed", "1", "--save", str(g),
                 "--json", str(js), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "[−voice] / _#" in text and "exact match: 100.0%" in text
    saved = json.loads(g.read_text(encoding="utf-8"))
    grammar = grammar_from_dict(saved, str(g))
    assert "".join(grammar.symbols[a - 1] for a in grammar.urs["R9"]) == "dob"
    first = json.loads(js.read_text(encoding="utf-8"))["holdout"]
    js2 = tmp_path / "again.json"
    assert main(["rules", str(f), "--holdout", "0.15", "--seed", "1", "--grammar", str(g),
                 "--json", str(js2), "--quiet"]) == 0
    assert json.loads(js2.read_text(encoding="utf-8"))["holdout"] == first


def test_train_family_auto_reports_rules_and_the_choice(tmp_path, capsys):
    f = _file(tmp_path)
    js = tmp_path / "t.json"
    assert main(["train", str(f), "--em-iters", "1", "--holdout", "0.15", "--seed", "1",
                 "--json", str(js), "--quiet", "--show-processes", "0"]) == 0
    out = json.loads(js.read_text(encoding="utf-8"))
    assert out["rules"]["format"] == "strgm-rules-v1"
    words = out["family_choice"]["per_word"]
    assert set(words) == set(out["holdout"]["per_word"])
    assert all(w["family"] in ("rules", "edit") for w in words.values())
    assert "families chosen per held-out word" in capsys.readouterr().out
    js_edit = tmp_path / "e.json"
    assert main(["train", str(f), "--em-iters", "1", "--holdout", "0.15", "--seed", "1",
                 "--family", "edit", "--json", str(js_edit), "--quiet",
                 "--show-processes", "0"]) == 0
    assert "rules" not in json.loads(js_edit.read_text(encoding="utf-8"))
