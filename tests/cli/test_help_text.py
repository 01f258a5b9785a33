"""Every command's --help is written for users: each option documented, no Sphinx roles,
module docstrings or benchmark figures, one example at the end that the real parser
accepts."""

import argparse
import re
import shlex

import pytest

from strgm.cli.app import build_parser
from strgm.cli.errors import OneLineParser
from strgm.cli.help_text import EXAMPLES, commands

DEVELOPER_TEXT = re.compile(r":(?:func|mod|class|meth|data):|docstring|benchmarks/|"
                            r"\d\s*[x×]\s*(?:faster|slower)|\bCPU s\b|\d\s*ms\b")


def undocumented(parser: argparse.ArgumentParser) -> list:
    """The options and positionals of ``parser`` without help text."""
    return [a.option_strings[0] if a.option_strings else a.dest for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._VersionAction,
                                  argparse._SubParsersAction)) and not a.help]


ALL = list(commands(build_parser()))


@pytest.mark.parametrize("path,parser", ALL, ids=[" ".join(p) or "strgm" for p, _ in ALL])
def test_help_is_for_users(path, parser):
    assert undocumented(parser) == []
    text = parser.format_help()
    assert not DEVELOPER_TEXT.search(text), DEVELOPER_TEXT.search(text).group(0)
    assert text.rstrip().endswith(EXAMPLES[path])


@pytest.mark.parametrize("path", sorted(EXAMPLES), ids=lambda p: " ".join(p) or "strgm")
def test_every_example_is_accepted_by_the_parser(path):
    words = shlex.split(EXAMPLES[path])
    assert words[0] == "strgm"
    args = build_parser().parse_args(words[1:])
    named = [args.command] + [getattr(args, d) for d in ("pcfg_command", "treebank_command",
                                                           "tsg_command", "hmm_command")
                              if getattr(args, d, None)]
    assert tuple(named[:len(path)]) == path or path == ()


def test_the_checks_can_fail(capsys):
    p = OneLineParser(prog="x")
    p.add_argument("--bare")
    p.add_argument("--told", help="told")
    assert undocumented(p) == ["--bare"]
    assert DEVELOPER_TEXT.search("see :func:`main`")
    assert DEVELOPER_TEXT.search("as good on held-out WSJ, 4x faster")
    with pytest.raises(SystemExit):
        build_parser().parse_args(shlex.split("train x.tsv --no-such-option")[0:])


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=[" ".join(p) or "strgm"
                                                           for p, _ in ALL])
def test_the_help_a_user_gets_ends_with_one_example(path, capsys):
    """``strgm CMD [SUB] --help`` through the real entry point (validate and every
    subcommand included) ends with 'example:' and one command line."""
    from strgm.cli import main

    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[-2:] == ["example:", f"  {EXAMPLES[path]}"]
    assert sum(line == "example:" for line in lines) == 1


def test_every_command_is_checked_and_a_command_without_an_example_is_refused():
    from strgm.cli.help_text import finish

    assert {p for p, _ in ALL} == set(EXAMPLES)
    assert ("validate",) in EXAMPLES and ("plot",) in EXAMPLES
    # control: a command added without an example cannot be built
    p = OneLineParser(prog="strgm")
    p.add_subparsers(dest="command").add_parser("nothing-to-show")
    with pytest.raises(KeyError):
        finish(p)


def test_the_cli_copy_probability_is_the_librarys_one_default():
    """--p-copy states its default literally (the help must not load pynini); it is the
    library's P_COPY, the one default every copy-biased start takes."""
    from fst_factors.transducers.edit import P_COPY
    from strgm.cli.app import build_parser

    assert build_parser().parse_args(["infer", "x.tsv"]).p_copy == P_COPY


def test_the_cli_markov_order_is_the_librarys_one_default():
    """treebank grammar's --markov default (stated in the CLI, which must not load the
    grammar package for --help) is treebank_pcfg's own."""
    import inspect

    from strgm.cli.treebank import DEFAULT_MARKOV
    from strgm.grammars.unknown_words import treebank_pcfg

    assert inspect.signature(treebank_pcfg).parameters["horizontal"].default == DEFAULT_MARKOV
