"""Checked reading of input files: a missing, unreadable, oversized or non-regular file is
an :class:`~fst_factors.errors.InputError` naming it, raised before any byte is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Union

from fst_factors.errors import InputError

PathLike = Union[str, os.PathLike]

#: Larger inputs are refused before they are read (a paradigm, corpus or machine of this
#: size is a mistake, such as a binary file passed by accident).
MAX_INPUT_BYTES = 1 << 30


def check_file(path: PathLike, what: str = "input", directory: bool = False) -> Path:
    """``path`` as a :class:`Path` once it is known to exist with the right type and size;
    otherwise :class:`InputError` naming it."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=str(p)) from None
    except OSError as e:
        raise InputError(f"cannot open {what}: {e.strerror or e}", path=str(p)) from None
    if directory:
        if not p.is_dir():
            raise InputError(f"{what} must be a directory", path=str(p))
        return p
    if p.is_dir():
        raise InputError(f"{what} is a directory, expected a file", path=str(p))
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        raise InputError(f"{what} is not a regular file (a pipe or device?)", path=str(p))
    if st.st_size > MAX_INPUT_BYTES:
        raise InputError(f"{what} is {st.st_size / 2**30:.1f} GiB; the limit is "
                         f"{MAX_INPUT_BYTES / 2**30:.0f} GiB", path=str(p))
    if not os.access(p, os.R_OK):
        raise InputError(f"cannot read {what}: permission denied", path=str(p))
    return p


def read_file_bytes(path: PathLike, what: str = "input") -> bytes:
    """The bytes of ``path`` after :func:`check_file`."""
    p = check_file(path, what)
    try:
        return p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {what}: {e.strerror or e}", path=str(p)) from None
