"""One figure that sums up a phonology run (``strgm infer|demo|train --plot FILE``).

Panels, left to right:

1. convergence: the belief change per message-passing iteration (``infer``), or EM's
   objective per iteration (``train``, :func:`strgm.models.em.train_phonology`'s trace);
2. the held-out words against the truth (:func:`~strgm.plot.plot_predictions`), when the
   run held words out;
3. the UR distribution of the morpheme the run is least sure of (the lowest top-1
   probability), where a wrong or diffuse UR shows first.

The functions read the objects the workflows return (duck-typed: ``result.deltas``,
``result.belief(var)``, ``model.morpheme_vars``, ``scores``, ``trace``), so this module
imports nothing above its own layer. Cost: one k-best query per morpheme belief.
"""

from __future__ import annotations

from typing import Optional

from strgm.plot._mpl import require_matplotlib
from strgm.plot.belief import plot_belief
from strgm.plot.convergence import plot_convergence
from strgm.plot.predictions import plot_predictions

__all__ = ["plot_inference_run", "plot_training_run", "least_certain"]


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


def _panels(first, result, morpheme_vars: dict, scores, k: int):
    """The figure: ``first(ax)`` draws panel 1, then predictions and the least certain
    morpheme's URs (module docstring)."""
    unsure = least_certain(result, morpheme_vars) if result is not None else None
    n = 1 + (scores is not None and bool(scores.per_word)) + (unsure is not None)
    fig, axes = _figure(n)
    first(axes[0])
    i = 1
    if scores is not None and scores.per_word:
        plot_predictions(scores, ax=axes[i])
        i += 1
    if unsure is not None:
        label, var = unsure
        plot_belief(result.belief(var), k=k, ax=axes[i], name=f"least certain: {label}")
    return fig


def plot_inference_run(run, k: int = 5):
    """The summary figure of a :class:`~strgm.workflows.paradigm.ParadigmRun` after
    inference; returns the matplotlib Figure (not shown, not saved)."""
    res = run.result

    def first(ax):
        plot_convergence(res, ax=ax)
        ax.set_title(f"{res.method}: belief change per iteration")

    return _panels(first, res, run.model.morpheme_vars, run.scores, k)


def plot_training_run(run, k: int = 5):
    """The summary figure of a :class:`~strgm.workflows.training.TrainRun`: EM's
    objective per iteration, then as :func:`plot_inference_run` for the last E-step."""
    tr = run.train
    pm = tr.graph_model

    def first(ax):
        plot_convergence(tr.trace, key="objective", ax=ax)
        ax.set_title("EM objective per iteration")

    return _panels(first, tr.result, pm.morpheme_vars if pm is not None else {},
                   run.scores, k)
