"""One figure that sums up a phonology run (``strgm infer|demo|train --plot FILE``).

Panels, left to right:

1. convergence: the belief change per message-passing iteration (``infer``), or EM's
   objective per iteration (``train``, :func:`strgm.models.em.train_phonology`'s trace);
   left out when there are not two points to join (the figure's title then says so);
2. the held-out words against the truth (:func:`~strgm.plot.plot_predictions`), when the
   run held words out;
3. the UR distribution of the morpheme the run is least sure of (the lowest top-1
   probability), where a wrong or diffuse UR shows first.

The functions read the objects the workflows return (duck-typed: ``result.deltas``,
``result.belief(var)``, ``model.morpheme_vars``, ``scores``, ``trace``), so this module
imports nothing above its own layer. Cost: one k-best query per morpheme belief.
"""

from __future__ import annotations

import math
from typing import Optional

from strgm.plot._mpl import require_matplotlib
from strgm.plot.belief import plot_belief
from strgm.plot.convergence import convergence_series, plot_convergence
from strgm.plot.predictions import plot_predictions

__all__ = ["plot_inference_run", "plot_training_run", "least_certain", "drawable"]


def least_certain(result, morpheme_vars: dict) -> Optional[tuple]:
    """``(label, variable)`` of the morpheme whose most probable UR has the lowest
    probability (ties: the first label in sorted order), or None without morphemes."""
    best = None
    for label in sorted(morpheme_vars):
        top = result.belief(morpheme_vars[label]).kbest(1)
        p = top[0][1] if top else 0.0
        if best is None or p < best[0]:
            best = (p, label)
    return None if best is None else (best[1], morpheme_vars[best[1]])


def _figure(n: int):
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.2 * n, 4.4), layout="constrained")
    return fig, [fig.add_subplot(1, n, i + 1) for i in range(n)]


def drawable(data, key=None) -> bool:
    """Whether the convergence curve of ``data`` has two points to join: finite, and
    positive on the log scale of belief changes. With fewer, the panel is left out (a
    single point says nothing about convergence) and the figure's title says why."""
    _, ys, _, changes = convergence_series(data, key)
    return sum(math.isfinite(y) and (y > 0 or not changes) for y in ys) >= 2


def _panels(first, result, morpheme_vars: dict, scores, k: int, note: str):
    """The figure: ``first(ax)`` draws panel 1 (None: no such panel, and ``note`` says
    why in the figure's title), then predictions and the least certain morpheme's URs
    (module docstring)."""
    unsure = least_certain(result, morpheme_vars) if result is not None else None
    has_scores = scores is not None and bool(scores.per_word)
    n = (first is not None) + has_scores + (unsure is not None)
    fig, axes = _figure(max(n, 1))
    i = 0
    if first is not None:
        first(axes[0])
        i = 1
    else:
        fig.suptitle(note)
    if scores is not None and scores.per_word:
        plot_predictions(scores, ax=axes[i])
        i += 1
    if unsure is not None:
        label, var = unsure
        plot_belief(result.belief(var), k=k, ax=axes[i], name=f"least certain: {label}",
                    form="ur")
    return fig


def plot_inference_run(run, k: int = 5):
    """The summary figure of a :class:`~strgm.workflows.paradigm.ParadigmRun` after
    inference; returns the matplotlib Figure (not shown, not saved)."""
    res = run.result

    def first(ax):
        plot_convergence(res, ax=ax)
        ax.set_title(f"{res.method}: belief change per iteration")

    n = len(res.deltas)
    note = f"{res.method}: {n} iteration{'s' if n != 1 else ''}, no belief change to plot"
    return _panels(first if drawable(res) else None, res, run.model.morpheme_vars,
                   run.scores, k, note)


def plot_training_run(run, k: int = 5):
    """The summary figure of a :class:`~strgm.workflows.training.TrainRun`: EM's
    objective per iteration, then as :func:`plot_inference_run` for the last E-step."""
    tr = run.train
    pm = tr.graph_model

    def first(ax):
        plot_convergence(tr.trace, key="objective", ax=ax)
        ax.set_title("EM objective per iteration")

    enough = bool(tr.trace) and drawable(tr.trace, "objective")
    note = f"EM: {len(tr.trace)} iteration{'s' if len(tr.trace) != 1 else ''}, no curve to plot"
    return _panels(first if enough else None, tr.result,
                   pm.morpheme_vars if pm is not None else {}, run.scores, k, note)
