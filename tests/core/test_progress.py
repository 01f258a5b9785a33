"""StepProgress: a tqdm bar with ETA on a terminal, plain lines elsewhere, nothing when
disabled."""

import io

from strgm.progress import StepProgress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bar_on_a_terminal():
    out = Terminal()
    with StepProgress(3, "sweeps", stream=out) as bar:
        for i in range(3):
            bar.step(f"log P -{i}.0")
    text = out.getvalue()
    assert "3/3" in text and "log P -2.0" in text and "sweeps" in text


def test_lines_elsewhere_and_thinning():
    out = io.StringIO()
    with StepProgress(4, stream=out) as bar:
        for i in range(4):
            bar.step(f"sweep {i + 1}", show=i % 2 == 1)
    assert out.getvalue().splitlines() == ["sweep 2", "sweep 4"]


def test_disabled_prints_nothing():
    for out in (io.StringIO(), Terminal()):
        with StepProgress(2, stream=out, enabled=False) as bar:
            bar.step("x")
        assert out.getvalue() == ""


# --- StatusProgress: the engine's progress(message) callback --------------------------

from strgm.progress import Status, StatusProgress, tagged  # noqa: E402


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_status_lines_carry_the_stage_eta(monkeypatch):
    """Off a terminal: ``[elapsed] message (stage ETA s)``, the ETA linear in the units
    done since the stage began; a new stage restarts the clock (a display that kept the
    first stage's start would say 30 s, not 10 s, below)."""
    clock = Clock()
    monkeypatch.setattr("strgm.progress.time.perf_counter", clock)
    out = io.StringIO()
    p = StatusProgress(True, out, interval=0)
    p(Status("a 0/4", 0, 4, "A"))
    clock.t = 10.0
    p(Status("a 1/4", 1, 4, "A"))  # 10 s per unit, 3 to go
    clock.t = 20.0
    p(Status("b 0/2", 0, 2, "B"))  # a new stage begins at 20 s
    clock.t = 30.0
    p(Status("b 1/2", 1, 2, "B"))
    p("plain")
    lines = out.getvalue().splitlines()
    assert lines[1] == "[   10.0s] a 1/4 (stage ETA 30 s)"
    assert lines[3] == "[   30.0s] b 1/2 (stage ETA 10 s)"
    assert lines[4] == "[   30.0s] plain"
    assert "ETA" not in lines[0] and "ETA" not in lines[2]  # nothing done yet


def test_status_lines_are_throttled():
    out = io.StringIO()
    p = StatusProgress(True, out, interval=3600)
    for i in range(5):
        p(Status(f"x {i}", i, 5, "X"))
    assert len(out.getvalue().splitlines()) == 1


def test_status_bar_on_a_terminal_closes_when_the_stage_completes():
    out = Terminal()
    p = StatusProgress(True, out)
    for i in range(3):
        p(Status(f"factor {i}", i, 3, "message passing"))
    assert p._bar is not None and "message passing" in out.getvalue()
    p(Status("converged", 3, 3, "message passing"))
    assert p._bar is None  # the bar is gone: later output starts on a clean line
    p("after")
    p.done()
    assert out.getvalue().rstrip("\n").endswith("after\033[K")


def test_tagged_keeps_the_counters_and_the_untagged_detail():
    m = tagged(tagged(Status("word 2/5", 2, 5, "counts"), "EM 1/3"), "restart 2")
    assert isinstance(m, Status) and (m.done, m.total) == (2, 5)
    assert str(m) == "restart 2: EM 1/3: word 2/5" and m.detail == "word 2/5"
    assert m.stage == "restart 2 EM 1/3 counts"
    plain = tagged("E-step", "EM 1/3")
    assert plain == "EM 1/3: E-step" and not isinstance(plain, Status)


def test_disabled_status_progress_prints_nothing():
    for out in (io.StringIO(), Terminal()):
        p = StatusProgress(False, out, interval=0)
        p(Status("x", 1, 2, "X"))
        p("y")
        p.done()
        assert out.getvalue() == ""
