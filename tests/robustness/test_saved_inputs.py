"""Bad saved state, tried as a user would: ``strgm beliefs`` over damaged, tampered or
foreign directories, its bad options, and ``strgm train --resume`` with damaged or
mismatched checkpoints.

Each case asserts the contract of :mod:`tests.robustness.harness` (exit 2, one error line
naming the culprit, no traceback, nothing created or changed under the test directory).
The saved beliefs come from a two-variable graph inferred in-process, so the cases are
quick; the huge-header case runs in a subprocess (an abort must not take pytest down).
"""

from __future__ import annotations

import json
import os
import shutil
import struct

import pytest

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from strgm.graph import FactorGraph
from strgm.inference import infer
from strgm.safe_io import sha256_file
from tests.robustness.harness import assert_clean_error, run_cli

TINY = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\n"
ALPH = Alphabet(["a", "b"], boundary="+")


@pytest.fixture(scope="module")
def saved_template(tmp_path_factory):
    g = FactorGraph(ALPH)
    for v, mean_length in (("M1", 1.0), ("M2", 2.0)):
        g.add_variable(v)
        g.add_unary(f"p{v}", v, ff.geometric_unigram_prior(ALPH.size, mean_length))
    d = tmp_path_factory.mktemp("template") / "saved"
    infer(g, "bp").save(d)
    return d


@pytest.fixture
def saved(saved_template, tmp_path):
    d = tmp_path / "saved"
    shutil.copytree(saved_template, d)
    return d


def _index(d):
    return json.loads((d / "beliefs.json").read_text(encoding="utf-8"))


def _write_index(d, index):
    (d / "beliefs.json").write_text(json.dumps(index), encoding="utf-8")


def _beliefs(d, *extra, watch):
    return run_cli(["beliefs", str(d), *extra], watch=watch)


def test_the_fixture_loads(saved, tmp_path):
    o = _beliefs(saved, "--top", "2", watch=tmp_path)
    assert o.code == 0 and "2 beliefs from method bp" in o.stdout, o.stderr


# ------------------------------------------------------------------ damaged directories
def _missing_dir(d):
    shutil.rmtree(d)
    return d, "missing beliefs.json"


def _missing_index(d):
    (d / "beliefs.json").unlink()
    return d, "missing beliefs.json"


def _a_file(d):
    shutil.rmtree(d)
    d.write_text("not a directory", encoding="utf-8")
    return d, "not a directory"


def _not_json(d):
    (d / "beliefs.json").write_text("{format", encoding="utf-8")
    return "beliefs.json", "not JSON"


def _wrong_format(d):
    _write_index(d, dict(_index(d), format="strgm-beliefs-v7"))
    return "beliefs.json", "not a saved strgm result"


def _old_format(d):
    _write_index(d, dict(_index(d), format="strgm-beliefs-v1"))
    return "beliefs.json", "re-save"


def _not_utf8(d):
    (d / "beliefs.json").write_bytes(b'{"format": "\xff"}')
    return "beliefs.json", "UTF-8"


def _nan_literal(d):
    text = (d / "beliefs.json").read_text(encoding="utf-8")
    (d / "beliefs.json").write_text(text.replace('"Infinity"', "Infinity"), encoding="utf-8")
    return "beliefs.json", "not JSON"


def _swapped(d):
    a, b = d / "0000_M1.fst", d / "0001_M2.fst"
    ta = a.read_bytes()
    assert ta != b.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(ta)
    return "0000_M1.fst", "variable 'M1'"


def _truncated(d):
    f = d / "0001_M2.fst"
    f.write_bytes(f.read_bytes()[:-7])
    return "0001_M2.fst", "variable 'M2'"


def _flipped_byte(d):
    f = d / "0001_M2.fst"
    data = bytearray(f.read_bytes())
    data[-3] ^= 0x40
    f.write_bytes(bytes(data))
    return "0001_M2.fst", "checksum"


def _deleted_file(d):
    (d / "0000_M1.fst").unlink()
    return "0000_M1.fst", "not found"


def _entry(d, var, **changes):
    index = _index(d)
    index["variables"][var].update(changes)
    _write_index(d, index)


def _escape_dotdot(d):
    shutil.copy(d / "0000_M1.fst", d.parent / "outside.fst")
    _entry(d, "M1", file="../outside.fst")
    return "'../outside.fst'", "plain file names"


def _absolute(d):
    target = d.parent / "elsewhere.fst"
    shutil.copy(d / "0000_M1.fst", target)
    _entry(d, "M1", file=str(target))
    return str(target), "plain file names"


def _symlink_outside(d):
    target = d.parent / "linked.fst"
    shutil.copy(d / "0000_M1.fst", target)
    (d / "0000_M1.fst").unlink()
    os.symlink(target, d / "0000_M1.fst")
    return "0000_M1.fst", "outside the directory"


def _no_checksum(d):
    index = _index(d)
    del index["variables"]["M2"]["sha256"]
    _write_index(d, index)
    return "beliefs.json", "checksum"


def _bad_alphabet_ref(d):
    _entry(d, "M2", alphabet=5)
    return "beliefs.json", "alphabet"


def _bad_log_z(d):
    _entry(d, "M2", log_z="Infinity")
    return "0001_M2.fst", "log Z"


def _edited_log_z(d):
    """log Z lowered by 34.4: every probability would print about 8.5e14 times too high."""
    _entry(d, "M2", log_z=_index(d)["variables"]["M2"]["log_z"] - 34.4)
    return "beliefs.json", "variable 'M2', but its automaton 0001_M2.fst gives"


def _divergent_fst(d):
    """A belief file replaced by an automaton of infinite total weight, with its size and
    checksum updated to match (the index is as easy to edit as the file)."""
    import pynini

    f = pynini.Fst(arc_type="log64")
    s = f.add_state()
    f.set_start(s)
    f.set_final(s, 0.0)
    f.add_arc(s, pynini.Arc(1, 1, pynini.Weight("log64", -1.0), s))  # weight e per loop
    f.write(str(d / "0001_M2.fst"))
    _entry(d, "M2", bytes=(d / "0001_M2.fst").stat().st_size,
           sha256=sha256_file(d / "0001_M2.fst"))
    return "0001_M2.fst", "no finite total weight"


def _negative_iterations(d):
    index = _index(d)
    index["iterations"] = -3
    _write_index(d, index)
    return "beliefs.json", "'iterations' is -3"


def _extra_shadows_beliefs(d):
    """``extra`` is merged into the JSON summary: it may not replace the beliefs there."""
    index = _index(d)
    index["extra"] = {"beliefs": {"M1": [["aaa", 1e15]]}}
    _write_index(d, index)
    return "beliefs.json", "'extra' holds 'beliefs'"


def _incomplete(d):
    index = _index(d)
    del index["iterations"]
    _write_index(d, index)
    return "beliefs.json", "incomplete"


DAMAGE = [_missing_dir, _a_file, _missing_index, _not_json, _wrong_format, _old_format, _not_utf8,
          _nan_literal, _swapped, _truncated, _flipped_byte, _deleted_file, _escape_dotdot,
          _absolute, _symlink_outside, _no_checksum, _bad_alphabet_ref, _bad_log_z,
          _edited_log_z, _divergent_fst, _negative_iterations, _extra_shadows_beliefs,
          _incomplete]


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__.strip("_"))
def test_damaged_saved_beliefs_are_refused_naming_the_file(saved, tmp_path, damage):
    culprit, detail = damage(saved)
    o = _beliefs(saved, watch=tmp_path)
    assert_clean_error(o, str(culprit), detail)


def test_printed_probabilities_stay_in_the_unit_interval(saved, tmp_path):
    """Control for the log Z check: an unedited save, and one whose log Z moved by far
    less than the tolerance (a JSON round trip of another writer), load and print
    probabilities in [0, 1]; the same edit by 34.4 nats is refused (above)."""
    for shift in (0.0, 1e-12):
        _entry(saved, "M2", log_z=_index(saved)["variables"]["M2"]["log_z"] + shift)
        o = _beliefs(saved, "--top", "4", "--prob", "ab", "--json", "-", watch=tmp_path)
        assert o.code == 0, o.stderr
        rows = json.loads(o.stdout)["beliefs"]
        probs = [p for row in rows.values() for _, p in row["top"]]
        probs += [p for row in rows.values() for p in row["prob"].values()]
        assert probs and all(0.0 <= p <= 1.0 for p in probs), probs
        assert sum(p for _, p in rows["M1"]["top"]) <= 1.0 + 1e-9


def _huge_header_fst(path, states=10 ** 15):
    """An OpenFst header claiming ``states`` states, followed by a few bytes."""
    def s(text):
        return struct.pack("<i", len(text)) + text.encode()

    head = (struct.pack("<i", 2125659606) + s("vector") + s("log64") + struct.pack("<i", 2)
            + struct.pack("<i", 0) + struct.pack("<Q", 0)
            + struct.pack("<qqq", 0, states, states))
    path.write_bytes(head + b"\0" * 64)


def test_huge_header_fst_is_refused_without_allocating(saved, tmp_path):
    f = saved / "0000_M1.fst"
    _huge_header_fst(f)
    _entry(saved, "M1", bytes=f.stat().st_size, sha256=sha256_file(f))  # a tampered index
    o = run_cli(["beliefs", str(saved)], watch=tmp_path, subprocess_timeout=60)
    assert_clean_error(o, "0000_M1.fst", "variable 'M1'", "1000000000000000 states")


# ------------------------------------------------------------------ beliefs options
@pytest.mark.parametrize("value", ["0", "-1", "x", "100001"])
def test_bad_top(saved, tmp_path, value):
    o = _beliefs(saved, "--top", value, watch=tmp_path)
    assert_clean_error(o, "--top", value)


def test_unknown_var(saved, tmp_path):
    o = _beliefs(saved, "--var", "M1", "--var", "NOPE", "--json", tmp_path / "q.json",
                 watch=tmp_path)
    assert_clean_error(o, "--var", "'NOPE'", "'M1'")


def test_unwritable_json_is_refused_before_loading(saved, tmp_path):
    (tmp_path / "adir").mkdir()
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    for target in (tmp_path / "no" / "such.json", tmp_path / "adir", blocker / "q.json"):
        o = _beliefs(saved, "--json", target, watch=tmp_path)
        assert_clean_error(o, "--json", str(target))
    # checked before the directory is read: a missing directory is not what is reported
    o = _beliefs(tmp_path / "nowhere", "--json", tmp_path / "adir", watch=tmp_path)
    assert_clean_error(o, "--json")


def test_save_into_a_directory_with_other_files_changes_nothing(tmp_path):
    para = tmp_path / "tiny.tsv"
    para.write_text(TINY, encoding="utf-8")
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me", encoding="utf-8")
    o = run_cli(["infer", para, "--quiet", "--save-beliefs", d], watch=tmp_path)
    assert_clean_error(o, str(d), "notes.txt")


# ------------------------------------------------------------------ train --resume
@pytest.fixture(scope="module")
def checkpoint_template(tmp_path_factory):
    from strgm.cli import main

    d = tmp_path_factory.mktemp("ck")
    (d / "tiny.tsv").write_text(TINY, encoding="utf-8")
    assert main(["train", str(d / "tiny.tsv"), "--method", "bp", "--em-iters", "1",
                 "--l2", "0.5", "--quiet", "--checkpoint", str(d / "ck.json")]) == 0
    return (d / "ck.json").read_text(encoding="utf-8")


def _ck(text, how):
    d = json.loads(text)
    if how == "truncated":
        return text[: len(text) // 3]
    if how == "bare_nan":
        return text.replace(repr(d["trace"][0]["objective"]), "NaN", 1)
    if how == "nan_weight":
        d["model"]["theta"][0][1] = "NaN"
    elif how == "wrong_shape":
        d["model"]["theta"][0][0] = ["no-such-feature", 3]
    elif how == "trace_mismatch":
        d["iteration"] = 5
    elif how == "format":
        d["format"] = "something-else"
    elif how == "model_not_object":
        d["model"] = [1, 2]
    return json.dumps(d)


@pytest.mark.parametrize("how,detail", [
    ("truncated", "not JSON"), ("bare_nan", "not JSON"), ("nan_weight", "non-finite"),
    ("wrong_shape", "does not exist"), ("trace_mismatch", "inconsistent"),
    ("format", "not a strgm EM checkpoint"), ("model_not_object", "not a strgm phonology")])
def test_damaged_resume_checkpoint(checkpoint_template, tmp_path, how, detail):
    para = tmp_path / "tiny.tsv"
    para.write_text(TINY, encoding="utf-8")
    ck = tmp_path / "ck.json"
    ck.write_text(_ck(checkpoint_template, how), encoding="utf-8")
    o = run_cli(["train", para, "--method", "bp", "--l2", "0.5", "--quiet", "--resume", ck,
                 "--checkpoint", ck, "--json", tmp_path / "out.json"], watch=tmp_path)
    assert_clean_error(o, str(ck), detail)


def test_resume_with_other_settings_is_refused(checkpoint_template, tmp_path):
    para = tmp_path / "tiny.tsv"
    para.write_text(TINY, encoding="utf-8")
    ck = tmp_path / "ck.json"
    ck.write_text(checkpoint_template, encoding="utf-8")
    o = run_cli(["train", para, "--method", "bp", "--l2", "2", "--quiet", "--resume", ck,
                 "--save", tmp_path / "m.json"], watch=tmp_path)
    assert_clean_error(o, str(ck), "l2 (--l2) = 0.5")
    o = run_cli(["train", para, "--method", "bp", "--l2", "0.5", "--em-iters", "0",
                 "--quiet", "--resume", ck], watch=tmp_path)
    assert_clean_error(o, str(ck), "--em-iters")
