"""``strgm hmm train --chains K``: chain 0 is the single-chain run of a named model, the other chains
start from their own seeds, split R-hat and ESS are those of the chains' traces, and
the option is checked before any work. (On a real cluster:
tests/distributed/test_distributed_cluster.py.)"""

import json

import numpy as np
import pytest

from strgm.distributed.diagnostics import chain_summary
from tests.robustness.harness import assert_clean_error, run_cli

WORDS = ["k a t", "k a t a", "t a k", "a t a k", "k a k", "t a t a", "a k a",
         "k a t a k", "t a", "a t"] * 3
SCHEDULE = ["--iters", "10", "--states", "5", "--burn-in", "4", "--thin", "2", "--seed", "3"]


@pytest.fixture
def data(tmp_path):
    (tmp_path / "seqs.txt").write_text("\n".join(WORDS) + "\n")
    return tmp_path


def _train(tmp, name, *extra):
    o = run_cli(["hmm", "train", tmp / "seqs.txt", "--save", tmp / f"{name}.json",
                 "--json", tmp / f"{name}.trace.json", *SCHEDULE, *extra])
    assert o.code == 0, o.stderr
    model = json.loads((tmp / f"{name}.json").read_text())
    trace = json.loads((tmp / f"{name}.trace.json").read_text())
    return model, trace, o


def test_chain_0_is_the_single_chain_run_and_the_others_have_their_own_seeds(data):
    # a named model: with --model auto the single-chain run continues the chosen chain
    one, one_trace, _ = _train(data, "one", "--model", "hdp")
    three, trace, o = _train(data, "three", "--chains", "3", "--model", "hdp")
    assert three["samples"] == one["samples"]  # the saved model is chain 0's
    rows = {c: [{k: v for k, v in r.items() if k not in ("chain", "seed")}
                for r in trace["trace"] if r["chain"] == c] for c in range(3)}
    assert rows[0] == one_trace["trace"]
    assert [r["seed"] for r in trace["trace"] if r["iteration"] == 1] == [3, 4, 5]
    assert rows[1] != rows[0] and rows[2] != rows[1]  # control: other seeds, other chains
    # the reported diagnostics are those of the chains' log-likelihoods after burn-in
    kept = np.array([[r["loglik"] for r in rows[c] if r["iteration"] > 4] for c in range(3)])
    want = chain_summary(kept, "loglik")
    got = three["training"]["diagnostics"]
    assert got["chains"] == 3 and got["draws_per_chain"] == 6
    assert got["rhat"] == pytest.approx(want["rhat"]) and got["ess"] == pytest.approx(want["ess"])
    assert f"split R-hat of the log-likelihood {want['rhat']:.4f}" in o.stderr
    assert three["training"]["seeds"] == [3, 4, 5]


def test_chains_with_a_checkpoint_are_refused_before_any_work(data):
    for extra, opt in ((["--chains", "2", "--checkpoint", str(data / "ck.json")], "--chains"),
                       (["--scheduler", "local:1", "--resume", str(data / "ck.json")],
                        "--scheduler")):
        o = run_cli(["hmm", "train", data / "seqs.txt", "--save", data / "m.json",
                     *SCHEDULE, *extra])
        assert_clean_error(o, opt)
        assert not (data / "m.json").exists()


def test_chains_must_be_a_positive_count(data):
    o = run_cli(["hmm", "train", data / "seqs.txt", "--save", data / "m.json", "--chains",
                 "0"])
    assert_clean_error(o, "--chains")


def test_a_bad_scheduler_is_refused_before_any_work(data):
    o = run_cli(["hmm", "train", data / "seqs.txt", "--save", data / "m.json",
                 "--scheduler", "local:0"])
    assert_clean_error(o, "--scheduler", "local:0")
