"""Running a benchmark's grid of independent runs (problem × seed) on Dask.

    ap = argparse.ArgumentParser(); add_scheduler_option(ap); a = ap.parse_args()
    spec = check_scheduler(a.scheduler)                 # before any work
    rows = run_grid(spec, fn, items, *shared)           # [fn(item, *shared) for item in items]

``--scheduler local[:N]`` starts a LocalCluster of N worker processes for the run,
an address joins a running cluster (on SLURM through dask-jobqueue, see the README),
and no option runs the grid in this process. The option is checked before any run
(:func:`strgm.distributed.cluster.parse_scheduler`: a one-line error for ``local:0``,
a malformed value or an address that does not answer). Results come back in the order
of ``items`` whatever the order the runs finished in, and each run is a pure function of
its item (its seed is in it), so a run whose worker died is re-run with the same result.
The tables a grid writes are those of the serial run: every prediction, choice and rule
the same, floats equal to rounding (measured: `python -m benchmarks.phonology.textbook
--problems Russian --seeds 2 --em-iters 1` with and without `--scheduler local:2`, largest
relative difference 1.5e-13 — BLAS sums in another order in a worker process). The
workers import the benchmarks as the client does: a local cluster's processes start with
the client's import path; a remote cluster's workers need the checkout's root on their
``PYTHONPATH``.
"""

from strgm.distributed.cluster import open_pool, parse_scheduler


def add_scheduler_option(ap) -> None:
    ap.add_argument("--scheduler", metavar="local[:N]|ADDRESS",
                    help="run the grid's runs as Dask tasks (pip install "
                         "'strgm[distributed]'); default: one after another, here")


def check_scheduler(value):
    """The parsed option (None: serial), checked before any work."""
    return parse_scheduler(value)


def run_grid(spec, fn, items, *shared, key: str = "benchmark") -> list:
    """``[fn(item, *shared) for item in items]``, on the cluster of ``spec`` (from
    :func:`check_scheduler`) or here."""
    with open_pool(spec) as pool:
        return pool.map(fn, list(items), *shared, key=key)
