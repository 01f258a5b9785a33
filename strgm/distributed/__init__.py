"""Running strgm's long jobs on Dask: many problem files, sharded PCFG E-steps and
independent sampler chains (docs/architecture.md §1, the distributed layer).

Dask is optional (``pip install 'strgm[distributed]'``): importing this package never
imports it; :func:`~strgm.distributed.cluster.parse_scheduler` and
:func:`~strgm.distributed.cluster.open_pool` do, and say what to install when it is
missing.  Without a scheduler every entry point runs its tasks in this process, in the same
order, so serial and distributed runs give the same numbers.

* :mod:`~strgm.distributed.cluster`: ``--scheduler local[:N]|ADDRESS``, :class:`TaskPool`;
* :mod:`~strgm.distributed.pcfg_shards`: the inside–outside E-step over sentence shards;
* :mod:`~strgm.distributed.chains`: K independent PCFG sampler chains;
* :mod:`~strgm.distributed.diagnostics`: split-R̂ and effective sample size;
* :mod:`~strgm.distributed.files`: one task per problem file.
"""

from strgm.distributed.cluster import SchedulerSpec, TaskPool, open_pool, parse_scheduler
from strgm.distributed.diagnostics import chain_summary, effective_sample_size, split_rhat

__all__ = ["SchedulerSpec", "TaskPool", "chain_summary", "effective_sample_size",
           "open_pool", "parse_scheduler", "split_rhat"]
