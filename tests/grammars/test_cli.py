"""The ``pcfg`` subcommand (through a private argparse parser; strgm.cli wires it in)."""

import argparse

import pytest

from strgm.datasets.johnson_format import read_grammar
from strgm.grammars.cli import add_subparser

GRAMMAR = """S --> A B
S --> B A
S --> S S
A --> a
A --> b
B --> a
B --> b
"""


def _run(argv):
    p = argparse.ArgumentParser()
    add_subparser(p.add_subparsers(dest="cmd"))
    args = p.parse_args(argv)
    return args.func(args)


@pytest.fixture
def files(tmp_path):
    g = tmp_path / "g.txt"
    g.write_text(GRAMMAR)
    c = tmp_path / "c.yld"
    c.write_text("a b\nb a\na b a b\nb\n")
    return g, c, tmp_path


@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb", "gibbs", "mh"])
def test_train_writes_grammar_and_trace(files, method, capsys):
    g, c, d = files
    out = d / "out.txt"
    assert _run(["pcfg", "train", str(g), str(c), "--method", method, "--iters", "3",
                 "--alpha", "0.5", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"[{method}] iter" in err
    assert "no parse" in err and "[4]" in err  # "b" is reported, not dropped silently
    h = read_grammar(out)
    assert len(h.rules) == 7


def test_parse_and_unparsable(files, capsys):
    g, c, _ = files
    assert _run(["pcfg", "parse", str(g), str(c)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("(S (") and lines[3].startswith("(no parse)")
    assert "lines [4]" in err
    assert _run(["pcfg", "parse", str(g), str(c), "--decode", "maxrule"]) == 0


def test_bad_grammar_reports_file_line(files, capsys):
    g, c, d = files
    bad = d / "bad.txt"
    bad.write_text("S --> a\nfoo S --> b\n")
    assert _run(["pcfg", "parse", str(bad), str(c)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err


def test_sampler_checkpoint_resume(files, capsys):
    g, c, d = files
    ck = d / "ck.json"
    assert _run(["pcfg", "train", str(g), str(c), "--method", "mh", "--iters", "2",
                 "--checkpoint", str(ck), "--quiet"]) == 0
    assert _run(["pcfg", "train", str(g), str(c), "--method", "mh", "--iters", "2",
                 "--resume", str(ck)]) == 0
    assert "iter     4" in capsys.readouterr().err
