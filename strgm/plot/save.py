"""Writing a figure to a file, atomically.

The figure is rendered in memory in the format of the file's extension, then written by
:func:`strgm.safe_io.atomic_write_bytes` (a temporary sibling in the same directory,
fsync, ``os.replace``): an interrupted or failed save leaves the old file, or none,
never a half-written image, and no temporary file behind.
"""

from __future__ import annotations

import io
from pathlib import Path

from strgm.errors import InputError
from strgm.plot._mpl import require_matplotlib
from strgm.safe_io import atomic_write_bytes

__all__ = ["save_figure"]


def _figure(fig_or_ax):
    if hasattr(fig_or_ax, "savefig"):
        return fig_or_ax
    fig = getattr(fig_or_ax, "figure", None)
    while fig is not None and not hasattr(fig, "savefig") and fig.figure is not fig:
        fig = fig.figure  # a subfigure: up to the figure that is saved
    if fig is None or not hasattr(fig, "savefig"):
        raise InputError("save_figure: expected a matplotlib Figure or Axes, got "
                         f"{type(fig_or_ax).__name__}")
    return fig


def save_figure(fig_or_ax, path, dpi=None) -> Path:
    """Write the figure of ``fig_or_ax`` (a Figure, or an Axes as the ``plot_*``
    functions return) to ``path`` in the format its extension names (``.png``, ``.svg``,
    ``.pdf``, ...); returns the path. An unknown extension or a path that cannot be
    written is an InputError of one line naming the path."""
    require_matplotlib()
    fig = _figure(fig_or_ax)
    p = Path(path)
    fmt = p.suffix[1:].lower()
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        what = f"unknown image extension {p.suffix!r}" if fmt else "no file extension"
        raise InputError(f"{what}; use one of {', '.join('.' + e for e in sorted(supported))}",
                         path=str(p))
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write: directory {str(parent)!r} does not exist",
                         path=str(p))
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight")
    return atomic_write_bytes(p, buf.getvalue())
