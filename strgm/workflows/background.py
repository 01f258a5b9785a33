"""One call run beside the caller on another core: a forked child process.

``strgm train`` learns its two phonology families independently — EM for the edit
phonology, the description-length search for the rule family — and the second does not
read the first. On a machine with two or more cores the rule family is therefore
learned in a child process while EM runs (docs/phonology.md):

    job = start(train_rule_phonology, paradigm, heldout)   # returns at once
    ...                                                    # EM here
    rules = job.result(progress)                           # waits, showing its progress

What the child sees: a fork copies the caller's state, so context settings (the size
guards of :mod:`fst_factors.wfsa.guard`) and warning filters hold there as they do here. What comes
back: the call's return value, pickled through a pipe, or its exception (re-raised
here; one that cannot be pickled comes back as an :class:`~strgm.errors.StrgmError`
with its type and text). Progress: the child keeps its latest message in shared
memory (it never waits for the caller to read); :meth:`Job.result` shows the latest
one every half second while it waits. A child whose caller dies (killed, say) exits
within about a second, so nothing keeps running unseen; :meth:`Job.cancel` ends it at
once.

Where ``fork`` does not exist, on one core, or with ``parallel=False``, :func:`start`
runs the call at once, in this process, and :meth:`Job.result` hands over its outcome:
the same result either way, since the child computes exactly what this process would.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import threading
import time
from typing import Callable, Optional

from strgm.errors import StrgmError
from strgm.progress import Status

#: Bytes of shared memory for the child's latest progress message (longer ones are cut).
_MESSAGE_BYTES = 1024


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


class Job:
    """A call started by :func:`start`: :meth:`result` waits for it, :meth:`cancel`
    abandons it. ``parallel`` says whether it runs in a child process."""

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, parallel: bool):
        self.parallel = parallel
        self._outcome: Optional[tuple] = None
        self._proc = None
        if not parallel:
            self._outcome = _call(fn, args, kwargs, None)
            return
        ctx = multiprocessing.get_context("fork")
        self._latest = ctx.Array("c", _MESSAGE_BYTES, lock=False)
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(fn, args, kwargs, send, self._latest,
                                                      os.getpid()), daemon=True)
        self._proc.start()
        send.close()

    def result(self, progress: Optional[Callable[[str], None]] = None):
        """The call's return value (its exception raised here), waiting for the child
        and passing its latest progress message to ``progress`` every 0.5 s."""
        if self._outcome is None:
            if self._proc is None:
                raise StrgmError("the background call was cancelled before its result")
            shown = None
            try:
                while not self._recv.poll(0.5):
                    if not self._proc.is_alive() and not self._recv.poll(0.1):
                        raise StrgmError(f"the background process stopped without a result "
                                         f"(exit code {self._proc.exitcode})")
                    shown = _show(self._latest, shown, progress)
                self._outcome = pickle.loads(self._recv.recv_bytes())
            finally:
                self.cancel()
        kind, value = self._outcome
        if kind == "error":
            raise value
        return value

    def cancel(self) -> None:
        """End the child now (nothing if it has finished or never existed)."""
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join(5)
            self._recv.close()
            self._proc = None


def start(fn: Callable, *args, parallel: bool = True, **kwargs) -> Job:
    """Start ``fn(*args, **kwargs)`` in a forked child when ``parallel`` and this
    process may use two or more cores and can fork; else run it now (module
    docstring). ``kwargs`` may include ``progress``: the child's calls of it are
    shown by :meth:`Job.result`."""
    return Job(fn, args, kwargs, parallel and cores() >= 2 and can_fork())


def _call(fn, args, kwargs, latest) -> tuple:
    if latest is not None and "progress" in kwargs and kwargs["progress"] is not None:
        kwargs = {**kwargs, "progress": lambda msg: _keep(latest, msg)}
    try:
        return "value", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 — handed to the caller, who raises it
        return "error", e


def _child(fn, args, kwargs, send, latest, parent: int) -> None:
    """The child's body: watch the parent, run the call, send the outcome."""
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    try:
        outcome = _call(fn, args, kwargs, latest)
        try:
            data = pickle.dumps(outcome)
            pickle.loads(data)  # an exception whose __init__ takes other arguments fails here
        except Exception as why:  # noqa: BLE001 — what pickle cannot carry
            e = outcome[1] if outcome[0] == "error" else why
            text = str(e) if isinstance(e, StrgmError) else f"{type(e).__name__}: {e}"
            data = pickle.dumps(("error", StrgmError(text)))
        send.send_bytes(data)
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the caller decides
        os._exit(1)
    finally:
        send.close()


def _watch(parent: int) -> None:
    """Exit the child when its parent is gone (it is then adopted: another parent pid)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _keep(latest, msg: str) -> None:
    """Store ``msg`` (with a :class:`Status`'s counters) as the latest progress message."""
    rec = {"text": str(msg)}
    if isinstance(msg, Status):
        rec.update(done=msg.done, total=msg.total, stage=msg.stage, detail=msg.detail)
    data = json.dumps(rec, ensure_ascii=False).encode("utf-8")
    if len(data) >= _MESSAGE_BYTES:
        data = json.dumps({"text": str(msg)[:_MESSAGE_BYTES // 8]},
                          ensure_ascii=False).encode("utf-8")
    latest.raw = data + b"\0" * (_MESSAGE_BYTES - len(data))


def _show(latest, shown: Optional[bytes], progress) -> Optional[bytes]:
    """Pass the child's latest message to ``progress`` if it is new; the bytes shown."""
    data = latest.raw.rstrip(b"\0")
    if progress is None or not data or data == shown:
        return shown
    try:
        rec = json.loads(data.decode("utf-8"))
    except ValueError:  # caught mid-write: the next poll shows it
        return shown
    if "total" in rec:
        progress(Status(rec["text"], rec["done"], rec["total"], rec["stage"], rec["detail"]))
    else:
        progress(rec["text"])
    return data
