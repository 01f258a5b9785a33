"""Reader/writer of Mark Johnson's grammar format and .yld files."""

import numpy as np
import pytest

from strgm.grammars.johnson_format import (format_grammar, parse_grammar, parse_yld,
                                           read_grammar, read_yld, write_grammar)
from strgm.errors import InputError

TEXT = """# a comment
1 S --> NP VP
NP --> Al
0.5 0.01 NP --> George
VP --> barks
2 VP --> snores loudly
"""


def test_parse_and_roundtrip(tmp_path):
    g = parse_grammar(TEXT)
    assert g.start == "S"
    assert g.nonterminals == ("S", "NP", "VP")
    assert set(g.terminals) == {"Al", "George", "barks", "snores", "loudly"}
    np.testing.assert_allclose(g.weights, [1, 1, 0.5, 1, 2])
    assert g.rules[2].pseudocount == 0.01 and g.rules[0].pseudocount is None
    p = tmp_path / "g.txt"
    write_grammar(g, p)
    h = read_grammar(p)
    assert h.rules == g.rules and h.start == g.start
    assert "0.5 0.01 NP --> George" in format_grammar(g)


@pytest.mark.parametrize("bad,line,msg", [
    ("S --> a\nS a b\n", 2, "-->"),
    ("S --> a\nx S --> a\n", 2, "number"),
    ("S --> a\n1 2 3 4 S --> a\n", 2, "too many"),
    ("S --> a\n1 2 3 S --> a\n", 2, "Pitman-Yor a"),  # three numbers: py-cfg's
    ("S --> a\n-1 S --> b\n", 2, "weight"),
    ("S --> a\n1 0 S --> b\n", 2, "pseudocount"),
    ("S --> a\n1 S -->\n", 2, "empty"),
    ("S --> a\n\nS --> a\n", 3, "duplicates"),
    ("--> a\n", 1, "parent"),
])
def test_malformed_lines_name_file_and_line(tmp_path, bad, line, msg):
    p = tmp_path / "bad.gr"
    p.write_text(bad)
    with pytest.raises(InputError, match=msg) as e:
        read_grammar(p)
    assert e.value.line == line and str(e.value).startswith(f"{p}:{line}:")


def test_yld(tmp_path):
    p = tmp_path / "c.yld"
    p.write_text("the dog barks\nwalked\n\n")
    assert read_yld(p) == [("the", "dog", "barks"), ("walked",)]
    assert read_yld(p, chars=True) == [tuple("thedogbarks"), tuple("walked")]
    with pytest.raises(InputError) as e:
        parse_yld("a\n\nb\n", "x.yld")
    assert e.value.line == 2
    with pytest.raises(InputError, match="not found"):
        read_yld(tmp_path / "missing.yld")


# --- dialects: gibbs-pcfg's [weight [pseudocount]] and py-cfg's [theta [a [b]]] ---------

def test_pcfg_dialect_reads_the_second_number_as_a_pseudocount():
    from strgm.grammars.johnson_format import parse_grammar

    g = parse_grammar("2 0.5 S --> A\nA --> a\n", "g.lt", dialect="pcfg")
    assert [(r.weight, r.pseudocount) for r in g.rules] == [(2.0, 0.5), (1.0, None)]


def test_py_cfg_dialect_reads_theta_and_refuses_an_adapted_parent():
    from strgm.grammars.johnson_format import parse_grammar

    g = parse_grammar("2 1 S --> A\n0 1 3 A --> a\n1 A --> b\n", "g.lt", dialect="py-cfg")
    assert [(r.weight, r.pseudocount) for r in g.rules] == [(2.0, None), (1.0, None),
                                                            (1.0, None)]
    with pytest.raises(InputError, match=r"g.lt:2: A is adapted \(py-cfg Pitman-Yor a = 0.5"):
        parse_grammar("1 S --> A\n1 0.5 A --> a\n", "g.lt", dialect="py-cfg")


def test_auto_is_py_cfg_when_a_line_has_three_numbers():
    from strgm.grammars.johnson_format import parse_grammar

    text = "1 0.5 S --> A\n1 1 2 A --> a\n"
    with pytest.raises(InputError, match="g.lt:1: S is adapted"):
        parse_grammar(text, "g.lt")  # the a of line 1 is not taken for a pseudocount
    # control: read as gibbs-pcfg, line 1's 0.5 is a pseudocount and line 2 too long
    with pytest.raises(InputError, match="g.lt:2: too many fields.*read it as py-cfg"):
        parse_grammar(text, "g.lt", dialect="pcfg")
    assert parse_grammar("1 0.5 S --> A\nA --> a\n", "g.lt").rules[0].pseudocount == 0.5


@pytest.mark.parametrize("line,named", [("1 1.5 S --> a", "a must be in [0, 1]"),
                                        ("1 1 0 S --> a", "b must be finite and > 0"),
                                        ("1 1 nan S --> a", "b must be finite")])
def test_bad_pitman_yor_parameters_are_located_errors(line, named):
    from strgm.grammars.johnson_format import parse_grammar

    with pytest.raises(InputError, match="g.lt:1: Pitman-Yor " + named.split(" must")[0]):
        parse_grammar(line + "\n", "g.lt", dialect="py-cfg")


def test_pcfg_parse_takes_the_dialect_option(tmp_path):
    from tests.robustness.harness import assert_clean_error, run_cli

    (tmp_path / "g.lt").write_text("1 1 1 S --> A\n1 A --> a\n", encoding="utf-8")
    (tmp_path / "c.yld").write_text("a\n", encoding="utf-8")
    ok = run_cli(["pcfg", "parse", tmp_path / "g.lt", tmp_path / "c.yld"])
    assert ok.code == 0, ok.stderr
    (tmp_path / "g.lt").write_text("1 0.2 S --> A\n1 A --> a\n", encoding="utf-8")
    o = run_cli(["pcfg", "parse", tmp_path / "g.lt", tmp_path / "c.yld",
                 "--grammar-dialect", "py-cfg"], watch=tmp_path)
    assert_clean_error(o, "g.lt:1", "adapted")
