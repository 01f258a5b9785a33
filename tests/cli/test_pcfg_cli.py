"""The ``pcfg`` subcommand through ``strgm.cli.main``: outputs, errors, and sampler
checkpoints that resume to byte-identical output at every checkpoint boundary."""

import json

import numpy as np
import pytest

from strgm.grammars.johnson_format import read_grammar
from strgm.grammars import estimator_state, sampler_state
from tests.robustness.harness import assert_clean_error, run_cli

GRAMMAR = """S --> A B
S --> B A
S --> S S
A --> a
A --> b
B --> a
B --> b
"""


@pytest.fixture
def files(tmp_path):
    g = tmp_path / "g.txt"
    g.write_text(GRAMMAR)
    c = tmp_path / "c.yld"
    c.write_text("a b\nb a\na b a b\nb\n")
    return g, c, tmp_path


@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb", "gibbs", "mh"])
def test_train_writes_grammar_and_trace(files, method):
    g, c, d = files
    out, tr = d / "out.txt", d / "trace.json"
    o = run_cli(["pcfg", "train", g, c, "--method", method, "--iters", "3", "--alpha", "0.5",
                 "--out", out, "--trace-json", tr])
    assert o.code == 0, o.stderr
    assert f"[{method}] iter" in o.stderr
    assert "no parse" in o.stderr and "[4]" in o.stderr  # "b" is reported, not dropped
    assert o.stdout == ""
    h = read_grammar(out)
    assert len(h.rules) == 7
    rows = json.loads(tr.read_text(), parse_constant=lambda c: pytest.fail(c))["trace"]
    assert [r["iteration"] for r in rows][-1] == 3


def test_without_out_stdout_holds_the_grammar_only(files):
    g, c, d = files
    o = run_cli(["pcfg", "train", g, c, "--method", "gibbs", "--iters", "2"], watch=d)
    assert o.code == 0 and not o.changed
    lines = o.stdout.splitlines()
    assert len(lines) == 7 and all("-->" in ln for ln in lines)


def test_parse_and_unparsable(files):
    g, c, _ = files
    o = run_cli(["pcfg", "parse", g, c])
    assert o.code == 0
    lines = o.stdout.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("(TOP (S (") and lines[3] == "(no parse)"
    assert "\t" not in o.stdout  # trees only: scores go to --scores
    assert "lines [4]" in o.stderr
    assert run_cli(["pcfg", "parse", g, c, "--decode", "maxrule"]).code == 0


def test_bad_grammar_reports_file_line_once(files):
    g, c, d = files
    bad = d / "bad.txt"
    bad.write_text("S --> a\nfoo S --> b\n")
    line = assert_clean_error(run_cli(["pcfg", "parse", bad, c], watch=d), f"{bad}:2:")
    assert line.startswith("strgm: error: ")


# ------------------------------------------------------------ checkpoints and resume
CORPUS = "a b\nb a\na b a b\nb a a b\na a\n"
ITERS = 6


def _train(d, method, *extra, suffix=".json"):
    return ["pcfg", "train", d / "g.txt", d / "c.yld", "--method", method, "--iters", ITERS,
            "--alpha", "0.3", "--burn-in", "2", "--seed", "7", "--checkpoint-every", "1",
            "--checkpoint", d / ("ck" + suffix), "--out", d / "out.lt",
            "--trace-json", d / "trace.json", "--quiet", *extra]


def _outputs(d, suffix):
    return [(d / n).read_bytes() for n in ("out.lt", "trace.json", "ck" + suffix)]


@pytest.mark.parametrize("method, suffix, extra", [
    ("gibbs", ".json", []), ("mh", ".json", []), ("mh", ".npz", []),
    ("gibbs", ".json", ["--resample-alpha"])])
def test_resume_at_every_checkpoint_is_byte_identical(files, monkeypatch, method, suffix,
                                                      extra):
    _, _, d = files
    (d / "c.yld").write_text(CORPUS)
    (d / "g.txt").write_text(GRAMMAR)
    saved = []
    real_save = sampler_state.SamplerState.save

    def recording_save(self, path):
        real_save(self, path)
        saved.append((self.iteration, open(path, "rb").read()))

    monkeypatch.setattr(sampler_state.SamplerState, "save", recording_save)
    o = run_cli(_train(d, method, *extra, suffix=suffix))
    assert o.code == 0, o.stderr
    monkeypatch.undo()
    straight = _outputs(d, suffix)
    assert [it for it, _ in saved] == list(range(1, ITERS + 1))
    trees = {json.dumps(sampler_state.SamplerState.load(d / ("ck" + suffix)).trees)}
    for it, data in saved:  # every boundary, the last one included
        for n in ("out.lt", "trace.json"):
            (d / n).unlink()
        (d / ("ck" + suffix)).write_bytes(data)
        st = sampler_state.SamplerState.load(d / ("ck" + suffix))
        trees.add(json.dumps(st.trees))
        o = run_cli(_train(d, method, *extra, "--resume", d / ("ck" + suffix), suffix=suffix))
        assert o.code == 0, o.stderr
        assert _outputs(d, suffix) == straight, f"resumed after sweep {it}"
    assert len(trees) > 1  # the chain moves, so the comparison means something
    if extra:  # α moved too, and the resumed runs restored it
        assert len({r["alpha"] for r in json.loads(straight[1])["trace"]}) > 1


@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb"])
def test_estimator_resume_at_every_checkpoint_is_byte_identical(files, monkeypatch, method):
    """EM, MAP, VB and CVB checkpoint like the samplers: resumed from any boundary, the
    grammar, the trace and the final checkpoint are the same bytes."""
    _, _, d = files
    (d / "c.yld").write_text(CORPUS)
    (d / "g.txt").write_text(GRAMMAR)
    saved = []
    real_save = estimator_state.EstimatorState.save

    def recording_save(self, path):
        real_save(self, path)
        saved.append((self.iteration, open(path, "rb").read()))

    monkeypatch.setattr(estimator_state.EstimatorState, "save", recording_save)
    argv = [a for a in _train(d, method) if a not in ("--burn-in", "2")]
    o = run_cli(argv)
    assert o.code == 0, o.stderr
    monkeypatch.undo()
    straight = _outputs(d, ".json")
    assert [it for it, _ in saved] == list(range(1, ITERS + 1))
    assert len({json.dumps(r["neg_log_prob"]) for r in json.loads(straight[1])["trace"]}) > 1
    for it, data in saved[:-1]:
        for n in ("out.lt", "trace.json"):
            (d / n).unlink()
        (d / "ck.json").write_bytes(data)
        o = run_cli(argv + ["--resume", d / "ck.json"])
        assert o.code == 0, o.stderr
        assert _outputs(d, ".json") == straight, f"resumed after iteration {it}"
    o = run_cli(argv[:argv.index("--method") + 1] + ["gibbs"]
                + argv[argv.index("--method") + 2:] + ["--resume", d / "ck.json"], watch=d)
    assert_clean_error(o, str(d / "ck.json"))


def test_resume_with_a_foreign_rng_state_differs(files):
    """Negative control: the comparison above detects a state that is not restored."""
    _, _, d = files
    (d / "c.yld").write_text(CORPUS)
    assert run_cli(_train(d, "mh")).code == 0
    straight = _outputs(d, ".json")
    assert run_cli(_train(d, "mh", "--iters", "3")).code == 0
    ck = json.loads((d / "ck.json").read_text())
    ck["rng_state"] = np.random.default_rng(99).bit_generator.state
    (d / "ck.json").write_text(json.dumps(ck))
    o = run_cli(_train(d, "mh", "--resume", d / "ck.json"))
    assert o.code == 0, o.stderr
    assert _outputs(d, ".json")[1] != straight[1]


def test_resume_refuses_other_options_and_short_iters(files):
    _, _, d = files
    (d / "c.yld").write_text(CORPUS)
    assert run_cli(_train(d, "gibbs")).code == 0
    ck = d / "ck.json"
    o = run_cli(_train(d, "gibbs", "--seed", "8", "--resume", ck), watch=d)
    assert_clean_error(o, str(ck), "--seed")
    o = run_cli(_train(d, "gibbs", "--resume", ck, "--iters", "4"), watch=d)
    assert_clean_error(o, "--iters", "6")
    o = run_cli(_train(d, "mh", "--resume", ck), watch=d)
    assert_clean_error(o, str(ck), "gibbs")


def test_grammar_summary_instead_of_thousands_of_lines():
    """On a terminal `pcfg train` prints a summary of the grammar, not every rule."""
    from strgm.cli.pcfg import _grammar_summary

    text = "".join(f"1.0 S --> w{i}\n" for i in range(500))
    out = _grammar_summary(text)
    assert out.startswith("500 rules; the first 10:") and "… 490 more" in out
    assert len(out.splitlines()) == 13 and "--out -" in out


def test_stuck_chain_is_warned_about(tmp_path):
    """An MH chain on unambiguous sentences never changes its trees: the run says so."""
    from strgm.grammars.driver import stuck_chain

    (tmp_path / "g.lt").write_text("S --> A B\nA --> a\nB --> b\n")
    (tmp_path / "c.yld").write_text("a b\na b\n")
    o = run_cli(["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", "mh",
                 "--iters", "12", "--out", tmp_path / "o.lt", "--quiet"])
    assert o.code == 0 and "warning: the chain did not move: acceptance 1.000" in o.stderr
    moving = [{"log_p_trees": -float(i % 3)} for i in range(12)]
    assert stuck_chain(moving, "log_p_trees") is None  # negative control
    assert stuck_chain(moving[:5], "log_p_trees") is None


@pytest.mark.parametrize("method", ["gibbs", "mh"])
def test_parses_are_the_chains_final_trees_of_the_training_sentences(files, method):
    """--parses: one line per training sentence, its tree's yield the sentence and its
    rules the grammar's; the trees are the final state's (read back from the checkpoint,
    an independent record of the chain); an unparsable sentence says so."""
    from strgm.grammars.cfg import tree_rules, tree_yield

    g, c, d = files
    o = run_cli(["pcfg", "train", g, c, "--method", method, "--iters", "3", "--quiet",
                 "--out", d / "o.txt", "--parses", d / "p.txt", "--checkpoint", d / "ck"])
    assert o.code == 0, o.stderr
    lines = (d / "p.txt").read_text().splitlines()
    sents = [s.split() for s in c.read_text().splitlines()]
    assert len(lines) == len(sents) and lines[3] == "(no parse)"
    grammar = read_grammar(g)
    state = sampler_state.SamplerState.load(d / "ck")
    for line, sent, rules in zip(lines[:3], sents, state.trees):
        tree = _tree(line)
        assert list(tree_yield(tree)) == sent
        assert tree_rules(grammar, tree) == list(rules)


def _tree(line):
    from strgm.grammars.ptb import parse_trees

    (t,) = parse_trees(line)
    return t


def test_parses_needs_one_sampler_chain(files):
    g, c, d = files
    for extra in (["--method", "em"], ["--method", "gibbs", "--chains", "2"]):
        o = run_cli(["pcfg", "train", g, c, "--iters", "2", "--parses", d / "p.txt",
                     *extra], watch=d)
        assert_clean_error(o, "--parses")
