"""strgm's compiled kernels (strgm/compiled.py) are cached under the digest of strgm's
source and of fst_factors' (:mod:`fst_factors.wfsa.compiled`, tested in
tests/fst_factors/test_compiled_cache.py): a change in either package starts a fresh
cache."""

import os
from pathlib import Path

import pytest

from fst_factors.wfsa import compiled


@pytest.mark.skipif(not compiled.COMPILED or bool(os.environ.get("NUMBA_CACHE_DIR")),
                    reason="numba missing, or the user chose the cache directory")
def test_strgm_kernels_are_cached_under_the_digest_of_both_packages():
    """strgm's kernels (q's) call fst_factors' code: their cache is keyed by both
    sources; fst_factors' own kernels by its source at least (strgm's digest when strgm
    was imported first, which is also sound)."""
    import strgm
    from strgm.features import q_kernel

    roots = (compiled.ROOT, Path(strgm.__file__).resolve().parent)
    if compiled.cache_dir(*roots) is None:
        pytest.skip("no writable cache directory here")
    cache = Path(q_kernel.q_moments_kernel._cache._cache_path)
    assert compiled.source_digest(*roots) in cache.parts
    assert compiled.source_digest(compiled.ROOT) not in cache.parts
