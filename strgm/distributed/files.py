"""Many problem files, one task each: ``strgm infer FILE...`` and ``strgm train FILE...``.

:func:`expand_inputs` turns the command line's arguments (files, directories, globs) into
the list of files, in a fixed order (each argument in turn; a directory's or a glob's
``.tsv`` and ``.csv`` files sorted by name), before any work.  :func:`run_files` runs
``fn(path, options)`` for every file on a :class:`~strgm.distributed.cluster.TaskPool`
(in this process without a scheduler) and returns one outcome per file in that order,
with what the task printed, the warnings it raised (one per message) and its seconds.
An error strgm raised on purpose (:class:`~strgm.errors.StrgmError`, e.g. evidence with
zero probability in one file) ends that file's task only: its outcome carries the one
error line and the other files go on.  Workers read the files themselves, so on a cluster
the paths must be visible to them (a shared file system, as on SLURM clusters).
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import time
import warnings
from typing import Callable, Sequence

from strgm.errors import OptionError, StrgmError

__all__ = ["expand_inputs", "file_task", "run_files"]

#: Suffixes of the problem files a directory or glob contributes.
SUFFIXES = (".tsv", ".csv")


def _directory_files(path: str, option: str) -> list:
    names = sorted(n for n in os.listdir(path) if n.endswith(SUFFIXES)
                   and os.path.isfile(os.path.join(path, n)))
    if not names:
        raise OptionError(option, path, "the directory holds no .tsv or .csv problem file")
    return [os.path.join(path, n) for n in names]


def expand_inputs(patterns: Sequence[str], option: str = "FILE") -> tuple[list, bool]:
    """(files, several): ``patterns`` with directories and globs expanded (module
    docstring), duplicates dropped; ``several`` is true unless the arguments were one
    plain file (which keeps the single-file output)."""
    files, several = [], len(patterns) > 1
    for p in patterns:
        if os.path.isdir(p):
            files += _directory_files(p, option)
            several = True
        elif glob.has_magic(p) and not os.path.exists(p):
            got = sorted(f for f in glob.glob(p) if os.path.isfile(f))
            if not got:
                raise OptionError(option, p, "the pattern matches no file")
            files += got
            several = True
        else:
            files.append(p)
    seen, out = set(), []
    for f in files:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out, several


def file_task(path: str, fn: Callable, options) -> dict:
    """One task: ``fn(path, options)`` → its JSON record, with stdout captured, warnings
    recorded and a StrgmError turned into the outcome's ``error`` line."""
    out, t0 = io.StringIO(), time.perf_counter()
    record = error = None
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            record = fn(path, options)
        except StrgmError as e:
            error = str(e).splitlines()[0] if str(e) else type(e).__name__
    seen: list = []
    for w in caught:
        text = str(w.message).splitlines()[0] if str(w.message) else w.category.__name__
        if text not in seen:
            seen.append(text)
    return {"file": path, "record": record, "error": error, "text": out.getvalue(),
            "warnings": seen, "seconds": time.perf_counter() - t0}


def run_files(pool, fn: Callable, paths: Sequence[str], options) -> list:
    """:func:`file_task` for every path on ``pool``; outcomes in the order of ``paths``.

    The tasks are submitted largest file first (longest-processing-time order, file
    size standing in for the work): with a scheduler that hands out tasks in submission
    order, and work proportional to size, the run takes at most 4/3 of the shortest
    possible time on P workers (Graham 1969), where the directory order may leave the
    longest task for last."""
    paths = list(paths)
    order = submission_order(paths)
    done = pool.map(_task, [paths[i] for i in order], fn, options, key="strgm-file")
    out: list = [None] * len(paths)
    for i, outcome in zip(order, done):
        out[i] = outcome
    return out


def submission_order(paths: Sequence[str]) -> list:
    """Indices of ``paths``, largest file first (ties and unreadable sizes: input order)."""
    def size(p):
        try:
            return os.path.getsize(p)
        except OSError:
            return 0
    return sorted(range(len(paths)), key=lambda i: -size(paths[i]))


def _task(path, fn, options):
    return file_task(path, fn, options)
