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

from pathlib import Path

from strgm.errors import OptionError
from strgm.inference.saved import SAVE_NAMES, foreign_entries

__all__ = ["check_beliefs_dir", "save_beliefs_keeping"]

OPTION = "--save-beliefs"


def check_beliefs_dir(directory, force: bool) -> list:
    """The foreign entries of ``directory`` that a save must carry over (empty for a new
    or empty directory, or one holding only a previous save); an OptionError naming
    ``--save-beliefs`` and the path when there are any and ``force`` is false, or when
    one has a name the save may write. Writability is :func:`strgm.safe_io.check_output`'s."""
    d = Path(directory)
    if not d.is_dir():
        return []
    try:
        foreign = foreign_entries(d)
    except OSError as e:
        raise OptionError(OPTION, str(d), f"cannot list the directory ({e.strerror or e})")
    clash = [n for n in foreign if SAVE_NAMES.match(n)]
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
    """Save ``result`` (an InferenceResult) to ``directory`` after
    :func:`check_beliefs_dir` (errors naming the option); the save itself checks again,
    carries every foreign entry into the new directory and swaps it in as a whole
    (:func:`strgm.inference.saved.save_beliefs`). Only files the previous manifest lists
    are dropped."""
    from strgm.safe_io import write_target

    d = write_target(directory)
    if d.name in ("", ".", ".."):
        d = d.resolve()
    check_beliefs_dir(d, force)
    result.save(d, force=force)
