"""Packaging: ``strgm --version`` prints the installed version (or the source tree's
pyproject version), and the ``py.typed`` marker exists and is declared as package data."""

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from strgm.cli.app import main, package_version

ROOT = Path(__file__).resolve().parents[2]


def pyproject_version() -> str:
    """The [project] version, read independently of strgm's own reader."""
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["version"]


def test_version_flag_prints_strgm_and_the_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out == f"strgm {metadata.version('strgm')}\n"
    assert out == f"strgm {pyproject_version()}\n"  # the install is not stale


def test_version_flag_through_the_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "strgm.cli", "--version"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"strgm {package_version()}\n", "")


def _not_installed(name):
    raise metadata.PackageNotFoundError(name)


def test_falls_back_to_pyproject_when_not_installed(monkeypatch, tmp_path):
    monkeypatch.setattr(metadata, "version", _not_installed)
    assert package_version() == pyproject_version()
    tricky = tmp_path / "pyproject.toml"
    tricky.write_text('[tool.other]\nversion = "9.9.9"\n\n[project]\nname = "strgm"\n'
                      'keywords = ["[x]", "y"]\nversion = "1.2.3"  # released\n\n'
                      '[tool.setuptools]\nversion = "8.8.8"\n', encoding="utf-8")
    assert package_version(tricky) == "1.2.3"
    # negative controls: no [project] version, no file
    tricky.write_text('[tool.other]\nversion = "9.9.9"\n', encoding="utf-8")
    assert package_version(tricky) == "0+unknown"
    assert package_version(tmp_path / "missing.toml") == "0+unknown"


def test_py_typed_marker_is_shipped_as_package_data():
    assert (ROOT / "strgm" / "py.typed").read_bytes() == b""
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in cfg["tool"]["setuptools"]["package-data"]["strgm"]
    extras = cfg["project"]["optional-dependencies"]
    assert extras["nltk"] == ["nltk>=3.8"] and extras["docs"] == ["pdoc>=14"]


def test_interrupt_inside_compiled_code_is_an_interrupt(capsys):
    """A SystemError whose context is a KeyboardInterrupt (Ctrl-C landing in a numba
    kernel) exits 130 'interrupted', not 3 'internal error'; a plain SystemError is
    still a bug."""
    from strgm.cli.app import EXIT_BUG, EXIT_INTERRUPTED, _report

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("CPUDispatcher returned a result with an exception set")
    except SystemError as e:
        line, code = _report(e)
    assert code == EXIT_INTERRUPTED and "interrupted" in line
    assert _report(SystemError("other"))[1] == EXIT_BUG
