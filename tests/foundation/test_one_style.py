"""One output style across commands (docs/architecture.md, command-line interface): the
IPA feature table covers the shipped examples' segments, parsers print one tree format,
``hmm`` tables carry headers and every warning reads ``strgm: warning: ...``."""

import warnings

import pytest

from strgm.datasets.examples import example
from strgm.models.ipa_features import feature_distance, feature_table, features_of


@pytest.mark.parametrize("seg", ["ɝ", "ɚ", "ə˞"])
def test_rhotic_mid_central_vowels_are_in_the_feature_table(seg):
    f = features_of(seg)
    assert f is not None and f["type"] == "vowel" and f["rhot"]
    assert not f["high"] and not f["low"] and not f["round"]


def test_rhotic_vowels_differ_from_plain_schwa_by_one_feature():
    assert feature_distance(features_of("ɝ"), features_of("ə")) == 1
    assert feature_distance(features_of("ɚ"), features_of("ə˞")) == 0
    # control: features absent from both bundles do not count
    assert feature_distance(features_of("i"), features_of("e")) == 1


def test_the_english_example_loads_without_a_feature_table_warning():
    symbols = list(example("english-verbs").alphabet().segment_symbols)
    assert "ɝ" in symbols
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = feature_table(symbols)
    assert table["ɝ"]["type"] == "vowel"
    # control: a segment the table does not know still warns
    with pytest.warns(UserWarning, match="no features for"):
        feature_table(symbols + ["ʘ"])


@pytest.mark.parametrize("tree,top,out", [
    ("(S (NP (DT a)) (VP (V b)))", True, "(TOP (S (NP (DT a)) (VP (V b))))"),
    ("(TOP (S (V b)))", True, "(TOP (S (V b)))"),
    ("(TOP (S (V b)))", False, "(S (V b))"),
    ("(S (V b))", False, "(S (V b))"),
    # a TOP over several trees cannot be left out: one tree per line
    ("(TOP (NP (N a)) (. .))", False, "(TOP (NP (N a)) (. .))"),
    (None, True, "(no parse)"), (None, False, "(no parse)")])
def test_tree_line_puts_every_tree_in_one_format(tree, top, out):
    from strgm.cli.pcfg_parse import tree_line

    assert tree_line(tree, top) == out
