"""``strgm tsg train|parse|show``: outputs, resume, one-line errors naming file and line,
nothing half-written."""

import json

import pytest

from tests.robustness.harness import assert_clean_error, run_cli

MRG = """( (S (NP-SBJ (DT The) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .)) )
( (S (NP-SBJ-1 (DT the) (NN dog)) (VP (VBD walked) (NP (-NONE- *-1))) (. .)) )
( (S (NP-SBJ (NNP Rex)) (VP (VBD barked) (PP (IN at) (NP (DT the) (JJ big) (JJ red)
   (NN cat)))) (. .)) )
( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)) (. .)) )
( (S (NP-SBJ (DT the) (NN cat)) (VP (VBD barked)) (. .)) )
"""


@pytest.fixture
def tb(tmp_path):
    (tmp_path / "a.mrg").write_text(MRG)
    return tmp_path


def _train(tmp, *extra, name="m.json"):
    o = run_cli(["tsg", "train", tmp / "a.mrg", "--save", tmp / name, "--iters", "4",
                 *extra])
    assert o.code == 0, o.stderr
    return tmp / name, o


def test_train_show_parse(tb):
    model, o = _train(tb, "--trace-json", tb / "trace.json")
    assert "sweep 4: log-likelihood" in o.stderr and "model written" in o.stderr
    assert json.loads(model.read_text())["format"] == "strgm-tsg-model"
    assert len(json.loads((tb / "trace.json").read_text())["trace"]) == 4
    show = run_cli(["tsg", "show", model, "--top", "3"])
    assert show.code == 0 and show.stdout.splitlines()[0] == "count\telementary tree"
    assert len(show.stdout.splitlines()) == 4
    (tb / "s.txt").write_text("The dog barked .\nthe cat sat loudly .\nZorro barked .\n")
    for extra in (["--decode", "mer"], ["--decode", "mpd"], ["--mer-objective", "product"]):
        p = run_cli(["tsg", "parse", model, tb / "s.txt", "--quiet", *extra])
        assert p.code == 0, p.stderr
        lines = p.stdout.splitlines()
        assert len(lines) == 3
        assert lines[0].startswith("(TOP (S (NP (DT The) (NN dog))")
        assert "Zorro" in lines[2] and "|<" not in p.stdout


def test_resume_equals_uninterrupted(tb):
    full, _ = _train(tb, "--iters", "4", name="full.json")
    ck = tb / "ck.json"
    _train(tb, "--iters", "2", "--checkpoint", ck, name="half.json")
    resumed, _ = _train(tb, "--iters", "4", "--resume", ck, name="resumed.json")
    assert json.loads(full.read_text())["state"] == json.loads(resumed.read_text())["state"]
    o = run_cli(["tsg", "train", tb / "a.mrg", "--save", tb / "x.json", "--iters", "4",
                 "--resume", ck, "--seed", "3"])
    assert_clean_error(o, "ck.json")
    assert "--seed" in o.stderr and not (tb / "x.json").exists()


def test_bad_inputs(tb):
    (tb / "bad.mrg").write_text("( (S (NP (DT the) (NN dog)) (VP (VBD ran)) )\n")
    o = run_cli(["tsg", "train", tb / "bad.mrg", "--save", tb / "m.json"])
    assert_clean_error(o, "bad.mrg")
    assert not (tb / "m.json").exists()
    (tb / "empty.mrg").write_text("")
    o = run_cli(["tsg", "train", tb / "empty.mrg", "--save", tb / "m.json"])
    assert_clean_error(o, "empty.mrg")
    model, _ = _train(tb)
    (tb / "long.txt").write_text("the dog barked .\nthe big red cat barked loudly .\n")
    o = run_cli(["tsg", "parse", model, tb / "long.txt", "--max-length", "5"])
    assert_clean_error(o, "long.txt")
    assert ":2" in o.stderr or "line 2" in o.stderr
    assert o.stdout == ""
    d = json.loads(model.read_text())
    d["trees"][0] = d["trees"][0].replace("(S ", "(S{x} ", 1)
    (tb / "foreign.json").write_text(json.dumps(d))
    o = run_cli(["tsg", "parse", tb / "foreign.json", tb / "long.txt"])
    assert_clean_error(o, "foreign.json")
    o = run_cli(["tsg", "show", tb / "long.txt"])
    assert_clean_error(o, "long.txt")
    o = run_cli(["tsg", "train", tb / "a.mrg", "--save", tb / "m2.json", "--s", "1.5"])
    assert_clean_error(o, "--s")


@pytest.mark.parametrize("flag,root", [([], "(TOP (S "), (["--no-top"], "(S "),
                                       (["--top"], "(TOP (S ")])
def test_tsg_and_pcfg_parse_print_one_tree_format(tb, flag, root):
    model, _ = _train(tb)
    assert run_cli(["treebank", "grammar", tb / "a.mrg", "--out", tb / "g.lt"]).code == 0
    (tb / "s.txt").write_text("The dog barked .\nthe cat sat .\n")
    tsg = run_cli(["tsg", "parse", model, tb / "s.txt", "--quiet", *flag])
    pcfg = run_cli(["pcfg", "parse", tb / "g.lt", tb / "s.txt", *flag])
    assert tsg.code == 0 and pcfg.code == 0, tsg.stderr + pcfg.stderr
    for out in (tsg.stdout, pcfg.stdout):
        assert [ln[:len(root)] for ln in out.splitlines()] == [root, root]
    # the same sentences, the same trees, whichever parser printed them
    assert tsg.stdout == pcfg.stdout
    # control: the TOP root is the only difference between the two formats
    top = run_cli(["tsg", "parse", model, tb / "s.txt", "--quiet"]).stdout.splitlines()
    bare = run_cli(["tsg", "parse", model, tb / "s.txt", "--quiet", "--no-top"])
    assert [f"(TOP {ln})" for ln in bare.stdout.splitlines()] == top


def test_tsg_train_and_pcfg_parse_announce_the_files_they_write(tb):
    trace = tb / "trace.json"
    _, o = _train(tb, "--trace-json", trace)
    assert f"wrote {trace}" in o.stderr
    assert run_cli(["treebank", "grammar", tb / "a.mrg", "--out", tb / "g.lt"]).code == 0
    (tb / "s.txt").write_text("The dog barked .\n")
    p = run_cli(["pcfg", "parse", tb / "g.lt", tb / "s.txt", "--scores", tb / "sc.tsv"])
    assert p.code == 0 and f"wrote {tb / 'sc.tsv'}" in p.stderr
    assert p.stdout.splitlines() == [ln for ln in p.stdout.splitlines() if ln.startswith("(")]
    # control: without the options nothing is announced
    _, plain = _train(tb, name="plain.json")
    bare = run_cli(["pcfg", "parse", tb / "g.lt", tb / "s.txt"])
    assert "wrote " not in plain.stderr and "wrote " not in bare.stderr
