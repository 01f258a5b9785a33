"""Bad values of the newer ``strgm train`` options, tried as a user would (the contract
of :mod:`tests.robustness.harness`: exit 2, one line naming the option and value, no
traceback, no file written); checked before the paradigm is read."""

from __future__ import annotations

import pytest

from tests.robustness.harness import assert_clean_error, run_cli


@pytest.mark.parametrize("value", ["yes", "1", "", "ON"])
def test_bad_tier_features_value_is_refused_before_reading(tmp_path, value):
    o = run_cli(["train", str(tmp_path / "absent.tsv"), f"--tier-features={value}",
                 "--save", str(tmp_path / "m.json"), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, "--tier-features", repr(value))
    assert "absent.tsv" not in line


def test_tier_features_with_resume_is_refused_before_reading(tmp_path):
    ck = tmp_path / "ck.json"
    ck.write_text("{}", encoding="utf-8")
    o = run_cli(["train", str(tmp_path / "absent.tsv"), "--resume", str(ck),
                 "--tier-features", "on", "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, "--tier-features", "--resume")
    assert "absent.tsv" not in line


@pytest.mark.parametrize("option,value", [("--word-cost", "0"), ("--word-cost", "-1"),
                                          ("--word-cost", "nan"), ("--word-cost", "x"),
                                          ("--max-rules", "-1"), ("--max-rules", "1.5"),
                                          ("--holdout", "1"), ("--seed", "-2"),
                                          ("--beam", "0"), ("--beam", "2.5"),
                                          ("--ur-cost", "-1"), ("--ur-cost", "nan"),
                                          ("--window", "3"), ("--window", "0")])
def test_bad_rules_options_are_refused_before_reading(tmp_path, option, value):
    o = run_cli(["rules", str(tmp_path / "absent.tsv"), f"{option}={value}", "--save",
                 str(tmp_path / "g.json"), "--quiet"], watch=tmp_path)
    line = assert_clean_error(o, option, repr(value))
    assert "absent.tsv" not in line


@pytest.mark.parametrize("content", ["", "{", "[]", '{"format": "strgm-rules-v1"}',
                                     '{"format": "other"}'])
def test_a_damaged_saved_grammar_is_refused_naming_the_file(tmp_path, content):
    g = tmp_path / "g.json"
    g.write_text(content, encoding="utf-8")
    words = tmp_path / "w.tsv"
    words.write_text("R1\tro\nR1 PAST\trod\n", encoding="utf-8")
    o = run_cli(["rules", str(words), "--grammar", str(g), "--json",
                 str(tmp_path / "o.json")], watch=tmp_path)
    assert_clean_error(o, "g.json")


def test_bad_family_is_refused(tmp_path):
    o = run_cli(["train", str(tmp_path / "absent.tsv"), "--family", "rulez", "--quiet"],
                watch=tmp_path)
    assert_clean_error(o, "--family", "rulez")


@pytest.mark.parametrize("option", ["--word-cost=2", "--max-rules=3", "--beam=1",
                                    "--window=1", "--ur-cost=0"])
def test_search_options_with_a_saved_grammar_are_refused(tmp_path, option):
    g = tmp_path / "g.json"
    g.write_text("{}", encoding="utf-8")
    o = run_cli(["rules", str(tmp_path / "absent.tsv"), "--grammar", str(g), option],
                watch=tmp_path)
    assert_clean_error(o, option.split("=")[0], "--grammar")


def test_cli_defaults_are_the_librarys():
    import inspect

    from strgm.cli.rules import (BEAM_WORDS, MAX_RULES, UR_COST, WIDE_BEAM_WORDS, WINDOW,
                                 WORD_COST)
    from strgm.models import rule_search
    from strgm.models.rule_phonology import train_rule_phonology

    params = inspect.signature(train_rule_phonology).parameters
    assert (params["word_cost"].default, params["max_rules"].default,
            params["window"].default, params["ur_cost"].default) == (WORD_COST, MAX_RULES,
                                                                   WINDOW, UR_COST)
    assert BEAM_WORDS == rule_search.BEAM_WORDS
    assert WIDE_BEAM_WORDS == rule_search.WIDE_BEAM_WORDS


@pytest.mark.parametrize("kw", [{"beam": 0}, {"beam": 1.5}, {"window": 3},
                                {"window": 0}, {"ur_cost": -1.0}, {"ur_cost": float("inf")}])
def test_bad_search_settings_in_the_library_are_option_errors(kw):
    from strgm.datasets.paradigm import Paradigm
    from strgm.errors import OptionError
    from strgm.models.rule_phonology import train_rule_phonology

    para = Paradigm.from_pairs([(["R1"], "rob"), (["R1", "PL"], "robi")])
    with pytest.raises(OptionError, match=next(iter(kw))):
        train_rule_phonology(para, **kw)
