"""Writing a figure to a file, atomically, and checking the file name beforehand.

The figure is rendered in memory in the format of the file's extension, then written by
:func:`strgm.safe_io.atomic_write_bytes` (a temporary sibling in the same directory,
fsync, ``os.replace``): an interrupted or failed save leaves the old file, or none,
never a half-written image, and no temporary file behind. :func:`check_figure_path`
refuses a bad path before a long computation starts (as
:func:`strgm.safe_io.check_output` does for ``--json``).
"""

from __future__ import annotations

import io
from pathlib import Path

from strgm.errors import InputError
from strgm.plot._mpl import require_matplotlib
from strgm.safe_io import atomic_write_bytes, check_output

__all__ = ["save_figure", "check_figure_path"]


def _format(path: Path, option: str = "") -> str:
    """The image format named by ``path``'s extension (lower case), or an InputError
    listing the extensions matplotlib writes."""
    require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    supported = FigureCanvasBase.get_supported_filetypes()
    fmt = path.suffix[1:].lower()
    if fmt not in supported:
        what = f"unknown image extension {path.suffix!r}" if fmt else "no file extension"
        where = f"option {option}: " if option else ""
        raise InputError(f"{where}{what}; use one of "
                         f"{', '.join('.' + e for e in sorted(supported))}", path=str(path))
    return fmt


def check_figure_path(path, option: str = "--plot") -> None:
    """Refuse, before any work starts, a figure path with an unknown extension or that
    cannot be written (``option`` names it in the message); needs matplotlib, so a
    missing ``[plot]`` extra is reported before the work too."""
    _format(Path(path), option)
    check_output(path, option)


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
    fmt = _format(p)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write: directory {str(parent)!r} does not exist",
                         path=str(p))
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight")
    return atomic_write_bytes(p, buf.getvalue())
