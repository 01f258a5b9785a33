"""How the command line reports what goes wrong: one line each, one prefix for all.

Every error line starts with :data:`PREFIX` (``strgm: error: ``), whatever went wrong:

* a :class:`~strgm.errors.StrgmError` (bad input, option, memory budget): its first line
  (exit 2);
* :class:`OneLineParser`: argparse usage errors as ``strgm: error: argument --kbest: must
  be ≥ 1, got '0' (see strgm infer --help)`` (exit 2) instead of usage plus error;
* :func:`bug_line`: an exception strgm did not raise on purpose, as one line with its type,
  text and innermost strgm frame (exit 3; ``--debug`` shows the traceback instead);
* :func:`memory_line`: an allocation that failed outside strgm's own budgets, with the
  advice that fits the command that ran (:data:`MEMORY_ADVICE`), or, when the failure came
  from talking to a ``--scheduler ADDRESS``, the question whether that is a Dask scheduler
  (exit 2);
* :func:`output_line`: an output that could not be written (a full disk or a full
  ``/dev/full`` standard output) (exit 2);
* an interrupt (exit 130).
"""

from __future__ import annotations

import argparse
import errno
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


#: What lowers the memory each command needs, by subcommand ("pcfg parse"), or by command
#: when all its subcommands share the advice.
MEMORY_ADVICE = {
    "demo": "lower --max-states or --max-memory, or use --method pruned or ep",
    "infer": "lower --max-states or --max-memory, or use --method pruned or ep",
    "train": "lower --max-states or --max-memory, or use --method pruned or ep",
    "rules": "use a smaller --beam or fewer paradigms",
    "graph": "use a smaller paradigm file",
    "beliefs": "query fewer beliefs at a time",
    "pcfg train": "lower --max-memory, or use shorter sentences or a smaller grammar",
    "pcfg parse": "lower --max-length or --max-memory, or use a smaller grammar",
    "treebank grammar": "use a smaller treebank",
    "treebank yield": "lower --max-length or use a smaller treebank",
    "treebank score": "lower --max-length or use smaller tree files",
    "tsg train": "use a smaller treebank",
    "tsg parse": "lower --max-length or parse fewer sentences at a time",
    "tsg show": "use a smaller model",
    "hmm train": "lower --states (-L), or use fewer or shorter sequences",
    "hmm score": "use fewer or shorter sequences",
    "hmm decode": "use fewer or shorter sequences",
    "plot": "plot a smaller input",
}


def memory_line(e: BaseException, command: str, scheduler: str | None = None) -> str:
    """The one line for a ``MemoryError`` that ended ``command`` (e.g. "hmm train"): out
    of memory and what lowers the memory that command needs. When the failure came from
    the Dask client talking to a ``--scheduler ADDRESS`` (a server that is not a Dask
    scheduler can announce an absurd message size), the line says so instead."""
    if scheduler and not scheduler.startswith("local") and _from_dask(e):
        return error_line(f"out of memory while talking to --scheduler {scheduler}: the "
                          "server sent a message too large to hold; check that the address "
                          "is that of a Dask scheduler")
    advice = MEMORY_ADVICE.get(command) or MEMORY_ADVICE.get(command.split(" ")[0])
    return error_line(f"out of memory in strgm {command}" + (f"; {advice}" if advice else ""))


def _from_dask(e: BaseException) -> bool:
    """Whether a frame of ``e``'s traceback lies in the dask or distributed packages."""
    import traceback

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # …/strgm
    for f in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(f.filename)
        if path.startswith(package + os.sep):
            continue
        parts = path.split(os.sep)
        if "distributed" in parts or "dask" in parts:
            return True
    return False


#: Errors of a write that no change to strgm can avoid: the disk or the device is full,
#: the file too large for it, or the device failing.
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def is_write_failure(e: BaseException) -> bool:
    """Whether ``e`` is an output that could not be written (:data:`_WRITE_ERRNOS`) on a
    stream with no file name: standard output, or a file strgm already had open."""
    return isinstance(e, OSError) and e.errno in _WRITE_ERRNOS and e.filename is None


def output_line(e: OSError) -> str:
    """The one line for :func:`is_write_failure`: which output, when the failing write
    was a ``print`` or a write to ``sys.stdout``, and the system's reason."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    code = (frames[-1].line or "") if frames else ""
    where = " to standard output" if ("print(" in code or "stdout" in code) else ""
    return error_line(f"cannot write the output{where}: {e.strerror or e}")
