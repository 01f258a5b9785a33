"""``strgm rules`` and ``strgm train --family``: the learned cascade is printed, saved
and read back with the same predictions; the family choice reaches ``--json``."""

import json

import pytest

from strgm.cli import main
from strgm.errors import InconsistentEvidenceError
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


@pytest.mark.slow  # 1.5-3 min on a 2-core machine; `pytest -m slow` runs it
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
    edit_out = capsys.readouterr().out
    assert "exact match" in edit_out and "not scored" not in edit_out


def test_the_cascade_is_a_phonology_factor_with_the_same_predictions(tmp_path):
    """The learned cascade as the factor graph's phonology: pruned BP on the training
    words and the usual prediction from morpheme beliefs give the grammar's own forms;
    a cascade without its rules (negative control) cannot even explain the training
    words (a deterministic phonology makes them inconsistent)."""
    from dataclasses import replace

    from strgm.datasets.paradigm import read_paradigm
    from strgm.inference import infer
    from strgm.models.prediction import predict
    from strgm.models.phonology import build_phonology_model
    from strgm.models.rule_phonology import phonology_fst, train_rule_phonology

    para = read_paradigm(str(_file(tmp_path)))
    held = ["R9 GEN", "R10 GEN", "R2 GEN"]
    run = train_rule_phonology(para, held)
    g = run.grammar
    assert all(g.predict(e.morphemes) == "".join(e.segments) for e in run.held_out)
    alphabet = para.alphabet()
    def graph_predictions(grammar):
        fst = phonology_fst(grammar, alphabet)
        pm = build_phonology_model(para, alphabet=alphabet, phonology=fst, hidden=held)
        res = infer(pm.graph, "pruned", max_iters=3)
        beliefs = predict(fst, alphabet, res, pm, run.held_out)
        return {k: b.kbest(1)[0][0] for k, b in beliefs.items()}
    assert graph_predictions(g) == {e.key: "".join(e.segments) for e in run.held_out}
    with pytest.raises(InconsistentEvidenceError):
        graph_predictions(replace(g, rules=[]))


def test_the_family_choice_is_the_laplace_mixture_of_the_two_families(tmp_path):
    """R5 is irregular in the training words (PL tuu, GEN kii): its held-out bare form
    has c = 2 related training words, both wrong for the rules, so ε = 3/4 and the edit
    phonology answers; a regular word answers with the rules (ε < ½). Every record is
    checked against c, e recomputed by brute force from the grammar's own forms."""
    import math

    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.rule_phonology import train_rule_phonology
    from strgm.workflows.family_choice import combine

    f = tmp_path / "irr.tsv"
    f.write_text(DEVOICING.replace("R5 PL\tnoki", "R5 PL\ttuu").replace("R5 GEN\tnoka",
                                                                        "R5 GEN\tkii"),
                 encoding="utf-8")
    para = read_paradigm(str(f))
    held = ["R9 PL", "R5", "R3 GEN"]
    run = train_rule_phonology(para, held)
    g = run.grammar
    gold = {"R9 PL": "dobi", "R5": "nok", "R3 GEN": "baza"}
    edit = {k: {"gold": v, "predicted": "x", "p_gold": 0.25} for k, v in gold.items()}
    choice = combine(run, edit)
    train = [e for e in para.observed if e.key not in held]
    for key, w in choice.per_word.items():
        ms = set(next(e for e in para.entries if e.key == key).morphemes)
        related = [e for e in train if ms & set(e.morphemes)]
        wrong = sum(g.predict(e.morphemes) != "".join(e.segments) for e in related)
        eps = (wrong + 1) / (len(related) + 2)
        assert (w["related_words"], w["rules_wrong_on"]) == (len(related), wrong)
        assert w["family"] == ("rules" if eps < 0.5 else "edit")
        q = dict(zip(w["rules_forms"], w["rules_weights"]))
        assert math.isclose(sum(q.values()), 1.0) and w["rules"] == w["rules_forms"][0]
        p = (1 - eps) * q.get(gold[key], 0.0) + eps * 0.25
        assert math.isclose(w["neg_logp"], -math.log(p))
    assert choice.per_word["R5"]["family"] == "edit"
    assert choice.per_word["R5"]["epsilon"] == 0.75
    assert choice.per_word["R9 PL"]["family"] == "rules"


def test_rules_search_options_reach_the_search(tmp_path, capsys):
    """--window 1 --beam 1 --ur-cost 0: the description length printed is the rules'
    cost plus λ per wrong word only (no lexicon term), and a saved grammar with a
    context of width 2 (the default window) round-trips through --grammar."""
    f = _file(tmp_path)
    assert main(["rules", str(f), "--window", "1", "--beam", "1", "--ur-cost", "0",
                 "--quiet"]) == 0
    plain = capsys.readouterr().out
    g = tmp_path / "g.json"
    assert main(["rules", str(f), "--save", str(g), "--quiet"]) == 0
    with_lexicon = capsys.readouterr().out
    dl = [float(t.split("description length ")[1].split(";")[0])
          for t in (plain, with_lexicon)]
    saved = json.loads(g.read_text(encoding="utf-8"))
    lexicon = sum(len(u) for u in saved["underlying_forms"].values())
    assert dl[1] == pytest.approx(dl[0] + lexicon)  # same rules, μ = 1 per UR segment
    assert all("left2" in r and "right2" in r for r in saved["rules"])
