"""One output style across commands (docs/architecture.md §1): the
IPA feature table covers the shipped examples' segments, parsers print one tree format,
``hmm`` tables carry headers, every warning reads ``strgm: warning: ...`` and every file
a command writes is announced as ``wrote FILE``."""

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


def test_warning_line_is_one_line_without_a_path():
    from strgm.cli.errors import warning_line
    from strgm.errors import ConvergenceWarning

    assert warning_line("ep stopped\nsecond line", ConvergenceWarning) == \
        "strgm: warning: ep stopped"
    assert warning_line("overflow in exp", RuntimeWarning) == \
        "strgm: warning: overflow in exp (RuntimeWarning)"
    # control: Python's own format names the category and the file, over two lines
    raw = warnings.formatwarning("ep stopped", UserWarning, "/x/strgm/a.py", 3)
    assert "UserWarning" in raw and "/x/strgm/a.py:3" in raw


def _warning_command(monkeypatch):
    """``main`` with a parser whose only command warns once and succeeds."""
    import argparse

    from strgm.cli import app

    def build():
        p = argparse.ArgumentParser(prog="strgm")
        p.set_defaults(command="x", func=lambda a: warnings.warn("raw text", UserWarning))
        return p

    monkeypatch.setattr(app, "build_parser", build)
    return app.main


def test_main_prints_each_warning_as_one_strgm_line_and_restores_the_hook(monkeypatch,
                                                                          capsys):
    main = _warning_command(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        before = warnings.showwarning
        assert main([]) == 0
        assert warnings.showwarning is before  # in-process callers keep their hook
    assert capsys.readouterr().err == "strgm: warning: raw text\n"
    # control: the same warning outside main() is Python's, recorded by the caller
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("raw text", UserWarning)
    assert [str(w.message) for w in caught] == ["raw text"]
    assert capsys.readouterr().err == ""


def test_infer_convergence_warning_reads_strgm_warning():
    from tests.robustness.harness import run_cli

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        o = run_cli(["infer", "example:english-verbs", "--max-iters", "1", "--tol", "1e-12"])
    assert o.code == 0, o.stderr
    lines = o.stderr.splitlines()
    assert any("stopped at max_iters" in ln for ln in lines), o.stderr
    for ln in lines:
        if "warning" in ln.lower():
            assert ln.startswith("strgm: warning: ") and ".py:" not in ln, ln


def _unparsable(tmp_path):
    """A grammar and a corpus whose second sentence has no parse."""
    (tmp_path / "g.lt").write_text("S --> A B\nA --> a\nB --> b\n")
    (tmp_path / "c.yld").write_text("a b\nb a\na b\n")
    return tmp_path / "g.lt", tmp_path / "c.yld"


def test_pcfg_train_announces_the_files_it_writes(tmp_path):
    from tests.robustness.harness import run_cli

    out, trace, ck = tmp_path / "o.lt", tmp_path / "t.json", tmp_path / "ck.json"
    o = run_cli(["pcfg", "train", "example:toy-grammar", "example:toy-corpus", "--iters", "2",
                 "--quiet", "--out", out, "--trace-json", trace, "--checkpoint", ck])
    assert o.code == 0, o.stderr
    wrote = [ln for ln in o.stderr.splitlines() if ln.startswith("wrote ")]
    assert wrote == [f"wrote {out}", f"wrote {trace}", f"wrote {ck}"]
    assert o.stdout == ""
    # control: a grammar on standard output is no file written
    plain = run_cli(["pcfg", "train", "example:toy-grammar", "example:toy-corpus", "--iters",
                     "2", "--quiet", "--out", "-"])
    assert plain.code == 0 and "wrote " not in plain.stderr and "-->" in plain.stdout


def test_treebank_grammar_says_wrote_its_grammar(tmp_path):
    from tests.robustness.harness import run_cli

    out = tmp_path / "g.lt"
    o = run_cli(["treebank", "grammar", "example:trees", "--out", out])
    assert o.code == 0, o.stderr
    summary, wrote = o.stderr.splitlines()
    assert summary.endswith(" signatures") and "->" not in o.stderr
    assert wrote == f"wrote {out}"


@pytest.mark.parametrize("method", [["--method", "em"], ["--method", "gibbs"],
                                    ["--method", "gibbs", "--chains", "2"]])
def test_pcfg_train_warns_of_unparsable_sentences_in_the_one_format(tmp_path, method):
    from tests.robustness.harness import run_cli

    g, corpus = _unparsable(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        o = run_cli(["pcfg", "train", g, corpus, *method, "--iters", "6", "--quiet",
                     "--out", tmp_path / "o.lt"])
    assert o.code == 0, o.stderr
    noted = [ln for ln in o.stderr.splitlines() if "have no parse" in ln]
    assert len(noted) == 1 and noted[0].startswith("strgm: warning: 1 sentence(s)"), o.stderr
    assert "[2]" in noted[0]
    for ln in o.stderr.splitlines():
        if "warning" in ln.lower():
            assert ln.startswith("strgm: warning: "), ln


def test_report_chains_warns_instead_of_printing():
    import io

    import numpy as np

    from strgm.distributed.chains import ChainsResult, report_chains

    stuck = [{"iteration": i, "log_p_trees": -1.0} for i in range(1, 13)]
    res = ChainsResult(np.zeros(1), [np.zeros(1)], [stuck], [0], [1.0], [[1]], None)
    log = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = report_chains(res, "mh", log)
    texts = [str(w.message) for w in caught]
    assert any("1 sentence(s) have no parse (line numbers [2])" in t for t in texts), texts
    assert any(t.startswith("chain 0: ") for t in texts), texts
    assert "warning" not in log.getvalue() and "acceptance rate" in log.getvalue()
    assert len(rows) == 12


def test_no_module_prints_a_bare_warning_line():
    """Every warning line carries the one prefix; a module printing ``warning: ...`` by
    itself (not ``strgm: warning: ...``) is found here."""
    import re
    from pathlib import Path

    import strgm

    bare = re.compile(r"""["']warning: """)
    found = [f"{p}:{i}" for p in Path(strgm.__file__).parent.rglob("*.py")
             for i, ln in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if bare.search(ln)]
    assert found == []
    # control: the pattern sees a bare warning and passes the prefixed one
    assert bare.search("print(f\"warning: x\")") and not bare.search("\"strgm: warning: x\"")
