"""Long commands off a terminal: a plan line first, then plain progress lines (what, i/n,
elapsed, ETA) at most and at least every ``interval`` seconds while steps come, with
counters whose n is what was asked; ``--quiet`` silences both."""

import io
import re

import pytest

from strgm.cli import main
from strgm.progress import StepProgress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr("strgm.progress.time.perf_counter", c)
    return c


def _steps(bar, clock, times, show=False):
    for t in times:
        clock.t = t
        bar.step(f"at {t}", show=show)


def test_thinned_steps_off_a_terminal_give_a_timed_line_every_interval(clock):
    """Steps the caller does not show still give a line once 10 s passed without one
    (before, a thinned run wrote nothing between its shown steps)."""
    out = io.StringIO()
    bar = StepProgress(10, "sweeps", stream=out)
    _steps(bar, clock, (3, 6, 11, 14, 22))
    assert out.getvalue().splitlines() == ["[   11.0s] sweeps 3/10: at 11 (ETA 26 s)",
                                           "[   22.0s] sweeps 5/10: at 22 (ETA 22 s)"]
    # controls: none when disabled (--quiet), none on a terminal (the bar has the ETA)
    for out, enabled in ((io.StringIO(), False), (Terminal(), False), (Terminal(), True)):
        clock.t = 0.0
        bar = StepProgress(10, "sweeps", stream=out, enabled=enabled)
        _steps(bar, clock, (11, 22, 33))
        bar.close()
        assert not re.search(r"^\[ +\d", out.getvalue(), re.M)


def test_a_shown_line_restarts_the_interval_and_resumed_counts_start_at_initial(clock):
    out = io.StringIO()
    bar = StepProgress(8, stream=out, initial=4, interval=5)
    _steps(bar, clock, (4,), show=True)  # step 5, shown by the caller
    _steps(bar, clock, (8, 10))  # 4 and 6 s after the shown line
    assert out.getvalue().splitlines() == ["at 4", "[   10.0s] step 7/8: at 10 (ETA 3 s)"]


#: six words whose vowels give three harmony-tier candidates: (), (i e) and (i)
TINY = "R1\tkip\nR1 PL\tkibe\nR2\tsot\nR2 PL\tsode\nR3\tmuk\nR3 PL\tmuke\n"


@pytest.fixture
def tiny(tmp_path):
    f = tmp_path / "tiny.tsv"
    f.write_text(TINY, encoding="utf-8")
    return str(f)


@pytest.fixture
def every_message(monkeypatch):
    """Every progress message becomes a line (no 10 s throttle)."""
    from strgm.progress import StatusProgress

    made = StatusProgress.__init__

    def unthrottled(self, enabled=False, stream=None, interval=10.0, heartbeat=False):
        made(self, enabled, stream, interval=0)  # no heartbeat: it would write constantly

    monkeypatch.setattr(StatusProgress, "__init__", unthrottled)


def _counters(err: str, what: str) -> set:
    return {int(n) for n in re.findall(rf"{what} \d+/(\d+)", err)}


def test_infer_off_a_terminal_announces_its_plan_and_reports(tiny, capsys, every_message):
    """Before, infer wrote nothing to a non-terminal stderr without --progress."""
    assert main(["infer", tiny, "--max-iters", "2", "--holdout", "0.2"]) == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines()  # a slow graph build is announced before it
             if not x.startswith("strgm infer: building the factor graph")]
    assert lines[0] == ("strgm infer: pruned inference over 5 observed words and 4 "
                        "morphemes, at most 2 iterations, then 1 held-out words predicted")
    assert re.search(r"^\[ +\d+\.\ds\] iteration 1/2 forward factor 1/\d+", err, re.M)
    assert _counters(err, "iteration") == {2}
    assert main(["infer", tiny, "--max-iters", "2", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_rules_off_a_terminal_announces_its_plan_and_reports(tiny, capsys):
    assert main(["rules", tiny, "--max-rules", "2", "--window", "1"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        "strgm rules: UR candidates from one inference (3 iterations) over 6 training "
        "words, then a rule search from 2 starts (beam 4, at most 2 rules, window 1), "
        "then the rules' contexts narrowed")
    assert re.search(r"^\[ +\d+\.\ds\] rule search, UR candidates: ", err, re.M)
    assert main(["rules", tiny, "--max-rules", "2", "--window", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_train_counters_name_the_restart_and_the_iterations_asked(tiny, capsys,
                                                                  every_message):
    """``EM iteration i/2`` for --em-iters 2, ``candidate i/3`` in the screening, and
    each restart named (before, the restarts' lines could not be told apart). Restart
    0 begins with the screening's iteration (same words and start), so its iteration 0
    has no lines of its own; restart 1, from a perturbed start, runs all three."""
    assert main(["train", tiny, "--em-iters", "2", "--restarts", "2", "--family", "edit",
                 "--show-processes", "0"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("strgm train: harmony-tier screening (3 candidate vowel sets, "
                          "one shared E-step and one M-step each on 6 words: EM's first "
                          "iteration), then 2 × 2 EM iteration(s)")
    assert _counters(err, "EM iteration") == {2} and _counters(err, "candidate") == {3}
    for i in (0, 1):
        for it in (0, 1, 2):
            said = f"restart {i} ({i + 1} of 2): EM iteration {it}/2: " in err
            assert said == ((i, it) != (0, 0))


HEARTBEAT = re.compile(r"^\[ +\d+\.\ds\] still in sweeps 2/3 … \(\d+ s since it started\)$")


def test_a_long_step_gets_heartbeat_lines_and_the_thread_ends_with_close():
    """A step longer than ``interval`` (here 0.05 s) gets '[elapsed] still in what i/n'
    lines from the heartbeat thread; before, nothing until the step ended."""
    import time

    out = io.StringIO()
    bar = StepProgress(3, "sweeps", stream=out, interval=0.05)
    bar.step("sweep 1", show=True)
    time.sleep(0.3)
    thread = bar.heartbeat.thread
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "sweep 1" and len(lines) >= 3
    assert all(HEARTBEAT.match(line) for line in lines[1:]), lines
    assert not thread.is_alive() and bar.heartbeat is None
    written = out.getvalue()
    time.sleep(0.15)
    assert out.getvalue() == written  # nothing after close
    # control: with the heartbeat disabled the long step stays silent
    out = io.StringIO()
    with StepProgress(3, "sweeps", stream=out, interval=0.05, heartbeat=False) as bar:
        bar.step("sweep 1", show=True)
        time.sleep(0.2)
    assert out.getvalue() == "sweep 1\n"


def test_the_heartbeat_thread_never_outlives_its_progress():
    import gc
    import threading

    with pytest.raises(RuntimeError):
        with StepProgress(3, stream=io.StringIO(), interval=0.05) as bar:
            thread = bar.heartbeat.thread
            raise RuntimeError("stop")
    assert not thread.is_alive()
    bar = StepProgress(3, stream=io.StringIO(), interval=0.05)  # never closed
    thread = bar.heartbeat.thread
    del bar
    gc.collect()
    thread.join(2)
    assert not thread.is_alive()
    # no thread at all where no lines are written: --quiet, or a terminal's bar
    def heartbeats():  # other threads (tqdm's monitor, other tests') may come and go
        return [t for t in threading.enumerate() if t.name == "strgm-progress-heartbeat"
                and t.is_alive()]

    for stream, enabled in ((io.StringIO(), False), (Terminal(), True)):
        before = set(heartbeats())
        bar = StepProgress(3, stream=stream, enabled=enabled, interval=0.05)
        assert bar.heartbeat is None and not set(heartbeats()) - before
        bar.close()


def test_status_progress_heartbeat_names_the_last_message_until_done():
    """The commands' StatusProgress (heartbeat=True): a stage that sends no message for
    ``interval`` seconds still gets a line; done() (or leaving its with block) stops it,
    and the next message starts it again."""
    import time

    from strgm.progress import StatusProgress

    out = io.StringIO()
    with StatusProgress(True, stream=out, interval=0.05, heartbeat=True) as prog:
        prog("E-step word 3/40")
        time.sleep(0.3)
    thread = prog._beat
    lines = out.getvalue().splitlines()
    assert re.match(r"^\[ +\d+\.\ds\] E-step word 3/40$", lines[0])
    assert len(lines) >= 3 and all(re.match(r"^\[ +\d+\.\ds\] still in E-step word 3/40 …$",
                                            ln) for ln in lines[1:]), lines
    assert thread is None
    written = out.getvalue()
    time.sleep(0.15)
    assert out.getvalue() == written
    prog("M-step")
    beat = prog._beat.thread
    prog.done()
    assert not beat.is_alive()
    # control: without heartbeat (the library default) a silent stage stays silent
    out = io.StringIO()
    prog = StatusProgress(True, stream=out, interval=0.05)
    prog("E-step word 3/40")
    time.sleep(0.2)
    prog.done()
    assert len(out.getvalue().splitlines()) == 1 and prog._beat is None


def test_a_slow_stage_before_the_first_line_is_announced_and_a_quick_one_is_not():
    """announce_if_slow: the text appears only when the block outlives the delay, so a
    refusal raised at once stays a one-line error (control: the quick and failing
    blocks, and a disabled announcement, write nothing)."""
    import time

    from strgm.progress import announce_if_slow

    out = io.StringIO()
    with announce_if_slow("building ...", stream=out, delay=0.05) as a:
        time.sleep(0.3)
    assert out.getvalue() == "building ...\n" and not a.timer.is_alive()
    quick = io.StringIO()
    with announce_if_slow("building ...", stream=quick, delay=0.2):
        pass
    with pytest.raises(ValueError):
        with announce_if_slow("building ...", stream=quick, delay=0.2) as a:
            raise ValueError("refused")
    time.sleep(0.3)
    assert quick.getvalue() == "" and not a.timer.is_alive()
    off = io.StringIO()
    with announce_if_slow("building ...", enabled=False, stream=off, delay=0.01):
        time.sleep(0.1)
    assert off.getvalue() == ""
