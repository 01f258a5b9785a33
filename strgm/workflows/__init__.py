"""Use cases (a layer of docs/architecture.md §1): what a user does with strgm, as plain
functions returning dataclasses, with no argparse and no printing. The command line
(:mod:`strgm.cli`), the examples and the benchmarks call these; they import models,
inference and datasets, never the command line.

    infer_paradigm(paradigm, method, holdout, seed, model, **opts) -> ParadigmRun
    train_paradigm(paradigm, method, holdout, seed, model, **em_opts) -> TrainRun
"""

from strgm.workflows.paradigm import (ParadigmRun, infer_paradigm, prepare_paradigm,
                                      run_inference)
from strgm.workflows.training import TrainRun, score_trained, train_paradigm

__all__ = ["ParadigmRun", "infer_paradigm", "prepare_paradigm", "run_inference",
           "TrainRun", "score_trained", "train_paradigm"]
