"""What every plotting function shares: the lazy matplotlib import, a fresh Axes when the
caller gives none, and labels that matplotlib must not read as mathematics.

matplotlib is the optional ``[plot]`` extra. It is imported inside the functions, never
at module level, so ``import strgm.plot`` works without it; a plotting call without it
raises :class:`~strgm.errors.MissingDependencyError`.
"""

from __future__ import annotations

import sys

from strgm.errors import MissingDependencyError

INSTALL = "plotting needs matplotlib: pip install 'strgm[plot]'"


def require_matplotlib():
    """The ``matplotlib`` module, or MissingDependencyError naming what to install."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependencyError(INSTALL) from None
    return matplotlib


def axes_for(ax=None, figsize=(6.4, 4.8)):
    """``ax`` itself, or the Axes of a new figure. The new figure comes from pyplot when
    the caller already uses pyplot (a notebook or an interactive session, where it is
    displayed), else it is a bare ``matplotlib.figure.Figure`` that no global state holds
    (library and command-line use: nothing to close, no display needed)."""
    require_matplotlib()
    if ax is not None:
        return ax
    if sys.modules.get("matplotlib.pyplot") is not None:
        import matplotlib.pyplot as plt

        return plt.subplots(figsize=figsize)[1]
    from matplotlib.figure import Figure

    return Figure(figsize=figsize).add_subplot()


def plain(text) -> str:
    """``text`` as a label shown verbatim: ``$`` escaped (``PRP$``, ``$5$`` are not
    mathematics), the empty string shown as ε."""
    text = str(text)
    return "ε" if text == "" else text.replace("$", r"\$")
