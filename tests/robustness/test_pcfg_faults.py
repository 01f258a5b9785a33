"""Fault tests for ``strgm pcfg train --method gibbs|mh --checkpoint``: the run is killed
(SIGKILL or SIGINT) at seeded random points — after a seeded random sweep, a random
fraction of a sweep later, so some kills land while a checkpoint is being written — and
then finished by repeating the command with ``--resume``. The final grammar and trace must
be byte-identical to an uninterrupted run's, and after every kill the checkpoint on disk
must load as a complete, valid state (never half-written)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from strgm.grammars.johnson_format import read_grammar, read_yld
from strgm.grammars.sampler_state import SamplerState
from strgm.grammars.samplers import CollapsedMH, GibbsPCFG

GRAMMAR = ("S --> A B\nS --> B A\nS --> S S\nA --> a\nA --> b\nB --> a\nB --> b\n"
           "A --> A A\n")
ITERS = 12


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcfg_faults")
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(["a", "b"], rng.integers(4, 10))) for _ in range(60)]
    (d / "g.lt").write_text(GRAMMAR)
    (d / "c.yld").write_text("\n".join(lines) + "\n")
    return d


def _argv(d, work, method, resume=False):
    argv = [sys.executable, "-m", "strgm.cli", "pcfg", "train", str(d / "g.lt"),
            str(d / "c.yld"), "--method", method, "--iters", str(ITERS), "--alpha", "0.5",
            "--burn-in", "3", "--seed", "11", "--checkpoint-every", "1",
            "--checkpoint", str(work / "ck.json"), "--out", str(work / "out.lt"),
            "--trace-json", str(work / "trace.json")]
    return argv + (["--resume", str(work / "ck.json")] if resume else [])


def _env():
    return dict(os.environ, PYTHONWARNINGS="ignore")


def _outputs(work):
    return (work / "out.lt").read_bytes(), (work / "trace.json").read_bytes()


def _run_killed(argv, sig, after_sweep: int, fraction: float) -> int | None:
    """Start the run; once sweep ``after_sweep`` is reported, wait ``fraction`` of the
    measured sweep time and send ``sig``. Returns the exit status."""
    p = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                         env=_env())
    last = None
    try:
        for line in p.stderr:
            if "] iter" not in line:
                continue
            now = time.perf_counter()
            sweep = int(line.split("iter")[1].split()[0])
            if sweep >= after_sweep:
                step = (now - last) if last is not None else 0.05
                time.sleep(fraction * step)
                p.send_signal(sig)
                break
            last = now
        p.stderr.read()
        return p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def _check_checkpoint(d, work, method):
    """The checkpoint on disk (if any) is a complete state of this chain."""
    ck = work / "ck.json"
    if not ck.exists():
        return None
    cls = GibbsPCFG if method == "gibbs" else CollapsedMH
    k = cls(read_grammar(d / "g.lt"), read_yld(d / "c.yld"), alpha=0.5)
    st = SamplerState.load(ck, kernel=k)  # raises on a half-written or foreign file
    assert 1 <= st.iteration <= ITERS and len(st.trace) == st.iteration
    return st.iteration


_STRAIGHT: dict = {}


def _straight(d, tmp_path, method):
    """The uninterrupted run's outputs, run once per method (the data fixture is module
    scoped, so every test of a worker compares with the same run)."""
    if (d, method) in _STRAIGHT:
        return _STRAIGHT[d, method]
    work = tmp_path / "straight"
    work.mkdir()
    p = subprocess.run(_argv(d, work, method), capture_output=True, text=True, env=_env(),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    _STRAIGHT[d, method] = _outputs(work)
    return _STRAIGHT[d, method]


def _kill_and_resume(d, tmp_path, method, sig, seed, kills):
    """Kill the chain ``kills`` times at seeded points (resuming in between), finish it,
    and return the outputs and the iterations at which the checkpoints were found."""
    rng = np.random.default_rng(seed)
    work = tmp_path / f"killed-{seed}"
    work.mkdir()
    found = []
    for _ in range(kills):
        resume = (work / "ck.json").exists()
        start = found[-1] if found and found[-1] is not None else 0
        if start >= ITERS:
            break
        after = int(rng.integers(start + 1, ITERS + 1))
        code = _run_killed(_argv(d, work, method, resume), sig, after, float(rng.random()))
        assert code in (0, 130, -signal.SIGKILL, -signal.SIGINT), code
        found.append(_check_checkpoint(d, work, method))
        assert not list(work.glob(".ck.json.*.tmp")) or sig == signal.SIGKILL
    p = subprocess.run(_argv(d, work, method, (work / "ck.json").exists()),
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    return _outputs(work), found


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["KILL", "INT"])
def test_gibbs_killed_and_resumed_is_byte_identical(data, tmp_path, sig):
    straight = _straight(data, tmp_path, "gibbs")
    out, found = _kill_and_resume(data, tmp_path, "gibbs", sig, seed=int(sig), kills=2)
    assert any(it is not None for it in found), found  # a kill did land mid-run
    assert out == straight, f"checkpoints found at sweeps {found}"


@pytest.mark.slow
@pytest.mark.parametrize("method", ["gibbs", "mh"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["KILL", "INT"])
def test_many_kill_points(data, tmp_path, method, sig):
    straight = _straight(data, tmp_path, method)
    for seed in range(8):
        out, found = _kill_and_resume(data, tmp_path, method, sig, seed=100 + seed, kills=3)
        assert out == straight, f"seed {seed}: checkpoints found at sweeps {found}"


# ------------------------------------------------------- deterministic estimators, same driver
@pytest.mark.parametrize("method", ["em", "map", "vb", "cvb"])
def test_estimator_interrupted_mid_run_resumes_byte_identical(data, tmp_path, method):
    """An estimator run interrupted (KeyboardInterrupt from inside an update) at a seeded
    random iteration resumes from its last checkpoint to the uninterrupted end state."""
    from strgm.grammars.estimators import KERNELS, EstimatorState, run
    from strgm.safe_io import strict_json

    g = read_grammar(data / "g.lt")
    corpus = read_yld(data / "c.yld")
    kw = {} if method == "em" else {"alpha": 0.5}
    k = KERNELS[method](g, corpus, **kw)
    s0 = k.init()
    want = strict_json(run(k, s0, ITERS).to_dict())
    stop_at = int(np.random.default_rng(7).integers(2, ITERS))
    ck = tmp_path / "c.json"

    def interrupt(state, row):
        if state.iteration == stop_at:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run(k, s0, ITERS, checkpoint=ck, checkpoint_every=2, callback=interrupt)
    saved = EstimatorState.load(ck, kernel=k)  # a complete state, never half-written
    assert saved.iteration == (stop_at - 1) - (stop_at - 1) % 2  # the last one before
    resumed = run(k, saved, ITERS - saved.iteration, checkpoint=ck, checkpoint_every=2)
    assert strict_json(resumed.to_dict()) == want
