"""Convergence curves: one number per iteration (or sweep) against the iteration.

Three kinds of input, each read the way its producer writes it:

* an :class:`~strgm.inference.InferenceResult` (or the JSON of ``strgm infer --json``,
  key ``belief_changes``): the belief change of every iteration, ``result.deltas``
  (docs/messages.md), on a log scale;
* trace rows, one dict per iteration or sweep: EM's trace (``objective``), a PCFG
  sampler's (``log_p_trees``), a TSG sampler's (``log_likelihood``), an HMM's
  (``loglik``), or any key named by ``key``; objects with a ``trace`` (EM's and the
  samplers' results and states) and JSON with a ``trace`` key are read the same way.
  Rows without the key (quantities computed only every few sweeps) are skipped, and the
  x value is the row's ``iteration`` when it has one;
* plain numbers, one per iteration (x = 1, 2, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from strgm.errors import InputError
from strgm.plot._mpl import axes_for, plain, require_matplotlib
from strgm.plot.quantities import BELIEF_CHANGE, describe

__all__ = ["plot_convergence", "convergence_series"]

#: the default key of trace rows, first match wins (EM, PCFG sampler, TSG, HMM, estimators)
TRACE_KEYS = ("objective", "log_p_trees", "log_likelihood", "loglik", "neg_log_prob")


def _source(data):
    """(values or rows, is_belief_change) of any accepted input (module docstring)."""
    if hasattr(data, "deltas"):
        return list(data.deltas), True
    if isinstance(data, Mapping):
        for key, changes in (("belief_changes", True), ("deltas", True), ("trace", False)):
            if key in data:
                if not isinstance(data[key], (list, tuple)):
                    raise InputError(f"plot_convergence: {key!r} is not a list")
                return list(data[key]), changes
        raise InputError("plot_convergence: a dict needs a 'belief_changes', 'deltas' or "
                         f"'trace' key, found {sorted(map(str, data))[:6]}")
    if hasattr(data, "trace"):
        return list(data.trace), False
    return list(data), False


def _number(v, where: str) -> float:
    if isinstance(v, str) and v in ("Infinity", "-Infinity", "NaN"):
        return float(v)  # strict JSON's non-finite numbers
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"plot_convergence: {where} is not a number: {v!r}")
    try:
        return float(v)
    except OverflowError:
        raise InputError(f"plot_convergence: {where} is too large a number") from None


def _from_rows(rows: list, key) -> tuple[list, list, str]:
    """(x, y, key) of trace rows: the rows that have ``key`` (default: TRACE_KEYS)."""
    if key is None:
        present = {k for r in rows for k in r}
        key = next((k for k in TRACE_KEYS if k in present), None)
        if key is None:
            numeric = sorted(k for k in present if k != "iteration")
            raise InputError("plot_convergence: no known log-likelihood key in the trace "
                             f"rows; pass key= one of {numeric}")
    xs, ys = [], []
    for i, r in enumerate(rows):
        if key in r:
            xs.append(_number(r.get("iteration", i), f"row {i} 'iteration'"))
            ys.append(_number(r[key], f"row {i} {key!r}"))
    if not ys:
        raise InputError(f"plot_convergence: no trace row has the key {key!r}")
    return xs, ys, key


def convergence_series(data, key=None) -> tuple[list, list, str, bool]:
    """(x, y, y label, log scale?) of ``data`` as :func:`plot_convergence` draws it."""
    items, changes = _source(data)
    if items and all(isinstance(r, Mapping) for r in items):
        xs, ys, key = _from_rows(items, key)
        return xs, ys, key, False
    if key is not None:
        raise InputError(f"plot_convergence: key={key!r} given but the input is not trace "
                         "rows (dicts)")
    ys = [_number(v, f"value {i}") for i, v in enumerate(items)]
    return list(range(1, len(ys) + 1)), ys, ("belief change" if changes else "value"), changes


def _labels(ax, ylabel: str, changes: bool) -> None:
    """Axis labels with the quantity's unit, and its title unless the Axes has one."""
    if changes:
        ylabel, title, xlabel = BELIEF_CHANGE
    elif ylabel == "value":
        title, xlabel = "value per iteration", "iteration"
    else:
        ylabel, title, xlabel = describe(ylabel)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(plain(ylabel))
    if not ax.get_title():
        ax.set_title(plain(title))


def plot_convergence(rows_or_values, key=None, ax=None, label=None, log=None):
    """One convergence curve (module docstring lists the inputs); returns the Axes.

    ``key``: the trace-row key to plot. ``label``: the curve's legend entry (call again
    with the same ``ax`` to compare runs). ``log``: log y scale; default on for belief
    changes only. Non-finite and, on a log scale, zero values leave gaps: the first
    belief change is infinite (nothing to compare with)."""
    require_matplotlib()
    xs, ys, ylabel, changes = convergence_series(rows_or_values, key)
    ax = axes_for(ax)
    ax.plot(xs, ys, marker="o", markersize=3, label=None if label is None else plain(label))
    if log if log is not None else changes:
        ax.set_yscale("log")
    finite = [y for y in ys if math.isfinite(y)]
    if not finite:
        ax.set_title("no finite value to plot")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # iterations are whole numbers
    _labels(ax, ylabel, changes)
    if label is not None:
        ax.legend()
    return ax
