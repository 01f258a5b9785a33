"""Where tasks run: ``--scheduler local[:N]|ADDRESS`` parsed, checked and connected.

* ``local`` / ``local:N`` start a Dask ``LocalCluster`` of N worker *processes* (one thread
  each, so that numba kernels and BLAS do not compete; N defaults to the CPUs of the
  machine) and stop it at the end of the run;
* any other value is the address of a running Dask scheduler (``tcp://host:8786``, or a
  cluster started with dask-jobqueue on SLURM) which the run joins and leaves running;
  ``tls://host:port`` connects with the certificates of ``--tls-ca-file``, ``--tls-cert``
  and ``--tls-key`` (the names of Dask's own command line), or else those of Dask's
  ``distributed.comm.tls`` configuration.

A scheduler and its workers are trusted with code execution in this process: Dask sends
results back pickled, and unpickling runs code.  TLS authenticates both ends and encrypts
the traffic; it does not make an untrusted cluster safe.

The option is checked before any work: a malformed value, ``local:0``, more local workers
than :func:`max_local_workers`, a certificate file that cannot be read or a ``tls://``
address without certificates is an :class:`~strgm.errors.OptionError`, an address that
does not answer within :data:`CONNECT_TIMEOUT` seconds (or refuses the certificates) is one
too (naming the address), and a missing Dask is a
:class:`~strgm.errors.MissingDependencyError` saying what to install.  Without a scheduler
:class:`TaskPool` runs the same tasks in this process, in the same order, so results do not
depend on where they ran (docs/architecture.md §1, the distributed layer).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

from strgm.errors import MissingDependencyError, OptionError, StrgmError

__all__ = [
    "CONNECT_TIMEOUT",
    "INSTALL",
    "Scattered",
    "SchedulerSpec",
    "TaskPool",
    "max_local_workers",
    "open_pool",
    "parse_scheduler",
    "require_dask",
]

#: Seconds to wait for a scheduler address to answer before giving up.
CONNECT_TIMEOUT = 5.0
#: What to install for ``--scheduler``.
INSTALL = "--scheduler needs Dask: pip install 'strgm[distributed]'"
#: How many times the scheduler re-runs a task whose worker died (Dask's ``retries``).
RETRIES = 3
#: ``local:N`` starts at most this many single-threaded worker processes per CPU: each
#: holds its own interpreter and data, and more than the CPUs only compete for them.
LOCAL_WORKERS_PER_CPU = 4
#: The certificate options, in order: CA, this client's certificate, its key (Dask's
#: ``tls_ca_file``, ``tls_client_cert``, ``tls_client_key`` and their config keys).
TLS_OPTIONS = ("--tls-ca-file", "--tls-cert", "--tls-key")
_TLS_CONFIG = ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert",
               "distributed.comm.tls.client.key")
NEEDS_CERTS = ("a tls:// scheduler needs certificates: pass --tls-ca-file CA.pem "
               "--tls-cert CERT.pem [--tls-key KEY.pem], or set Dask's "
               "distributed.comm.tls config")

_ADDRESS = re.compile(r"^(?:(tcp|tls|inproc|ucx|ws|wss)://)?[A-Za-z0-9_.\-\[\]:]+$")


@dataclass(frozen=True)
class SchedulerSpec:
    """A parsed ``--scheduler``: ``kind`` "local" (``workers`` processes) or "address";
    ``value`` as given; ``tls``: the (CA, certificate, key) of a ``tls://`` address
    (paths, or PEM text from Dask's config; the key may be "" when the certificate file
    holds it), empty otherwise."""

    kind: str
    workers: int = 0
    address: str = ""
    value: str = ""
    tls: tuple = ()

    def describe(self) -> str:
        return (f"local cluster of {self.workers} worker processes" if self.kind == "local"
                else f"scheduler {self.address}")

    def security(self):
        """Dask's ``Security`` for :attr:`tls` (encryption required), or None."""
        if not self.tls:
            return None
        from distributed.security import Security

        ca, cert, key = self.tls
        return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key or None,
                        require_encryption=True)


def require_dask(option: str = "--scheduler"):
    """``distributed`` (the module), or MissingDependencyError naming the extra."""
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError(INSTALL.replace("--scheduler", option)) from None
    return distributed


def max_local_workers() -> int:
    """The largest N of ``local:N`` on this machine (:data:`LOCAL_WORKERS_PER_CPU` per
    CPU)."""
    return LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1)


def parse_scheduler(value: str | None, option: str = "--scheduler",
                    tls: Sequence[str | None] = ()) -> SchedulerSpec | None:
    """``local`` | ``local:N`` (1 ≤ N ≤ :func:`max_local_workers`) | ``ADDRESS`` → a
    spec; None → None.  ``tls``: the values of :data:`TLS_OPTIONS` (None where not
    given), for a ``tls://`` address only.  Checks the syntax, the certificates and that
    Dask is installed, never connects."""
    given = [(o, v) for o, v in zip(TLS_OPTIONS, tls) if v is not None]
    if value is None:
        if given:
            raise OptionError(given[0][0], given[0][1], f"needs {option} tls://HOST:PORT")
        return None
    text = str(value).strip()
    if text == "local" or text.startswith("local:"):
        spec = SchedulerSpec("local", workers=_local_workers(text, value, option),
                             value=text)
    elif text and _ADDRESS.match(text) and ":" in text:
        spec = SchedulerSpec("address", address=text if "://" in text else f"tcp://{text}",
                             value=text)
    else:
        raise OptionError(option, _shown(value), "expected local, local:N or a "
                          "scheduler address HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    require_dask(option)
    if given and not spec.address.startswith("tls://"):
        raise OptionError(option, value, f"{given[0][0]} is for a tls:// scheduler "
                                         "address; use tls://HOST:PORT")
    if spec.address.startswith("tls://"):
        spec = SchedulerSpec("address", address=spec.address, value=text,
                             tls=_tls_files(tls, value, option))
    return spec


def _local_workers(text: str, value, option: str) -> int:
    n_text = text[6:] if text.startswith("local:") else str(os.cpu_count() or 1)
    digits = n_text.lstrip("0") if n_text.isascii() and n_text.isdigit() else None
    if not digits:
        raise OptionError(option, _shown(value), "expected local, local:N with N ≥ 1 "
                          "worker processes, or a scheduler address")
    top = max_local_workers()
    if len(digits) > 12 or int(digits) > top:
        raise OptionError(option, _shown(value), f"local:N starts N worker processes "
                          f"here, at most {LOCAL_WORKERS_PER_CPU} per CPU ({top} on this "
                          "machine); join a scheduler ADDRESS for more")
    return int(digits)


def _tls_files(tls: Sequence[str | None], value, option: str) -> tuple:
    """(CA, certificate, key) of a ``tls://`` address: each option given, else Dask's
    config; each file readable, the CA loadable, and the certificate and key a pair."""
    import ssl

    import dask

    given = list(tls) + [None] * (3 - len(tls))
    files = []
    for opt, v, key in zip(TLS_OPTIONS, given, _TLS_CONFIG):
        name, v = (opt, v) if v is not None else (key, dask.config.get(key, None))
        if v and "\n" not in str(v):  # a path (Dask's config may hold the PEM text)
            _check_readable(str(v), name)
        files.append((name, str(v) if v else ""))
    if not files[0][1] or not files[1][1]:
        raise OptionError(option, _shown(value), NEEDS_CERTS)
    (ca_name, ca), (cert_name, cert), (_, key) = files
    try:
        ssl.create_default_context(**{"cadata" if "\n" in ca else "cafile": ca})
    except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
        raise OptionError(ca_name, _shown(ca), f"not a CA certificate "
                                               f"({_first_line(e)[:100]})") from None
    spec = SchedulerSpec("address", address=str(value), tls=(ca, cert, key))
    try:
        spec.security().get_connection_args("client")
    except (OSError, ValueError) as e:
        hint = "" if key else f"; give its key with {TLS_OPTIONS[2]}"
        raise OptionError(cert_name, _shown(cert), f"not a certificate and key that TLS "
                          f"can use ({_first_line(e)[:100]}){hint}") from None
    return spec.tls


def _shown(value) -> str:
    """``value`` short enough for a one-line error (never the text of a PEM file)."""
    text = str(value)
    if "\n" in text:
        return "(PEM text from Dask's config)"
    return text if len(text) <= 80 else text[:77] + "..."


def _check_readable(path: str, option: str) -> None:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open
            raise OptionError(option, path, "not a regular certificate file")
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError as e:
        raise OptionError(option, path, f"cannot read the certificate file "
                                        f"({e.strerror or type(e).__name__})") from None
    if b"-----BEGIN " not in head:
        raise OptionError(option, path, "not a PEM file (no -----BEGIN line)")


def _first_line(e: BaseException) -> str:
    return type(e).__name__ if not str(e).strip() else str(e).strip().splitlines()[0]


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
            workers: Sequence | None = None) -> list:
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
#: benchmarks/infra/distributed_speedup.py). None unsets it (Dask's documented override).
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


def _connect(spec: SchedulerSpec, option: str, timeout: float):
    from distributed import Client

    try:
        return Client(spec.address, timeout=timeout, security=spec.security())
    except (OSError, TimeoutError) as e:
        reason = _first_line(e)
        if spec.tls and ("certificate" in reason.lower() or "ssl" in reason.lower()):
            raise OptionError(option, spec.address, "the TLS handshake failed: the "
                              "scheduler's certificate is not signed by the CA of "
                              "--tls-ca-file, or it refused --tls-cert") from None
        raise OptionError(option, spec.address, f"cannot reach the Dask scheduler within "
                                                f"{timeout:g} s ({reason[:120]})") from None
    except (ValueError, TypeError, KeyError, EOFError) as e:  # a reply Dask cannot decode
        raise OptionError(option, spec.address, "the server did not answer as a Dask "
                          f"scheduler ({_first_line(e)[:120]})") from None


@contextlib.contextmanager
def open_pool(spec: SchedulerSpec | None, option: str = "--scheduler",
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
        client = _connect(spec, option, timeout)
    try:
        yield TaskPool(client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
