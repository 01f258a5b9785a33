"""Beliefs on disk: save an inference result and load it back to query later.

Layout of a saved result (a directory, format ``strgm-beliefs-v2``)::

    beliefs.json        method, settings, iterations, convergence, alphabets, and per
                        variable its file, its alphabet, log Z, and the file's size in
                        bytes and SHA-256 as written
    0000_<name>.fst     one binary OpenFst file per variable: the unnormalised belief
    0001_<name>.fst     acceptor (log64 for EP/PEP and BP, as the engine built it), with
    ...                 the alphabet attached as its symbol table

Every belief is stored as the acceptor b̃ it was computed as, with log Z = log Σ_v b̃(v),
so a loaded belief answers the same queries (k-best, probabilities, sampling, entropy)
with the same numbers and without re-running inference. The ``.fst`` files are standard
OpenFst: ``fstprint 0000_M-walk.fst`` lists the arcs with segment names, and
``pynini.Fst.read`` opens them.

Integrity. The directory is built next to its target and swapped in only when complete
(:func:`strgm.safe_io.atomic_directory`), so an interrupted (re-)save leaves the earlier
save or nothing, never a mixture. The loader reads only plain file names inside the
directory (no absolute paths, no ``..``, no symbolic link leading outside), checks every
file's size and checksum against the index before OpenFst reads it (a swapped or damaged
file is refused naming the file and the variable), reads the index as strict JSON, and
refuses the earlier format ``strgm-beliefs-v1`` (it recorded no checksums; re-save).
A file is never judged ours by its name: a re-save drops only ``beliefs.json`` of a
previous save (format ``strgm-beliefs-v2``) and the belief files it lists. Any other
entry is foreign and stops the save before anything is written, unless ``force=True``;
then each foreign entry is carried into the new directory (a hard link, or a copy) and
survives the swap. A foreign entry with a name a save writes (``beliefs.json``,
``NNNN_name.fst``) is refused even with ``force``, since the save would replace it.
The loader recomputes each belief's log Z from its automaton and refuses an index whose
log Z differs (a wrong log Z would turn every probability into nonsense). Cost: one FST
write and one SHA-256 pass per variable at save; at load, one SHA-256 pass and one
log-semiring shortest distance per variable.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Optional

from fst_factors.alphabet import Alphabet
from strgm.errors import InputError, StrgmError
from strgm.inference.belief import Belief
from strgm.safe_io import (atomic_directory, atomic_write_json, check_input, check_output,
                           json_float, read_text, sha256_file)
from fst_factors.wfsa import log_partition
from fst_factors.wfsa.fst_file import read_fst

FORMAT = "strgm-beliefs-v2"
OLD_FORMATS = ("strgm-beliefs-v1",)
INDEX = "beliefs.json"
#: The names a save writes (the index, and ``NNNN_slug.fst`` per variable).
SAVE_NAMES = re.compile(r"^(beliefs\.json|\d{4}(_[0-9A-Za-z._-]*)?\.fst)$")
#: Largest |log Z - recomputed log Z| accepted at load, relative to max(1, |log Z|).
LOG_Z_TOLERANCE = 1e-6
#: Keys of ``extra`` that would shadow the result's own fields in ``to_dict``.
_RESERVED = ("method", "settings", "seconds", "iterations", "converged", "belief_changes",
             "beliefs")


def _file_name(i: int, name: str) -> str:
    slug = re.sub(r"[^0-9A-Za-z._-]+", "-", name).strip("-.")[:40]
    return f"{i:04d}_{slug}.fst" if slug else f"{i:04d}.fst"


def check_save_target(directory: str | os.PathLike, option: str = "--save-beliefs",
                      force: bool = False) -> list:
    """Refuse, before any work, a directory that a save could not (or must not) replace:
    an unwritable location, a file, or a directory holding a foreign entry (one the
    manifest of a previous save there does not list) unless ``force``. Returns the
    foreign entries a forced save carries over."""
    check_output(directory, option, directory=True)
    return _check_replaceable(Path(directory), force, f"option {option}: ")


def owned_entries(d: Path) -> set:
    """The names in ``d`` that a previous save owns: ``beliefs.json`` when it is a plain
    file holding a manifest of the current format, and the belief files it lists (names
    a save writes, plain files, not links); empty when there is no such manifest."""
    index_path = d / INDEX
    if index_path.is_symlink() or not index_path.is_file():
        return set()
    try:
        index = json.loads(read_text(index_path, "saved beliefs index"))
    except (InputError, ValueError, RecursionError):
        return set()
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        return set()
    variables = index.get("variables")
    if not isinstance(variables, dict):
        return set()
    files = [v.get("file") for v in variables.values() if isinstance(v, dict)]
    return {INDEX} | {f for f in files if isinstance(f, str) and SAVE_NAMES.match(f)
                      and (d / f).is_file() and not (d / f).is_symlink()}


def foreign_entries(d: Path) -> list:
    """The entries of directory ``d`` (sorted) that no previous save owns."""
    ours = owned_entries(d)
    return sorted(n for n in os.listdir(d) if n not in ours)


def _check_replaceable(d: Path, force: bool, prefix: str = "") -> list:
    if not d.is_dir():
        return []
    try:
        foreign = foreign_entries(d)
    except OSError as e:
        raise InputError(f"{prefix}cannot list the directory: {e.strerror or e}",
                         path=str(d)) from None
    clash = [n for n in foreign if SAVE_NAMES.match(n)]
    if clash:
        raise InputError(f"{prefix}the directory holds {clash[0]!r}, which no earlier save "
                         "of beliefs there lists but a save may write; move it or choose "
                         "another directory", path=str(d))
    if foreign and not force:
        raise InputError(f"{prefix}the directory holds {len(foreign)} file(s) that are not "
                         f"saved beliefs (e.g. {foreign[0]!r}); choose a new or empty "
                         "directory, or force the save (--force, force=True) to keep them beside "
                         "it", path=str(d))
    return foreign


def _carry(src: Path, dst: Path) -> None:
    """``src`` into the new directory as ``dst``: a link as a link, a directory as a tree
    of hard links, a file as a hard link (a copy where links are not possible)."""
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif src.is_dir():
        shutil.copytree(src, dst, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(src, dst)


def _link_or_copy(src, dst) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def save_beliefs(result, directory: str | os.PathLike,
                 names: Optional[list[str]] = None, force: bool = False) -> Path:
    """Write the beliefs of ``names`` (default: every latent variable) of an
    :class:`~strgm.inference.result.InferenceResult` to ``directory``, replacing an
    earlier save there as a whole once the new one is complete. A directory holding
    anything its previous manifest does not list is refused, or with ``force`` kept
    beside the new save (module docstring). Returns the index path."""
    out = Path(directory)
    if out.is_symlink() or out.name in ("", ".."):  # swap the real directory
        out = out.resolve()
    _check_replaceable(out, force, "cannot save beliefs: ")
    beliefs = result.beliefs(names)  # computed before anything is written
    with atomic_directory(out) as tmp:
        for entry in _check_replaceable(out, force, "cannot save beliefs: "):
            _carry(out / entry, tmp / entry)  # checked again: the directory may have changed
        alphabets: list[Alphabet] = []
        variables = {}
        for i, (name, b) in enumerate(beliefs.items()):
            if b.alphabet not in alphabets:
                alphabets.append(b.alphabet)
            fst = b.fst  # a copy: the result's own belief is not touched
            st = b.alphabet.symbol_table()
            fst.set_input_symbols(st)
            fst.set_output_symbols(st)
            fname = _file_name(i, name)
            try:
                fst.write(str(tmp / fname))
            except OSError as e:  # pynini's FstIOError
                raise InputError(f"cannot write the belief of variable {name!r}: {e}",
                                 path=str(out / fname)) from None
            variables[name] = {"file": fname, "alphabet": alphabets.index(b.alphabet),
                               "log_z": b.log_z, "bytes": (tmp / fname).stat().st_size,
                               "sha256": sha256_file(tmp / fname)}
        index = {"format": FORMAT, "method": result.method, "settings": result.settings,
                 "seconds": result.seconds, "iterations": result.iterations,
                 "converged": result.converged, "belief_changes": result.deltas,
                 "extra": result.extra, "alphabets": [a.to_dict() for a in alphabets],
                 "variables": variables}
        atomic_write_json(tmp / INDEX, index)
    return out / INDEX


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON (non-finite numbers are stored as strings)")


def _read_index(d: Path) -> dict:
    path = d / INDEX
    if d.exists() and not d.is_dir():
        raise InputError("is a file, not a directory of saved beliefs (written by "
                         "`strgm infer ... --save-beliefs DIR`)", path=str(d))
    if not d.is_dir() or not path.exists():
        hint = ""
        old = sorted(d.parent.glob(f".{d.name}.old-*")) if d.name else []
        if old and not d.exists():
            hint = (f"; an interrupted save left the previous beliefs in {old[-1]} "
                    "(rename it back)")
        raise InputError(f"no saved beliefs here (missing {INDEX}; save with "
                         "`strgm infer ... --save-beliefs DIR` or result.save(DIR))" + hint,
                         path=str(d))
    text = read_text(path, "saved beliefs index")
    try:
        index = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as e:
        raise InputError(f"saved beliefs index is damaged (not JSON: {e})",
                         path=str(path)) from None
    fmt = index.get("format") if isinstance(index, dict) else None
    if fmt in OLD_FORMATS:
        raise InputError(f"saved by an earlier strgm (format {fmt}, without checksums); "
                         "re-save it with `strgm infer ... --save-beliefs DIR`",
                         path=str(path))
    if fmt != FORMAT:
        raise InputError(f"not a saved strgm result (expected format {FORMAT})",
                         path=str(path))
    return index


def read_saved(directory: str | os.PathLike) -> dict:
    """The fields of the result saved by :func:`save_beliefs` in ``directory``, as the
    keyword arguments of :class:`~strgm.inference.result.InferenceResult` (which builds
    the result: this module does not import it, so the two never import each other). The
    beliefs are loaded from the ``.fst`` files (no graph, no engine state). Raises
    :class:`InputError` naming the file (and variable) when something is missing, damaged
    or inconsistent."""
    d = Path(directory)
    index = _read_index(d)
    path = d / INDEX
    try:
        alphabets = [Alphabet.from_dict(a) for a in index["alphabets"]]
        variables = index["variables"]
        if not isinstance(variables, dict):
            raise TypeError("'variables' is not an object")
        beliefs = {name: _load_one(d, name, v, alphabets) for name, v in variables.items()}
        header = (_typed(index, "method", str), _typed(index, "settings", dict),
                  _number(index, "seconds"), _typed(index, "iterations", int),
                  _typed(index, "converged", bool),
                  [json_float(x) for x in _typed(index, "belief_changes", list)])
        _check_ranges(header)
        extra = index.get("extra", {})
        if not isinstance(extra, dict):
            raise TypeError("'extra' is not an object")
        shadow = [k for k in _RESERVED if k in extra]
        if shadow:
            raise ValueError(f"'extra' holds {shadow[0]!r}, a field of the result itself")
        return dict(zip(("method", "settings", "seconds", "iterations", "converged",
                         "deltas"), header), extra=extra, _beliefs=beliefs,
                    _names=list(variables))
    except StrgmError as e:
        if isinstance(e, InputError) and e.path is not None:
            raise
        raise InputError(f"saved beliefs index is inconsistent: {e}", path=str(path)) from None
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as e:
        raise InputError(f"saved beliefs index is incomplete ({type(e).__name__}: {e})",
                         path=str(path)) from None


def _check_ranges(header: tuple) -> None:
    """ValueError unless the counts and changes of the index make sense: iterations and
    seconds not negative, belief changes not negative (``inf`` and NaN as saved)."""
    _, _, seconds, iterations, _, deltas = header
    if iterations < 0:
        raise ValueError(f"'iterations' is {iterations}, below 0")
    if seconds < 0:
        raise ValueError(f"'seconds' is {seconds}, below 0")
    if any(x < 0 for x in deltas):
        raise ValueError("'belief_changes' holds a negative change")


def _typed(index: dict, key: str, kind: type):
    v = index[key]
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise TypeError(f"{key!r} is not a {kind.__name__}")
    return v


def _number(index: dict, key: str) -> float:
    return json_float(index[key])


def _plain_file(d: Path, name: str, fname, where: str) -> Path:
    """``d / fname`` when ``fname`` is a plain file name whose file (after following
    symbolic links) lies directly inside ``d``; otherwise InputError."""
    if not isinstance(fname, str) or not fname:
        raise InputError(f"the index gives no file for the {where}", path=str(d / INDEX))
    bad = (os.path.isabs(fname) or fname in (".", "..") or "/" in fname or "\\" in fname
           or "\0" in fname or Path(fname).name != fname)
    if bad:
        raise InputError(f"the index names {fname!r} for the {where}: only plain file names "
                         "inside the directory are read", path=str(d / INDEX))
    fpath = d / fname
    try:
        inside = fpath.resolve().parent == d.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside:
        raise InputError(f"the {where} is a link leading outside the directory; refused",
                         path=str(fpath))
    return fpath


def _load_one(d: Path, name: str, v: dict, alphabets: list[Alphabet]) -> Belief:
    where = f"belief of variable {name!r}"
    if not isinstance(v, dict):
        raise InputError(f"the index entry of variable {name!r} is not an object",
                         path=str(d / INDEX))
    fpath = _plain_file(d, name, v.get("file"), where)
    check_input(fpath, f"file of the {where}")
    size, digest = v.get("bytes"), v.get("sha256")
    if not isinstance(size, int) or not isinstance(digest, str):
        raise InputError(f"the index records no size and checksum for the {where}",
                         path=str(d / INDEX))
    actual = fpath.stat().st_size
    if actual != size:
        raise InputError(f"the {where} has {actual} bytes, the index recorded {size} "
                         "(damaged or replaced file; re-save the beliefs)", path=str(fpath))
    if sha256_file(fpath) != digest:
        raise InputError(f"the {where} differs from the file saved (checksum mismatch: "
                         "replaced or damaged; re-save the beliefs)", path=str(fpath))
    a = v.get("alphabet")
    if not isinstance(a, int) or isinstance(a, bool) or not 0 <= a < len(alphabets):
        raise InputError(f"the index gives no valid alphabet for the {where}",
                         path=str(d / INDEX))
    alphabet = alphabets[a]
    try:
        fst = read_fst(fpath, f"file of the {where}", arc_types=("log64",))
    except InputError as e:
        raise InputError(f"cannot read the {where}: {e.detail}", path=str(fpath)) from None
    if fst.num_states() == 0 or fst.start() < 0:
        raise InputError(f"the {where} is an empty automaton", path=str(fpath))
    st = fst.input_symbols()
    if st is not None:
        stored = [st.find(i) for i in range(1, alphabet.size + 1)]
        if stored != list(alphabet.symbols):
            raise InputError(f"the {where} carries a symbol table that differs from the "
                             "saved alphabet (files from different saves mixed?)",
                             path=str(fpath))
    fst.set_input_symbols(None)
    fst.set_output_symbols(None)
    return Belief(name, fst, alphabet, log_z=_checked_log_z(d, v, fst, where))


def _checked_log_z(d: Path, v: dict, fst, where: str) -> float:
    """The log Z the index records for a belief, once it agrees with the log Z computed
    from the automaton itself (up to LOG_Z_TOLERANCE); InputError otherwise."""
    try:
        log_z = json_float(v.get("log_z"))
    except ValueError:
        raise InputError(f"the index has no valid log Z for the {where}",
                         path=str(d / INDEX)) from None
    fpath = d / v["file"]
    if not math.isfinite(log_z):
        raise InputError(f"the {where} has log Z = {log_z} in the index", path=str(fpath))
    try:
        actual = log_partition(fst, what=f"the {where}")
    except StrgmError as e:  # divergent: the automaton has no finite total weight
        raise InputError(f"the {where} has no finite total weight ({e})",
                         path=str(fpath)) from None
    if not math.isfinite(actual):
        raise InputError(f"the {where} accepts no string", path=str(fpath))
    if abs(actual - log_z) > LOG_Z_TOLERANCE * max(1.0, abs(actual)):
        raise InputError(f"the index records log Z = {log_z:.10g} for the {where}, but "
                         f"its automaton {fpath.name} gives {actual:.10g} (edited index; "
                         "re-save the beliefs)", path=str(d / INDEX))
    return log_z
