"""The benchmarks: scripts run from the repository root as modules (``python -m
benchmarks.pep.speed --help``), in topic folders, writing what they measure to
``benchmarks/results/`` through :mod:`benchmarks.harness` (benchmarks/README.md)."""
