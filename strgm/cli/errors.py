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

Warnings have one form too: :func:`one_line_warnings` (installed by :func:`strgm.cli.main`
for the command's run) shows each as ``strgm: warning: MESSAGE`` on one line, the form of
:func:`strgm.cli.common.warnings_as_lines`, instead of Python's file path, category and
source line. Every file a command writes is announced as ``wrote FILE``
(:func:`announce_written`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import warnings

#: The start of every error line the command line prints.
PREFIX = "strgm: error: "
#: The start of every warning line the command line prints.
WARNING_PREFIX = "strgm: warning: "


def warning_line(message, category=UserWarning) -> str:
    """``WARNING_PREFIX`` and the first line of a warning's text (its category's name when
    it has none); a warning from outside strgm that is not a plain UserWarning keeps its
    category's name, so a library's RuntimeWarning is told from strgm's own."""
    text = str(message).splitlines()[0] if str(message).strip() else category.__name__
    foreign = category is not UserWarning and not category.__module__.startswith("strgm")
    return WARNING_PREFIX + (f"{text} ({category.__name__})" if foreign else text)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A :func:`warnings.showwarning` that prints :func:`warning_line` (no path, no
    source line) to ``file`` or the standard error."""
    try:
        print(warning_line(message, category), file=file or sys.stderr, flush=True)
    except OSError:  # the stream is gone: a warning is never worth a crash
        pass


def announce_written(*paths, stream=None) -> None:
    """``wrote FILE`` on ``stream`` (default stderr) for each path given (None: an output
    the command was not asked for; skipped)."""
    for path in paths:
        if path is not None and str(path) != "":
            print(f"wrote {path}", file=stream or sys.stderr)


@contextlib.contextmanager
def one_line_warnings():
    """Warnings inside the block shown by :func:`show_warning`; the previous hook is back
    afterwards, so a caller of :func:`strgm.cli.main` in Python keeps its own."""
    previous = warnings.showwarning
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        warnings.showwarning = previous


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
