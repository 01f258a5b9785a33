"""The README's Quickstart is the two-command contract, and CI runs its second command.

These tests read the README and .ci/run as a user and CI do; they fail if the block gains or
loses a command, if a command stops making its own virtual environment, or if .ci/run stops
running the README's command verbatim."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.quickstart_commands(ROOT / "README.md")


def test_quickstart_has_exactly_two_commands_each_in_a_fresh_venv():
    cmds = _commands()
    assert len(cmds) == 2, cmds
    demo, tests = cmds
    for c in cmds:
        assert c.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e ")
    assert demo.endswith("strgm demo")
    assert "'.[test]'" in tests and tests.endswith("python -m pytest -q")


def test_ci_runs_the_readme_test_command_verbatim():
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "quickstart.py"), "2"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == _commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    runs = [ln for ln in ci.splitlines() if ln.strip() == out]
    assert runs, ".ci/run does not run the README's test command verbatim"
    assert "quickstart.py 2" in ci  # and refuses to run when the two drift apart
