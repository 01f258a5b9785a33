"""``--save-beliefs DIR``: where beliefs may be saved, and saving without deleting anything
that is not ours.

A save replaces DIR as a whole (:func:`strgm.safe_io.atomic_directory`). The files it may
drop are only those the manifest of the previous save lists (``beliefs.json`` of format
``strgm-beliefs-v2``, and the belief files it names, when their names are ones a save
writes); a file is never judged ours by its name alone. Every other entry is foreign:

* without ``--force`` a directory holding a foreign entry is refused, before any work and
  again just before the save;
* with ``--force`` the save goes ahead and every foreign entry is carried into the new
  directory (hard links, or copies where the file system has none), so it survives; a
  foreign entry with a name the save may write (``beliefs.json``, ``NNNN_name.fst``) is
  refused even so, since the save would overwrite it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from strgm.errors import OptionError

__all__ = ["check_beliefs_dir", "save_beliefs_keeping"]

OPTION = "--save-beliefs"

#: The names a save writes (the index, and ``NNNN_slug.fst`` per variable).
_SAVE_NAMES = re.compile(r"^(beliefs\.json|\d{4}(_[0-9A-Za-z._-]*)?\.fst)$")


def _listed(d: Path) -> set:
    """The names the manifest of a previous save in ``d`` lists, itself included; empty
    when ``d`` holds no readable manifest of the current format."""
    from strgm.inference.saved import FORMAT, INDEX

    try:
        index = json.loads((d / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        return set()
    variables = index.get("variables")
    if not isinstance(variables, dict):
        return set()
    files = {v.get("file") for v in variables.values() if isinstance(v, dict)}
    return {INDEX} | {f for f in files if isinstance(f, str)}


def _foreign(d: Path) -> list:
    """The entries of directory ``d`` that no previous save of beliefs owns."""
    ours = {n for n in _listed(d) if _SAVE_NAMES.match(n)}
    return sorted(n for n in os.listdir(d)
                  if n not in ours or (d / n).is_symlink() or not (d / n).is_file())


def check_beliefs_dir(directory, force: bool) -> list:
    """The foreign entries of ``directory`` that a save must carry over (empty for a new
    or empty directory, or one holding only a previous save); an OptionError naming
    ``--save-beliefs`` and the path when there are any and ``force`` is false, or when
    one has a name the save may write. Writability is :func:`strgm.safe_io.check_output`'s."""
    d = Path(directory)
    if not d.is_dir():
        return []
    try:
        foreign = _foreign(d)
    except OSError as e:
        raise OptionError(OPTION, str(d), f"cannot list the directory ({e.strerror or e})")
    clash = [n for n in foreign if _SAVE_NAMES.match(n)]
    if clash:
        raise OptionError(OPTION, str(d), f"holds {clash[0]!r}, which no earlier save of "
                          "beliefs there lists but a save may write; move it or choose "
                          "another directory")
    if foreign and not force:
        raise OptionError(OPTION, str(d), f"holds {len(foreign)} file(s) that are not "
                          f"saved beliefs (e.g. {foreign[0]!r}); choose a new or empty "
                          "directory, or add --force to save beside them (they are kept)")
    return foreign


def save_beliefs_keeping(result, directory, force: bool) -> None:
    """Save ``result`` (an InferenceResult) to ``directory``: the beliefs are written to
    a staging directory next to it, then swapped in as a whole with every foreign entry
    of the old directory carried over (:func:`check_beliefs_dir`, checked again now).
    Only files the previous manifest lists are dropped."""
    from strgm.safe_io import atomic_directory, write_target

    d = write_target(directory)
    if d.name in ("", ".", ".."):
        d = d.resolve()
    keep = check_beliefs_dir(d, force)
    d.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{d.name}.new-{os.getpid()}-", dir=d.parent))
    try:
        result.save(staging)
        with atomic_directory(d) as tmp:
            for name in keep:
                _carry(d / name, tmp / name)
            for f in staging.iterdir():
                os.replace(f, tmp / f.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
