"""The last line of defence in ``strgm.cli.main``: usage errors and unexpected exceptions
each give one line (exit 2 and 3), ``--debug`` shows the traceback instead."""

import pytest

import strgm.cli as cli
import strgm.cli.paradigm as paradigm_cmds
from strgm.cli.errors import bug_line
from tests.robustness.harness import assert_clean_error, run_cli


@pytest.mark.parametrize("argv, culprit", [
    (["frobnicate"], "frobnicate"),
    (["infer"], "file"),
    (["infer", "x.tsv", "--no-such-option"], "--no-such-option"),
    (["infer", "x.tsv", "--method", "magic"], "magic"),
    (["pcfg"], "pcfg"),
])
def test_usage_errors_are_one_line(argv, culprit, tmp_path):
    o = run_cli(argv, watch=tmp_path, cwd=tmp_path)
    line = assert_clean_error(o, culprit)
    assert "--help" in line


def _explode(args):
    raise ZeroDivisionError("boom")


def test_an_unexpected_exception_is_one_line_naming_the_bug_and_where(monkeypatch, tmp_path):
    monkeypatch.setattr(paradigm_cmds, "cmd_graph", _explode)
    o = run_cli(["graph", "x.tsv", "--dot", "-"], watch=tmp_path)
    lines = o.stderr.strip().splitlines()
    assert o.code == 3 and len(lines) == 1, o.stderr
    assert "internal error" in lines[0] and "ZeroDivisionError: boom" in lines[0]
    assert "tests/robustness/test_cli_main.py" not in lines[0]  # only strgm frames are named
    assert "--debug" in lines[0] and "Traceback" not in o.stderr


def test_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(paradigm_cmds, "cmd_graph", _explode)
    with pytest.raises(ZeroDivisionError):
        cli.main(["graph", "x.tsv", "--dot", "-", "--debug"])


def test_bug_line_names_the_innermost_strgm_frame():
    # a frame in a checkout *named* strgm (…/strgm/tests/…) is not a frame of the package
    code = compile("raise KeyError('k')", "/home/me/strgm/tests/fake.py", "exec")
    try:
        exec(code)
    except KeyError as e:
        assert " at " not in bug_line(e), bug_line(e)
    import strgm.safe_io as sio
    try:
        sio.strict_json(object.__new__(type("Bad", (), {"tolist": lambda s: 1 / 0})))
    except ZeroDivisionError as e:
        line = bug_line(e)
        assert "at strgm/safe_io.py:" in line, line
