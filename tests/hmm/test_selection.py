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
from tests.robustness.harness import run_cli

RNG = np.random.default_rng(3)
SEQS = Sequences.from_list([RNG.integers(0, 3, size=RNG.integers(2, 6)) for _ in range(30)])


def _kernel(model="hdp", seqs=SEQS):
    return HMMSampler(seqs, HMMSettings(model=model, L=4, kappa=1.0 if model == "sticky"
                                        else 0.0), Categorical(3, 0.5))


def test_split_is_a_seeded_partition():
    train, held = sel.split_sequences(SEQS, 0.1, seed=4)
    assert (train.num_sequences, held.num_sequences) == (27, 3)
    assert train.num_tokens + held.num_tokens == SEQS.num_tokens
    again, _ = sel.split_sequences(SEQS, 0.1, seed=4)
    assert np.array_equal(train.x, again.x)
    other, _ = sel.split_sequences(SEQS, 0.1, seed=5)
    assert not np.array_equal(train.x, other.x)  # control: the seed matters


def _every_chain(seed: int, restarts: int) -> dict:
    """{(model, start, seed): (per-sequence held-out log-likelihoods, states holding ≥ 1%
    of the tokens)} of every chain, each made independently."""
    train, held = sel.split_sequences(SEQS, 0.1, seed=seed)
    every = {}
    for model in sel.CANDIDATES:
        k = _kernel(model, train)
        for start in sel.STARTS:
            for s in range(seed, seed + restarts):
                st = run_chain(k, k.init(s, start=start), 4, 2, 1)
                used = np.bincount(st.z, minlength=4)
                every[model, start, s] = (posterior_of(st, k, ()).log_likelihoods(held),
                                          int((used >= 0.01 * len(st.z)).sum()))
    return every


def test_one_standard_error_rule_by_hand():
    ll = np.array([[-10.0, -10.0, -10.0, -10.0],    # best: −40, 9 states
                   [-10.5, -9.8, -10.3, -9.9],      # −40.5; sd of d = 0.29, SE 0.58
                   [-12.0, -12.0, -12.0, -12.0],    # −48, deficit 8 with SE 0
                   [-10.4, -9.9, -10.3, -9.9]])     # −40.5 too, same states as chain 1
    assert sel.one_standard_error(ll, [9, 5, 2, 5]) == 1  # fewest states within 1 SE
    assert sel.one_standard_error(ll, [9, 9, 2, 9]) == 0  # equal states: the best
    assert sel.one_standard_error(ll[2:3], [4]) == 0
    # controls: the plain argmax, and a standard error without its √S, each miss chain 1
    assert int(np.argmax(ll.sum(axis=1))) != 1
    d = ll[0] - ll[1]
    assert d.std(ddof=1) < d.sum() <= np.sqrt(4) * d.std(ddof=1)


@pytest.mark.parametrize("restarts", [1, 3])
def test_choice_follows_the_rule_over_every_chain(restarts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = sel.choose_model(_kernel, iters=4, burn_in=2, thin=1, seed=5,
                                  restarts=restarts)
        every = _every_chain(5, restarts)
    held = sel.split_sequences(SEQS, 0.1, 5)[1]
    got = {(c["model"], c["start"], c["seed"]): (c["score"], c["states"])
           for c in choice.chains}
    assert list(got) == list(every)  # model, then start, then seed
    assert [v[0] for v in got.values()] == pytest.approx(
        [ll.sum() / held.num_tokens for ll, _ in every.values()], abs=1e-12)
    assert [v[1] for v in got.values()] == [n for _, n in every.values()]
    keys = list(every)
    c = sel.one_standard_error([every[k][0] for k in keys], [every[k][1] for k in keys])
    assert (choice.model, choice.start, choice.seed) == keys[c]
    assert choice.scores == pytest.approx(
        {m: max(got[k][0] for k in keys if k[0] == m) for m in sel.CANDIDATES})
    # the kept state is that chain's: its z covers the training part
    assert len(choice.state.z) == sel.split_sequences(SEQS, 0.1, 5)[0].num_tokens
    assert choice.model in choice.describe() and "standard error" in choice.describe()


def test_choice_depends_on_the_start_and_seed():
    """Control: the chains differ by start and by seed, so the choice among them is not
    the choice among models alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        every = {k: v[0].sum() for k, v in _every_chain(5, 3).items()}
    for model in sel.CANDIDATES:
        by_start = {st: max(v for k, v in every.items() if k[:2] == (model, st))
                    for st in sel.STARTS}
        assert len(set(by_start.values())) == len(sel.STARTS)
    best_seeds = {max((k for k in every if k[:2] == (m, st)), key=every.get)[2]
                  for m in sel.CANDIDATES for st in sel.STARTS}
    assert best_seeds != {5}  # a restart beats the first seed somewhere


def test_start_from_continues_the_chosen_chain():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = sel.choose_model(_kernel, iters=3, burn_in=1, thin=1, seed=1, restarts=2)
    full = _kernel(choice.model)
    first = sel.start_from(full, choice)
    assert len(first.z) == SEQS.num_tokens and first.iteration == 0
    for name in ("pi", "beta", "ell", "stop"):
        assert np.array_equal(getattr(first, name), getattr(choice.state, name))
        assert getattr(first, name) is not getattr(choice.state, name)  # a copy
    assert np.array_equal(first.params["theta"], choice.state.params["theta"])
    assert (first.alpha, first.gamma) == (choice.state.alpha, choice.state.gamma)
    # z is drawn given those parameters: on the training part's tokens it differs from
    # a fresh chain's start (control: a fresh init is not what start_from returns)
    assert not np.array_equal(first.pi, full.init(choice.seed).pi)
    full.sample(first)  # the kernel runs from it


def test_too_few_sequences_fall_back_without_runs(monkeypatch):
    few = Sequences.from_list([np.array([0, 1])] * (sel.MIN_SEQUENCES - 1))
    monkeypatch.setattr(sel, "run_chain", lambda *a, **k: pytest.fail("a run was made"))
    choice = sel.choose_model(lambda m: _kernel(m, few), 4, 2, 1, 0)
    assert choice == sel.Choice(sel.FALLBACK, {})
    assert "no held-out comparison" in choice.describe()
    only = sel.choose_model(lambda m: _kernel(m, few), 4, 2, 1, 0, candidates=("lt",))
    assert only.model == "lt"  # a named model is kept


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


def test_symbols_start_is_the_bigram_model():
    """The default start of symbol data puts each token in its symbol's state (ranked by
    frequency, the rarest sharing the last state when L is small); vectors start random."""
    x = np.array([2, 2, 2, 0, 0, 1, 3])
    seqs = Sequences.from_list([x[:4], x[4:]])
    k = HMMSampler(seqs, HMMSettings(model="hdp", L=3), Categorical(4, 0.5))
    assert k.init(0).z.tolist() == [0, 0, 0, 1, 1, 2, 2]  # 2 most frequent, 1 and 3 share
    k5 = HMMSampler(seqs, HMMSettings(model="hdp", L=5), Categorical(4, 0.5))
    assert k5.init(0).z.tolist() == [0, 0, 0, 1, 1, 2, 3]
    assert k5.init(0, start="random").z.tolist() != [0, 0, 0, 1, 1, 2, 3]  # control
    with pytest.raises(Exception, match="unknown start"):
        k5.init(0, start="nonsense")


def test_cli_restarts_record_every_chain_and_refuse_chains(tmp_path):
    lines = [" ".join("abc"[int(v)] for v in SEQS.sequence(s)) for s in range(30)]
    (tmp_path / "s.txt").write_text("\n".join(lines) + "\n")
    base = ["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json", "--iters",
            "4", "--states", "4", "--model", "hdp", "--seed", "3"]
    o = run_cli(base + ["--restarts", "2"])
    assert o.code == 0, o.stderr
    auto = json.loads((tmp_path / "m.json").read_text())["training"]["auto"]
    chains = auto["chains"]
    assert [(c["model"], c["start"], c["seed"]) for c in chains] == [
        ("hdp", st, s) for st in sel.STARTS for s in (3, 4)]
    chosen = next(c for c in chains if (c["start"], c["seed"]) == (auto["start"], auto["seed"]))
    best = max(chains, key=lambda c: c["score"])
    assert chosen["states"] <= best["states"]  # the rule never adds states to the best's
    assert chosen["score"] == best["score"] or chosen["states"] < best["states"]
    assert "trying hdp, random start, seed 4" in o.stderr
    o = run_cli(base + ["--restarts", "2", "--chains", "2"])
    assert o.code == 2 and "--restarts" in o.stderr and "--chains" in o.stderr
    o = run_cli(base)  # control: a named model without restarts makes no choice
    assert o.code == 0 and "auto" not in json.loads((tmp_path / "m.json").read_text())[
        "training"]
