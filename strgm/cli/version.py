"""strgm's version string, for ``strgm --version`` and the ``strgm_version`` field of
every JSON output."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

__all__ = ["package_version"]

_TABLE = re.compile(r"^\[([^\]]+)\]\s*(#.*)?$")
_VERSION = re.compile(r'^version\s*=\s*"([^"]+)"')


def _pyproject_version(text: str) -> Optional[str]:
    """``version = "X.Y.Z"`` of the ``[project]`` table of a pyproject.toml's text."""
    table = None
    for line in text.splitlines():
        m = _TABLE.match(line)
        if m:
            table = m.group(1).strip()
        elif table == "project" and _VERSION.match(line):
            return _VERSION.match(line).group(1)
    return None


def package_version(pyproject: Optional[Path] = None) -> str:
    """strgm's version: the installed distribution's (``importlib.metadata``), else the
    ``[project]`` version of ``pyproject`` (default: the source checkout's
    pyproject.toml, for a tree that was never installed), else ``0+unknown``."""
    from importlib import metadata

    try:
        return metadata.version("strgm")
    except metadata.PackageNotFoundError:
        pass
    path = pyproject or Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        found = _pyproject_version(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        found = None
    return found or "0+unknown"
