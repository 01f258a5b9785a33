"""The grammar prior on underlying forms (``--prior pcfg[:GRAMMAR]``): the default
syllable grammar, the empty-UR mass (against enumeration), the command line, and a saved
model that keeps the learned rule weights."""

import json

import numpy as np
import pytest

from fst_factors.alphabet import Alphabet
from strgm.errors import OptionError
from strgm.features import FeatureSet, Theta, ngram_features
from strgm.features.moments import p_moments
from strgm.grammars.factor import exact_message
from strgm.grammars.factor_message import GrammarMessage, GrammarParameters
from strgm.models.grammar_prior import syllable_grammar
from strgm.models.ur_prior import parse_prior
from fst_factors.wfsa.construct import weighted_strings
from tests.robustness.harness import assert_clean_error, run_cli

WORDS = "R1\tpata\nR1 PL\tpatas\nR2\tkiti\nR2 PL\tkitis\nR3\ttapa\nR3 PL\ttapas\n"


def test_syllable_grammar_classes_from_ipa_features():
    g = syllable_grammar(["p", "t", "a", "i"])
    lex = {r.lhs: set() for r in g.rules}
    for r in g.rules:
        if r.rhs[0] in "ptai":
            lex[r.lhs].add(r.rhs[0])
    assert lex["C"] == {"p", "t"} and lex["V"] == {"a", "i"}
    no_vowels = syllable_grammar(["p", "t", "s"])  # only lone consonants remain
    assert "Syl" not in no_vowels.nt_index and "Piece" in no_vowels.nt_index
    assert set(no_vowels.terminals) == {"p", "t", "s"}


def test_empty_mass_equals_the_enumerated_mixture():
    """p̂ ∝ [e·δ_ε + (1 − e)·P_G] ⊙ ENCODE(θ), against the same mixture as a WFSA."""
    ab = Alphabet(["p", "a"])
    g = syllable_grammar(["p", "a"])
    fs = FeatureSet(ngram_features(2, 2), 2)
    cav = Theta(fs, -np.abs(np.random.default_rng(1).normal(size=len(fs))))
    e = 0.2
    msg = GrammarMessage(GrammarParameters(g), ab, max_len=4, empty=e)
    got = p_moments(msg, fs, cav)
    from fst_factors.wfsa.paths import kbest
    strings = [(s, -lw - np.log(1 - e)) for s, lw in kbest(exact_message(g, ab, 4), 10000)]
    want = p_moments(weighted_strings(strings + [((), -np.log(e))]), fs, cav)
    np.testing.assert_allclose(got.expectations, want.expectations, rtol=1e-8, atol=1e-10)
    assert got.log_z == pytest.approx(want.log_z, abs=1e-8)
    without = GrammarMessage(GrammarParameters(g), ab, max_len=4).moments(fs, cav)
    assert np.abs(without.expectations - want.expectations).max() > 1e-2  # control


def test_parse_prior_spellings():
    assert parse_prior("pcfg") == ("pcfg", None)
    assert parse_prior("pcfg:g.lt") == ("pcfg", "g.lt")
    with pytest.raises(OptionError, match="pcfg:GRAMMAR"):
        parse_prior("grammar")
    with pytest.raises(OptionError, match="needs a grammar file"):
        parse_prior("pcfg:")


def test_cli_refusals_before_any_work(tmp_path):
    (tmp_path / "w.tsv").write_text(WORDS)
    o = run_cli(["infer", tmp_path / "w.tsv", "--prior", "pcfg"], watch=tmp_path)
    assert_clean_error(o, "--method", "ep or pep")
    (tmp_path / "g.lt").write_text("Word --> C V\nC --> p\nV --> q\n")
    o = run_cli(["infer", tmp_path / "w.tsv", "--prior", f"pcfg:{tmp_path / 'g.lt'}",
                 "--method", "pep"], watch=tmp_path)
    assert_clean_error(o, "rule 2", "'q'")


@pytest.mark.slow
def test_train_saves_the_learned_grammar_and_infer_restores_it(tmp_path):
    (tmp_path / "w.tsv").write_text(WORDS)
    o = run_cli(["train", tmp_path / "w.tsv", "--prior", "pcfg", "--method", "pep",
                 "--em-iters", "1", "--no-tier", "--save", tmp_path / "m.json", "--quiet"])
    assert o.code == 0, o.stderr
    rec = json.loads((tmp_path / "m.json").read_text())["settings"]["ur_prior"]
    assert rec["kind"] == "pcfg" and rec["estimator"] == "vb"
    (theta,) = rec["theta"].values()
    assert not np.allclose(theta, theta[0])  # learned, not the uniform start
    from strgm.models.ur_prior import prior_from_record
    prior = prior_from_record(rec, "m.json")
    (params,) = prior.learned.values()
    np.testing.assert_allclose(params.theta, theta)
    o = run_cli(["infer", tmp_path / "w.tsv", "--model", tmp_path / "m.json", "--method",
                 "pep", "--quiet"])
    assert o.code == 0, o.stderr
