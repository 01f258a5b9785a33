"""The ``strgm`` command line: the parser and :func:`main`.

    strgm demo                      English verbs from CMUdict: URs and predictions
    strgm infer FILE... [options]   underlying forms for paradigms (TSV or wide CSV)
    strgm graph FILE --dot OUT      the paradigm's factor graph in Graphviz dot
    strgm beliefs DIR [options]     query beliefs saved by ``infer --save-beliefs DIR``
    strgm train FILE... [options]   learn the phonology by EM (see ``strgm train --help``)
    strgm rules FILE [options]      learn ordered rewrite rules and URs
    strgm pcfg train|parse ...      Bayesian PCFGs (see ``strgm pcfg --help``)
    strgm treebank grammar|yield|score ...  treebank PCFGs and bracket scores
    strgm tsg train|parse|show ...          Bayesian tree substitution grammars
    strgm hmm train|score|decode ...        infinite HMMs (HDP-HMM-LT, HDP-HMM, sticky)
    strgm plot KIND INPUT... --out FILE     pictures from the files commands write
    strgm validate FILE...                  check JSON outputs and model files
    strgm --version                         the installed version
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from strgm.cli import (beliefs, draw, hmm, lexicalized, paradigm, pcfg, rules, train,
                       treebank, tsg, validate)
from strgm.cli.errors import (
    bug_line,
    error_line,
    is_write_failure,
    memory_line,
    one_line_warnings,
    output_line,
)
from strgm.cli.help_text import OVERVIEW, finish
from strgm.cli.suggest import SuggestingParser
from strgm.cli.version import package_version
from strgm.errors import StrgmError
from fst_factors.wfsa.interrupts import hard_stop

#: Exit statuses of :func:`main`.
EXIT_INPUT, EXIT_BUG, EXIT_INTERRUPTED, EXIT_PIPE = 2, 3, 130, 141


def build_parser() -> argparse.ArgumentParser:
    """Every subcommand, each from its own module, imported explicitly (a module that
    fails to import is an error of ``strgm`` itself, never a silently missing command)."""
    p = SuggestingParser(prog="strgm", description=OVERVIEW,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog="--debug (any command): show the traceback of an error")
    p.add_argument("--version", action="version", version=f"strgm {package_version()}",
                   help="print strgm's version and exit")
    sub = p.add_subparsers(dest="command", required=True,
                           parser_class=SuggestingParser)
    paradigm.add_subparsers(sub)
    beliefs.add_subparser(sub)
    pcfg.add_subparser(sub)
    train.add_subparser(sub)
    rules.add_subparser(sub)
    treebank.add_subparser(sub)
    lexicalized.add_subparser(sub)
    tsg.add_subparser(sub)
    hmm.add_subparser(sub)
    draw.add_subparser(sub)
    validate.add_subparser(sub)
    return finish(p)


def _quiet_pipe() -> int:
    """Output piped into ``head``, say, was closed: stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes
    return EXIT_PIPE


def main(argv: Optional[list] = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 input error, 3 bug,
    130 interrupted, 141 closed pipe). Every error is one line starting ``strgm: error:``
    (:mod:`strgm.cli.errors`), every warning one line ``strgm: warning:``; ``--debug``
    re-raises with the traceback."""
    from_process = argv is None  # the program itself, not a caller in Python
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    args = build_parser().parse_args(argv)
    try:
        # Ctrl-C stops even inside an OpenFst call; warnings are "strgm: warning:" lines
        with hard_stop(from_process), one_line_warnings():
            code = int(args.func(args) or 0)
        return _flush_failed() or code  # output that cannot be written is no exit 0
    except BrokenPipeError:
        return _quiet_pipe()
    except (KeyboardInterrupt, Exception) as e:  # SystemExit passes through
        if debug:
            raise
        line, code = _report(e, _command(args), getattr(args, "scheduler", None))
        print(line, file=sys.stderr)
        return code


def _flush_failed() -> int | None:
    """Write out what was printed: None when that worked, else the exit status after the
    one error line (a closed pipe stays quiet)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_pipe()
    except OSError as e:
        if not is_write_failure(e):
            raise
        print(output_line(e), file=sys.stderr)
        return EXIT_INPUT
    return None


def _interrupted_in_compiled_code(e: BaseException) -> bool:
    """Ctrl-C that arrived while a compiled (numba) kernel ran: Python raises the
    KeyboardInterrupt as the kernel returns, and the caller sees a SystemError ("returned
    a result with an exception set") whose context is that KeyboardInterrupt."""
    seen = 0
    while e is not None and seen < 8:
        if isinstance(e, KeyboardInterrupt):
            return True
        e, seen = e.__cause__ or e.__context__, seen + 1
    return False


def _command(args) -> str:
    """The subcommand that ran, as typed: "infer", "hmm train"."""
    sub = getattr(args, f"{args.command}_command", None)
    return f"{args.command} {sub}" if isinstance(sub, str) else args.command


def _report(e: BaseException, command: str = "",
            scheduler: str | None = None) -> tuple[str, int]:
    """(the one error line, the exit status) of an exception that ended ``command``."""
    if isinstance(e, StrgmError):
        return error_line(e), EXIT_INPUT
    if isinstance(e, KeyboardInterrupt) or _interrupted_in_compiled_code(e):
        return error_line("interrupted"), EXIT_INTERRUPTED
    if is_write_failure(e):
        return output_line(e), EXIT_INPUT
    if isinstance(e, MemoryError):
        return memory_line(e, command, scheduler), EXIT_INPUT
    return bug_line(e), EXIT_BUG
