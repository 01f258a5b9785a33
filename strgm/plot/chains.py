"""Several MCMC chains of one run in one picture: a line per chain, the burn-in shaded,
and the chains' split-R̂ after burn-in in the legend.

The input is the trace rows the sampler commands write (``strgm hmm|tsg|pcfg train
--chains K --json``): one dict per sweep, with a ``chain`` number (rows without one are
chain 0), or one list of rows per chain. R̂ is the number the command computed
(:mod:`strgm.distributed.diagnostics`, over the sweeps after burn-in); it is passed in,
not recomputed here. Axis labels and the title name the quantity and its unit
(:mod:`strgm.plot.quantities`).
"""

from __future__ import annotations

from collections.abc import Mapping

from strgm.errors import InputError
from strgm.plot._mpl import axes_for, plain, require_matplotlib
from strgm.plot.convergence import convergence_series
from strgm.plot.quantities import describe

__all__ = ["plot_chains", "split_by_chain", "rhat_text"]

BURN_IN = "lightgrey"


def split_by_chain(rows) -> dict:
    """{chain number: its rows} of trace rows (or of one list of rows per chain)."""
    rows = list(rows.get("trace", [])) if isinstance(rows, Mapping) else list(rows)
    if rows and all(isinstance(r, (list, tuple)) for r in rows):
        return {c: list(r) for c, r in enumerate(rows)}
    out: dict = {}
    for r in rows:
        if not isinstance(r, Mapping):
            raise InputError("plot_chains: expected trace rows (dicts) or one list of "
                             "rows per chain")
        out.setdefault(r.get("chain", 0), []).append(r)
    if not out:
        raise InputError("plot_chains: no trace rows")
    return out


def rhat_text(rhat) -> str:
    """The legend's R̂ line: ``rhat`` is a number, a diagnostics summary (``rhat`` key),
    or None when there were too few sweeps after burn-in."""
    if isinstance(rhat, Mapping):
        rhat = rhat.get("rhat")
    if rhat is None:
        return "split R̂: too few sweeps after burn-in"
    warn = " (> 1.01: not mixed)" if float(rhat) > 1.01 else ""
    return f"split R̂ after burn-in = {float(rhat):.3f}{warn}"


def _burn_in(ax, xs: list, burn_in) -> None:
    """Shade the burn-in sweeps (x ≤ ``burn_in``) and draw its end as a dashed line."""
    if not burn_in or burn_in <= 0 or not xs:
        return
    ax.axvspan(min(xs + [0]), burn_in, color=BURN_IN, alpha=0.5, zorder=0,
               label=f"burn-in ({burn_in:g} sweeps)")
    ax.axvline(burn_in, color="grey", linestyle="--", linewidth=1)


def plot_chains(rows, key=None, burn_in=None, rhat=False, ax=None, title=None):
    """One line per chain of ``key`` (default: the trace's log-likelihood) against the
    sweep; returns the Axes. ``burn_in``: the last burn-in sweep, shaded. ``rhat``: the
    split-R̂ (or diagnostics summary, or None for "too few sweeps") shown in the legend;
    False shows none (one chain has no R̂ across chains). ``title`` overrides the
    quantity's title."""
    require_matplotlib()
    chains = split_by_chain(rows)
    ax = axes_for(ax)
    all_x, used = [], key
    for c in sorted(chains, key=str):
        xs, ys, used, _ = convergence_series(chains[c], used)
        seed = chains[c][0].get("seed") if isinstance(chains[c][0], Mapping) else None
        ax.plot(xs, ys, linewidth=1.2, marker="o" if len(xs) < 30 else None, markersize=3,
                label=f"chain {c}" + ("" if seed is None else f" (seed {seed})"))
        all_x += xs
    ylabel, qtitle, xlabel = describe(used)
    _burn_in(ax, all_x, burn_in)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(plain(ylabel))
    ax.set_title(plain(title if title is not None else
                       f"{qtitle}, {len(chains)} chain{'s' if len(chains) > 1 else ''}"))
    handles, labels = ax.get_legend_handles_labels()
    if rhat is not False:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], linestyle="none"))
        labels.append(rhat_text(rhat))
    ax.legend(handles, labels, fontsize="small")
    return ax
