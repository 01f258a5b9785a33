"""``strgm train`` and ``strgm infer --model`` end to end."""

import importlib
import json

import pytest

from strgm.cli import main
from strgm.models.edit_model import PhonologyEditModel


def _synthetic_tsv(path):
    """The 32-word synthetic paradigm of test_synthetic_phonology.py as a paradigm TSV."""
    mod = importlib.import_module("benchmarks.phonology.synthetic")
    para, _, _, _ = mod.make_paradigm(32, 1, "small")
    path.write_text("".join(f"{' '.join(e.morphemes)}\t{e.surface}\n" for e in para.entries),
                    encoding="utf-8")


@pytest.mark.parametrize("method", ["ep", pytest.param("pep", marks=pytest.mark.slow)])
def test_train_saves_a_model_that_infer_uses(tmp_path, capsys, method):
    f = tmp_path / "synthetic.tsv"
    _synthetic_tsv(f)
    out, model, ck = tmp_path / "train.json", tmp_path / "model.json", tmp_path / "ck.json"
    assert main(["train", str(f), "--method", method, "--em-iters", "2", "--holdout", "0.2",
                 "--seed", "1", "--json", str(out), "--save", str(model),
                 "--checkpoint", str(ck), "--quiet", "--transparent", "none"]) == 0
    text = capsys.readouterr().out
    assert "EM 2: objective" in text and "exact match" in text
    assert "Underlying forms" in text and "Held-out predictions" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    morphemes = {m for line in f.read_text(encoding="utf-8").splitlines()
                 for m in line.split("\t")[0].split()}
    urs = data["underlying_forms"]
    assert len(urs) >= len(morphemes) - 2 and set(urs) <= morphemes
    assert all(len(v) >= 1 and 0 < v[0][1] <= 1 for v in urs.values())
    obj = [e["objective"] for e in data["trace"]]
    assert len(obj) == 3 and obj[-1] > obj[0]
    assert data["holdout"]["n"] == 6
    trained = PhonologyEditModel.load(str(model))
    assert json.loads(ck.read_text(encoding="utf-8"))["iteration"] == 2
    # the saved phonology is what `infer --model` composes into the graph
    io = tmp_path / "infer.json"
    assert main(["infer", str(f), "--model", str(model), "--holdout", "0.2", "--seed", "1",
                 "--json", str(io), "--quiet"]) == 0
    h = json.loads(io.read_text(encoding="utf-8"))["holdout"]
    untrained = tmp_path / "untrained.json"
    assert main(["infer", str(f), "--holdout", "0.2", "--seed", "1", "--json",
                 str(untrained), "--quiet"]) == 0
    h0 = json.loads(untrained.read_text(encoding="utf-8"))["holdout"]
    assert h["n"] == h0["n"] == 6
    # only one of these six held-out words alternates (dent+de → dentte): the learned
    # phonology must raise the probability of the true forms (h == h0 if --model were
    # ignored) without losing any word
    assert h["mean_neg_logp"] < h0["mean_neg_logp"] - 0.1, (h["per_word"], h0["per_word"])
    if method == "ep":  # with a PEP E-step and 2 EM iterations one word is lost (4/6)
        assert h["exact_match"] >= h0["exact_match"]
    assert (h["per_word"]["R001 PAST"]["p_gold"]
            > 10 * h0["per_word"]["R001 PAST"]["p_gold"])
    assert trained.alphabet.segment_symbols


def test_infer_rejects_a_missing_model(tmp_path, capsys):
    f = tmp_path / "synthetic.tsv"
    _synthetic_tsv(f)
    rc = main(["infer", str(f), "--model", str(tmp_path / "nope.json"), "--quiet"])
    assert rc == 2 and "nope.json" in capsys.readouterr().err


def test_context_options_reach_the_saved_model(tmp_path, capsys):
    """--right-window 2 / --right-classes / --no-tier are stored in the model, and a
    window-2 model loads back and serves `infer --model`."""
    f = tmp_path / "toy.tsv"
    f.write_text("R1\tro\nR1 PAST\trod\nR2\tʃok\nR2 PAST\tʃokt\nR3\tsim\nR3 PAST\tsimd\n",
                 encoding="utf-8")
    model = tmp_path / "m.json"
    assert main(["train", str(f), "--em-iters", "1", "--right-window", "2",
                 "--right-classes", "major", "--no-tier", "--save", str(model),
                 "--quiet"]) == 0
    saved = json.loads(model.read_text(encoding="utf-8"))
    assert saved["spec"] == {"left_input": 1, "right_input": 2, "left_output": 1,
                             "tier": False}
    assert saved["classes"]["right_context"] == "major"
    m = PhonologyEditModel.load(str(model))
    assert any(n[0].endswith("R2") for n in m.structure.feature_names)
    capsys.readouterr()
    assert main(["infer", str(f), "--model", str(model), "--quiet"]) == 0
    assert "Underlying forms" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", str(f), "--right-window", "3"])


TINY = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\n"


def test_em_iters_0_evaluates_the_initial_model_without_training(tmp_path, capsys):
    """--em-iters 0: one E-step (objective of θ₀), no M-step; the saved θ is θ₀."""
    import numpy as np

    from strgm.cli.train import initial_model
    from strgm.datasets.paradigm import read_paradigm

    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    model, out = tmp_path / "m.json", tmp_path / "t.json"
    assert main(["train", str(f), "--em-iters", "0", "--save", str(model), "--json", str(out),
                 "--quiet"]) == 0
    said = capsys.readouterr()
    assert "EM 0: objective" in said.out
    assert "strgm train:" not in said.err  # --quiet: no plan line (see the test below)
    trace = json.loads(out.read_text(encoding="utf-8"))["trace"]
    assert [e["iteration"] for e in trace] == [0] and "q" not in trace[0]
    args = type("A", (), {"left_window": 1, "right_window": 1, "output_window": 1,
                          "no_tier": False, "right_classes": "coarse",
                          "tier_features": None})
    theta0 = initial_model(args, read_paradigm(str(f)).alphabet()).theta
    assert np.array_equal(PhonologyEditModel.load(str(model)).theta, theta0)


def test_train_passes_max_states_and_max_memory_to_every_e_step(tmp_path, monkeypatch):
    import strgm.models.em as em

    seen = []
    real = em.infer

    def spy(graph, method, **kw):
        seen.append(dict(kw))
        kw.pop("max_memory", None)  # the spy only records it
        return real(graph, method, **kw)

    monkeypatch.setattr(em, "infer", spy)
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    assert main(["train", str(f), "--em-iters", "1", "--max-states", "5000",
                 "--max-memory", "3G", "--quiet"]) == 0
    assert len(seen) == 2
    assert all(kw["max_states"] == 5000 and kw["max_memory"] == 3 << 30 for kw in seen)
    seen.clear()
    assert main(["train", str(f), "--em-iters", "0", "--quiet"]) == 0
    assert seen[0]["max_states"] == 200_000 and "max_memory" not in seen[0]


def test_a_saved_model_with_a_nan_weight_is_refused_by_infer(tmp_path, capsys):
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    model = tmp_path / "m.json"
    assert main(["train", str(f), "--em-iters", "1", "--save", str(model), "--quiet"]) == 0
    d = json.loads(model.read_text(encoding="utf-8"))
    d["theta"][0][1] = float("nan")
    model.write_text(json.dumps(d), encoding="utf-8")
    capsys.readouterr()
    assert main(["infer", str(f), "--model", str(model), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "m.json" in err and "non-finite" in err and "inconsistent" not in err


def test_train_holdout_with_an_unseen_morpheme_scores_p_zero(tmp_path, capsys):
    """R3 occurs only in the held-out word R3 PAST: it cannot be predicted, so it scores
    p = 0 (reported, strict JSON "Infinity") instead of failing after training."""
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import holdout_split

    f = tmp_path / "h.tsv"
    f.write_text(TINY + "R3 PAST\tbid\n", encoding="utf-8")
    para = read_paradigm(str(f))
    seed = next(s for s in range(200) if holdout_split(para, 0.2, s) == ["R3 PAST"])
    out = tmp_path / "t.json"
    assert main(["train", str(f), "--holdout", "0.2", "--seed", str(seed), "--em-iters",
                 "1", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "exact match: 0.0%" in text and "inf nats" in text and "R3 PAST" in text
    h = json.loads(out.read_text(encoding="utf-8"),
                   parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}")
                   )["em_phonology"]["holdout"]
    assert h["n"] == 1 and h["exact_match"] == 0 and h["mean_neg_logp"] == "Infinity"
    assert h["per_word"]["R3 PAST"] == {"gold": "bid", "predicted": None, "p_gold": 0.0,
                                        "unseen_morphemes": ["R3"]}


def test_a_checkpoint_passes_the_resume_check_and_resumes(tmp_path, capsys):
    """The pre-check of --resume accepts what --checkpoint writes (no false refusals)."""
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    ck = tmp_path / "ck.json"
    assert main(["train", str(f), "--em-iters", "1", "--checkpoint", str(ck), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", str(f), "--em-iters", "2", "--resume", str(ck), "--quiet"]) == 0
    assert "EM 2: objective" in capsys.readouterr().out


def test_train_reports_every_restart_and_keeps_the_best(tmp_path, capsys):
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    out = tmp_path / "train.json"
    assert main(["train", str(f), "--method", "pruned", "--em-iters", "1", "--restarts", "2",
                 "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "restart 0, EM 1: objective" in text and "restart 1, EM 1: objective" in text
    assert "Underlying forms" in text and "Held-out predictions" not in text
    data = json.loads(out.read_text(encoding="utf-8"))
    finals = data["restart_objectives"]
    assert len(finals) == 2 and data["restart"] == finals.index(max(finals))
    assert data["trace"][-1]["objective"] == max(finals)


def test_train_announces_its_plan(tmp_path, capsys):
    """The line strgm train prints first (unless --quiet: the test above) names every
    phase."""
    from strgm.cli.app import build_parser
    from strgm.cli.train import plan_text
    from strgm.datasets.examples import example_path
    from strgm.datasets.paradigm import read_paradigm

    para = read_paradigm(str(example_path("english-verbs")))
    parse = lambda *a: build_parser().parse_args(["train", "example:english-verbs", *a])  # noqa: E731,E501
    line = plan_text(parse("--holdout", "0.1"), para, True)
    assert line.startswith("strgm train: harmony-tier screening (3 candidate vowel sets")
    assert "then 1 EM iteration(s) (2 pruned E-steps) on 43 training words" in line
    assert line.endswith("; the rule family beside EM on a second core")
    line = plan_text(parse("--no-tier", "--family", "edit", "--em-iters", "2"), para, False)
    assert line == "strgm train: 2 EM iteration(s) (3 pruned E-steps) on 48 training words"
    assert "after EM" in plan_text(parse(), para, False)
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    assert main(["train", str(f), "--em-iters", "0", "--family", "edit", "--no-tier"]) == 0
    assert "strgm train: 0 EM iteration(s) (1 pruned E-steps)" in capsys.readouterr().err


#: plurals whose suffix voicing the rules learn; with seed 1 the per-word family choice
#: and the EM phonology alone differ on the held-out words (25% against 50% exact)
PLURALS = ("R1\tbat\nR1 PL\tbatz\nR2\tmap\nR2 PL\tmaps\nR3\tdog\nR3 PL\tdogz\n"
           "R4\tkit\nR4 PL\tkits\nR5\tbig\nR5 PL\tbigz\nR6\tsap\nR6 PL\tsaps\n")


def _printed_choice(text: str) -> dict:
    """word key → (predicted, right) of the printed family-choice lines."""
    import re

    rows = re.findall(r"^  (.+?)  (\S+)  \((?:rules|edit)\)  true \S+  ([✓✗])", text,
                      re.MULTILINE)
    return {k: (p, mark == "✓") for k, p, mark in rows}


def _train_json(tmp_path, *extra) -> tuple:
    f = tmp_path / "plurals.tsv"
    f.write_text(PLURALS, encoding="utf-8")
    out = tmp_path / "t.json"
    assert main(["train", str(f), "--holdout", "0.3", "--seed", "1", "--em-iters", "1",
                 "--no-tier", "--show-processes", "0", "--json", str(out), "--quiet",
                 *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_train_json_holdout_is_the_answer_printed(tmp_path, capsys):
    """``holdout`` scores the family choice the command prints as its answer; the EM
    phonology's own scores are ``em_phonology.holdout`` (format version 2)."""
    data = _train_json(tmp_path)
    text = capsys.readouterr().out
    printed = _printed_choice(text)
    answer = sum(right for _, right in printed.values()) / len(printed)
    h, em = data["holdout"], data["em_phonology"]["holdout"]
    assert data["version"] == 2 and h["system"] == "family_choice"
    assert h["n"] == len(printed) == em["n"] and set(h["per_word"]) == set(printed)
    assert h["exact_match"] == answer
    assert f"families chosen per held-out word: exact match {answer:.1%}" in text
    assert {k: (w["predicted"] or "—", w["exact"]) for k, w in h["per_word"].items()} == printed
    assert f"exact match: {100 * em['exact_match']:.1f}%" in text
    assert all("p_gold" in w for w in h["per_word"].values())  # `strgm plot predictions`
    # control: the two systems differ here, so the version-1 layout (EM's scores as
    # ``holdout``) fails the check above
    version_1 = {**data, "holdout": em}
    assert version_1["holdout"]["exact_match"] != answer


def test_train_json_holdout_is_em_when_em_is_the_answer(tmp_path, capsys):
    """With --family edit the EM phonology's scores are the answer printed: ``holdout``
    is them, marked as such."""
    data = _train_json(tmp_path, "--family", "edit")
    text = capsys.readouterr().out
    h, em = data["holdout"], data["em_phonology"]["holdout"]
    assert "families chosen" not in text and "family_choice" not in data
    assert h == {"system": "em_phonology", **em}
    assert f"exact match: {100 * h['exact_match']:.1f}%" in text
