"""``strgm hmm train``, ``tsg train`` and ``pcfg train`` announce their work in one
stderr line before it starts (model, data, sweeps or iterations, chains), like infer,
rules and train; ``--quiet`` silences it."""

import pytest

from strgm.cli import main


def _first_err_line(capsys, argv) -> str:
    assert main(argv) == 0
    err = capsys.readouterr().err
    return err.splitlines()[0] if err else ""


def test_hmm_train_plan(tmp_path, capsys):
    argv = ["hmm", "train", "example:phonemes", "--iters", "2", "--states", "4",
            "--save", str(tmp_path / "h.json"), "--model", "lt"]
    assert _first_err_line(capsys, argv[:-2]) == (
        "strgm hmm train: --model auto: one chain of 2 sweeps of each of lt, hdp, sticky "
        "from the symbols and random starts on 90% of the sequences, scored on the other "
        "10%")
    assert _first_err_line(capsys, argv) == (
        "strgm hmm train: HDP-HMM with local transitions (at most 4 states) on 400 "
        "sequences (2488 symbols), 2 sweeps in all (burn-in 1, then 1 sweep in 1 kept), "
        "1 chain")
    line = _first_err_line(capsys, argv[:-4] + ["--chains", "2", "--model", "sticky",
                                                "--save", str(tmp_path / "c.json")])
    assert line.startswith("strgm hmm train: sticky HDP-HMM (at most 4 states)")
    assert line.endswith(", 2 chains one after another")
    # control: --quiet leaves stderr without it
    assert main(argv + ["--quiet"]) == 0
    assert "strgm hmm train:" not in capsys.readouterr().err


def test_tsg_train_plan(tmp_path, capsys):
    argv = ["tsg", "train", "example:trees", "--iters", "2", "--save",
            str(tmp_path / "t.json")]
    assert _first_err_line(capsys, argv) == (
        "strgm tsg train: DP-TSG on 8 trees, blocked sampler from minimal derivations, 2 "
        "sweeps in all (α and s resampled every sweep), 1 chain")
    assert main(argv + ["--quiet"]) == 0
    assert "strgm tsg train:" not in capsys.readouterr().err


@pytest.mark.parametrize("method, tail", [
    ("vb", "variational Bayes on 10 sentences, 3 iterations in all"),
    ("gibbs", "Gibbs sampler on 10 sentences, 3 sweeps in all (burn-in 1), 1 chain"),
])
def test_pcfg_train_plan(tmp_path, capsys, method, tail):
    argv = ["pcfg", "train", "example:toy-grammar", "example:toy-corpus", "--method",
            method, "--iters", "3", "--burn-in", "1", "--out", str(tmp_path / "g.lt")]
    assert _first_err_line(capsys, argv) == f"strgm pcfg train: {tail}"
    assert main(argv + ["--quiet"]) == 0
    assert "strgm pcfg train:" not in capsys.readouterr().err


def test_pcfg_train_plan_names_the_held_out_sentences(tmp_path, capsys):
    argv = ["pcfg", "train", "example:toy-grammar", "example:toy-corpus", "--iters", "2",
            "--heldout", "example:toy-corpus", "--out", str(tmp_path / "g.lt")]
    assert _first_err_line(capsys, argv) == (
        "strgm pcfg train: EM on 10 sentences (perplexity on 10 held-out sentences), 2 "
        "iterations in all")
