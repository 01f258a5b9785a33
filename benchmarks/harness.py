"""What every benchmark writes, in one place: the revision it ran at, ``results/NAME.json``,
``results/NAME.md`` (a title, the command that was run, a table) and ``results/NAME.png``.

Benchmarks run from the repository root as modules, ``python -m benchmarks.pep.speed
--help``: the root is then the first entry of the import path, so ``strgm`` and
``benchmarks`` come from the checkout the command is run in (a git worktree of another
revision too; benchmarks/README.md).

    from benchmarks import harness

    rev = harness.git_revision()                          # "3f2a1bc": HEAD, short
    harness.write_json("pep_textbook", rows)              # results/pep_textbook.json
    text = harness.markdown("Title", ["a", "b"], [[1, 2]],
                            run=harness.run_line(__name__, "run"))
    harness.write_markdown("pep_textbook", text)          # results/pep_textbook.md
    plt = harness.pyplot()                                # None (said) without matplotlib
    fig, ax = plt.subplots()
    harness.save_figure(fig, "pep_textbook")              # results/pep_textbook.png

Every file is written atomically (a temporary file in the same directory, then
``os.replace``): a reader, or a run stopped half-way, sees the old file or the new one.
A NAME may hold a sub-folder (``"pep_speed_runs/x"``) or be an absolute path (an
``--out`` option). ``STRGM_BENCH_RESULTS`` sends the results to another folder (a trial
run that must not touch the committed records); ``STRGM_SHARED_DATA`` says where the
shared data sets are (default ``../shared/data`` beside the checkout).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

#: The checkout the benchmarks run from (the repository root, or a worktree's).
ROOT = Path(__file__).resolve().parents[1]
#: Where results are written and read.
RESULTS = Path(os.environ.get("STRGM_BENCH_RESULTS") or ROOT / "benchmarks" / "results")
#: The shared data sets, kept outside the repository.
DATA = Path(os.environ.get("STRGM_SHARED_DATA") or ROOT.parent / "shared" / "data")
#: The textbook phonology problems (``*.tsv``) and the WSJ treebank sample (``*.mrg``).
PHONOLOGY = DATA / "phonology"
TREEBANK = DATA / "treebank" / "wsj"
#: The library's folders: what a "dirty" revision has uncommitted changes in.
LIBRARY = ("strgm", "fst_factors")

Name = Union[str, os.PathLike]


def result_path(name: Name, suffix: str = "") -> Path:
    """``results/NAME`` with ``suffix`` added unless NAME already ends with it."""
    text = os.fspath(name)
    return RESULTS / (text if not suffix or text.endswith(suffix) else text + suffix)


# The revision -----------------------------------------------------------------------

def _git(*args: str, cwd: Optional[Name] = None) -> Optional[str]:
    """git's stripped output, or None when git fails or is missing."""
    try:
        p = subprocess.run(["git", *args], cwd=cwd or ROOT, capture_output=True, text=True)
    except OSError:
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def git_revision(ref: str = "HEAD", *, dirty: Optional[str] = None,
                 library: bool = False, cwd: Optional[Name] = None) -> str:
    """The short hash of ``ref`` in this checkout (``cwd``: another one), ``"unknown"``
    outside git. ``library``: instead, the last commit that changed the library
    (:data:`LIBRARY`), the code a result was produced with. ``dirty``: a marker appended
    when the library has uncommitted changes (``"+dirty"``)."""
    where = cwd or ROOT
    rev = (_git("log", "-1", "--format=%h", "--", *LIBRARY, cwd=where) if library
           else _git("rev-parse", "--short", ref, cwd=where))
    if not rev:
        return "unknown"
    if dirty and _git("status", "--porcelain", "--", *LIBRARY, cwd=where):
        rev += dirty
    return rev


# The command ------------------------------------------------------------------------

def module_name(module: str) -> str:
    """The dotted name of a benchmark module; ``"__main__"`` (a script's ``__name__`` when
    run with ``python -m``) is resolved to the module that was run."""
    if module != "__main__":
        return module
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return spec.name
    path = Path(sys.argv[0]).resolve()
    with contextlib.suppress(ValueError):
        return ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return path.stem


def command(module: str, args: Union[None, str, Sequence[Any]] = None) -> str:
    """``python -m MODULE ARGS``: ``args`` as given (a string), quoted (a list), or this
    process's arguments (None)."""
    if args is None:
        args = sys.argv[1:]
    if not isinstance(args, str):
        args = shlex.join(str(a) for a in args)
    return f"python -m {module_name(module)}" + (f" {args}" if args else "")


def run_line(module: str, args: Union[None, str, Sequence[Any]] = None,
             rev: Optional[str] = None) -> str:
    """``What was run: `python -m MODULE ARGS` at REV.`` (REV: :func:`git_revision`)."""
    return f"What was run: `{command(module, args)}` at {rev or git_revision()}."


# Markdown ---------------------------------------------------------------------------

def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def table(headers: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A markdown table (no final newline); a cell that is a float is written with 3
    significant digits, None as an empty cell, anything else with ``str``."""
    lines = ["| " + " | ".join(map(str, headers)) + " |",
             "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(title: str, headers: Optional[Sequence[Any]] = None,
             rows: Iterable[Sequence[Any]] = (), *, run: Optional[str] = None,
             intro: Iterable[str] = (), notes: Iterable[str] = ()) -> str:
    """``# TITLE``, the ``run`` line (:func:`run_line`), the ``intro`` paragraphs, the
    table of ``headers`` and ``rows`` (none without headers) and the ``notes``
    paragraphs, blank lines between them."""
    parts = [f"# {title}"]
    parts += [run] if run else []
    parts += list(intro)
    parts += [table(headers, rows)] if headers is not None else []
    parts += list(notes)
    return "\n\n".join(parts) + "\n"


# Writing ----------------------------------------------------------------------------

def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(name: Name, data: bytes) -> Path:
    """``data`` to ``results/NAME`` (an absolute NAME: there), atomically; the folder is
    made if missing. Returns the path."""
    path = result_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_text(name: Name, text: str) -> Path:
    """:func:`write_bytes` of ``text`` in UTF-8 (NAME with its suffix)."""
    return write_bytes(name, text.encode("utf-8"))


def write_markdown(name: Name, text: str) -> Path:
    """``results/NAME.md``, atomically, ending with a newline."""
    return write_text(result_path(name, ".md"), text if text.endswith("\n") else text + "\n")


def _plain(x: Any) -> Any:
    if hasattr(x, "tolist"):  # numpy arrays and scalars
        return x.tolist()
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def json_text(obj: Any, strict: bool = False) -> str:
    """JSON, one-space indents, non-ASCII characters kept, numpy numbers and arrays as
    numbers and lists. Non-finite floats: JSON's ``NaN``/``Infinity`` extensions (read
    back as floats by :func:`json.load`), or with ``strict`` the strings ``"NaN"``,
    ``"Infinity"``, ``"-Infinity"`` (:func:`strgm.safe_io.strict_json`)."""
    if strict:
        from strgm.safe_io import strict_json

        return strict_json(obj, indent=1) + "\n"
    return json.dumps(obj, indent=1, ensure_ascii=False, default=_plain) + "\n"


def write_json(name: Name, obj: Any, strict: bool = False) -> Path:
    """``results/NAME.json`` (:func:`json_text`), atomically."""
    return write_text(result_path(name, ".json"), json_text(obj, strict))


def map_jobs(fn, jobs: Sequence[Any], processes: int) -> list:
    """``fn`` of every job, in order, in ``processes`` worker processes (one job per
    task: the jobs are long and uneven)."""
    from multiprocessing import Pool

    with Pool(processes) as pool:
        return pool.map(fn, jobs, chunksize=1)


def publish(name: Name, rows: list, text: str, **fields: Any) -> None:
    """``results/NAME.json`` (the revision, ``fields`` and ``rows``) and
    ``results/NAME.md`` (``text``), and the text on stdout."""
    write_json(name, {"revision": git_revision(), **fields, "rows": rows})
    write_markdown(name, text)
    print(text)


def read_json(name: Name) -> Any:
    """The document of ``results/NAME.json``."""
    return json.loads(result_path(name, ".json").read_text(encoding="utf-8"))


# Plots ------------------------------------------------------------------------------

def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, or None, with a note on stderr, when
    matplotlib is not installed (the plot is then skipped)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)",
              file=sys.stderr)
        return None
    return plt


def save_figure(fig, name: Name, dpi: int = 110, **savefig) -> Path:
    """``results/NAME.png`` of a Figure (or of an Axes' figure), atomically; the figure is
    closed."""
    import matplotlib.pyplot as plt

    fig = fig if hasattr(fig, "savefig") else fig.figure
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, **savefig)
    plt.close(fig)
    return write_bytes(result_path(name, ".png"), buf.getvalue())


# Child processes --------------------------------------------------------------------

def benchmarks_only(folder: Name) -> str:
    """A folder, made in ``folder``, that holds only a link to this checkout's
    ``benchmarks`` package: a child process started there (``cwd=``) imports the
    benchmarks from here and ``strgm`` from its ``PYTHONPATH`` (another revision)."""
    out = Path(folder) / "benchmarks_only"
    out.mkdir(parents=True, exist_ok=True)
    link = out / "benchmarks"
    if not link.exists():
        link.symlink_to(ROOT / "benchmarks", target_is_directory=True)
    return str(out)
