"""Where compiled loops come from: numba's ``njit`` (cached on disk), or — on a platform
without numba — a no-op decorator, under which the same loops run as plain Python
(correct, slow). The compiled kernels of the engine are
:func:`strgm.wfsa.fixed_point._jacobi_steps` and ``_gauss_seidel_steps``, and the
message–DFA product of
:mod:`strgm.features.product`; each keeps a numpy/OpenFst reference that the tests hold
it to.

The on-disk cache is keyed by the package's source. numba checks a cached kernel only
against its own file's timestamp, so a kernel whose callee changed in another module
(say a new LU in :mod:`strgm.features.dense_lu`) would keep running its old machine code.
Unless ``NUMBA_CACHE_DIR`` is set, the kernels are therefore cached in
``$XDG_CACHE_HOME/strgm/numba/<digest>`` (default ``~/.cache``), the digest a SHA-256
of every module of the package (:func:`source_digest`): any change of the source starts
a fresh cache, and the older ones beyond :data:`KEEP` are removed. Where that
directory cannot be written, numba's own cache next to the sources is used."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Optional

#: Cache directories of other source digests kept besides the current one.
KEEP = 3


def source_digest(root: Path) -> str:
    """SHA-256 (16 hex digits) of the names and contents of the ``*.py`` files under
    ``root``, in sorted order."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir(root: Path, env: Optional[dict] = None) -> Optional[Path]:
    """The writable cache directory for the package at ``root`` (module docstring), or
    None when ``NUMBA_CACHE_DIR`` is set or no such directory can be made."""
    env = os.environ if env is None else env
    if env.get("NUMBA_CACHE_DIR"):
        return None
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "strgm" / "numba"
    path = base / source_digest(root)
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


try:
    import numba
    from numba import njit
    COMPILED = True
    _dir = cache_dir(Path(__file__).resolve().parents[1])
    if _dir is not None:
        numba.config.CACHE_DIR = str(_dir)
except ImportError:  # pragma: no cover - numba is a dependency; kept for odd platforms
    COMPILED = False

    def njit(*_args, **_kwargs):
        return lambda f: f

__all__ = ["COMPILED", "cache_dir", "njit", "source_digest"]
