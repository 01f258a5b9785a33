"""Speed against accuracy: one point per setting (e.g. each λ of a PEP sweep, each
method of a benchmark), CPU seconds on x, accuracy or cross-entropy on y, each point
labelled with its setting.

Points are ``(seconds, value[, label])`` tuples or dicts. For dicts the keys are found
among the names the benchmarks write (``cpu_seconds``, ``seconds``,
``seconds_per_projection``; ``accuracy``, ``exact_match``, ``heldout_exact``, ``xent``,
``mean_neg_logp``, ``heldout_neglogp``, ``mean_xent_to_belief``; ``lambda``, ``method``,
``label``) unless named by ``x``, ``y`` and ``label``. A dict with ``rows`` (the JSON of
``benchmarks/ep/lambda_sweep.py``) is read as its rows. ``by`` splits the points into
series (e.g. ``by="projection"``), each drawn in its own colour and joined in order.
"""

from __future__ import annotations

from collections.abc import Mapping

from strgm.errors import InputError
from strgm.plot._mpl import axes_for, plain, require_matplotlib

__all__ = ["plot_tradeoff"]

X_KEYS = ("cpu_seconds", "seconds", "seconds_per_projection")
Y_KEYS = ("accuracy", "exact_match", "heldout_exact", "xent", "cross_entropy",
          "mean_neg_logp", "heldout_neglogp", "mean_xent_to_belief")
LABEL_KEYS = ("lambda", "lam", "label", "method")


def _pick(given, candidates, present, what: str):
    if given is not None:
        if given not in present:
            raise InputError(f"plot_tradeoff: no point has the {what} key {given!r}")
        return given
    for k in candidates:
        if k in present:
            return k
    if what == "label":
        return None
    raise InputError(f"plot_tradeoff: no {what} key among {sorted(present)}; name it with "
                     f"{what}=")


def _points(points, x, y, label, by) -> tuple[list, str, str, str]:
    """([(series, x, y, label)...], x name, y name, label name)."""
    if isinstance(points, Mapping) and "rows" in points:
        points = points["rows"]
    points = list(points)
    if not points:
        raise InputError("plot_tradeoff: no points")
    if all(isinstance(p, Mapping) for p in points):
        present = {k for p in points for k in p}
        xk = _pick(x, X_KEYS, present, "x")
        yk = _pick(y, Y_KEYS, present, "y")
        lk = _pick(label, LABEL_KEYS, present, "label")
        try:
            out = [(p.get(by) if by else None, float(p[xk]), float(p[yk]),
                    p.get(lk) if lk else None) for p in points]
        except (KeyError, TypeError, ValueError, OverflowError):
            raise InputError(f"plot_tradeoff: every point needs numbers under {xk!r} and "
                             f"{yk!r}") from None
        return out, xk, yk, lk or ""
    out = []
    for i, p in enumerate(points):
        if isinstance(p, Mapping) or len(p) not in (2, 3):
            raise InputError(f"plot_tradeoff: point {i} is not (seconds, value[, label])")
        out.append((None, float(p[0]), float(p[1]), p[2] if len(p) == 3 else None))
    return out, x or "CPU seconds", y or "accuracy", label or ""


def _text(lk: str, value) -> str:
    if value is None:
        return ""
    return f"λ={value:g}" if lk in ("lambda", "lam") and isinstance(value, (int, float)) \
        else plain(value)


def plot_tradeoff(points, ax=None, x=None, y=None, label=None, by=None, logx=False):
    """Points of a speed/accuracy trade-off (module docstring), joined in the given
    order within each series and labelled; returns the Axes. ``logx``: log scale for
    the seconds (settings often differ by orders of magnitude)."""
    require_matplotlib()
    pts, xk, yk, lk = _points(points, x, y, label, by)
    ax = axes_for(ax)
    series = list(dict.fromkeys(s for s, *_ in pts))
    for s in series:
        mine = [p for p in pts if p[0] == s]
        ax.plot([p[1] for p in mine], [p[2] for p in mine], marker="o",
                label=None if s is None else plain(s))
        for _, px, py, pl in mine:
            if pl is not None:
                ax.annotate(_text(lk, pl), (px, py), xytext=(4, 4),
                            textcoords="offset points", fontsize="small")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(plain(xk))
    ax.set_ylabel(plain(yk))
    if series != [None]:
        ax.legend(title=plain(by))
    return ax
