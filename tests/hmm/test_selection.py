"""``--model auto``: the held-out split and the choice among lt, hdp and sticky, checked
against each candidate's score computed independently; the CLI records the choice."""

import json
import warnings

import numpy as np
import pytest

import strgm.hmm.selection as sel
from strgm.errors import TruncationWarning
from strgm.hmm import Categorical, HMMSampler, HMMSettings
from strgm.hmm.data import Sequences
from strgm.hmm.training import posterior_of, run_chain
from tests.badinput.harness import run_cli

RNG = np.random.default_rng(3)
SEQS = Sequences.from_list([RNG.integers(0, 3, size=RNG.integers(2, 6)) for _ in range(30)])


def _kernel(model="hdp", seqs=SEQS):
    return HMMSampler(seqs, HMMSettings(model=model, L=4), Categorical(3, 0.5))


def test_split_is_a_seeded_partition():
    train, held = sel.split_sequences(SEQS, 0.1, seed=4)
    assert (train.num_sequences, held.num_sequences) == (27, 3)
    assert train.num_tokens + held.num_tokens == SEQS.num_tokens
    again, _ = sel.split_sequences(SEQS, 0.1, seed=4)
    assert np.array_equal(train.x, again.x)
    other, _ = sel.split_sequences(SEQS, 0.1, seed=5)
    assert not np.array_equal(train.x, other.x)  # control: the seed matters


def test_choice_is_the_best_held_out_score():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = sel.choose_model(_kernel(), iters=6, burn_in=3, thin=1, seed=2)
        train, held = sel.split_sequences(SEQS, 0.1, seed=2)
        scores = {}
        for model in sel.CANDIDATES:  # each candidate's run, made independently
            k = _kernel(model, train)
            post = posterior_of(run_chain(k, k.init(2), 6, 3, 1), k, ())
            scores[model] = post.log_likelihoods(held).sum() / held.num_tokens
    assert choice.scores == pytest.approx(scores, abs=1e-12)
    assert choice.model == max(scores, key=scores.get)
    assert len(set(np.round(list(scores.values()), 9))) == 3  # a real choice was made
    assert choice.model in choice.describe() and "held-out" in choice.describe()


def test_too_few_sequences_fall_back_without_runs(monkeypatch):
    few = Sequences.from_list([np.array([0, 1])] * (sel.MIN_SEQUENCES - 1))
    monkeypatch.setattr(sel, "run_chain", lambda *a, **k: pytest.fail("a run was made"))
    choice = sel.choose_model(_kernel(seqs=few), 4, 2, 1, 0)
    assert choice == sel.Choice(sel.FALLBACK, {})
    assert "no held-out comparison" in choice.describe()


def test_cli_default_is_auto_and_records_the_choice(tmp_path):
    lines = [" ".join("abc"[int(v)] for v in SEQS.sequence(s)) for s in range(30)]
    (tmp_path / "s.txt").write_text("\n".join(lines) + "\n")
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--iters", "4", "--states", "4"])
    assert o.code == 0, o.stderr
    auto = json.loads((tmp_path / "m.json").read_text())["training"]["auto"]
    assert set(auto["held_out_per_symbol"]) == set(sel.CANDIDATES)
    best = max(auto["held_out_per_symbol"], key=auto["held_out_per_symbol"].get)
    assert auto["model"] == best
    assert json.loads((tmp_path / "m.json").read_text())["settings"]["model"] == best
    assert f"chose {best}" in o.stderr
