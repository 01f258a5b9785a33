"""Progress of runs with a known number of steps (sampler sweeps, estimator updates).

On a terminal: a tqdm bar (https://tqdm.github.io, a maintained library) with the count,
rate, elapsed time and ETA, and the latest step's summary (log P, acceptance, …) after
it. Elsewhere (a log file, a pipe): the summaries as plain lines, so logs stay readable
and tests can read them. Off entirely when ``enabled`` is false (``--quiet``).
"""

from __future__ import annotations

import sys

__all__ = ["StepProgress"]


class StepProgress:
    """``step(line)`` once per step; ``close()`` at the end (also as a context manager)."""

    def __init__(self, total: int, desc: str = "", enabled: bool = True, stream=None,
                 initial: int = 0):
        self.enabled = bool(enabled)
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.bar = None
        if self.enabled and isatty and isatty():
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, desc=desc, file=self.stream,
                            dynamic_ncols=True, leave=True, unit="step")

    def step(self, line: str, show: bool = True) -> None:
        """Advance by one step. ``line`` summarises it: the bar's postfix on a terminal,
        a line of its own elsewhere when ``show`` (callers thin long runs)."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(line, refresh=False)
            self.bar.update(1)
        elif show:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "StepProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
