"""Ctrl-C inside a long OpenFst call.

Python runs its SIGINT handler only between bytecodes, and pynini keeps the interpreter
lock for the whole of an OpenFst operation, so a Ctrl-C that arrives during one is seen
only when the operation returns — on a large or ill-conditioned automaton, much later.

A command-line run turns :func:`hard_stop` on for its duration. Then, inside
:func:`native` (which wraps the operations that can run long: guarded composition,
ε-removal, n-best search, pruning, determinisation and shortest distance), SIGINT has
its default action: Ctrl-C ends the process at once, killed by SIGINT (the shell's status
130, as Python itself ends on an uncaught KeyboardInterrupt). Nothing written is lost,
because every output is written atomically outside these calls (a temporary file renamed
over the target). Between OpenFst calls Python's own handler is back and the usual
``strgm: error: interrupted`` path runs.

Library use keeps Python's behaviour everywhere (a notebook's kernel must survive an
interrupt), as do threads other than the main one and a SIGINT handler that is not
Python's default (``native`` then changes nothing).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["hard_stop", "native"]

_ENABLED = [False]


@contextlib.contextmanager
def hard_stop(enabled: bool = True) -> Iterator[None]:
    """Within the block, :func:`native` lets Ctrl-C end the process at once."""
    before = _ENABLED[0]
    _ENABLED[0] = bool(enabled)
    try:
        yield
    finally:
        _ENABLED[0] = before


@contextlib.contextmanager
def native() -> Iterator[None]:
    """Run an OpenFst call with SIGINT's default action when :func:`hard_stop` is on,
    this is the main thread and SIGINT has Python's default handler; otherwise change
    nothing. Two `sigaction` system calls and one `sigprocmask` per use."""
    if not _ENABLED[0] or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        # A SIGINT that reached Python's handler just before the line above is still
        # pending; this call runs pending handlers (KeyboardInterrupt) instead of letting
        # the OpenFst call start with it queued until the call returns.
        if hasattr(signal, "pthread_sigmask"):  # POSIX
            signal.pthread_sigmask(signal.SIG_BLOCK, [])
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
