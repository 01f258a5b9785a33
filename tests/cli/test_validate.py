"""The JSON Schemas ship inside the package (package data, read through
importlib.resources), and ``strgm validate FILE...`` tells which strgm document each file
is and whether it is valid: one line per file, exit status 0 or 1."""

import fnmatch
import json
import sys
from pathlib import Path

import pytest

from strgm.cli.json_output import formats, schema
from strgm.cli.validate import INSTALL, validate_file
from tests.robustness.harness import run_cli

pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
WORDS = "\n".join(["k a t", "t a k", "a t a", "k a k a", "t a"] * 3) + "\n"


def _package_data() -> list:
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return cfg["tool"]["setuptools"]["package-data"]["strgm"]


def _shipped(globs, rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, g) for g in globs)


def test_schemas_are_package_data_read_through_importlib():
    files = sorted((ROOT / "strgm" / "schemas").glob("*.schema.json"))
    assert len(files) >= 10 and [f.name[:-len(".schema.json")] for f in files] == formats()
    globs = _package_data()
    assert all(_shipped(globs, f"schemas/{f.name}") for f in files)
    assert schema("strgm-hmm-trace")["properties"]["format"]["const"] == "strgm-hmm-trace"
    assert not (ROOT / "schemas").exists()  # one copy, the shipped one
    # control: the package data of before (no schemas) ships none of them
    assert not any(_shipped(["py.typed", "data/*"], f"schemas/{f.name}") for f in files)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """An HMM model and an hmm train --json trace, written by the command line."""
    d = tmp_path_factory.mktemp("validate")
    (d / "s.txt").write_text(WORDS)
    o = run_cli(["hmm", "train", d / "s.txt", "--save", d / "m.json", "--iters", "3",
                 "--states", "4", "--json", d / "t.json", "--quiet"])
    assert o.code == 0, o.stderr
    return d


def test_valid_documents_say_what_they_are(outputs):
    t, m = outputs / "t.json", outputs / "m.json"
    o = run_cli(["validate", t, m])
    assert o.code == 0, o.stderr
    assert o.stdout.splitlines() == [f"{t}: valid strgm-hmm-trace (format 1)",
                                     f"{m}: valid strgm-hmm-model (format 1)"]
    assert validate_file(t) == ("strgm-hmm-trace", 1)


def test_an_invalid_document_names_the_file_and_the_first_failing_place(outputs, tmp_path):
    doc = json.loads((outputs / "t.json").read_text())
    doc["trace"][1]["loglik"] = "high"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    o = run_cli(["validate", outputs / "t.json", bad])
    assert o.code == 1 and o.stdout.startswith(f"{outputs / 't.json'}: valid")
    [line] = o.stderr.splitlines()
    assert line.startswith(f"strgm: error: {bad}: invalid strgm-hmm-trace (format 1) at "
                           "/trace/1/loglik: ")
    assert len(line) < 300


@pytest.mark.parametrize("text,says", [
    ("{not json", "not JSON"),
    ('{"a": 1}', "not a strgm document"),
    ('{"format": "strgm-hmm-state", "version": 1}', "an HMM checkpoint"),
])
def test_other_files_are_one_line_errors(tmp_path, text, says):
    f = tmp_path / "x.json"
    f.write_text(text)
    o = run_cli(["validate", f])
    assert o.code == 1 and o.stdout == ""
    [line] = o.stderr.splitlines()
    assert line.startswith(f"strgm: error: {f}: ") and says in line


def test_a_damaged_model_file_is_invalid(outputs, tmp_path):
    doc = json.loads((outputs / "m.json").read_text())
    doc["samples"][0]["P"][0][0] += 0.5
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(doc))
    o = run_cli(["validate", bad])
    assert o.code == 1 and f"{bad}: " in o.stderr and "samples[0].P" in o.stderr


def test_without_jsonschema_it_says_what_to_install(outputs, monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema fails
    o = run_cli(["validate", outputs / "t.json"])
    assert o.code == 2 and o.stdout == ""
    assert o.stderr.splitlines() == [f"strgm: error: {INSTALL}"]
    assert "pip install 'strgm[validate]'" in INSTALL
