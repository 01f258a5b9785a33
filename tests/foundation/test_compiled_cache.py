"""The compiled kernels' disk cache is keyed by the whole package's source
(:mod:`strgm.wfsa.compiled`): numba itself re-checks a cached kernel only against its
own file, so a kernel whose callee changed in another module would keep stale code."""

import os
from pathlib import Path

import pytest

from strgm.wfsa import compiled


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "kernel.py").write_text("from pkg.sub.lu import lu\n")
    (root / "sub" / "lu.py").write_text("def lu(m):\n    return m\n")
    return root


def test_digest_changes_with_any_module_not_only_the_kernels_own(tmp_path):
    root = _package(tmp_path)
    before = compiled.source_digest(root)
    assert compiled.source_digest(root) == before  # stable
    kernel_stat = (root / "kernel.py").stat().st_mtime_ns
    (root / "sub" / "lu.py").write_text("def lu(m):\n    return -m\n")
    # numba's own key, the kernel file's timestamp, is unchanged: the control
    assert (root / "kernel.py").stat().st_mtime_ns == kernel_stat
    assert compiled.source_digest(root) != before


def test_digest_sees_added_and_renamed_modules(tmp_path):
    root = _package(tmp_path)
    d0 = compiled.source_digest(root)
    (root / "extra.py").write_text("")
    d1 = compiled.source_digest(root)
    (root / "extra.py").rename(root / "other.py")
    d2 = compiled.source_digest(root)
    assert len({d0, d1, d2}) == 3


def test_cache_dir_under_xdg_and_keyed_by_digest(tmp_path):
    root = _package(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    path = compiled.cache_dir(root, env)
    assert path == tmp_path / "cache" / "strgm" / "numba" / compiled.source_digest(root)
    assert path.is_dir()
    (root / "kernel.py").write_text("# changed\n")
    assert compiled.cache_dir(root, env) != path


def test_user_cache_dir_and_unwritable_places_are_respected(tmp_path):
    root = _package(tmp_path)
    assert compiled.cache_dir(root, {"NUMBA_CACHE_DIR": str(tmp_path / "mine")}) is None
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert compiled.cache_dir(root, {"XDG_CACHE_HOME": str(blocker)}) is None


def test_old_digests_are_pruned(tmp_path):
    root = _package(tmp_path)
    base = tmp_path / "cache" / "strgm" / "numba"
    for i in range(compiled.KEEP + 3):
        old = base / f"old{i}"
        old.mkdir(parents=True)
        os.utime(old, (i, i))
    path = compiled.cache_dir(root, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    left = sorted(p.name for p in base.iterdir() if p != path)
    newest = [f"old{i}" for i in range(3, compiled.KEEP + 3)]
    assert left == sorted(newest)


@pytest.mark.skipif(not compiled.COMPILED or bool(os.environ.get("NUMBA_CACHE_DIR")),
                    reason="numba missing, or the user chose the cache directory")
def test_the_kernels_are_cached_under_the_packages_digest():
    from strgm.features import q_kernel

    root = Path(compiled.__file__).resolve().parents[1]
    cache = Path(q_kernel.q_moments_kernel._cache._cache_path)
    digest = compiled.source_digest(root)
    if compiled.cache_dir(root) is None:
        pytest.skip("no writable cache directory here")
    assert digest in cache.parts
