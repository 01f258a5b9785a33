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
    ("S --> a\n1 2 3 S --> a\n", 2, "too many"),
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
