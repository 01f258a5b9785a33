"""Execute the notebooks and store their outputs, or check that the stored outputs are fresh.

    python notebooks/execute.py                 # run every notebook, write outputs back
    python notebooks/execute.py train_phonology.ipynb   # only the ones named
    python notebooks/execute.py --check         # exit 1 if a notebook's outputs are stale

Each notebook runs top to bottom with nbclient (kernel ``python3``, working directory
``notebooks/``, a per-cell timeout) and is written back with its outputs atomically (a
temporary file in the same directory, then ``os.replace``): a failed or interrupted run
leaves the stored notebook as it was. Volatile metadata (execution timestamps) is not
stored; execution counts are.

Freshness: the notebook's metadata records ``strgm.code_sha256``, the SHA-256 of its
code cells' sources in order, at the time its outputs were made (and the strgm version
they were made with, for the reader). ``--check`` recomputes it and names every notebook
whose code changed since, or that was never executed by this script. It does not run
anything, so it is cheap enough for CI; it cannot tell whether the library's behaviour
changed under unchanged code, which is what re-executing is for.

Needs the ``notebooks`` extra: ``pip install -e '.[notebooks]'``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Seconds one cell may run before the execution is abandoned.
CELL_TIMEOUT = 600
#: Where the fingerprint lives in a notebook's metadata.
META_KEY = "strgm"


def code_fingerprint(nb) -> str:
    """SHA-256 (hex) of the notebook's code-cell sources, in order."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode("utf-8"))
            h.update(b"\0")
    return h.hexdigest()


def stale_reason(nb) -> str | None:
    """Why the stored outputs of ``nb`` are stale, or None when they are fresh."""
    stored = nb.metadata.get(META_KEY, {}).get("code_sha256")
    if stored is None:
        return "no stored outputs fingerprint (never run by notebooks/execute.py)"
    if stored != code_fingerprint(nb):
        return "a code cell changed since its outputs were stored"
    return None


def _strip_volatile(nb) -> None:
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
    nb.metadata.pop("widgets", None)


def execute(path: Path, timeout: int = CELL_TIMEOUT):
    """Run the notebook at ``path`` in ``notebooks/`` and return it with its outputs."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     record_timing=False,
                                     resources={"metadata": {"path": str(HERE)}})
    client.execute()
    _strip_volatile(nb)
    from strgm import __version__
    nb.metadata[META_KEY] = {"code_sha256": code_fingerprint(nb), "strgm_version": __version__}
    return nb


def write_atomically(nb, path: Path) -> None:
    """Write ``nb`` to ``path`` through a temporary file in the same directory."""
    import nbformat

    nbformat.validate(nb)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".ipynb.tmp", dir=path.parent)
    try:
        # keep the stored file's permissions (mkstemp makes it readable by its owner only)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            nbformat.write(nb, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check(paths: list[Path]) -> int:
    """Print one line per stale notebook; 1 if any is stale, else 0."""
    import nbformat

    stale = 0
    for path in paths:
        reason = stale_reason(nbformat.read(path, as_version=4))
        if reason:
            stale += 1
            print(f"{path.name}: stale outputs: {reason}; run python notebooks/execute.py "
                  f"{path.name}")
    return 1 if stale else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help="notebook files (default: all in notebooks/)")
    ap.add_argument("--check", action="store_true",
                    help="only check that the stored outputs match the code cells")
    ap.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    args = ap.parse_args(argv)
    paths = [Path(p) if Path(p).exists() else HERE / p for p in args.notebooks] \
        or sorted(HERE.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.check:
        return check(paths)
    for path in paths:
        print(f"executing {path.name} ...", flush=True)
        start = time.perf_counter()
        write_atomically(execute(path, args.timeout), path)
        print(f"{path.name}: outputs stored ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
