"""strgm.distributed on a real LocalCluster of 2 worker processes (started and stopped by
the module fixture): sharded PCFG E-steps, EM and sampler chains equal the serial runs, a
worker killed during a task leaves the result unchanged, and an unreachable scheduler is
a one-line error."""

import os
import socket

import numpy as np
import pytest

pytest.importorskip("distributed")

from strgm.distributed.chains import run_chains  # noqa: E402
from strgm.distributed.cluster import TaskPool, open_pool, parse_scheduler  # noqa: E402
from strgm.distributed.pcfg_shards import ShardedEStep, shard_estep, sharded_kernel  # noqa: E402
from strgm.errors import OptionError  # noqa: E402
from strgm.grammars.cfg import Grammar, compile_grammar  # noqa: E402
from strgm.grammars.chart import corpus_inside_outside  # noqa: E402
from strgm.grammars.estimators import em, run, vb  # noqa: E402
from strgm.grammars.samplers import CollapsedMH, GibbsPCFG  # noqa: E402
from strgm.grammars.samplers import run as run_sampler  # noqa: E402
from tests.grammars.pcfg_oracles import R  # noqa: E402

G = Grammar([R("S", "A", "B"), R("S", "B", "A"), R("S", "S", "S"), R("S", "A"),
             R("A", "a"), R("A", "b"), R("A", "A", "A"),
             R("B", "a"), R("B", "b"), R("B", "a", "b")])
CORPUS = [tuple(x) for x in ["ab", "ba", "aab", "abb", "a", "bab", "abab", "bba", "aabab",
                             "abba", "b", "babab"]]


@pytest.fixture(scope="module")
def pool():
    with open_pool(parse_scheduler("local:2")) as p:
        assert p.n_workers == 2
        yield p


def test_sharded_estep_equals_serial(pool):
    cg = compile_grammar(G)
    theta = np.random.default_rng(0).dirichlet(np.ones(len(G.rules)))
    corpus = CORPUS + [("x", "a")]  # an unknown word: unparsable, as serially
    want = corpus_inside_outside(cg, corpus, theta)
    got = ShardedEStep(pool, cg, corpus)(theta)
    np.testing.assert_allclose(got.counts, want.counts, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.logZ, want.logZ, rtol=1e-10)
    assert got.unparsable == want.unparsable == [len(CORPUS)]


def test_negative_control_a_lost_shard_is_seen(pool):
    cg = compile_grammar(G)
    step = ShardedEStep(pool, cg, CORPUS)
    step.shards = step.shards[1:]  # broken: one shard's counts never added
    got = step(G.probabilities())
    want = corpus_inside_outside(cg, CORPUS, G.probabilities())
    assert not np.allclose(got.counts, want.counts, rtol=1e-10)


@pytest.mark.parametrize("method,fit", [("em", em), ("vb", vb)])
def test_em_and_vb_iterations_equal_serial(pool, method, fit):
    k = sharded_kernel(method, G, CORPUS, 0.5 if method == "vb" else None, pool=pool)
    state = run(k, k.init(), 4)
    ref = fit(G, CORPUS, iters=4, **({"alpha": 0.5} if method == "vb" else {}))
    np.testing.assert_allclose(k.result(state).theta, ref.theta, rtol=1e-10, atol=1e-13)
    for a, b in zip(state.trace, ref.trace):
        assert a["neg_log_prob"] == pytest.approx(b["neg_log_prob"], rel=1e-10)


def test_cvb_is_refused():
    with pytest.raises(OptionError, match="--method.*cvb"):
        sharded_kernel("cvb", G, CORPUS, pool=TaskPool(None))


@pytest.mark.parametrize("method,cls", [("gibbs", GibbsPCFG), ("mh", CollapsedMH)])
def test_chains_equal_serial_chains(pool, method, cls):
    got = run_chains(pool, method, G, CORPUS, chains=3, seed=5, iters=12, burn_in=4)
    serial = run_chains(TaskPool(None), method, G, CORPUS, chains=3, seed=5, iters=12,
                        burn_in=4)
    for c in range(3):
        k = cls(G, CORPUS)
        ref = run_sampler(k, k.init(5 + c), 12, burn_in=4, eval_every=1)
        np.testing.assert_array_equal(got.thetas[c], ref.theta_mean)
        assert got.traces[c] == ref.trace == serial.traces[c]
    np.testing.assert_array_equal(got.theta, np.mean(got.thetas, axis=0))
    assert got.summary == serial.summary and got.summary["chains"] == 3
    assert got.summary["draws_per_chain"] == 8


def _estep_dying_once(shard, grammar, theta, marker):
    """The real shard E-step, except that the first task to run kills its own worker
    process (os._exit: no exception, no clean-up), as a crashed node would."""
    if _first_to_claim(marker):
        os._exit(1)
    return shard_estep(shard, grammar, theta)


def _first_to_claim(marker: str) -> bool:
    """True in exactly one process: the marker is created atomically (two workers that
    start their first tasks at the same moment must not both die)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


def test_worker_killed_during_a_task_gives_the_same_result(pool, tmp_path):
    cg = compile_grammar(G)
    step = ShardedEStep(pool, cg, CORPUS)
    theta = pool.scatter(G.probabilities())
    marker = str(tmp_path / "died")
    parts = pool.map(_estep_dying_once, step.shards, step.grammar, theta, marker)
    assert os.path.exists(marker)  # a worker did die
    counts = sum(c for _, c in parts)
    want = corpus_inside_outside(cg, CORPUS, G.probabilities())
    np.testing.assert_allclose(counts, want.counts, rtol=1e-10)
    pool.client.wait_for_workers(2, timeout=60)  # the nanny restarted it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_one_line_error():
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(OptionError) as e:
        with open_pool(parse_scheduler(address), timeout=1):
            pass
    msg = str(e.value)
    assert "\n" not in msg and address in msg and "--scheduler" in msg


def _always_dies(x):
    os._exit(1)


@pytest.mark.slow  # one worker restart per retry (85 s in a loaded full run); the test
# below keeps the one error line in the default suite
def test_a_task_that_kills_every_worker_is_one_error_line(pool):
    from strgm.errors import StrgmError

    with pytest.raises(StrgmError, match="worker died") as e:
        pool.map(_always_dies, [1])
    assert "\n" not in str(e.value)
    pool.client.wait_for_workers(2, timeout=60)


def _reports_killed_worker(x):
    from types import SimpleNamespace

    from distributed import KilledWorker

    # what Dask raises once the task's last allowed worker has died
    raise KilledWorker("strgm-task", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)


def _raises_value_error(x):
    raise ValueError("not a dead worker")


def test_a_killed_worker_is_one_error_line(pool):
    """Dask's KilledWorker (here raised by the task itself, without the restarts of the
    slow test above) becomes one error line; other errors of a task pass through."""
    from strgm.errors import StrgmError

    with pytest.raises(StrgmError, match="worker died") as e:
        pool.map(_reports_killed_worker, [1])
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="not a dead worker"):  # control
        pool.map(_raises_value_error, [1])


def _sum_dying_on(x, data, holder, marker):
    """``x + sum(data)``; the first task to run on ``holder`` kills that worker process."""
    from distributed import get_worker

    if get_worker().address == holder and _first_to_claim(marker):
        os._exit(1)
    return x + sum(data)


def _lose_the_only_copy(pool, tmp_path, retries):
    """Data with one copy (what Dask's active memory manager leaves of broadcast data on
    a cluster we join), whose worker dies during the task that reads it."""
    data = pool.scatter(list(range(100)), broadcast=False)
    (holder,) = pool.client.who_has([data.future])[data.future.key]
    tasks = TaskPool(pool.client, retries=retries)
    try:
        return tasks, tasks.map(_sum_dying_on, [7], data, holder, str(tmp_path / "died"),
                                workers=[holder])
    finally:
        pool.client.wait_for_workers(2, timeout=60)


def test_data_lost_with_its_worker_is_sent_again(pool, tmp_path):
    tasks, got = _lose_the_only_copy(pool, tmp_path, retries=3)
    assert os.path.exists(tmp_path / "died")
    assert got == [7 + sum(range(100))] and tasks.rescattered == 1


def test_negative_control_without_resending_the_tasks_are_cancelled(pool, tmp_path):
    import concurrent.futures

    with pytest.raises(concurrent.futures.CancelledError, match="forgotten"):
        _lose_the_only_copy(pool, tmp_path, retries=0)


def test_a_local_cluster_keeps_every_copy_of_broadcast_data(pool):
    import time

    data = pool.scatter(list(range(10)))
    time.sleep(2.5)  # longer than one cycle of Dask's active memory manager (2 s)
    assert len(pool.client.who_has([data.future])[data.future.key]) == pool.n_workers


def _hmm_kernel():
    from strgm.hmm import Categorical, HMMSampler, HMMSettings
    from strgm.hmm.data import Sequences

    seqs = Sequences.from_list([np.array(s) for s in
                                [[0, 1, 2], [0, 1, 2, 1], [2, 1, 0], [1, 2, 1, 0], [0, 1]] * 3])
    return HMMSampler(seqs, HMMSettings(model="lt", L=4), Categorical(3, 0.5))


def test_hmm_chains_equal_serial_chains(pool):
    from strgm.distributed.hmm_chains import run_hmm_chains

    kw = dict(chains=2, seed=5, iters=8, burn_in=3, thin=1)
    got = run_hmm_chains(pool, _hmm_kernel(), **kw)
    want = run_hmm_chains(TaskPool(None), _hmm_kernel(), **kw)
    assert got.traces == want.traces and got.seeds == want.seeds == [5, 6]
    for a, b in zip(got.samples, want.samples):
        assert len(a) == len(b) == 5
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x["P"], y["P"])
            np.testing.assert_array_equal(x["params"]["theta"], y["params"]["theta"])
    assert got.summary == want.summary and got.traces[0] != got.traces[1]


def test_tsg_chains_equal_serial_chains(pool):
    from strgm.distributed.tsg_chains import encode_trees, run_tsg_chains
    from strgm.grammars.binarize import binarize
    from strgm.grammars.ptb import parse_trees

    trees = [binarize(t, 1) for t in parse_trees(
        "(S (NP (DT the) (NN dog)) (VP (VBD barked)))\n(S (NP (DT a) (NN cat)) (VP (VBD sat)"
        " (PP (IN on) (NP (DT the) (NN mat)))))\n(S (NP (NN Rex)) (VP (VBD barked)))")]
    problem = {"trees": encode_trees(trees), "sampler": "blocked", "alpha": 1.0, "s": 0.5,
               "resample_hyper": True}
    kw = dict(chains=2, seed=1, init="minimal", iters=8, settings={})
    got, got_summary = run_tsg_chains(pool, problem, **kw)
    want, want_summary = run_tsg_chains(TaskPool(None), problem, **kw)
    assert got == want and got_summary == want_summary
    assert got[0]["trace"] != got[1]["trace"]  # two chains, not one twice


def test_gibbs_tree_draws_on_sentence_shards_equal_the_serial_chain(pool):
    from strgm.distributed.pcfg_trees import ShardedTrees

    corpus = CORPUS + [("x", "a")]  # an unknown word: no parse, as serially
    serial = GibbsPCFG(G, corpus, alpha=0.5)
    sharded = GibbsPCFG(G, corpus, alpha=0.5)
    sharded.tree_sampler = ShardedTrees(pool, sharded, n_shards=3)
    a, b = serial.init(7), sharded.init(7)
    assert a.trees == b.trees and a.trees[-1] is None
    for _ in range(5):
        a, b = serial.sample(a), sharded.sample(b)
        assert a.trees == b.trees
        np.testing.assert_array_equal(a.theta, b.theta)
    assert a.rng_state == b.rng_state
    # control: another base stream gives other trees
    other = sharded.tree_sampler(b.theta, 12345, list(range(len(corpus))))
    assert [other[i] for i in range(len(corpus))] != b.trees
