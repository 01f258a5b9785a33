"""Safe reading and writing: decoded inputs with located errors, atomic outputs under one
output policy, strict JSON.

Every file strgm reads goes through :func:`read_text` (UTF-8, a byte-order mark accepted,
errors naming the file, line and byte); every file it writes through
:func:`atomic_write_bytes` (temporary sibling, fsync, rename: a crash leaves the old file or
the new one) or :func:`atomic_directory` (built aside, swapped in by two renames).

:func:`check_outputs` is the output policy of every command, applied before any work (a
long computation is never lost to a bad path): an output may not be an input of the run,
another output of the run, a directory, or an existing non-regular file (device, FIFO,
socket). An output that is a symbolic link is written through: its target is replaced
atomically and the link stays (:func:`write_target`). :func:`strict_json` writes JSON
with non-finite floats as the strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``
(:func:`json_float` reads them back).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import math
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from fst_factors.files import MAX_INPUT_BYTES, check_file, read_file_bytes  # noqa: F401
from strgm.errors import InputError, OptionError

PathLike = Union[str, os.PathLike]

_NONFINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}


#: Data shipped with the package, readable wherever a file is: ``example:NAME``
#: (``strgm infer example:english-verbs``). Made for strgm, or derived from the CMU
#: Pronouncing Dictionary (BSD licence, ``strgm/data/LICENSE-cmudict.txt``).
EXAMPLES = {
    "english-verbs": "english-verbs.tsv",  # 12 CMUdict verbs × bare/PAST/3SG/PROG
    "synthetic": "synthetic.tsv",  # 40 words, known rules (synthetic-urs.tsv: gold URs)
    "synthetic-urs": "synthetic-urs.tsv",
    "toy-grammar": "toy-grammar.lt",  # Johnson's format
    "toy-corpus": "toy-corpus.yld",  # sentences of the toy grammar
    "trees": "trees.mrg",  # Penn Treebank trees written for strgm
    "phonemes": "phonemes.txt",  # 400 CMUdict pronunciations in IPA, one per line
}
EXAMPLE_PREFIX = "example:"


def resolve_input(path: PathLike) -> Path:
    """``path`` as a Path; ``example:NAME`` becomes the shipped file of that name
    (:data:`EXAMPLES`), an InputError listing the names for an unknown one."""
    text = str(path)
    if not text.startswith(EXAMPLE_PREFIX):
        return Path(path)
    name = text[len(EXAMPLE_PREFIX):]
    if name not in EXAMPLES:
        raise InputError(f"unknown example {name!r}; the examples are "
                         f"{', '.join(sorted(EXAMPLES))}", path=text)
    return Path(__file__).resolve().parent / "data" / EXAMPLES[name]


def read_text(path: PathLike, what: str = "input") -> str:
    """The text of ``path`` decoded as UTF-8 (a leading byte-order mark is dropped).

    Raises :class:`InputError` naming the file when it is missing, a directory, too large
    or not UTF-8 (then with the line and byte offset of the first bad byte)."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{what} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                         f"{e.start}); save it as UTF-8", path=str(path), line=line) from None


def read_bytes(path: PathLike, what: str = "input") -> bytes:
    """The bytes of ``path``, with :class:`InputError` for a missing, unreadable or
    oversized file (the size is checked before reading; ``example:NAME`` resolved)."""
    return read_file_bytes(resolve_input(path), what)


def check_input(path: PathLike, what: str = "input", directory: bool = False) -> Path:
    """``path`` as a :class:`Path` once it is known to exist with the right type and size
    (``example:NAME`` resolved to the shipped file; :func:`fst_factors.files.check_file`);
    otherwise :class:`InputError` naming it."""
    return check_file(resolve_input(path), what, directory)


def write_target(path: PathLike) -> Path:
    """Where a write to ``path`` lands: the resolved target when ``path`` is a symbolic
    link (so that the link survives and its target is updated), else ``path`` itself."""
    p = Path(path)
    return Path(os.path.realpath(p)) if os.path.islink(p) else p


def check_output(path: Optional[PathLike], option: str, directory: bool = False) -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: an existing
    directory (file for ``directory=True``), an existing non-regular file (a device such
    as ``/dev/full``, a FIFO, a socket), an unwritable file or parent directory, a missing
    parent. A symbolic link is checked as its target (:func:`write_target`). ``option``
    names the option in the message; ``None`` and ``-`` (stdout) pass."""
    if path is None or str(path) == "-":
        return
    if str(path) == "":
        raise InputError(f"option {option}: empty path")
    p = write_target(path)
    parent = p.parent if str(p.parent) else Path(".")
    mode = p.stat().st_mode if p.exists() else None
    if mode is None or directory:
        why = "exists and is not a directory" if mode and not stat.S_ISDIR(mode) else None
    elif stat.S_ISDIR(mode):
        why = "is a directory, expected a file path"
    elif not stat.S_ISREG(mode):
        why = "is not a regular file (a device, FIFO or socket); choose a file path"
    else:
        why = None if os.access(p, os.W_OK) else "file is not writable"
    if why is None and not parent.is_dir():
        why = (f"directory {str(parent)!r} does not exist" if not parent.exists()
               else f"{str(parent)!r} is not a directory")
    if why is None and not os.access(parent, os.W_OK | os.X_OK):
        why = f"cannot write into directory {str(parent)!r} (permission denied)"
    if why:
        raise InputError(f"option {option}: {why}", path=str(path))


def _same(a: str, b: str) -> bool:
    """``a`` and ``b`` are the same file (after symbolic links; hard links too)."""
    try:
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _inside(a: str, d: str) -> bool:
    """``a`` lies inside the directory ``d`` (after symbolic links)."""
    return os.path.realpath(a).startswith(os.path.realpath(d).rstrip(os.sep) + os.sep)


def check_outputs(outputs, inputs=(), replaces=()) -> None:
    """The output policy of one run, checked before any work (OptionError or InputError
    naming the option and the path). ``outputs``: ``(path, option[, directory])`` each
    (``None`` and ``-`` skipped); ``inputs``: the paths the run reads, each a path or a
    ``(path, what)`` pair naming it (``"the corpus"``), an input directory standing for
    everything in it. Refused: an output failing :func:`check_output`; an output that is
    an input or lies inside an input directory; an output directory holding an input; two
    outputs at one path, or one inside the other's directory. ``replaces``: ``(option,
    what)`` pairs that may coincide (``--checkpoint`` rewriting ``--resume``)."""
    ins = [(str(resolve_input(p)), w) for p, w in
           (x if isinstance(x, tuple) else (x, "an input") for x in inputs) if p]
    done: list = []
    for out in outputs:
        path, option, directory = (tuple(out) + (False,))[:3]
        if path is None or str(path) == "-":
            continue
        check_output(path, option, directory=directory)
        path = str(path)
        for other, what in ins:
            why = (None if (option, what) in replaces else
                   "is also {} of this run; writing it would destroy the input"
                   if _same(path, other) else
                   "lies inside {} of this run, a directory it reads"
                   if os.path.isdir(other) and _inside(path, other) else
                   "contains {} of this run" if directory and _inside(other, path) else None)
            if why:
                raise OptionError(option, path, why.format(what))
        for prev, popt, pdir in done:
            if _same(path, prev) or (pdir and _inside(path, prev)) or \
                    (directory and _inside(prev, path)):
                raise OptionError(option, path, f"collides with the output of {popt}")
        done.append((path, option, directory))


def _fsync_dir(d: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(str(d), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary sibling, fsync, rename, fsync of
    the directory). On any error the target is untouched and the temporary file removed;
    the error is an :class:`InputError` naming the path. A symbolic link is written
    through (:func:`write_target`); a directory, device, FIFO or socket is refused."""
    p = write_target(path)
    parent = p.parent if str(p.parent) else Path(".")
    fd, tmp = None, None
    if p.exists() and not stat.S_ISREG(p.stat().st_mode):
        raise InputError("cannot write: not a regular file (a directory, device, FIFO or "
                         "socket)", path=str(path))
    try:
        _remove_stale_files(parent, p.name)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}-", suffix=".tmp",
                                   dir=str(parent))
        with os.fdopen(fd, "wb") as fh:
            fd = None
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if p.exists():
            shutil.copymode(str(p), tmp)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
        tmp = None
        _fsync_dir(parent)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", path=str(path)) from None
    finally:
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: PathLike, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def strict_json(obj: Any, indent: Optional[int] = 1) -> str:
    """``obj`` as standard JSON: non-finite floats become ``"Infinity"``, ``"-Infinity"``
    or ``"NaN"`` strings; numpy scalars and arrays become numbers and lists."""
    return json.dumps(_jsonable(obj), ensure_ascii=False, indent=indent, allow_nan=False)


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) or type(x).__name__.startswith("float"):
        f = float(x)
        if math.isfinite(f):
            return f
        return "NaN" if math.isnan(f) else ("Infinity" if f > 0 else "-Infinity")
    if isinstance(x, (str, bool, int)) or x is None:
        return x
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):  # numpy arrays and scalars
        return _jsonable(x.tolist())
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return repr(x)


def json_float(x: Any) -> float:
    """A float stored by :func:`strict_json` (numbers, or the non-finite strings)."""
    if isinstance(x, str) and x in _NONFINITE:
        return _NONFINITE[x]
    if isinstance(x, (bool, str)) or not isinstance(x, (int, float)):
        raise ValueError(f"not a number: {x!r}")
    if isinstance(x, int) and abs(x) > 1e308:
        raise ValueError("a number too large for a float")
    return float(x)


def atomic_write_json(path: PathLike, obj: Any) -> Path:
    """:func:`strict_json` of ``obj`` written atomically to ``path``."""
    return atomic_write_text(path, strict_json(obj) + "\n")


def sha256_file(path: PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _remove_stale_files(parent: Path, name: str) -> None:
    """Remove ``.NAME.PID-*.tmp`` files left by a writer that was killed and is gone."""
    for f in parent.glob(f".{glob.escape(name)}.*-*.tmp"):
        try:
            pid = int(f.name[len(name) + 2:].split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            with contextlib.suppress(OSError):
                f.unlink()


def _remove_stale(parent: Path, name: str) -> None:
    """Remove ``.NAME.new-PID-*`` directories (and ``.NAME.old-PID-*`` backups, when
    ``NAME`` itself exists) left by a process that was killed mid-save and is gone."""
    for kind in ("new", "old"):
        if kind == "old" and not (parent / name).is_dir():
            continue  # the backup is the only copy of an earlier save: keep it
        for d in parent.glob(f".{glob.escape(name)}.{kind}-*-*"):
            try:
                pid = int(d.name[len(name) + len(kind) + 3:].split("-", 1)[0])
            except ValueError:
                continue
            if pid != os.getpid() and not _pid_alive(pid) and d.is_dir():
                shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def atomic_directory(path: PathLike) -> Iterator[Path]:
    """Build a directory that replaces ``path`` only once it is complete.

    Yields a fresh temporary sibling directory ``.NAME.new-PID-*``; when the ``with`` block
    ends normally its files are fsync-ed and it is swapped in for ``path`` (an existing
    ``path`` is renamed to a backup ``.NAME.old-PID-*`` first and removed after). When the
    block raises, the temporary directory is removed and ``path`` is untouched; when the
    swap itself is interrupted (an exception or signal between the two renames) the backup
    is renamed back. Only a SIGKILL between the renames leaves ``path`` absent, with the
    complete earlier directory in the backup. Leftovers of killed processes are removed
    by the next save of the same ``path``. A symbolic link ``path`` is written through."""
    p = write_target(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.exists() and not p.is_dir():
        raise InputError("cannot save: exists and is not a directory", path=str(p))
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent, p.name)
        tmp = Path(tempfile.mkdtemp(prefix=f".{p.name}.new-{os.getpid()}-", dir=str(parent)))
        os.chmod(tmp, 0o777 & ~_umask())
    except OSError as e:
        raise InputError(f"cannot create directory: {e.strerror or e}", path=str(p)) from None
    try:
        yield tmp
        for f in tmp.iterdir():
            if f.is_file() and not f.is_symlink():  # never open a FIFO (it would block)
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        _fsync_dir(tmp)
        backup = None
        if p.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{p.name}.old-{os.getpid()}-",
                                           dir=str(parent)))
            os.rmdir(backup)
            os.rename(p, backup)
        try:
            os.rename(tmp, p)
        except BaseException:
            if backup is not None and not p.exists():
                os.rename(backup, p)
            raise
        _fsync_dir(parent)
        if backup is not None:
            shutil.rmtree(backup, ignore_errors=True)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"cannot write directory: {e.strerror or e}", path=str(p)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
