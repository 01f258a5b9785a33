"""Moved to benchmarks/phonology/synthetic.py (``python -m benchmarks.phonology.synthetic``).

Only re-exports that module, for tests that still load this file by its path
(tests/phonology_em); remove it once they import ``benchmarks.phonology.synthetic``."""

from benchmarks.phonology.synthetic import *  # noqa: F401,F403
