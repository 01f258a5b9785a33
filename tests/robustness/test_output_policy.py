"""The one output policy (:func:`strgm.safe_io.check_outputs`), a rule per test and each
with a control that the allowed case still works:

* an output may not be an input of the run (also through a symbolic or hard link, or a
  file of an input folder; ``beliefs DIR`` may not write inside DIR);
* two outputs of one run may not share a path (or one lie in the other's directory);
* an output may not be an existing directory, nor an existing non-regular file (a FIFO,
  a device): neither is replaced;
* an output that is a symbolic link is written through: the link stays, its target is
  updated;
* ``--save-beliefs DIR`` drops only what its earlier save's manifest lists, refuses a
  directory holding anything else unless ``--force``, and then keeps those files;
* ``hmm train --resume`` refuses a checkpoint made with another ``--seed``.

Refusals follow :func:`tests.robustness.harness.assert_clean_error` (exit 2, one line
naming the option and the path, nothing created or changed). The runs are tiny: a few
sweeps of a 3-state HMM over 30 short words, one TSG sweep over 5 trees, exact BP on a
4-word paradigm.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from strgm.errors import InputError
from strgm.safe_io import atomic_write_text
from tests.robustness.harness import assert_clean_error, run_cli

WORDS = ["k a t", "k a t a", "t a k", "a t a k", "k a k", "t a t a"] * 5
MRG = """( (S (NP-SBJ (DT The) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .)) )
( (S (NP-SBJ (NNP Rex)) (VP (VBD barked) (PP (IN at) (NP (DT the) (NN cat)))) (. .)) )
( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)) (. .)) )
"""
TINY = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\n"
HMM = ["--iters", "2", "--states", "3", "--quiet"]


@pytest.fixture(scope="module")
def model_template(tmp_path_factory):
    """(sequences text, model text) of a 2-sweep HMM, trained once for the module."""
    d = tmp_path_factory.mktemp("hmm")
    (d / "seqs.txt").write_text("\n".join(WORDS) + "\n")
    o = run_cli(["hmm", "train", d / "seqs.txt", "--save", d / "m.json", *HMM])
    assert o.code == 0, o.stderr
    return (d / "seqs.txt").read_text(), (d / "m.json").read_text()


@pytest.fixture
def work(tmp_path, model_template):
    """A watched directory with the sequences, a model, a treebank folder and a paradigm."""
    w = tmp_path / "work"
    (w / "trees").mkdir(parents=True)
    (w / "seqs.txt").write_text(model_template[0])
    (w / "m.json").write_text(model_template[1])
    (w / "trees" / "a.mrg").write_text(MRG)
    (w / "tiny.tsv").write_text(TINY, encoding="utf-8")
    return w


def _ok(argv):
    o = run_cli(argv)
    assert o.code == 0, o.stderr
    return o


def _score(w, out):
    return ["hmm", "score", w / "m.json", w / "seqs.txt", "--json", out]


def _grammar(w, out):
    return ["treebank", "grammar", w / "trees", "--out", out]


def _hmm_train(w, *outputs):
    return ["hmm", "train", w / "seqs.txt", *outputs, *HMM]


def _tsg_train(w, *outputs):
    return ["tsg", "train", w / "trees", *outputs, "--iters", "1", "--quiet"]


# ------------------------------------------------------------- an output is an input
@pytest.mark.parametrize("case", ["score-json", "score-model", "train-save", "train-ckpt",
                                  "tsg-save", "grammar-out", "symlink", "hardlink"])
def test_an_output_that_is_an_input_is_refused(work, case):
    w = work
    seqs, tree = w / "seqs.txt", w / "trees" / "a.mrg"
    if case == "symlink":
        (w / "alias.txt").symlink_to(seqs)
    elif case == "hardlink":
        os.link(seqs, w / "alias.txt")
    argv, option, named = {
        "score-json": (_score(w, seqs), "--json", "the sequences"),
        "score-model": (_score(w, w / "m.json"), "--json", "the model"),
        "train-save": (_hmm_train(w, "--save", seqs), "--save", "the sequences"),
        "train-ckpt": (_hmm_train(w, "--save", w / "o.json", "--checkpoint", seqs),
                       "--checkpoint", "the sequences"),
        "tsg-save": (_tsg_train(w, "--save", tree), "--save", "a tree file"),
        "grammar-out": (_grammar(w, tree), "--out", "a tree file"),
        "symlink": (_score(w, w / "alias.txt"), "--json", "the sequences"),
        "hardlink": (_score(w, w / "alias.txt"), "--json", "the sequences"),
    }[case]
    o = run_cli(argv, watch=w)
    assert_clean_error(o, option, named, "destroy the input")


def test_outputs_beside_the_inputs_are_written(work):
    """Control: the same commands with outputs of their own, also inside the folder of
    trees they read, write them and leave every input as it was."""
    w = work
    before = {p: p.read_bytes() for p in (w / "seqs.txt", w / "m.json", w / "trees" / "a.mrg")}
    _ok(_score(w, w / "scores.json"))
    _ok(_hmm_train(w, "--save", w / "m2.json", "--checkpoint", w / "ck.json"))
    _ok(_tsg_train(w, "--save", w / "trees" / "model.json"))
    _ok(_grammar(w, w / "g.lt"))
    assert {p: p.read_bytes() for p in before} == before
    for out in ("scores.json", "m2.json", "ck.json", "trees/model.json", "g.lt"):
        assert (w / out).stat().st_size > 0, out


def test_beliefs_json_inside_the_saved_directory_is_refused(work):
    w = work
    _ok(["infer", w / "tiny.tsv", "--method", "bp", "--quiet", "--save-beliefs", w / "sv"])
    for target in (w / "sv" / "beliefs.json", w / "sv" / "query.json"):
        o = run_cli(["beliefs", w / "sv", "--json", target], watch=w)
        assert_clean_error(o, "--json", str(target), "saved-beliefs directory")
    _ok(["beliefs", w / "sv", "--json", w / "query.json"])  # control
    assert json.loads((w / "query.json").read_text())["format"] == "strgm-beliefs"
    _ok(["beliefs", w / "sv"])  # the directory still loads


# --------------------------------------------------------- two outputs at one path
@pytest.mark.parametrize("argv, option, other", [
    (lambda w: _hmm_train(w, "--save", w / "x.json", "--json", w / "x.json"), "--json",
     "--save"),
    (lambda w: _hmm_train(w, "--save", w / "x.json", "--checkpoint", w / "x.json"),
     "--checkpoint", "--save"),
    (lambda w: _tsg_train(w, "--save", w / "x.json", "--trace-json", w / "x.json"),
     "--trace-json", "--save"),
    (lambda w: ["infer", w / "tiny.tsv", "--quiet", "--json", w / "sv" / "r.json",
                "--save-beliefs", w / "sv"], "--save-beliefs", "--json"),
])
def test_two_outputs_at_one_path_are_refused(work, argv, option, other):
    (work / "sv").mkdir()
    o = run_cli(argv(work), watch=work)
    assert_clean_error(o, option, other)


def test_two_outputs_at_two_paths_are_both_written(work):
    """Control: the model and its trace, each at its own path."""
    w = work
    _ok(_hmm_train(w, "--save", w / "x.json", "--json", w / "trace.json"))
    assert json.loads((w / "x.json").read_text())["format"] == "strgm-hmm-model"
    assert json.loads((w / "trace.json").read_text())["format"] == "strgm-hmm-trace"


# ----------------------------------------------------------- an existing directory
def test_an_existing_directory_is_refused_and_a_file_in_it_written(work):
    w = work
    (w / "out").mkdir()
    for argv, option in ((_score(w, w / "out"), "--json"), (_grammar(w, w / "out"), "--out"),
                         (_hmm_train(w, "--save", w / "out"), "--save")):
        o = run_cli(argv, watch=w)
        assert_clean_error(o, option, str(w / "out"), "is a directory")
    _ok(_score(w, w / "out" / "scores.json"))  # control
    assert (w / "out" / "scores.json").is_file()


# ------------------------------------------------------------- a non-regular file
def test_a_fifo_or_device_is_refused_and_left_in_place(work, tmp_path):
    """A FIFO (outside the watched directory: reading it for the snapshot would block)
    and ``/dev/full`` are refused before any work, and stay what they were."""
    w = work
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = [fifo] + (["/dev/full"] if os.path.exists("/dev/full") else [])
    for target in targets:
        for argv, option in ((_score(w, target), "--json"), (_grammar(w, target), "--out"),
                             (_hmm_train(w, "--save", target), "--save")):
            o = run_cli(argv, watch=w)
            assert_clean_error(o, option, str(target), "not a regular file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(InputError, match="not a regular file"):
        atomic_write_text(fifo, "x")  # the library's writers refuse it too
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    old = w / "scores.json"  # control: an existing regular file is replaced
    old.write_text("earlier\n")
    _ok(_score(w, old))
    assert json.loads(old.read_text())["format"] == "strgm-hmm-scores"


# -------------------------------------------------------------- a symbolic link
def test_a_symlink_output_is_written_through_to_its_target(work):
    w = work
    (w / "real").mkdir()
    pairs = []
    for name, argv in (("scores.json", lambda p: _score(w, p)),
                       ("g.lt", lambda p: _grammar(w, p)),
                       ("model.json", lambda p: _hmm_train(w, "--save", p))):
        target, link = w / "real" / name, w / f"link-{name}"
        target.write_text("earlier\n")
        link.symlink_to(os.path.relpath(target, w))
        _ok(argv(link))
        pairs.append((link, target))
    for link, target in pairs:
        assert link.is_symlink() and link.resolve() == target.resolve()
        assert target.read_text() != "earlier\n" and stat.S_ISREG(os.lstat(target).st_mode)
    assert sorted(p.name for p in (w / "real").iterdir()) == ["g.lt", "model.json",
                                                              "scores.json"]
    plain = w / "plain.json"  # control: a plain path is a plain file
    _ok(_score(w, plain))
    assert not plain.is_symlink() and plain.is_file()


# ----------------------------------------------------------------- --save-beliefs
def _save(w, d, *extra):
    return ["infer", w / "tiny.tsv", "--method", "bp", "--quiet", "--save-beliefs", d,
            *extra]


def test_save_beliefs_keeps_foreign_files_and_needs_force_for_them(work):
    w, d = work, work / "sv"
    _ok(_save(w, d))
    index = json.loads((d / "beliefs.json").read_text())
    old = next(iter(index["variables"].values()))
    index["variables"]["gone"] = dict(old, file="0009_gone.fst")  # listed: ours to drop
    (d / "beliefs.json").write_text(json.dumps(index))
    (d / "0009_gone.fst").write_bytes((d / old["file"]).read_bytes())
    _ok(_save(w, d))  # control: a directory holding only an earlier save is replaced
    assert not (d / "0009_gone.fst").exists()
    (d / "notes.txt").write_text("keep me\n")
    o = run_cli(_save(w, d), watch=w)
    assert_clean_error(o, "--save-beliefs", "notes.txt", "--force")
    _ok(_save(w, d, "--force"))
    assert (d / "notes.txt").read_text() == "keep me\n"
    assert "beliefs.json" in os.listdir(d)
    _ok(["beliefs", d])  # the new save loads


def test_save_beliefs_never_overwrites_files_named_like_a_save(work):
    """A user's ``beliefs.json`` and ``0001_devoicing.fst`` (no manifest of a save lists
    them) are refused with and without --force, and stay as they were."""
    w, d = work, work / "mine"
    d.mkdir()
    (d / "beliefs.json").write_text('{"my": "notes"}\n')
    (d / "0001_devoicing.fst").write_text("my rule\n")
    for extra in ((), ("--force",)):
        o = run_cli(_save(w, d, *extra), watch=w)
        assert_clean_error(o, "--save-beliefs", str(d), "0001_devoicing.fst")
    _ok(_save(w, w / "fresh"))  # control: a new directory
    assert (w / "fresh" / "beliefs.json").is_file()


def test_save_beliefs_force_keeps_foreign_folders_and_links(work):
    """With --force a foreign folder (and the files in it) and a symbolic link survive
    the swap as they were; a link's target is not followed or touched. Control: without
    --force the same directory is refused and left alone."""
    w, d = work, work / "sv"
    _ok(_save(w, d))
    (d / "mine").mkdir()
    (d / "mine" / "rule.txt").write_text("devoicing\n")
    (w / "target.txt").write_text("target\n")
    os.symlink(w / "target.txt", d / "link.txt")
    o = run_cli(_save(w, d), watch=w)
    assert_clean_error(o, "--save-beliefs", "link.txt", "--force")
    _ok(_save(w, d, "--force"))
    assert (d / "mine" / "rule.txt").read_text() == "devoicing\n"
    assert os.readlink(d / "link.txt") == str(w / "target.txt")
    assert (w / "target.txt").read_text() == "target\n"
    assert not [p for p in os.listdir(w) if p.startswith(".sv.")]  # no staging left
    _ok(["beliefs", d])


# ----------------------------------------------------------- hmm --resume --seed
def test_hmm_resume_refuses_another_seed(work):
    w = work
    ck = w / "ck.json"
    _ok(["hmm", "train", w / "seqs.txt", "--save", w / "a.json", "--iters", "2",
         "--states", "3", "--quiet", "--seed", "1", "--checkpoint", ck, "--model", "lt"])
    resume = ["hmm", "train", w / "seqs.txt", "--save", w / "b.json", "--iters", "4",
              "--states", "3", "--quiet", "--resume", ck]
    o = run_cli(resume + ["--seed", "2"], watch=w)
    assert_clean_error(o, str(ck), "--seed 1, not 2")
    d = json.loads(ck.read_text())
    del d["settings"]  # a checkpoint that records no seed
    unrecorded = w / "old.json"
    unrecorded.write_text(json.dumps(d))
    o = run_cli(resume[:-1] + [unrecorded, "--seed", "1", "--model", "lt"], watch=w)
    assert_clean_error(o, str(unrecorded), "--seed unrecorded, not 1")
    # --model auto takes the model from the checkpoint, which this one does not record
    o = run_cli(resume[:-1] + [unrecorded, "--seed", "1"], watch=w)
    assert_clean_error(o, "--model", str(unrecorded), "does not record its model")
    _ok(resume + ["--seed", "1", "--checkpoint", ck])  # control: the same seed resumes
    assert json.loads(ck.read_text())["iteration"] == 4
