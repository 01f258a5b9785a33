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
