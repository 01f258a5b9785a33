"""``strgm train`` and ``strgm infer --model`` end to end (issue 4, item 6)."""

import importlib.util
import json
import os

import pytest

from strgm.cli import main
from strgm.models.edit_model import PhonologyEditModel


def _synthetic_tsv(path):
    """The 32-word synthetic paradigm of test_synthetic_phonology.py as a paradigm TSV."""
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks",
                         "phonology_synthetic.py")
    spec = importlib.util.spec_from_file_location("strgm_bench_phonology_synthetic_cli", bench)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
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
                 "--checkpoint", str(ck), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "EM 2: objective" in text and "exact match" in text
    data = json.loads(out.read_text(encoding="utf-8"))
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
