"""What every phonology command shares: output checks before any work, the progress
display, argparse types, and re-labelling library keywords as command-line options."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings

from strgm.errors import OptionError

#: Library keywords (as named in an OptionError) -> the command-line option that sets them.
CLI_NAMES = {"p_copy": "--p-copy", "mean_length": "--mean-length", "boundary": "--boundary",
             "fraction": "--holdout", "seed": "--seed", "n_roots": "--roots"}


#: The names of :data:`strgm.inference.METHODS`, spelled out so that building the parser
#: does not import the engine (half a second); a test checks that they agree.
INFERENCE_METHODS = ("bp", "pruned", "ep", "pep")


def progress(args):
    """The progress display on stderr: on a terminal, or with ``--progress``; never with
    ``--quiet``."""
    from strgm.inference import Progress

    enabled = not getattr(args, "quiet", False) and (getattr(args, "progress", False)
                                                    or sys.stderr.isatty())
    return Progress(enabled)


def check_chain_outputs(outputs, plot=None) -> None:
    """Before a sampler run: every ``(path, option)`` output can be written, and the
    ``--plot`` figure path too (with matplotlib installed)."""
    from strgm.safe_io import check_output

    for path, opt in outputs:
        if path:
            check_output(path, opt)
    if plot:
        from strgm.plot import check_figure_path
        check_figure_path(plot)


@contextlib.contextmanager
def warnings_as_lines(stream=None):
    """Show each kind of warning raised inside the block once, as one line
    ``strgm: warning: MESSAGE`` on stderr, instead of Python's two-line format with a
    source line (or not at all). Messages that differ only in their numbers (an E-step's
    "stopped after 3 iterations (last change 1.4e+00)") count as one kind."""
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).splitlines()[0] if str(message) else category.__name__
        kind = re.sub(r"\d[\d.e+-]*", "#", text)
        if kind not in seen:
            seen.add(kind)
            print(f"strgm: warning: {text}", file=stream or sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def relabel(fn, *args, **kw):
    """``fn(*args, **kw)``; an OptionError naming a library keyword is re-labelled with
    the command-line option that set it (``p_copy`` -> ``--p-copy``)."""
    try:
        return fn(*args, **kw)
    except OptionError as e:
        name = CLI_NAMES.get(e.option)
        raise (OptionError(name, e.value, e.reason) if name else e) from None


def symbol(text: str) -> str:
    """argparse type of ``--boundary``: one non-empty symbol without spaces."""
    if not text or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"must be one symbol without spaces, got {text!r}")
    return text


def check_outputs(outputs, inputs=()) -> None:
    """:func:`strgm.safe_io.check_output` for each ``(path, option, directory)`` of
    ``outputs`` (shared by every phonology command), and refuse an output that is one of
    the run's ``inputs``: writing it would destroy the input (``--json words.tsv``)."""
    from strgm.safe_io import check_output

    real = {os.path.realpath(p) for p in inputs if p}
    for path, option, directory in outputs:
        check_output(path, option, directory=directory)
        if path and path != "-" and os.path.realpath(path) in real:
            raise OptionError(option, path, "is an input of this run; writing it would "
                                            "destroy the input")


def add_limit_options(group, what: str) -> None:
    """``--max-states`` and ``--max-memory`` (the size guard of docs/architecture.md §6),
    described for ``what`` (e.g. "inference", "each E-step")."""
    from strgm.validate import int_arg, size_arg

    group.add_argument("--max-states", type=int_arg(1), default=200_000,
                       help=f"size guard for the messages of {what} (default: %(default)s)")
    group.add_argument("--max-memory", type=size_arg(), default=None, metavar="SIZE",
                       help=f"memory budget of {what}, e.g. 2G (default: a safe fraction "
                            "of the machine's RAM)")
