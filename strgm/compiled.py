"""``njit`` for strgm's compiled kernels, cached under a digest of strgm's source and of
:mod:`fst_factors`' (whose kernels strgm's call): a change in either starts a fresh
cache (:mod:`fst_factors.wfsa.compiled`). Every strgm module with a kernel imports
``njit`` from here, so the directory is set before its kernels are decorated."""

from __future__ import annotations

from pathlib import Path

from fst_factors.wfsa.compiled import COMPILED, ROOT, njit, use_cache_for

use_cache_for(ROOT, Path(__file__).resolve().parent)

__all__ = ["COMPILED", "njit"]
