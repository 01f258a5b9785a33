"""evalb's parameter files and report: equal to evalb's own output on its sample files
(``sample.rsl``, parsed here) and, byte for byte, to the real evalb's output on made-up
files exercising every parameter (``data/evalb_made``); broken variants fail the same
comparisons; bad parameter files are one-line errors naming file and line."""

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

import strgm.grammars.evalb_report as er
from strgm.errors import InputError
from strgm.grammars.evalb_params import (COLLINS, DEFAULTS, EvalbParams,
                                         format_evalb_params, parse_evalb_params,
                                         read_evalb_params)
from strgm.grammars.evalb_report import evalb_lines, score_evalb, score_sentence
from tests.robustness.harness import assert_clean_error, run_cli

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "evalb_sample"
MADE = DATA / "evalb_made"
#: (gold and test stem, parameter file) of every output of the real evalb kept in MADE
RUNS = [("made", "collins"), ("made", "made"), ("made", "unlabeled"), ("flat", "collins"),
        ("sample", "sample")]


def _files(stem: str, prm: str) -> tuple:
    where = SAMPLE if stem == "sample" else MADE
    prm_dir = SAMPLE if prm == "sample" else MADE
    return prm_dir / f"{prm}.prm", where / f"{stem}.gld", where / f"{stem}.tst"


def _report(prm, gold, test, params=None):
    params = params or read_evalb_params(prm)
    return score_evalb(evalb_lines(gold), evalb_lines(test), params, str(test))


def _summary(text: str) -> dict:
    """{block title: {line name: value text}} of an evalb report's summary."""
    blocks, title = {}, None
    for line in text.replace("\r", "").split("=== Summary ===", 1)[1].splitlines():
        if line.startswith("-- "):
            title = line
            blocks[title] = {}
        elif "=" in line:
            name, value = line.split("=")
            blocks[title][name.strip()] = value.strip()
    return blocks


def _rows(text: str) -> dict:
    """{sentence id: the row's fields} of an evalb report."""
    rows = {}
    for line in text.replace("\r", "").splitlines():
        fields = line.split()
        if len(fields) == 12 and re.fullmatch(r"\d+", fields[0]):
            rows[int(fields[0])] = fields
    return rows


def _totals_line(text: str) -> list:
    lines = text.replace("\r", "").split("=== Summary ===")[0].rstrip("\n").splitlines()
    return lines[-1].split()


# -- evalb's sample: sample.rsl ----------------------------------------------------------

def test_sample_summary_equals_sample_rsl():
    want = _summary((SAMPLE / "sample.rsl").read_text())
    got = _summary(_report(*_files("sample", "sample")).format())
    assert list(got) == list(want) == ["-- All --", "-- len<=40 --"]
    for title, lines in want.items():
        assert len(lines) == 11
        assert {k: got[title][k] for k in lines} == lines, title
        # the one line sample.rsl's older evalb did not print
        assert set(got[title]) - set(lines) == {"Bracketing FMeasure"}
    assert got["-- All --"]["Number of Error sentence"] == "5"  # the file is not trivial


def test_sample_rows_equal_sample_rsl():
    want = _rows((SAMPLE / "sample.rsl").read_text())
    text = _report(*_files("sample", "sample")).format()
    got = _rows(text)
    assert sorted(got) == sorted(want) == list(range(1, 25))
    statuses = {r[2] for r in want.values()}
    assert statuses == {"0", "1", "2"}
    for i, row in want.items():
        if row[2] == "0":
            assert got[i] == row, i
        else:  # the 1997 evalb printed the gold length as Words; evalb.c prints 0
            assert got[i][:9] + got[i][10:] == row[:9] + row[10:] and got[i][9] == "0", i
    old, new = _totals_line((SAMPLE / "sample.rsl").read_text()), _totals_line(text)
    assert old[:5] + old[6:] == new[:5] + new[6:]
    assert int(new[5]) == sum(int(r[8]) for r in got.values()) == 1  # crossing brackets


# -- the real evalb's outputs ------------------------------------------------------------

@pytest.mark.parametrize("stem,prm", RUNS)
def test_report_equals_the_real_evalb_byte_for_byte(stem, prm):
    want = (MADE / f"{stem}.{prm}.rsl").read_text()
    assert _report(*_files(stem, prm)).format() == want


def test_no_parse_counts_as_evalb_counts_an_empty_line(tmp_path):
    prm, gold, test = _files("made", "collins")
    lines = evalb_lines(test)
    assert lines.count("") == 1
    alt = tmp_path / "t.tst"
    alt.write_text("\n".join("(no parse)" if x == "" else x for x in lines) + "\n")
    assert _report(prm, gold, alt).format() == (MADE / "made.collins.rsl").read_text()


def test_max_error_stops_where_evalb_stops():
    prm, gold, test = _files("made", "maxerror")
    want = (MADE / "made.maxerror.rsl").read_text()
    assert "Summary" not in want
    stop = max(_rows(want)) + 1
    with pytest.raises(InputError) as e:
        _report(prm, gold, test)
    assert (e.value.path, e.value.line) == (str(test), stop)
    assert "MAX_ERROR 1" in str(e.value)
    more = dataclasses.replace(read_evalb_params(prm), max_error=10)
    done = _report(prm, gold, test, more).format()
    assert done.startswith(want)


def test_every_setting_of_made_prm_changes_the_report():
    prm, gold, test = _files("made", "made")
    lines = prm.read_text().splitlines()
    base = _report(prm, gold, test).format()
    settings = [i for i, x in enumerate(lines) if x and not x.startswith("#")]
    for i in settings:
        kept = "\n".join(lines[:i] + lines[i + 1:])
        params = parse_evalb_params(kept)
        if params == read_evalb_params(prm):  # the line repeats a default
            assert lines[i].split()[0] in ("DEBUG", "MAX_ERROR", "LABELED")
            continue
        assert _report(prm, gold, test, params).format() != base, lines[i]


def test_unlabeled_counts_spans_only():
    g = "(S (NP (DT a) (NN b)) (VP (VB c)))"
    t = "(S (X (DT a) (NN b)) (Y (VB c)))"
    assert score_sentence(g, t, COLLINS).matched == 1
    assert score_sentence(g, t, dataclasses.replace(COLLINS, labeled=False)).matched == 3


# -- negative controls: broken variants fail the comparisons -----------------------------

def _matches_all_runs() -> None:
    for stem, prm in RUNS:
        assert _report(*_files(stem, prm)).format() == \
            (MADE / f"{stem}.{prm}.rsl").read_text(), (stem, prm)


_ADD, _COUNT, _CROSSING = er.EvalbTotals.add, er._count, er._crossing


def _skip_as_error(self, row):
    _ADD(self, dataclasses.replace(row, status=1) if row.status == 2 else row)


def _no_bracket_deletion(row, g, t, params):  # words read with DELETE_LABEL, brackets not
    _COUNT(row, g, t, dataclasses.replace(params, delete_label=frozenset()))


def test_the_comparison_passes_unbroken_and_fails_for_broken_variants(monkeypatch):
    _matches_all_runs()

    def gold_side(gold, test):  # crossing counted over gold brackets instead of test ones
        return _CROSSING(test, gold)
    broken = {
        "crossing from the gold side": (er, "_crossing", gold_side),
        "DELETE_LABEL not applied to brackets": (er, "_count", _no_bracket_deletion),
        "EQ_LABEL ignored": (EvalbParams, "same_label", lambda self, a, b: a == b),
        "2 decimals truncated": (er, "_f", lambda x: f"{x:6.2f}" if math.isnan(x) else
                                 f"{math.floor(x * 100) / 100:6.2f}"),
        "skip counted as error": (er.EvalbTotals, "add", _skip_as_error),
    }
    for name, (owner, attr, fake) in broken.items():
        with monkeypatch.context() as m:
            m.setattr(owner, attr, fake)
            try:
                _matches_all_runs()
            except AssertionError:
                continue
        pytest.fail(f"the broken variant {name!r} passed the comparison")


def test_deleting_no_label_fails_the_sample():
    prm, gold, test = _files("sample", "sample")
    params = read_evalb_params(prm)
    kept = dataclasses.replace(params, delete_label=frozenset())
    assert _summary(_report(prm, gold, test, kept).format()) != \
        _summary(_report(prm, gold, test, params).format())


# -- parameter files ---------------------------------------------------------------------

def test_collins_constant_is_collins_prm_and_round_trips():
    p = read_evalb_params(MADE / "collins.prm")
    assert p == COLLINS and p.eq_label_map == {"PRT": "ADVP"}
    assert parse_evalb_params(format_evalb_params(COLLINS)) == COLLINS
    s = read_evalb_params(SAMPLE / "sample.prm")
    assert s.eq_word == (("This", "this"),) and s.same_word("this", "This")
    assert "." not in s.delete_label and s.cutoff_len == 40 and s.labeled
    m = read_evalb_params(MADE / "made.prm")
    assert m.quote_label == {"''", "POS"} and m.cutoff_len == 6
    assert parse_evalb_params("") == DEFAULTS and DEFAULTS.max_error == 10


def test_bracket_score_takes_its_conventions_from_collins():
    import strgm.grammars.bracket_score as bs

    assert bs.PUNCTUATION == COLLINS.delete_label - {"TOP", "-NONE-"}
    assert bs.EQUIVALENT == {"PRT": "ADVP"}


def test_eq_label_is_evalb_pairs_not_their_closure():
    p = parse_evalb_params("EQ_LABEL A B\nEQ_LABEL B C\n")
    assert p.same_label("A", "B") and p.same_label("C", "B") and not p.same_label("A", "C")
    assert p.eq_label_map == {"B": "A", "C": "A"}


BAD = [
    ("DEBUG 0\nCUTOF_LEN 40\n", 2, "unknown key 'CUTOF_LEN'"),
    ("DEBUG 0\n\nDELETE_LABEL\n", 3, "DELETE_LABEL has no value"),
    ("CUTOFF_LEN forty\n", 1, "CUTOFF_LEN takes one integer"),
    ("CUTOFF_LEN 4.5\n", 1, "CUTOFF_LEN takes one integer"),
    ("# c\nCUTOFF_LEN 40 # words\n", 2, "first column"),
    ("LABELED 2\n", 1, "LABELED must be from 0 to 1"),
    ("MAX_ERROR -1\n", 1, "MAX_ERROR must be at least 0"),
    ("EQ_LABEL ADVP\n", 1, "EQ_LABEL takes two labels"),
    ("EQ_WORD a b c\n", 1, "EQ_WORD takes two words"),
    ("DELETE_LABEL TOP S1\n", 1, "DELETE_LABEL takes one label"),
    ("DEBUG 0\n  LABELED 1\n", 2, "indented line"),
    ("debug 0\n", 1, "unknown key 'debug'"),
]


@pytest.mark.parametrize("text,line,what", BAD)
def test_bad_parameter_files_name_file_and_line(tmp_path, text, line, what):
    f = tmp_path / "bad.prm"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        read_evalb_params(f)
    assert (e.value.path, e.value.line) == (str(f), line)
    assert what in str(e.value) and str(e.value).startswith(f"{f}:{line}: ")


def test_crlf_comments_and_blank_lines_are_read_as_evalb_reads_them():
    p = parse_evalb_params("## c\r\n\r\nDELETE_LABEL #\r\nCUTOFF_LEN 7   \r\n")
    assert p.delete_label == {"#"} and p.cutoff_len == 7


# -- the command line --------------------------------------------------------------------

def _cli(*args):
    return run_cli(["treebank", "score", *args])


def test_cli_prints_evalbs_report_and_summary():
    prm, gold, test = _files("made", "made")
    full = _cli(gold, test, "--evalb-params", prm, "--per-sentence")
    assert full.code == 0 and full.stdout == (MADE / "made.made.rsl").read_text()
    assert "2 error sentence(s)" in full.stderr and "line 5: Words unmatch" in full.stderr
    short = _cli(gold, test, "--evalb-params", prm)
    assert short.stdout.startswith("=== Summary ===")
    assert _summary(short.stdout) == _summary(full.stdout)


def test_cli_json_has_evalbs_numbers():
    prm, gold, test = _files("made", "made")
    o = _cli(gold, test, "--evalb-params", prm, "--json", "--per-sentence")
    assert o.code == 0, o.stderr
    d = json.loads(o.stdout)
    want = _summary((MADE / "made.made.rsl").read_text())
    names = {"Bracketing Recall": "recall", "Bracketing Precision": "precision",
             "Bracketing FMeasure": "fmeasure", "Complete match": "complete_match",
             "Average crossing": "average_crossing", "No crossing": "no_crossing_rate",
             "2 or less crossing": "two_or_less_crossing_rate",
             "Tagging accuracy": "tagging_accuracy",
             "Number of sentence": "sentences", "Number of Error sentence":
             "error_sentences", "Number of Skip  sentence": "skip_sentences",
             "Number of Valid sentence": "valid_sentences"}
    for block, title in (("all", "-- All --"), ("cutoff", "-- len<=6 --")):
        assert {names[k]: float(v) for k, v in want[title].items()} == \
            {k: d["evalb"][block][k] for k in names.values()}
    assert d["format"] == "strgm-treebank-score" and d["evalb"]["params"]["CUTOFF_LEN"] == 6
    assert len(d["evalb"]["rows"]) == 24 and d["sentences"] == 24
    assert d["recall"] == pytest.approx(d["evalb"]["all"]["recall"] / 100, abs=5e-5)
    jsonschema = pytest.importorskip("jsonschema")
    schema = Path(er.__file__).parents[1] / "schemas" / "strgm-treebank-score.schema.json"
    jsonschema.validate(d, json.loads(schema.read_text()))


def test_cli_reads_mrg_gold_tree_by_tree(tmp_path):
    prm, gold, test = _files("made", "collins")
    lines = evalb_lines(gold)[:12]  # (TOP ...) trees, one per line
    mrg = tmp_path / "g.mrg"
    mrg.write_text("".join(f"( {x.replace(') (', ')' + chr(10) + '   (')} )\n"
                           for x in lines))
    assert len(mrg.read_text().splitlines()) > 24
    t = tmp_path / "t.tst"
    t.write_text("\n".join(evalb_lines(test)[:12]) + "\n")
    g = tmp_path / "g.gld"
    g.write_text("\n".join(lines) + "\n")
    a = _cli(mrg, t, "--evalb-params", prm, "--per-sentence")
    b = _cli(g, t, "--evalb-params", prm, "--per-sentence")
    assert a.code == b.code == 0 and a.stdout == b.stdout and "Summary" in a.stdout


def test_cli_bad_parameter_file_is_one_line_before_scoring(tmp_path):
    prm = tmp_path / "bad.prm"
    prm.write_text("DEBUG 0\nCUTOFF_LEN forty\n")
    _, gold, test = _files("made", "made")
    o = _cli(gold, test, "--evalb-params", prm)
    assert_clean_error(o, f"{prm}:2:", "CUTOFF_LEN")
    assert o.stdout == ""
    o = _cli(tmp_path / "missing.gld", test, "--evalb-params", prm)  # the file comes first
    assert_clean_error(o, f"{prm}:2:")


def test_cli_refuses_max_length_and_per_sentence_alone():
    prm, gold, test = _files("made", "made")
    assert_clean_error(_cli(gold, test, "--evalb-params", prm, "--max-length", "40"),
                       "--max-length", "CUTOFF_LEN")
    assert_clean_error(_cli(gold, test, "--per-sentence"), "--per-sentence",
                       "--evalb-params")


def test_cli_max_error_and_line_count_errors(tmp_path):
    prm, gold, test = _files("made", "maxerror")
    assert_clean_error(_cli(gold, test, "--evalb-params", prm), f"{test}:7:", "MAX_ERROR")
    short = tmp_path / "t.tst"
    short.write_text("\n".join(evalb_lines(test)[:5]) + "\n")
    assert_clean_error(_cli(gold, short, "--evalb-params", prm), str(short),
                       "5 test lines for 24")
