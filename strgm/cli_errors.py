"""How the command line reports what goes wrong, in one line each.

* :class:`OneLineParser`: argparse usage errors as ``strgm infer: error: argument --kbest:
  must be ≥ 1, got '0' (see strgm infer --help)`` (exit 2) instead of usage plus error;
* :func:`bug_line`: an exception strgm did not raise on purpose, as one line with its type,
  text and innermost strgm frame (``strgm.cli.main`` prints it with exit 3; ``--debug``
  shows the traceback instead).
"""

from __future__ import annotations

import argparse
import os


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors on one line: ``strgm infer: error: argument --kbest:
    must be ≥ 1, got '0' (see strgm infer --help)``, exit status 2."""

    def error(self, message):  # noqa: D401 - argparse's hook
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def bug_line(e: BaseException) -> str:
    """One line for an exception strgm did not raise on purpose: type, text and the
    innermost frame inside the strgm package (by the package's install directory, not by
    names in the path)."""
    import traceback

    import strgm

    roots = [os.path.dirname(os.path.dirname(os.path.abspath(strgm.__file__)))]
    pkgs = [os.path.dirname(os.path.abspath(strgm.__file__))]
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
    return (f"strgm: internal error (a bug in strgm, please report it): "
            f"{type(e).__name__}{': ' + text if text else ''}{where}; "
            "rerun with --debug for the traceback")
