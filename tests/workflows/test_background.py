"""strgm.workflows.background: a call run in a forked child gives what it gives here,
shows its progress, raises its errors here, and never outlives its caller; and
`strgm train` with the rule family beside EM prints what it prints on one core."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from strgm.errors import OptionError, StrgmError
from strgm.progress import Status
from strgm.workflows import background
from strgm.workflows.background import start

pytestmark = pytest.mark.skipif(not background.can_fork() or background.cores() < 2,
                                reason="needs fork and two cores")


def _work(n, progress=None):
    for i in range(n):
        if progress is not None:
            progress(Status(f"step {i + 1}/{n}", i + 1, n, "work"))
        time.sleep(0.2)
    return {"pid": os.getpid(), "squares": [i * i for i in range(n)]}


def _fails(reason):
    raise OptionError("depth", -1, reason)


class _Unpicklable(Exception):
    """Holds a lock, which pickle refuses, with or without tblib's exception pickling
    (which importing dask.distributed installs, and under which an exception whose
    ``__init__`` takes other arguments does round-trip)."""

    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")
        self.lock = threading.Lock()


def _fails_oddly():
    raise _Unpicklable("one", "two")


def test_the_child_computes_the_result_elsewhere_and_shows_its_progress():
    seen = []
    job = start(_work, 8, progress=seen.append)
    assert job.parallel
    out = job.result(seen.append)
    assert out["squares"] == [i * i for i in range(8)]
    assert out["pid"] != os.getpid()  # control: run here, the pid is ours
    assert seen and all(isinstance(m, Status) and m.stage == "work" for m in seen)
    assert seen[-1].done <= 8 and str(seen[0]).startswith("step ")
    here = start(_work, 2, parallel=False).result()
    assert here["pid"] == os.getpid() and here["squares"] == [0, 1]


def test_errors_come_back_as_the_same_exception():
    with pytest.raises(OptionError, match="option depth: must be positive, got -1"):
        start(_fails, "must be positive").result()
    # an exception that pickle cannot rebuild still comes back, as one StrgmError line
    with pytest.raises(StrgmError, match="_Unpicklable: one and two"):
        start(_fails_oddly).result()


def test_a_cancelled_job_ends_its_child():
    job = start(_work, 100)
    pid = job._proc.pid
    job.cancel()
    assert not _alive(pid)
    with pytest.raises(StrgmError, match="cancelled"):
        job.result()


def test_the_child_does_not_outlive_a_killed_caller(tmp_path):
    """A caller killed with SIGKILL cannot end its child: the child notices and exits."""
    pidfile = tmp_path / "child.pid"
    code = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_background import _work
        from strgm.workflows.background import start
        job = start(_work, 1000)
        open({str(pidfile)!r}, "w").write(str(job._proc.pid))
        time.sleep(600)
    """)
    caller = subprocess.Popen([sys.executable, "-c", code])
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text():
            break
        time.sleep(0.1)
    child = int(pidfile.read_text())
    assert _alive(child)  # control: the child runs while its caller does
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.time() + 10
    while _alive(child) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its adopter) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_train_prints_the_same_with_the_rules_beside_em(tmp_path, capsys, monkeypatch):
    from strgm.cli import main
    from strgm.workflows import family_choice

    lines = open(os.path.join(os.path.dirname(background.__file__), "..", "data",
                              "synthetic.tsv"), encoding="utf-8").read().splitlines()
    f = tmp_path / "words.tsv"
    f.write_text("\n".join(lines[:15]) + "\n", encoding="utf-8")  # 12 words
    jobs = []

    def recorded(*args, **kwargs):
        jobs.append(start(*args, **kwargs))
        return jobs[-1]

    monkeypatch.setattr(family_choice, "start", recorded)
    out = {}
    for flags in ([], ["--one-core"]):
        js = tmp_path / f"out{len(flags)}.json"
        assert main(["train", str(f), "--holdout", "0.25", "--seed", "2", "--em-iters", "1",
                     "--max-iters", "1", "--transparent", "none", "--quiet", "--json",
                     str(js)] + flags) == 0
        out[len(flags)] = capsys.readouterr().out.replace(str(js), "OUT")
    assert [j.parallel for j in jobs] == [True]  # --one-core starts no job
    assert "families chosen per held-out word" in out[0]
    assert out[0] == out[1]
