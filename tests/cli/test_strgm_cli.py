import json
import os

import pytest

from strgm.cli import main
from strgm.errors import InputError
from strgm.inference.ep_settings import PROX_LAM
from strgm.inference.methods import PEP_TOL

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


# R6 PAST is the only word with χ: held out, its true form has p = 0 (never an error)
HOLDOUT_TOY = TOY + "R6 PAST\tχid\n"


def _seed_holding_out(paradigm_path, fraction, wanted):
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import holdout_split

    para = read_paradigm(str(paradigm_path))
    for seed in range(500):
        if set(holdout_split(para, fraction, seed)) == wanted:
            return seed
    raise AssertionError(f"no seed holds out {wanted}")


def test_infer_holdout_reports_accuracy(tmp_path, capsys):
    """Held out: R3 PAST (predictable from R3 and the other PAST forms: exact) and R6 PAST
    (a segment seen in no training word: p = 0, a miss), so exact match is 1/2 and the
    mean -log p is infinite; the reported figures must agree with the per-word results."""
    f = tmp_path / "toy.tsv"
    f.write_text(HOLDOUT_TOY, encoding="utf-8")
    seed = _seed_holding_out(f, 0.2, {"R3 PAST", "R6 PAST"})
    out = tmp_path / "o.json"
    assert main(["infer", str(f), "--holdout", "0.2", "--seed", str(seed), "--json",
                 str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "held-out words: 2   exact match: 50.0%" in text
    assert "mean -log p(true form): inf nats" in text and "R6 PAST" in text
    raw = out.read_text(encoding="utf-8")
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    h = json.loads(raw)["holdout"]
    per = h["per_word"]
    assert h["n"] == 2 and set(per) == {"R3 PAST", "R6 PAST"}
    assert per["R3 PAST"] == {**per["R3 PAST"], "gold": "simd", "predicted": "simd",
                              "exact": True}
    assert 0.5 < per["R3 PAST"]["p_gold"] <= 1
    assert per["R6 PAST"]["p_gold"] == 0 and per["R6 PAST"]["neg_logp"] == "Infinity"
    assert per["R6 PAST"]["unseen"] == ["χ"] and per["R6 PAST"]["exact"] is False
    recomputed = sum(w["predicted"] == w["gold"] for w in per.values()) / len(per)
    assert h["exact_match"] == recomputed == 0.5
    assert h["mean_neg_logp"] == "Infinity"
    # the printed prediction table marks the same words right and wrong
    rows = {ln.split("  ")[0]: ln for ln in text.splitlines() if ln.startswith("R")}
    assert rows["R3 PAST"].rstrip().endswith("✓") and rows["R6 PAST"].rstrip().endswith("✗")


def test_score_holdout_scores_an_unseen_segment_as_p_zero():
    from strgm.datasets.paradigm import Paradigm
    from strgm.inference import infer
    from strgm.models.phonology import build_phonology_model, score_holdout

    para = Paradigm.from_pairs([(("R1",), "ro"), (("R1", "PL"), "rod"), (("R2",), "ʃo"),
                                (("R2", "PL"), "ʃod"), (("R3", "PL"), "ɣad")])
    gold = {"R2 PL": "ʃod", "R3 PL": "ɣad"}
    model = build_phonology_model(para, hidden=gold)
    assert "ɣ" not in model.alphabet
    s = score_holdout(infer(model.graph, "pruned").beliefs(), model, gold)
    assert s.n == 2 and s.exact_match == 0.5 and s.mean_neg_logp == float("inf")
    assert s.unseen == ["R3 PL"] and s.per_word["R3 PL"]["p_gold"] == 0.0
    assert s.per_word["R2 PL"]["predicted"] == "ʃod" and s.per_word["R2 PL"]["exact"]


def test_bad_input_exits_2_with_located_message(tmp_path, capsys):
    f = tmp_path / "bad.tsv"
    f.write_text("R1\tro\nR1 PAST\trod\tx\n", encoding="utf-8")
    assert main(["infer", str(f), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "strgm: error:" in err and "bad.tsv:2:" in err


def _parse_dot(text):
    """({node: attributes}, {(factor, variable)}) of strgm's dot output."""
    import re

    assert text.startswith("graph strgm {") and text.rstrip().endswith("}")
    nodes, edges = {}, set()
    for line in text.splitlines()[1:-1]:
        line = line.strip()
        if line.startswith(("subgraph ", "{ edge [style=invis]", "graph [")):
            continue  # the layout: clusters by morpheme and word, invisible rank edges
        if m := re.fullmatch(r'"([vf]):(.*?)" -- "([vf]):(.*?)"(?: \[constraint=false\])?;',
                             line):
            assert (m[1], m[3]) == ("f", "v"), line
            edges.add((m[2], m[4]))
        elif m := re.fullmatch(r'"([vf]):(.*?)" \[(.*)\];', line):
            nodes[(m[1], m[2])] = m[3]
        else:
            assert line == "node [fontname=Helvetica];", line
    return nodes, edges


def test_graph_dot_export(tmp_path, capsys):
    """Every variable and factor of the phonology graph, with its edges: per morpheme m
    M:m and prior:m; per word w, S:w (grey, labelled with its surface) and phonology:w
    joining S:w to its UR, which is M:m for a one-morpheme word and otherwise U:w built by
    concat:w from the morphemes in order."""
    f = tmp_path / "toy.tsv"
    f.write_text(TOY + "R5 PAST\t?\n", encoding="utf-8")
    assert main(["graph", str(f), "--dot", "-"]) == 0
    nodes, edges = _parse_dot(capsys.readouterr().out)
    words = [ln.split("\t") for ln in (TOY + "R5 PAST\t?\n").splitlines()]
    morphemes = {m for key, _ in words for m in key.split()}
    want_vars, want_edges, want_factors = set(), set(), set()
    for m in morphemes:
        want_vars.add(f"M:{m}")
        want_factors.add(f"prior:{m}")
        want_edges.add((f"prior:{m}", f"M:{m}"))
    for key, surface in words:
        ms = key.split()
        ur = f"M:{ms[0]}" if len(ms) == 1 else f"U:{key}"
        want_vars |= {f"S:{key}", ur}
        want_factors.add(f"phonology:{key}")
        want_edges |= {(f"phonology:{key}", ur), (f"phonology:{key}", f"S:{key}")}
        if len(ms) > 1:
            want_factors.add(f"concat:{key}")
            want_edges |= {(f"concat:{key}", f"M:{m}") for m in ms} | {(f"concat:{key}", ur)}
        attrs = nodes[("v", f"S:{key}")]
        if surface == "?":
            assert "filled" not in attrs
        else:
            assert "filled" in attrs and f"\\n{surface}" in attrs
    assert {n for k, n in nodes if k == "v"} == want_vars
    assert {n for k, n in nodes if k == "f"} == want_factors
    assert edges == want_edges
    # the file written by --dot PATH holds the same text
    dot = tmp_path / "g.dot"
    assert main(["graph", str(f), "--dot", str(dot)]) == 0
    assert f"({len(want_vars)} variables, {len(want_factors)} factors)" in \
        capsys.readouterr().err
    assert _parse_dot(dot.read_text(encoding="utf-8")) == (nodes, edges)


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


def test_infer_pep_takes_the_engine_defaults_and_stops_anytime(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    out = tmp_path / "o.json"
    assert main(["infer", str(f), "--method", "pep", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["settings"]["lam"] == PROX_LAM and data["settings"]["tol"] == PEP_TOL
    assert data["timing"]["stop_reason"] in ("converged", "max_iters")
    assert main(["infer", str(f), "--method", "pep", "--max-seconds", "0", "--max-iters",
                 "50", "--tol", "0", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["timing"]["stop_reason"] == "max_seconds"
    assert data["timing"]["iterations"] == 1
    assert "stopped at the time limit, last change" in capsys.readouterr().out


def test_infer_rejects_a_projection_of_the_other_method(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    assert main(["infer", str(f), "--method", "ep", "--projection", "prox", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "option --projection: projection 'prox' is not available for 'ep'" in err
    assert "gradient" in err and err.count("\n") == 1


def test_infer_passes_max_states_and_max_memory(tmp_path, monkeypatch):
    import strgm.inference as inference

    seen = []
    real = inference.infer

    def spy(graph, method, **kw):
        seen.append(dict(kw))
        kw.pop("max_memory", None)  # the spy only records it
        return real(graph, method, **kw)

    monkeypatch.setattr(inference, "infer", spy)
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    assert main(["infer", str(f), "--max-states", "9000", "--max-memory", "512M",
                 "--quiet"]) == 0
    assert seen[-1]["max_states"] == 9000 and seen[-1]["max_memory"] == 512 << 20
    assert main(["infer", str(f), "--quiet"]) == 0
    assert seen[-1]["max_states"] == 200_000 and "max_memory" not in seen[-1]


def test_infer_runs_with_a_memory_budget(tmp_path, capsys):
    import inspect

    from strgm.inference import infer

    if "max_memory" not in inspect.signature(infer).parameters:
        pytest.skip("strgm.inference.infer has no max_memory keyword yet")
    f = tmp_path / "toy.tsv"
    f.write_text(TOY, encoding="utf-8")
    assert main(["infer", str(f), "--method", "bp", "--max-memory", "1G", "--quiet"]) == 0
    assert "Underlying forms" in capsys.readouterr().out


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
def test_zoque_holdout_with_an_unseen_segment_completes(tmp_path, capsys):
    """Seed 0 holds out a Zoque word whose ɲ occurs in no training word: the run completes
    and reports that word with p = 0 (mean -log p infinite, strict JSON)."""
    out = tmp_path / "z.json"
    assert main(["infer", os.path.join(SHARED, "Roca_25_Zoque.tsv"), "--holdout", "0.1",
                 "--seed", "0", "--json", str(out), "--quiet"]) == 0
    assert "p = 0 for" in capsys.readouterr().out
    h = json.loads(out.read_text(encoding="utf-8"),
                   parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))["holdout"]
    unseen = {k: w for k, w in h["per_word"].items() if "unseen" in w}
    assert unseen and all("ɲ" in w["gold"] and w["p_gold"] == 0 for w in unseen.values())
    assert h["mean_neg_logp"] == "Infinity"
    assert h["exact_match"] == sum(w["exact"] for w in h["per_word"].values()) / h["n"]


def test_every_command_is_registered():
    from strgm.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == {"demo", "infer", "graph", "beliefs", "train", "pcfg", "rules",
                                "treebank", "lexparse", "tsg", "hmm", "plot", "validate"}


def test_infer_paradigm_is_what_infer_prints_and_saves(tmp_path, capsys):
    """The workflow (no argparse, no printing) gives the numbers `strgm infer` writes;
    a holdout may name the words; scores come from the one scorer."""
    from strgm.datasets import read_paradigm
    from strgm.models import score_holdout
    from strgm.workflows import infer_paradigm

    f = tmp_path / "toy.tsv"
    f.write_text(HOLDOUT_TOY, encoding="utf-8")
    seed = _seed_holding_out(f, 0.2, {"R3 PAST", "R6 PAST"})
    out = tmp_path / "o.json"
    assert main(["infer", str(f), "--holdout", "0.2", "--seed", str(seed), "--json",
                 str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    para = read_paradigm(str(f))
    run = infer_paradigm(para, "pruned", holdout=0.2, seed=seed)
    named = infer_paradigm(para, "pruned", holdout=["R6 PAST", "R3 PAST"])
    assert run.gold == named.gold == {"R3 PAST": "simd", "R6 PAST": "χid"}
    for r in (run, named):
        assert r.scores.exact_match == data["holdout"]["exact_match"] == 0.5
        assert {k: w["predicted"] for k, w in r.scores.per_word.items()} == \
            {k: w["predicted"] for k, w in data["holdout"]["per_word"].items()}
        for lab, var in r.model.morpheme_vars.items():
            assert r.result.belief(var).kbest(1)[0][0] == data["morphemes"][lab][0][0]
    again = score_holdout(run.result.beliefs(), run.model, run.gold)
    assert again == run.scores
    assert "R6 PAST" in capsys.readouterr().out
    with pytest.raises(InputError, match="cannot hold out 'R9': not an observed word"):
        infer_paradigm(para, holdout=["R9"])


def test_em_scoring_is_the_same_scorer():
    from strgm.datasets import Paradigm
    from strgm.inference import infer
    from strgm.models import build_phonology_model, score, score_words

    para = Paradigm.from_pairs([(("R1",), "ro"), (("R1", "PL"), "rod"), (("R2",), "ʃo"),
                                (("R2", "PL"), "ʃod"), (("R3", "PL"), "ɣad")])
    gold = {"R2 PL": "ʃod", "R3 PL": "ɣad"}
    model = build_phonology_model(para, hidden=gold)
    res = infer(model.graph, "pruned")
    by_key = {k: res.belief(model.word_vars[k]) for k in gold}
    assert score(by_key, gold, model.alphabet) == \
        score_words(by_key, gold, model.alphabet).to_dict()
