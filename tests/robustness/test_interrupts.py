"""Fault injection: ``strgm train --checkpoint`` and ``strgm infer --save-beliefs`` are
killed (SIGKILL, or SIGINT) at seeded random moments; what survives must be usable.

* train: every output (checkpoint, ``--save`` model, ``--json`` trace) is absent or
  complete (a checkpoint loads, and its trace is a prefix of the uninterrupted run's; the
  model and trace files equal the uninterrupted run's byte for byte), and resuming from
  the surviving checkpoint gives byte-identical final outputs to the uninterrupted run.
* infer: a re-save over an earlier save leaves a directory that loads and answers
  exactly as the earlier save or as the new one (never a mixture, never a load error);
  in the instant between the two renames of the swap the directory is absent and the
  earlier save waits complete under ``.NAME.old-*``.

Kill moments are drawn from [0.3, 1.05] × the measured duration of an uninterrupted run
(startup excluded is not guaranteed, so some kills land before any work — also a case).
A handful of kill points run by default; ``-m slow`` runs many more.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strgm.cli import main
from strgm.inference.result import load_beliefs
from strgm.models.em_checkpoint import load_checkpoint

PARADIGM = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\nR3\tsim\nR3 PAST\tsimd\n"
TINY = "R1\tro\nR1 PAST\trod\nR2\tʃo\nR2 PAST\tʃod\n"  # exact BP stays small
TRAIN = ["--method", "bp", "--em-iters", "3", "--l2", "0.5", "--quiet"]
OLD_SAVE = ["--method", "bp", "--quiet"]
NEW_SAVE = ["--method", "pruned", "--kbest", "5", "--quiet"]


def _run(argv, cwd):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "strgm.cli", *argv], cwd=cwd,
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert p.returncode == 0, p.stderr
    return time.perf_counter() - t0


def _killed(argv, cwd, delay, sig):
    """Start ``strgm ARGV``, send ``sig`` after ``delay`` seconds, wait for the end."""
    p = subprocess.Popen([sys.executable, "-m", "strgm.cli", *argv], cwd=cwd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    try:
        p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        p.send_signal(sig)
    _, err = p.communicate(timeout=300)
    if sig == signal.SIGINT and p.returncode not in (0, 130, -signal.SIGINT):
        pytest.fail(f"SIGINT gave exit {p.returncode}: {err.decode()[-500:]}")
    if p.returncode == 130:  # interrupted inside strgm: one error line, no traceback
        lines = [ln for ln in err.decode().splitlines()  # warnings before it are shown
                 if not ln.startswith("strgm: warning: ")]
        assert "Traceback" not in err.decode() and lines == ["strgm: error: interrupted"]
    return p.returncode


def _kill_points(seed, n, duration):
    rng = random.Random(seed)
    sigs = [signal.SIGKILL, signal.SIGINT]
    return [(rng.uniform(0.3, 1.05) * duration, sigs[i % 2]) for i in range(n)]


# ------------------------------------------------------------------ train
@pytest.fixture(scope="module")
def train_reference(tmp_path_factory):
    """The uninterrupted run (in a subprocess, timed) and its outputs."""
    d = tmp_path_factory.mktemp("train_ref")
    (d / "p.tsv").write_text(TINY, encoding="utf-8")
    t = _run(["train", "p.tsv", *TRAIN, "--checkpoint", "ck.json", "--save", "m.json",
              "--json", "out.json"], d)
    ref = {n: (d / n).read_bytes() for n in ("m.json", "out.json", "ck.json")}
    return ref, t, load_checkpoint(str(d / "ck.json")).trace


def _check_train_survivors(d: Path, ref: dict, ref_trace: list):
    for name in ("m.json", "out.json"):
        if (d / name).exists():
            assert (d / name).read_bytes() == ref[name], f"{name} half-written or wrong"
    if (d / "ck.json").exists():
        ck = load_checkpoint(str(d / "ck.json"))  # complete: raises on a partial file
        assert ck.trace == ref_trace[:len(ck.trace)]


def _train_fault(tmp_path, train_reference, delay, sig):
    ref, _, ref_trace = train_reference
    (tmp_path / "p.tsv").write_text(TINY, encoding="utf-8")
    outputs = ["--checkpoint", "ck.json", "--save", "m.json", "--json", "out.json"]
    _killed(["train", "p.tsv", *TRAIN, *outputs], tmp_path, delay, sig)
    _check_train_survivors(tmp_path, ref, ref_trace)
    resume = ["--resume", "ck.json"] if (tmp_path / "ck.json").exists() else []
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["train", "p.tsv", *TRAIN, *outputs, *resume]) == 0
    finally:
        os.chdir(old)
    for name in ("m.json", "out.json", "ck.json"):
        assert (tmp_path / name).read_bytes() == ref[name], (name, delay, sig, resume)


def test_train_in_process_equals_subprocess(train_reference, tmp_path):
    """The resumed runs below run in-process: they must match a subprocess run."""
    ref = train_reference[0]
    (tmp_path / "p.tsv").write_text(TINY, encoding="utf-8")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["train", "p.tsv", *TRAIN, "--checkpoint", "ck.json", "--save",
                     "m.json", "--json", "out.json"]) == 0
    finally:
        os.chdir(old)
    assert {n: (tmp_path / n).read_bytes() for n in ref} == ref


# points 0 and 1 (SIGKILL, SIGINT) in the default suite; point 2 (a second SIGKILL,
# 16.6 s in a loaded full run) with the 24 points of the slow test below
@pytest.mark.parametrize("point", [0, 1, pytest.param(2, marks=pytest.mark.slow)])
def test_train_killed_then_resumed(train_reference, tmp_path, point):
    delay, sig = _kill_points(1, 3, train_reference[1])[point]
    _train_fault(tmp_path, train_reference, delay, sig)


@pytest.mark.slow
@pytest.mark.parametrize("point", range(24))
def test_train_killed_then_resumed_many(train_reference, tmp_path, point):
    delay, sig = _kill_points(2, 24, train_reference[1])[point]
    _train_fault(tmp_path, train_reference, delay, sig)


# ------------------------------------------------------------------ infer --save-beliefs
def _answers(d):
    r = load_beliefs(d)
    return r.method, {v: r.belief(v).kbest(5) for v in r.variables}


@pytest.fixture(scope="module")
def save_reference(tmp_path_factory):
    """(old answers, new answers, saved old directory, duration of the new save)."""
    d = tmp_path_factory.mktemp("save_ref")
    (d / "p.tsv").write_text(PARADIGM, encoding="utf-8")
    _run(["infer", "p.tsv", *OLD_SAVE, "--save-beliefs", "old"], d)
    t = _run(["infer", "p.tsv", *NEW_SAVE, "--save-beliefs", "new"], d)
    old, new = _answers(d / "old"), _answers(d / "new")
    assert old != new
    return old, new, d / "old", t


def _save_fault(tmp_path, save_reference, delay, sig):
    old, new, old_dir, _ = save_reference
    (tmp_path / "p.tsv").write_text(PARADIGM, encoding="utf-8")
    shutil.copytree(old_dir, tmp_path / "b")
    _killed(["infer", "p.tsv", *NEW_SAVE, "--save-beliefs", "b"], tmp_path, delay, sig)
    if (tmp_path / "b").exists():
        assert _answers(tmp_path / "b") in (old, new)  # loads, and is one save or the other
    else:
        backups = list(tmp_path.glob(".b.old-*"))
        assert backups, "the save directory vanished without a backup"
        assert _answers(backups[0]) == old


@pytest.mark.parametrize("point", [0, 1, pytest.param(2, marks=pytest.mark.slow)])
def test_resave_killed(save_reference, tmp_path, point):
    delay, sig = _kill_points(3, 3, save_reference[3])[point]
    _save_fault(tmp_path, save_reference, delay, sig)


@pytest.mark.slow
@pytest.mark.parametrize("point", range(24))
def test_resave_killed_many(save_reference, tmp_path, point):
    delay, sig = _kill_points(4, 24, save_reference[3])[point]
    _save_fault(tmp_path, save_reference, delay, sig)
