"""Where compiled loops come from: numba's ``njit`` (cached on disk), or — on a platform
without numba — a no-op decorator, under which the same loops run as plain Python
(correct, slow). Every compiled kernel keeps a numpy/OpenFst reference that the tests
hold it to (e.g. :func:`fst_factors.wfsa.fixed_point._jacobi_steps`).

The on-disk cache is keyed by the source of the packages whose kernels it holds. numba
checks a cached kernel only against its own file's timestamp, so a kernel whose callee
changed in another module (say a new dense LU) would keep running its old machine code.
Unless ``NUMBA_CACHE_DIR`` is set, the kernels are therefore cached in
``$XDG_CACHE_HOME/strgm/numba/<digest>`` (default ``~/.cache``), the digest a SHA-256
of every module of the packages (:func:`source_digest`): any change of the source starts
a fresh cache, and the older ones beyond :data:`KEEP` are removed. Where that
directory cannot be written, numba's own cache next to the sources is used.

numba reads the cache directory when a kernel is decorated. This package's kernels are
keyed by its own source; a package whose kernels call these calls :func:`use_cache_for`
with its root and this one before decorating its own (strgm does, in
``strgm/compiled.py``)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Optional

#: Cache directories of other source digests kept besides the current one.
KEEP = 3


def source_digest(*roots: Path) -> str:
    """SHA-256 (16 hex digits) of the names and contents of the ``*.py`` files under
    each of ``roots`` (each named by its directory), in sorted order."""
    h = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            h.update(f"{root.name}/{path.relative_to(root).as_posix()}".encode())
            h.update(b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir(*roots: Path, env: Optional[dict] = None) -> Optional[Path]:
    """The writable cache directory for the packages at ``roots`` (module docstring), or
    None when ``NUMBA_CACHE_DIR`` is set or no such directory can be made."""
    env = os.environ if env is None else env
    if env.get("NUMBA_CACHE_DIR"):
        return None
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "strgm" / "numba"
    path = base / source_digest(*roots)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        return None
    _prune(base, path)
    return path


def _prune(base: Path, current: Path) -> None:
    """Remove all but the :data:`KEEP` most recently used other digests' caches."""
    try:
        others = sorted((p for p in base.iterdir() if p.is_dir() and p != current),
                        key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


#: This package's root (fst_factors/).
ROOT = Path(__file__).resolve().parents[1]


def use_cache_for(*roots: Path) -> None:
    """Kernels decorated from now on are cached under the digest of ``roots`` (module
    docstring); nothing when numba is absent or the directory cannot be made."""
    if COMPILED:
        path = cache_dir(*roots)
        if path is not None:
            numba.config.CACHE_DIR = str(path)


try:
    import numba
    from numba import njit
    COMPILED = True
except ImportError:  # pragma: no cover - numba is a dependency; kept for odd platforms
    COMPILED = False

    def njit(*_args, **_kwargs):
        return lambda f: f

use_cache_for(ROOT)

__all__ = ["COMPILED", "ROOT", "cache_dir", "njit", "source_digest", "use_cache_for"]
