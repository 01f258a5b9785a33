"""Run the command line on a bad input and check that it fails the way a user needs.

:func:`run_cli` runs ``strgm.cli.main`` in-process (or in a subprocess with a time limit,
for cases that could hang or abort) and snapshots a directory before and after.
:func:`assert_clean_error` then asserts the contract of the bad-input suite:

* the exit status (2 for a user error, argparse's too);
* exactly one line on stderr, naming the culprit (file, line, option or value);
* no traceback;
* no output file created, changed or removed in the watched directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    before: dict
    after: dict

    @property
    def changed(self) -> list[str]:
        keys = set(self.before) | set(self.after)
        return sorted(k for k in keys if self.before.get(k) != self.after.get(k))


def snapshot(root: Optional[Path]) -> dict:
    """path -> sha256 of every file under ``root`` (directories as entries too)."""
    if root is None or not Path(root).exists():
        return {}
    out = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_dir():
            out[rel + "/"] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_cli(argv: Iterable[str], watch: Optional[Path] = None, subprocess_timeout:
            Optional[float] = None, cwd: Optional[Path] = None) -> Outcome:
    """Run ``strgm ARGV``; with ``subprocess_timeout`` in a child process (a hang or an
    abort then shows as a failed test instead of taking the suite down)."""
    argv = [str(a) for a in argv]
    before = snapshot(watch)
    if subprocess_timeout is not None:
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        try:
            p = subprocess.run([sys.executable, "-m", "strgm.cli", *argv], capture_output=True,
                               text=True, timeout=subprocess_timeout, cwd=cwd, env=env)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"strgm {' '.join(argv)} hung (> {subprocess_timeout} s)")
        return Outcome(p.returncode, p.stdout, p.stderr, before, snapshot(watch))
    from strgm.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.chdir(old)
    return Outcome(code, out.getvalue(), err.getvalue(), before, snapshot(watch))


def assert_clean_error(o: Outcome, *names: str, code: int = 2) -> str:
    """The one error line, after checking the contract above; ``names`` must all occur
    in it (the file, line, option or value at fault)."""
    assert "Traceback" not in o.stderr, o.stderr
    lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
    assert o.code == code, f"exit {o.code}, expected {code}; stderr: {o.stderr!r}"
    assert len(lines) == 1, f"expected one error line, got {len(lines)}: {o.stderr!r}"
    line = lines[0]
    assert "error" in line, line
    assert "internal error" not in line, line
    for n in names:
        assert str(n) in line, f"{n!r} not named in: {line}"
    assert not o.changed, f"files created or changed: {o.changed}"
    return line
