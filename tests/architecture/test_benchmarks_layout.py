"""The benchmarks are one package of topic folders run as modules (benchmarks/README.md):
no file edits the import path, every module imports without running, representative
scripts answer ``python -m benchmarks.<topic>.<name> --help`` from the repository root,
and the harness writes its files whole. Each check is also shown to fail on a bad input."""

import ast
import importlib
import os
import re
import subprocess
import sys

import pytest

from tests.architecture.hygiene import ROOT

BENCH = ROOT / "benchmarks"
FILES = sorted(p for p in BENCH.rglob("*.py")
               if "results" not in p.relative_to(BENCH).parts)
MODULES = [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in FILES
           if p.name != "__init__.py"]
#: one script per kind: subcommands, a Dask grid, modules of one topic importing each
#: other, a child process that runs benchmark code
HELP = ["benchmarks.pep.speed", "benchmarks.phonology.textbook",
        "benchmarks.grammars.tsg_wsj", "benchmarks.infra.compare_revisions"]
PATH_EDIT = re.compile(r"\bsys\s*\.\s*path\s*\.\s*(insert|append)\b")
#: the project's own top-level packages: a missing one is a broken import, not an
#: optional dependency
OWN = {"benchmarks", "strgm", "fst_factors", "tests"}


def path_edits(paths) -> list:
    """``file:line`` of every ``sys.path.insert`` / ``sys.path.append`` in ``paths``
    (code, strings and comments alike: a child program written as a string counts)."""
    return [f"{p.relative_to(p.parents[1])}:{i}"
            for p in paths
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if PATH_EDIT.search(line)]


def unguarded_mains(paths) -> list:
    """Files that define ``main`` but call nothing under ``if __name__ == "__main__"``."""
    bad = []
    for p in paths:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        has_main = any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body)
        guarded = any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
                      for n in tree.body)
        if has_main and not guarded:
            bad.append(p.name)
    return bad


def test_no_benchmark_edits_the_import_path():
    assert len(FILES) > 40
    assert path_edits(FILES) == []


def test_the_import_path_check_can_fail(tmp_path):
    (tmp_path / "pkg").mkdir()
    bad = tmp_path / "pkg" / "bad.py"
    bad.write_text('import sys\nsys.path.insert(0, "x")\nCHILD = "sys.path.append(1)"\n'
                   "paths = sys.path[:]  # reading it is fine\n", encoding="utf-8")
    assert path_edits([bad]) == ["pkg/bad.py:2", "pkg/bad.py:3"]


def test_every_folder_is_a_package_and_every_script_is_guarded():
    folders = {p.parent for p in FILES}
    assert [str(f) for f in folders if not (f / "__init__.py").exists()] == []
    assert {f.name for f in folders} >= {"benchmarks", "pep", "ep", "phonology",
                                         "grammars", "hmm", "infra"}
    assert unguarded_mains(FILES) == []


def test_the_guard_check_can_fail(tmp_path):
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text("def main():\n    pass\n\n\nmain()\n", encoding="utf-8")
    good.write_text("def main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n",
                    encoding="utf-8")
    assert unguarded_mains([bad, good]) == ["bad.py"]


@pytest.mark.parametrize("name", MODULES)
def test_every_benchmark_module_imports_without_running(name, monkeypatch):
    """A script that ran on import would stop on the unknown option; an optional
    dependency that is not installed skips its module."""
    monkeypatch.setattr(sys, "argv", [name, "--no-such-option-here"])
    environ = dict(os.environ)  # some scripts set BLAS thread counts on import
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in OWN:
            raise
        pytest.skip(f"{name} needs {e.name}, which is not installed")
    except SystemExit as e:
        pytest.fail(f"importing {name} ran it (exit {e.code})")
    finally:
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update(environ)


@pytest.mark.parametrize("name", HELP)
def test_a_benchmark_runs_as_a_module_from_the_root(name):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-m", name, "--help"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage:"), p.stdout


def test_the_harness_writes_whole_files_under_results(tmp_path, monkeypatch):
    from benchmarks import harness

    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    harness.write_json("sub/run", {"x": float("inf"), "y": [1.5]})
    harness.write_json("strict", {"x": float("inf")}, strict=True)
    text = harness.markdown("Title", ["a", "b"], [[1, 0.123456], ["c", None]],
                            run=harness.run_line("benchmarks.pep.speed", ["run", "--x"], "abc"))
    harness.write_markdown("table", text)
    assert harness.read_json("sub/run") == {"x": float("inf"), "y": [1.5]}
    assert harness.read_json("strict") == {"x": "Infinity"}
    assert text == ("# Title\n\nWhat was run: `python -m benchmarks.pep.speed run --x` at "
                    "abc.\n\n| a | b |\n|---|---|\n| 1 | 0.123 |\n| c |  |\n")
    assert (tmp_path / "table.md").read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["run.json", "strict.json",
                                                           "sub", "table.md"]
    assert harness.result_path("/elsewhere/x", ".json").as_posix() == "/elsewhere/x.json"
    assert harness.git_revision(cwd=tmp_path) == "unknown"  # not a git checkout
