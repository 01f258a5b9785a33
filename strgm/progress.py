"""Progress displays on stderr, built on tqdm (https://tqdm.github.io, a maintained
library).

* :class:`StepProgress`, for runs with a known number of steps (sampler sweeps,
  estimator updates): on a terminal a bar with the count, rate, elapsed time and ETA, and
  the latest step's summary (log P, acceptance, …) after it; elsewhere (a log file, a
  pipe) the summaries the caller shows as plain lines, so logs stay readable and tests
  can read them, and a line ``[elapsed] what i/n: summary (ETA s)`` whenever
  ``interval`` seconds (:data:`LINE_INTERVAL`) passed without one; a background heartbeat (a daemon thread,
  stopped by ``close()``, on leaving its ``with`` block, exception or not, and when the
  object is dropped) adds ``[elapsed] still in what i/n …`` when a single step leaves
  ``interval`` seconds without a line, so that the run is never silent for longer.
* :class:`StatusProgress`, the ``progress(message)`` callback of the inference engine and
  of EM. Messages are plain strings; a :class:`Status` (a ``str`` that also carries
  ``done``/``total`` of its stage, e.g. factor visits of a message-passing run or words of
  a count pass) drives a bar with an ETA for that stage on a terminal, and an ETA on the
  throttled lines elsewhere. Any callable that takes a string (``list.append``, ``print``)
  is a valid callback too: it simply gets the text.

Both are off entirely when ``enabled`` is false (``--quiet``).
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from typing import Callable, Optional

#: Seconds between plain lines off a terminal: below the 10 s a user should never wait
#: without one, with room for a heartbeat that wakes late on a loaded machine.
LINE_INTERVAL = 8.0

__all__ = ["StepProgress", "StatusProgress", "Status", "announce_if_slow", "tagged"]


class Status(str):
    """A progress message that says how far its stage is: ``done`` of ``total`` units of
    the stage named ``stage`` (the bar's label). Compares and prints as its text;
    ``detail`` is the text without the tags :func:`tagged` put in front (a bar shows
    them in its label already)."""

    done: int
    total: int
    stage: str
    detail: str

    def __new__(cls, text: str, done: int, total: int, stage: str = "",
                detail: Optional[str] = None):
        self = super().__new__(cls, text)
        self.done, self.total, self.stage = int(done), int(total), stage
        self.detail = text if detail is None else detail
        return self


def tagged(message: str, tag: str) -> str:
    """``"TAG: message"``, keeping a :class:`Status`'s counters (and its stage, prefixed
    by the tag, so that each EM iteration's E-step is a stage of its own)."""
    text = f"{tag}: {message}"
    if isinstance(message, Status):
        return Status(text, message.done, message.total, f"{tag} {message.stage}".strip(),
                      message.detail)
    return text


class _Lines:
    """Plain progress lines on a stream that is not a terminal: ``[elapsed] text`` with
    an optional ETA, each flushed (a log file shows it at once); ``due`` says whether
    ``interval`` seconds passed since the last line."""

    def __init__(self, stream, interval: float, t0: float, last: float):
        self.stream, self.interval, self.t0, self.last = stream, interval, t0, last
        self.lock = threading.RLock()  # the heartbeat writes from its own thread
        self.wall = time.monotonic()  # when a line was last written (the heartbeat's clock)

    def due(self, now: float) -> bool:
        return now - self.last >= self.interval

    def write(self, text: str, now: float, eta: Optional[float] = None,
              label: str = "ETA") -> None:
        tail = f" ({label} {eta:.0f} s)" if eta is not None else ""
        self.plain(f"[{now - self.t0:7.1f}s] {text}{tail}")
        self.last = now

    def plain(self, line: str) -> None:
        with self.lock:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.wall = time.monotonic()


class _Heartbeat:
    """A daemon thread writing ``text()`` as a timed line of ``lines`` whenever
    ``lines.interval`` seconds (real time) passed without a line. ``stop()`` ends and
    joins it; it also ends when its owner is garbage-collected, so it never outlives it."""

    def __init__(self, owner, lines: _Lines, text: Callable[[], str]):
        self.lines, self.text, self.stopped = lines, text, threading.Event()
        weakref.finalize(owner, self.stopped.set)
        self.thread = threading.Thread(target=self._run, name="strgm-progress-heartbeat",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        lines = self.lines
        while not self.stopped.wait(max(0.01, lines.wall + lines.interval
                                        - time.monotonic())):
            with lines.lock:
                if time.monotonic() - lines.wall >= lines.interval \
                        and not self.stopped.is_set():
                    lines.write(self.text(), time.perf_counter())

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


class StepProgress:
    """``step(line)`` once per step; ``close()`` at the end (also as a context manager).
    Off a terminal, ``interval`` is the longest time without a line (module docstring)."""

    def __init__(self, total: int, desc: str = "", enabled: bool = True, stream=None,
                 initial: int = 0, interval: float = LINE_INTERVAL, heartbeat: bool = True):
        self.enabled = bool(enabled)
        self.stream = stream or sys.stderr
        self.total, self.desc, self.n, self.n0 = int(total), desc, int(initial), int(initial)
        now = time.perf_counter()
        self.lines = _Lines(self.stream, interval, now, now)
        isatty = getattr(self.stream, "isatty", None)
        self.bar = None
        if self.enabled and isatty and isatty():
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, desc=desc, file=self.stream,
                            dynamic_ncols=True, leave=True, unit="step")
        self.heartbeat, self.step_ended = None, time.monotonic()
        if self.enabled and self.bar is None and heartbeat:
            self.heartbeat = _Heartbeat(self, self.lines, _still_in(
                weakref.ref(self), self.desc or "step", self.total))

    def step(self, line: str, show: bool = True) -> None:
        """Advance by one step. ``line`` summarises it: the bar's postfix on a terminal;
        elsewhere a line of its own when ``show`` (callers thin long runs), and a timed
        line with the count and ETA when none was written for ``interval`` seconds."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(line, refresh=False)
            self.bar.update(1)
            return
        self.n += 1
        self.step_ended = time.monotonic()
        now = time.perf_counter()
        if show:
            self.lines.plain(line)
            self.lines.last = now
        elif self.lines.due(now):
            done = self.n - self.n0
            eta = (now - self.lines.t0) * max(self.total - self.n, 0) / done if done else None
            self.lines.write(f"{self.desc or 'step'} {self.n}/{self.total}: {line}", now,
                             eta if self.total > 0 else None)

    def close(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "StepProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _still_in(ref, what: str, total: int) -> Callable[[], str]:
    """The heartbeat's text: the step under way (``n + 1`` of ``total``) and how long
    since the last step ended; ``ref`` is a weak reference to the :class:`StepProgress`."""
    def text() -> str:
        bar = ref()
        if bar is None:
            return f"still in {what} …"
        since = f"({time.monotonic() - bar.step_ended:.0f} s since"
        if bar.n >= total > 0:
            return f"still working after {what} {bar.n}/{total} … {since} the last)"
        return f"still in {what} {bar.n + 1}/{total} … {since} it started)"
    return text


def _still_in_status(ref) -> Callable[[], str]:
    def text() -> str:
        progress = ref()
        return f"still in {progress._last if progress is not None else 'the run'} …"
    return text


class StatusProgress:
    """The ``progress(message)`` callback shown on ``stream`` (stderr by default).

    On a terminal: a :class:`Status` message moves a tqdm bar of its stage (count, rate,
    ETA, the message after it); a new stage replaces the bar; a plain message is shown
    after the bar, or on a line rewritten in place when there is none. Elsewhere: at most
    one line per ``interval`` seconds, ``[elapsed] message`` with the stage's ETA, so a
    long run in a log file shows that it is alive without flooding it; with
    ``heartbeat`` (the commands), a thread adds ``still in <last message> …`` when a
    stage leaves ``interval`` seconds without a message, until :meth:`done`."""

    def __init__(self, enabled: bool = False, stream=None, interval: float = LINE_INTERVAL,
                 heartbeat: bool = False):
        self.enabled, self.heartbeat = enabled, heartbeat
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        isatty = getattr(self.stream, "isatty", None)
        self.inline = bool(isatty and isatty())
        self.lines = _Lines(self.stream, interval, self.t0, -float("inf"))
        self._open = False  # an inline line is on the screen
        self._bar = None
        self._stage: Optional[tuple] = None  # (stage, total, start time, done at start)
        self._done = 0  # units done at the last Status message
        self._drawn = -float("inf")  # when a plain message was last drawn
        self._beat: Optional[_Heartbeat] = None
        self._last = ""  # the last message, for the heartbeat

    def __call__(self, msg: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        eta = self._track(msg, now)
        if self.inline:
            self._show_inline(msg, now)
        else:
            self._last = str(msg)
            if self.heartbeat and self._beat is None:
                self._beat = _Heartbeat(self, self.lines, _still_in_status(weakref.ref(self)))
            with self.lines.lock:
                if self.lines.due(now):
                    self.lines.write(str(msg), now, eta, "stage ETA")

    def _track(self, msg: str, now: float) -> Optional[float]:
        """Follow the stages of :class:`Status` messages; the current stage's ETA in
        seconds (linear in the units done), or None."""
        if not isinstance(msg, Status) or msg.total <= 0:
            return None
        st, last = self._stage, self._done
        self._done = msg.done
        if st is None or st[0] != msg.stage or st[1] != msg.total or msg.done < last:
            self._stage = st = (msg.stage, msg.total, now, msg.done)  # a new stage
            self._close_bar()
        done = msg.done - st[3]
        return (now - st[2]) * (msg.total - msg.done) / done if done > 0 else None

    def _show_inline(self, msg: str, now: float) -> None:
        """A stage's bar (closed when the stage is complete); a plain message after the
        bar or on a line of its own without a bar (either redrawn at most every 0.1 s)."""
        if isinstance(msg, Status) and msg.total > 0:
            if msg.done >= msg.total:
                self._close_bar()
                self._stage = None
                return
            if self._bar is None:
                from tqdm import tqdm
                self._wipe()
                self._bar = tqdm(total=msg.total, initial=msg.done, desc=msg.stage,
                                 file=self.stream, dynamic_ncols=True, leave=False)
            self._bar.set_postfix_str(msg.detail[:60], refresh=False)
            self._bar.update(msg.done - self._bar.n)  # redraws at most every 0.1 s
        elif self._bar is not None:
            if now - self._drawn >= 0.1:
                self._bar.set_postfix_str(str(msg)[:60])
                self._drawn = now
        elif now - self._drawn >= 0.1:
            self.stream.write(f"\r[{now - self.t0:7.1f}s] {msg}\033[K")
            self._open, self._drawn = True, now
            self.stream.flush()

    def _wipe(self) -> None:
        if self._open:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._open = False

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def clear(self) -> None:
        """Take the display off the screen, so that other output starts on a clean line
        (the next message brings it back)."""
        if self.enabled and self.inline:
            self._close_bar()
            self._stage = None
            self._wipe()

    def __enter__(self) -> "StatusProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()

    def done(self) -> None:
        """The run is over: remove the bar, end an inline line, stop the heartbeat (the
        next message starts it again); also on leaving a ``with`` block."""
        if self._beat is not None:
            self._beat.stop()
            self._beat = None
        if self.enabled and self.inline:
            self._close_bar()
            self._stage = None
            if self._open:
                self.stream.write("\n")
                self.stream.flush()
                self._open = False


class announce_if_slow:
    """``with announce_if_slow(text, enabled):`` writes ``text`` to stderr (``stream``)
    only if the block is still running after ``delay`` seconds (default half of
    :data:`LINE_INTERVAL`): a stage before the first progress line (building a model)
    is not silent for long, while a block that ends or fails sooner — a refused input
    — leaves its one-line error alone. A daemon timer, cancelled on leaving the block."""

    def __init__(self, text: str, enabled: bool = True, stream=None,
                 delay: float = LINE_INTERVAL / 2):
        self.text, self.stream, self.delay = text, stream, delay
        self.timer = threading.Timer(delay, self._write) if enabled else None

    def _write(self) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        print(self.text, file=stream, flush=True)

    def __enter__(self):
        if self.timer is not None:
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer.join()
