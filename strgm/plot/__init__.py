"""Pictures where a picture beats a table (the optional ``[plot]`` extra: matplotlib).

* :func:`plot_belief`: a variable's k most probable strings (a morpheme's URs) as bars;
* :func:`plot_convergence`: belief changes per iteration, EM's objective, a sampler's
  log P per sweep;
* :func:`plot_chains`: a sampler's chains, one line each, burn-in shaded, R̂ in the legend;
* :func:`plot_tradeoff`: CPU seconds against accuracy or cross-entropy (e.g. PEP's λ);
* :func:`plot_predictions`: held-out words, p(true form), right or wrong;
* :func:`plot_inference_run` / :func:`plot_training_run`: one figure that sums up a
  phonology run (``strgm infer|train --plot``);
* :func:`plot_tree`: a parse tree; :class:`TreeView` shows one in a notebook as SVG
  without matplotlib; :func:`graph_svg`: a factor graph as SVG through Graphviz;
* :func:`plot_factor_graph`: a paradigm's factor graph on one page, a block per stem;
* :func:`save_figure`: writes a figure atomically, its format from the extension;
  :func:`check_figure_path` refuses a bad ``--plot`` path before the work starts.

Every ``plot_*`` function takes an optional matplotlib ``ax`` and returns the Axes it
drew on; none calls ``plt.show()``. matplotlib is imported only when a function runs:
without it the call raises :class:`~strgm.errors.MissingDependencyError` saying
``pip install 'strgm[plot]'``. This package sits in layer 10 of docs/architecture.md §1
(beside :mod:`strgm.workflows`): it reads what the lower layers produce, and only
:mod:`strgm.cli` may import it.
"""

from strgm.plot.belief import plot_belief
from strgm.plot.chains import plot_chains
from strgm.plot.convergence import plot_convergence
from strgm.plot.factor_graph import plot_factor_graph
from strgm.plot.graph import graph_svg
from strgm.plot.predictions import plot_predictions
from strgm.plot.run_summary import plot_inference_run, plot_training_run
from strgm.plot.save import check_figure_path, save_figure
from strgm.plot.tradeoff import plot_tradeoff
from strgm.plot.tree import TreeView, plot_tree, tree_svg

__all__ = ["plot_belief", "plot_convergence", "plot_chains", "plot_tradeoff",
           "plot_predictions", "plot_factor_graph",
           "plot_tree", "TreeView", "tree_svg", "graph_svg", "save_figure",
           "check_figure_path", "plot_inference_run", "plot_training_run"]
