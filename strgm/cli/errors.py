"""How the command line reports what goes wrong: one line each, one prefix for all.

Every error line starts with :data:`PREFIX` (``strgm: error: ``), whatever went wrong:

* a :class:`~strgm.errors.StrgmError` (bad input, option, memory budget): its first line
  (exit 2);
* :class:`OneLineParser`: argparse usage errors as ``strgm: error: argument --kbest: must
  be ≥ 1, got '0' (see strgm infer --help)`` (exit 2) instead of usage plus error;
* :func:`bug_line`: an exception strgm did not raise on purpose, as one line with its type,
  text and innermost strgm frame (exit 3; ``--debug`` shows the traceback instead);
* an interrupt (exit 130).
"""

from __future__ import annotations

import argparse
import os

#: The start of every error line the command line prints.
PREFIX = "strgm: error: "


def error_line(text: str) -> str:
    """``PREFIX`` and the first line of ``text``: what the command line prints."""
    return (PREFIX + str(text)).splitlines()[0]


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors on one line: ``strgm: error: argument --kbest: must be
    ≥ 1, got '0' (see strgm infer --help)``, exit status 2."""

    def error(self, message):  # noqa: D401 - argparse's hook
        self.exit(2, error_line(f"{message} (see {self.prog} --help)") + "\n")


def bug_line(e: BaseException) -> str:
    """One line for an exception strgm did not raise on purpose: type, text and the
    innermost frame inside the strgm package (by the package's install directory, not by
    names in the path)."""
    import traceback

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # …/strgm
    roots = [os.path.dirname(package)]
    pkgs = [package]
    where = ""
    for f in reversed(traceback.extract_tb(e.__traceback__)):
        path = os.path.abspath(f.filename)
        for root, pkg in zip(roots, pkgs):
            if path.startswith(pkg + os.sep):
                where = f" at {os.path.relpath(path, root)}:{f.lineno}"
                break
        if where:
            break
    text = str(e).splitlines()[0] if str(e) else ""
    return error_line(f"internal error (a bug in strgm, please report it): "
                      f"{type(e).__name__}{': ' + text if text else ''}{where}; "
                      "rerun with --debug for the traceback")
