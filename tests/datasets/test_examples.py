"""Sample data shipped with the package: every example loads by name and through
``example:NAME`` wherever a file is read; an unknown name lists the known ones."""

import pytest

from strgm.datasets import EXAMPLES, Paradigm, example, example_path
from strgm.errors import InputError
from tests.robustness.harness import assert_clean_error, run_cli


def test_every_example_exists_and_is_utf8():
    for name in EXAMPLES:
        p = example_path(name)
        assert p.is_file() and p.read_text(encoding="utf-8").strip()


def test_parsed_examples():
    verbs = example("english-verbs")
    assert isinstance(verbs, Paradigm) and len(verbs.entries) == 48
    syn = example("synthetic")
    urs = example("synthetic-urs")
    assert {m for e in syn.entries for m in e.morphemes} == set(urs)
    ph = example("phonemes")
    assert len(ph) == 400 and all(isinstance(s, tuple) and s for s in ph)
    with pytest.raises(InputError, match="example_path"):
        example("trees")


def test_unknown_example_lists_the_names():
    with pytest.raises(InputError, match="english-verbs, phonemes"):
        example_path("nope")


def test_commands_read_examples(tmp_path):
    o = run_cli(["infer", "example:synthetic", "--quiet", "--json", tmp_path / "o.json"])
    assert o.code == 0, o.stderr
    o = run_cli(["pcfg", "train", "example:toy-grammar", "example:toy-corpus", "--iters", "2",
                 "--quiet", "--out", tmp_path / "g.lt"])
    assert o.code == 0, o.stderr
    o = run_cli(["treebank", "grammar", "example:trees", "--out", tmp_path / "t.lt"])
    assert o.code == 0, o.stderr
    o = run_cli(["infer", "example:nope"], watch=tmp_path)
    assert_clean_error(o, "example:nope", "unknown example")


def test_the_synthetic_gold_urs_generate_the_surfaces():
    """The shipped gold URs, through the known rule cascade, give the shipped surfaces
    (so the file pair is consistent, not just present)."""
    from strgm.datasets.synthetic import apply_rules, inventory, phonology_rules
    import fst_factors.transducers as ff

    a = inventory()
    cascade = ff.rule_cascade(phonology_rules(a), a.size)
    urs = example("synthetic-urs")
    for e in example("synthetic").entries:
        ur = "".join(urs[m] for m in e.morphemes)
        assert a.join(apply_rules(cascade, a.encode(ur))) == e.surface
