"""``strgm pcfg train``'s notes name sentences by line number, as its warning does; the
estimators count them from 0, and the note used to say [3] beside the warning's [4]."""

import io
import re
from types import SimpleNamespace

import pytest

from strgm.cli import main
from strgm.cli.pcfg import _notes
from strgm.safe_io import resolve_input


@pytest.fixture
def corpus(tmp_path):
    lines = resolve_input("example:toy-corpus").read_text(encoding="utf-8").splitlines()
    f = tmp_path / "bad.yld"
    f.write_text("\n".join(lines[:3] + ["zzz qqq"] + lines[3:]) + "\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("method", ["em", "vb", "cvb"])
def test_notes_and_warning_name_the_same_line(corpus, tmp_path, capsys, method):
    assert main(["pcfg", "train", "example:toy-grammar", str(corpus), "--method", method,
                 "--iters", "2", "--quiet", "--out", str(tmp_path / "g.lt")]) == 0
    err = capsys.readouterr().err
    named = re.findall(r"\[([0-9, ]+)\]", "\n".join(
        ln for ln in err.splitlines() if "parse" in ln or "unparsable" in ln))
    assert named and set(named) == {"4"}, err
    assert "strgm: warning: 1 sentence(s) have no parse (line numbers [4])" in err


def test_a_note_is_renumbered_and_one_the_warning_repeats_is_left_out():
    res = SimpleNamespace(unparsable=[3, 7], notes=[
        "2 sentence(s) unparsable under the initial grammar: [3, 7]",
        "iteration 2: 1 rule(s) driven to zero",
        "iteration 3: MAP-EM drove rules to zero and made 1 sentence(s) unparsable: [7]"])
    log = io.StringIO()
    _notes(res, log)
    assert log.getvalue().splitlines() == [
        "note: iteration 2: 1 rule(s) driven to zero",
        "note: iteration 3: MAP-EM drove rules to zero and made 1 sentence(s) unparsable: "
        "line numbers [8]",
        "strgm: warning: 2 sentence(s) have no parse (line numbers [4, 8])"]
    # control: an initial-grammar note that the warning does not repeat is kept, renumbered
    log = io.StringIO()
    _notes(SimpleNamespace(unparsable=[3, 7], notes=[
        "1 sentence(s) unparsable under the initial grammar: [3]"]), log)
    assert log.getvalue().splitlines()[0] == (
        "note: 1 sentence(s) unparsable under the initial grammar: line numbers [4]")
