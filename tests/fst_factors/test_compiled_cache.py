"""The compiled kernels' disk cache is keyed by the source of the packages whose kernels
it holds (:mod:`fst_factors.wfsa.compiled`): numba itself re-checks a cached kernel only
against its own file, so a kernel whose callee changed in another module (or in
fst_factors, for strgm's kernels) would keep stale code. strgm's own kernels under the
digest of both packages: tests/core/test_compiled.py."""

import os
from pathlib import Path

from fst_factors.wfsa import compiled


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
    path = compiled.cache_dir(root, env=env)
    assert path == tmp_path / "cache" / "strgm" / "numba" / compiled.source_digest(root)
    assert path.is_dir()
    (root / "kernel.py").write_text("# changed\n")
    assert compiled.cache_dir(root, env=env) != path


def test_user_cache_dir_and_unwritable_places_are_respected(tmp_path):
    root = _package(tmp_path)
    assert compiled.cache_dir(root, env={"NUMBA_CACHE_DIR": str(tmp_path / "mine")}) is None
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert compiled.cache_dir(root, env={"XDG_CACHE_HOME": str(blocker)}) is None


def test_old_digests_are_pruned(tmp_path):
    root = _package(tmp_path)
    base = tmp_path / "cache" / "strgm" / "numba"
    for i in range(compiled.KEEP + 3):
        old = base / f"old{i}"
        old.mkdir(parents=True)
        os.utime(old, (i, i))
    path = compiled.cache_dir(root, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    left = sorted(p.name for p in base.iterdir() if p != path)
    newest = [f"old{i}" for i in range(3, compiled.KEEP + 3)]
    assert left == sorted(newest)


def test_the_digest_of_two_packages_sees_a_change_in_either(tmp_path):
    a, b = _package(tmp_path / "a"), _package(tmp_path / "b")
    both = compiled.source_digest(a, b)
    assert both not in (compiled.source_digest(a), compiled.source_digest(b))
    (b / "sub" / "lu.py").write_text("def lu(m):\n    return 2 * m\n")
    assert compiled.source_digest(a, b) != both
