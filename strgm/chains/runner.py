"""The one runner of a learner's independent chains: one task per chain on a pool.

A *pool* has ``scatter(value)`` (data sent once to where the tasks run),
``map(fn, items, *shared, key=...)`` (``[fn(item, *shared) for item in items]``, in the
order of ``items``) and ``release(*shared)``.  :class:`SerialPool` runs the tasks here,
one after the other; :class:`strgm.distributed.cluster.TaskPool` runs them on a Dask
cluster.  Used by the PCFG, HMM and TSG chains (``--chains``, :mod:`strgm.distributed`)
and by phonology EM's restarts (:mod:`strgm.models.restarts`).
"""

from __future__ import annotations

from typing import Callable, Sequence

__all__ = ["SerialPool", "map_chains"]


class SerialPool:
    """A pool that runs every task in this process, in order."""

    def scatter(self, value, broadcast: bool = True):
        """``value`` itself (nothing to send)."""
        return value

    def map(self, fn: Callable, items: Sequence, *shared, key: str = "strgm") -> list:
        """``[fn(item, *shared) for item in items]``."""
        return [fn(item, *shared) for item in items]

    def release(self, *data) -> None:
        """Nothing to forget."""


def map_chains(pool, chain_task, problem, tasks: list, key: str) -> list:
    """One task per chain on ``pool`` (``chain_task(task, problem)``), ``problem``
    scattered once and released after; the results in the order of ``tasks``."""
    shared = pool.scatter(problem)
    try:
        return pool.map(chain_task, tasks, shared, key=key)
    finally:
        pool.release(shared)
