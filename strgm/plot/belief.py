"""One variable's belief as a picture: its k most probable strings as horizontal bars.

For a morpheme this is the distribution over its underlying form (UR), written /…/; a
surface form is written […]. The numbers are
exactly those of :meth:`strgm.inference.belief.Belief.kbest`; the title says how much of
the probability mass the k bars cover.
"""

from __future__ import annotations

from strgm.errors import InputError
from strgm.plot._mpl import axes_for, plain, require_matplotlib
from strgm.validate import check_int

__all__ = ["plot_belief"]


def _top(belief, k: int) -> tuple[str, list]:
    """(name, [(string, probability)...]) of a Belief (its ``kbest``) or of a list of
    ``[string, probability]`` pairs, as ``strgm infer --json`` writes under ``beliefs``."""
    if hasattr(belief, "kbest"):
        return getattr(belief, "name", ""), [(s, float(p)) for s, p in belief.kbest(k)]
    try:
        pairs = [(str(s), float(p)) for s, p in belief][:k]
    except (TypeError, ValueError, OverflowError):
        raise InputError("plot_belief: expected a Belief or a list of [string, "
                         "probability] pairs") from None
    return "", pairs


def _form(kind, variable: str):
    """How a string is written: ``/UR/`` for an underlying form, ``[surface]`` for a
    surface form, bare otherwise; ``kind`` None reads it from the variable's prefix
    (``M:``/``U:`` underlying, ``S:`` surface)."""
    if kind is None:
        kind = {"M": "ur", "U": "ur", "S": "surface"}.get(str(variable).split(":")[0])
    if kind not in (None, "ur", "surface"):
        raise InputError(f"plot_belief: form must be 'ur', 'surface' or None, got {kind!r}")
    left, right = {"ur": "//", "surface": "[]", None: ("", "")}[kind]
    return lambda s: f"{left}{plain(s)}{right}"


def plot_belief(belief, k: int = 10, ax=None, name=None, form=None):
    """Horizontal bars of the ``k`` most probable strings of ``belief`` (best at the
    top), each bar as long as the string's probability; returns the Axes.

    ``belief``: a :class:`~strgm.inference.belief.Belief` (e.g.
    ``result.belief("M:PAST")``) or its top-k list from a ``--json`` file. ``name``
    overrides the title's variable name. ``form``: ``"ur"`` writes the strings /…/,
    ``"surface"`` […]; None reads it from the variable name. The empty string is ε."""
    k = check_int("k", k, 1)
    require_matplotlib()
    title, pairs = _top(belief, k)
    ax = axes_for(ax, figsize=(6.4, 0.9 + 0.32 * max(len(pairs), 1)))
    written = _form(form, title or (name or ""))
    labels = [written(s) for s, _ in pairs]
    probs = [p for _, p in pairs]
    positions = list(range(len(pairs)))
    ax.barh(positions, probs, color="tab:blue")
    ax.set_yticks(positions, labels=labels)
    ax.invert_yaxis()
    for y, p in zip(positions, probs):
        inside = p > 0.85  # the axis ends at 1: the number goes within a long bar
        ax.annotate(f"{p:.3g}", (p, y), xytext=(-3 if inside else 3, 0),
                    textcoords="offset points", va="center", fontsize="small",
                    ha="right" if inside else "left", color="white" if inside else "black")
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability")
    name = title if name is None else name
    ax.set_title(f"{plain(name) + ': ' if name else ''}top {len(pairs)} strings "
                 f"({sum(probs):.1%} of the mass)")
    return ax
