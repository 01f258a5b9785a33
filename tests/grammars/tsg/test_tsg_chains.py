"""``strgm tsg train --chains K``: chain 0 is the single-chain run, the other chains
start from their own seeds, split R-hat and ESS are those of the chains' traces, the
trees survive their bracketed form, and the option is checked before any work. (On a
real cluster: tests/distributed/test_distributed_cluster.py.)"""

import json

import numpy as np
import pytest

from strgm.distributed.diagnostics import chain_summary
from strgm.distributed.tsg_chains import bracketed, encode_trees
from strgm.errors import StrgmError
from strgm.grammars.ptb import parse_trees
from tests.robustness.harness import assert_clean_error, run_cli

MRG = """( (S (NP-SBJ (DT The) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .)) )
( (S (NP-SBJ (NNP Rex)) (VP (VBD barked) (PP (IN at) (NP (DT the) (JJ big) (JJ red)
   (NN cat)))) (. .)) )
( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)) (. .)) )
( (S (NP-SBJ (DT the) (NN cat)) (VP (VBD barked)) (. .)) )
"""
RUN = ["--iters", "8", "--seed", "2", "--sampler", "local"]


@pytest.fixture
def tb(tmp_path):
    (tmp_path / "a.mrg").write_text(MRG)
    return tmp_path


def _train(tmp, name, *extra):
    o = run_cli(["tsg", "train", tmp / "a.mrg", "--save", tmp / f"{name}.json",
                 "--trace-json", tmp / f"{name}.trace.json", *RUN, *extra])
    assert o.code == 0, o.stderr
    return (json.loads((tmp / f"{name}.json").read_text()),
            json.loads((tmp / f"{name}.trace.json").read_text()), o)


def test_chain_0_is_the_single_chain_run_and_the_others_have_their_own_seeds(tb):
    one, one_trace, _ = _train(tb, "one")
    three, trace, o = _train(tb, "three", "--chains", "3")
    assert three == one  # the saved model is chain 0's final state
    rows = {c: [{k: v for k, v in r.items() if k not in ("chain", "seed")}
                for r in trace["trace"] if r["chain"] == c] for c in range(3)}
    assert rows[0] == one_trace["trace"]
    assert trace["seeds"] == [2, 3, 4] and rows[1] != rows[0]  # control: other seeds
    kept = np.array([[r["log_likelihood"] for r in rows[c] if r["iteration"] > 4]
                     for c in range(3)])
    want = chain_summary(kept, "log_likelihood")
    assert trace["diagnostics"]["rhat"] == pytest.approx(want["rhat"])
    assert trace["diagnostics"]["ess"] == pytest.approx(want["ess"])
    assert f"split R-hat of the log-likelihood {want['rhat']:.4f}" in o.stderr


def test_trees_travel_as_bracketed_text():
    trees = parse_trees(MRG)
    assert [tuple(t) for t in parse_trees(encode_trees(trees))] == [tuple(t) for t in trees]
    with pytest.raises(StrgmError, match="bracketed form"):  # control: a word with a space
        encode_trees([("S", ("NN", "big dog"))])
    assert bracketed(("S", ("NN", "dog"))) == "(S (NN dog))"


def test_chains_with_a_checkpoint_are_refused_before_any_work(tb):
    o = run_cli(["tsg", "train", tb / "a.mrg", "--save", tb / "m.json", *RUN, "--chains", "2",
                 "--checkpoint", tb / "ck.json"])
    assert_clean_error(o, "--chains")
    o = run_cli(["tsg", "train", tb / "a.mrg", "--save", tb / "m.json", "--chains", "0"])
    assert_clean_error(o, "--chains")


def test_a_bad_scheduler_is_refused_before_any_work(tb):
    o = run_cli(["tsg", "train", tb / "a.mrg", "--save", tb / "m.json", "--scheduler",
                 "local:0"])
    assert_clean_error(o, "--scheduler", "local:0")


class _Spy:
    """A parser whose "tree" is the first number its stream gives, and the model's
    word mapping and restoring as identities."""

    def parse(self, words, decode, rng, objective):
        return ("S", str(rng.integers(10 ** 9)))

    map_words = staticmethod(lambda words: words)
    restore = staticmethod(lambda tree, words: tree)


def test_a_sentence_samples_from_its_own_stream_wherever_it_is_parsed():
    """What lets tsg parse run on sentence shards with the serial output. Control: one
    stream shared by the sentences of a shard gives other samples."""
    from strgm.distributed.tsg_parse import parse_sentences

    spy, sents = _Spy(), [["a"], ["b", "c"], ["d"]]
    whole = parse_sentences(spy, spy, sents, [0, 1, 2], 4, "mer", "product")
    shard = parse_sentences(spy, spy, [sents[2], sents[0]], [2, 0], 4, "mer", "product")
    assert shard == [whole[2], whole[0]] and len(set(whole)) == 3
    rng = np.random.default_rng([4, 0])
    shared = [f"(S {rng.integers(10 ** 9)})" for _ in (2, 0)]
    assert shared != shard
