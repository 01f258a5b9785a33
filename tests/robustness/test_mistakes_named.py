"""Common mistakes are named with their fix: a paradigm whose columns are separated by
spaces instead of a tab, and misspelt command, variable and word names ("did you mean").
Each test has a control: the correct input works, or an unrelated name gets no guess."""

import pytest

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from strgm.cli import main
from strgm.datasets.paradigm import Paradigm, read_paradigm_tsv
from strgm.errors import GraphError, InputError, did_you_mean
from strgm.graph import FactorGraph
from strgm.inference import InferenceResult, infer

SPACED = "# spaces, not tabs\naffect    əfɛkt\naffect PAST    əfɛktɪd\n"
TABBED = "# a tab\naffect\təfɛkt\naffect PAST\təfɛktɪd\naffect 3SG\n"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("strgm: error:")
    return err


def test_space_separated_paradigm_is_named_with_the_fix(tmp_path):
    p = tmp_path / "spaced.tsv"
    p.write_text(SPACED, encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_paradigm_tsv(p)
    msg = str(e.value)
    assert "\n" not in msg and f"{p}:2" in msg
    assert "TAB" in msg and "spaces" in msg and "sed" in msg
    assert "surface form (all are '?')" not in msg  # the old, misleading error


def test_space_separated_paradigm_cli(tmp_path, capsys):
    p = tmp_path / "spaced.tsv"
    p.write_text(SPACED, encoding="utf-8")
    assert main(["infer", str(p)]) == 2
    assert "TAB" in _one_error_line(capsys)


def test_control_tabbed_paradigm_and_words_to_predict(tmp_path):
    """Spaces between morphemes, a tab before the surface, and a line of morphemes only
    (a word to predict) all read as before."""
    p = tmp_path / "tabbed.tsv"
    p.write_text(TABBED, encoding="utf-8")
    par = read_paradigm_tsv(p)
    assert [e.key for e in par.entries] == ["affect", "affect PAST", "affect 3SG"]
    assert par.entries[2].surface is None


def test_control_file_with_only_words_to_predict_keeps_its_error(tmp_path):
    """One-morpheme lines without a tab are words to predict, not a spacing mistake."""
    p = tmp_path / "predict.tsv"
    p.write_text("walk\ntalk\n", encoding="utf-8")
    with pytest.raises(InputError, match="has a surface form"):
        read_paradigm_tsv(p)


def test_fix_given_in_the_message_works(tmp_path):
    import subprocess
    p = tmp_path / "spaced.tsv"
    p.write_text(SPACED, encoding="utf-8")
    fixed = subprocess.run(["sed", "-E", r"s/ +([^ ]+) *$/\t\1/", str(p)],
                           capture_output=True, text=True, check=True).stdout
    q = tmp_path / "fixed.tsv"
    q.write_text(fixed, encoding="utf-8")
    assert [e.surface for e in read_paradigm_tsv(q).entries] == ["əfɛkt", "əfɛktɪd"]


@pytest.mark.parametrize("argv, guess", [(["trian"], "'train'"),
                                         (["hmm", "decod"], "'decode'")])
def test_misspelt_command_did_you_mean(argv, guess, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = _one_error_line(capsys)
    assert f"did you mean {guess}?" in err and "invalid choice" in err


def test_control_unrelated_command_no_guess(capsys):
    with pytest.raises(SystemExit):
        main(["zzzzqq"])
    err = _one_error_line(capsys)
    assert "invalid choice" in err and "did you mean" not in err


def test_did_you_mean_helper():
    names = ["M:walk", "M:PAST", "W:walk PAST"]
    assert did_you_mean("PAST", names) == " (did you mean 'M:PAST'?)"
    assert did_you_mean("M:wlak", names) == " (did you mean 'M:walk'?)"
    assert did_you_mean("xyzzy", names) == ""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    alph = Alphabet(["a", "b"], boundary="+")
    g = FactorGraph(alph)
    for v in ("M:walk", "M:PAST", "W"):
        g.add_variable(v)
    g.add_variable("S", observed="abb")
    g.add_unary("p1", "M:walk", ff.geometric_unigram_prior(alph.size, 1.0))
    g.add_unary("p2", "M:PAST", ff.geometric_unigram_prior(alph.size, 1.0))
    g.add_concat("c", ["M:walk", "M:PAST"], "W", boundary=True)
    g.add_binary("t", "W", "S", ff.edit_transducer(2, ff.EditParams(0.8), boundary_label=3))
    d = tmp_path_factory.mktemp("beliefs") / "saved"
    infer(g, "bp", max_iters=3).save(d)
    return d


def test_beliefs_var_did_you_mean(saved, capsys):
    assert main(["beliefs", str(saved), "--var", "PAST"]) == 2
    assert "did you mean 'M:PAST'?" in _one_error_line(capsys)


def test_control_beliefs_right_var_and_unrelated_var(saved, capsys):
    assert main(["beliefs", str(saved), "--var", "M:PAST"]) == 0
    capsys.readouterr()
    assert main(["beliefs", str(saved), "--var", "zzzzqq"]) == 2
    err = _one_error_line(capsys)
    assert "no such variable" in err and "did you mean" not in err


def test_api_belief_did_you_mean(saved):
    r = InferenceResult.load(saved)
    with pytest.raises(GraphError, match=r"did you mean 'M:walk'\?"):
        r.belief("M:wlak")
    with pytest.raises(GraphError) as e:
        r.belief("zzzzqq")
    assert "did you mean" not in str(e.value)
    assert r.belief("M:walk").kbest(1)  # control: the right name answers


def test_with_hidden_did_you_mean():
    par = Paradigm.from_pairs([(["walk"], "wɔk"), (["walk", "PAST"], "wɔkt")])
    with pytest.raises(InputError, match=r"did you mean 'walk PAST'\?"):
        par.with_hidden(["walk PAS"])
    assert par.with_hidden(["walk PAST"]).entries[1].surface is None


def test_plot_urs_suggests_a_morpheme(tmp_path):
    import json

    from strgm.cli import draw
    from strgm.errors import OptionError

    doc = {"morphemes": {"PAST": [["d", 0.9]], "walk": [["wɔk", 1.0]]}}
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(OptionError, match=r"did you mean 'PAST'\?"):
        draw._urs(doc, str(p), "PASTT", 8)
    assert draw._urs(doc, str(p), "PAST", 8)[0] == "PAST"  # control
    with pytest.raises(OptionError) as e:
        draw._urs(doc, str(p), "zzzz", 8)
    assert "did you mean" not in str(e.value)
