"""Where tasks run: ``--scheduler local[:N]|ADDRESS`` parsed, checked and connected.

* ``local`` / ``local:N`` start a Dask ``LocalCluster`` of N worker *processes* (one thread
  each, so that numba kernels and BLAS do not compete; N defaults to the CPUs of the
  machine) and stop it at the end of the run;
* any other value is the address of a running Dask scheduler (``tcp://host:8786``, or a
  cluster started with dask-jobqueue on SLURM) which the run joins and leaves running.

The option is checked before any work: a malformed value or ``local:0`` is an
:class:`~strgm.errors.OptionError`, an address that does not answer within
:data:`CONNECT_TIMEOUT` seconds is one too (naming the address), and a missing Dask is a
:class:`~strgm.errors.MissingDependencyError` saying what to install.  Without a scheduler
:class:`TaskPool` runs the same tasks in this process, in the same order, so results do not
depend on where they ran (docs/architecture.md §1, the distributed layer).
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from strgm.errors import MissingDependencyError, OptionError, StrgmError

__all__ = ["CONNECT_TIMEOUT", "INSTALL", "SchedulerSpec", "Scattered", "TaskPool",
           "open_pool", "parse_scheduler", "require_dask"]

#: Seconds to wait for a scheduler address to answer before giving up.
CONNECT_TIMEOUT = 5.0
#: What to install for ``--scheduler``.
INSTALL = "--scheduler needs Dask: pip install 'strgm[distributed]'"
#: How many times the scheduler re-runs a task whose worker died (Dask's ``retries``).
RETRIES = 3

_ADDRESS = re.compile(r"^(?:(tcp|tls|inproc|ucx|ws|wss)://)?[A-Za-z0-9_.\-\[\]:]+$")


@dataclass(frozen=True)
class SchedulerSpec:
    """A parsed ``--scheduler``: ``kind`` "local" (``workers`` processes) or "address";
    ``value`` as given."""

    kind: str
    workers: int = 0
    address: str = ""
    value: str = ""

    def describe(self) -> str:
        return (f"local cluster of {self.workers} worker processes" if self.kind == "local"
                else f"scheduler {self.address}")


def require_dask(option: str = "--scheduler"):
    """``distributed`` (the module), or MissingDependencyError naming the extra."""
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError(INSTALL.replace("--scheduler", option)) from None
    return distributed


def parse_scheduler(value: Optional[str], option: str = "--scheduler"
                    ) -> Optional[SchedulerSpec]:
    """``local`` | ``local:N`` (N ≥ 1 worker processes) | ``ADDRESS`` → a spec; None → None.
    Checks the syntax and that Dask is installed, never connects."""
    if value is None:
        return None
    text = str(value).strip()
    if text == "local" or text.startswith("local:"):
        n_text = text[6:] if text.startswith("local:") else str(os.cpu_count() or 1)
        if not n_text.isdigit() or int(n_text) < 1:
            raise OptionError(option, value, "expected local, local:N with N ≥ 1 worker "
                                             "processes, or a scheduler address")
        spec = SchedulerSpec("local", workers=int(n_text), value=text)
    elif text and _ADDRESS.match(text) and ":" in text:
        spec = SchedulerSpec("address", address=text if "://" in text else f"tcp://{text}",
                             value=text)
    else:
        raise OptionError(option, value, "expected local, local:N or a scheduler address "
                                         "HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    require_dask(option)
    return spec


class Scattered:
    """Data sent to the workers once (:meth:`TaskPool.scatter`): the Dask ``future`` and the
    ``value`` it holds, kept here so that a copy lost with a dead worker can be sent
    again."""

    __slots__ = ("future", "value")

    def __init__(self, future, value):
        self.future, self.value = future, value


class TaskPool:
    """Runs tasks on a Dask client, or in this process when ``client`` is None.

    :meth:`map` returns results in the order of its items whatever the completion order,
    so a reduction over them (a sum of expected counts, a table of files) is the same
    serially and on any cluster.  A task whose worker dies is re-run by the scheduler
    (``retries``): tasks are pure functions of their inputs.  Scattered data whose last
    copy died with a worker (Dask's active memory manager keeps one copy of data no task
    is waiting for) makes the scheduler cancel the tasks that need it as "already
    forgotten"; :meth:`map` then scatters it again from the value kept in
    :class:`Scattered` and re-runs the cancelled tasks, up to ``retries`` times."""

    def __init__(self, client=None, retries: int = RETRIES):
        self.client = client
        self.retries = retries
        self.rescattered = 0  # how many times lost data was sent again

    @property
    def distributed(self) -> bool:
        return self.client is not None

    @property
    def n_workers(self) -> int:
        if self.client is None:
            return 1
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def scatter(self, value, broadcast: bool = True):
        """``value`` sent once to the workers (a :class:`Scattered`), or itself when
        serial."""
        if self.client is None:
            return value
        return Scattered(self._send(value, broadcast), value)

    def _send(self, value, broadcast: bool = True):
        # wrapped in a list: Dask would scatter a dict's values under the dict's keys
        return self.client.scatter([value], broadcast=broadcast, hash=False)[0]

    def map(self, fn: Callable, items: Sequence, *shared, key: str = "strgm",
            workers: Optional[Sequence] = None) -> list:
        """``[fn(item, *shared) for item in items]``; ``shared`` are values or
        :class:`Scattered` data (sent once, not with every task). ``workers[i]``: the
        address where item i should preferably run (None: anywhere)."""
        items = list(items)
        if self.client is None:
            return [fn(item, *shared) for item in items]
        where = list(workers) if workers is not None else [None] * len(items)
        futures: list = [None] * len(items)
        for attempt in range(self.retries + 1):
            self._resend_lost(shared)
            args = [s.future if isinstance(s, Scattered) else s for s in shared]
            for i, (item, w) in enumerate(zip(items, where)):
                if futures[i] is None or futures[i].status == "cancelled":
                    futures[i] = self.client.submit(
                        fn, item, *args, pure=False, retries=self.retries,
                        key=f"{key}-{i}-{os.urandom(4).hex()}", workers=[w] if w else None,
                        allow_other_workers=bool(w))
            try:
                return self.client.gather(futures)
            except Exception as e:
                if type(e).__name__ == "KilledWorker":
                    raise StrgmError(f"a Dask worker died each time it ran a task ({key}); "
                                     "out of memory? (see the workers' logs)") from None
                if not _is_cancelled(e) or attempt == self.retries:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _resend_lost(self, shared) -> None:
        """Scatter again every :class:`Scattered` whose data the cluster no longer has."""
        for s in shared:
            if isinstance(s, Scattered) and s.future.status != "finished":
                s.future = self._send(s.value)
                self.rescattered += 1

    def release(self, *data) -> None:
        """Forget scattered data (a θ of an earlier iteration)."""
        if self.client is not None:
            for d in data:
                f = d.future if isinstance(d, Scattered) else d
                if hasattr(f, "release"):
                    f.release()


def _is_cancelled(error: BaseException) -> bool:
    """A Dask future cancelled by the scheduler (``FutureCancelledError``, a
    ``CancelledError``)."""
    import concurrent.futures

    return isinstance(error, concurrent.futures.CancelledError)


#: Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers, which turns off glibc's
#: dynamic mmap threshold: every large temporary array of a parse chart is then mapped
#: and unmapped afresh, and the inside–outside E-step ran 2× slower (measured; see
#: benchmarks/distributed_speedup.py). None unsets it (Dask's documented override).
NANNY_ENV = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
#: Dask's active memory manager drops all but one copy of data no task is waiting for,
#: so data broadcast to every worker could die with one of them (then :meth:`TaskPool.map`
#: must send it again). A local cluster keeps the copies it was asked to broadcast.
KEEP_REPLICAS = {"distributed.scheduler.active-memory-manager.start": False}


def _start_local(n: int):
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({**NANNY_ENV, **KEEP_REPLICAS}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
    return cluster, Client(cluster)


def _connect(address: str, option: str, timeout: float):
    from distributed import Client

    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as e:
        reason = type(e).__name__ if not str(e) else str(e).splitlines()[0]
        raise OptionError(option, address, f"cannot reach the Dask scheduler within "
                                           f"{timeout:g} s ({reason[:120]})") from None


@contextlib.contextmanager
def open_pool(spec: Optional[SchedulerSpec], option: str = "--scheduler",
              timeout: float = CONNECT_TIMEOUT):
    """A :class:`TaskPool` for ``spec`` (serial for None); a local cluster is started
    here and stopped on exit, an address is joined and left running."""
    if spec is None:
        yield TaskPool(None)
        return
    require_dask(option)
    cluster = None
    if spec.kind == "local":
        cluster, client = _start_local(spec.workers)
    else:
        client = _connect(spec.address, option, timeout)
    try:
        yield TaskPool(client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
