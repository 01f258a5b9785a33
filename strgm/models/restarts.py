"""EM from several starting points, keeping the run with the best training objective.

EM climbs to a local optimum of the penalised log evidence
ℓ(θ) = Σ_w log p_θ(s_w) − ½λ‖θ‖² (:mod:`strgm.models.em`), so its answer depends on where
it starts. ``train_with_restarts`` runs EM ``restarts`` times:

* restart 0 starts from the given model (by default the copy-biased θ₀);
* restart r ≥ 1 starts from θ₀ + σ·ε_r, ε_r ~ N(0, I), drawn with
  ``numpy.random.default_rng([restart_seed, r])`` (σ = ``restart_scale``),

and returns the run whose *final* objective (the last trace entry: ℓ at the returned θ)
is highest, the first on ties. Held-out words are never looked at. Cost: ``restarts``
times one EM run. With ``restarts = 1`` this is exactly :func:`train_phonology`.
Checkpoints hold one run's state, so restarts > 1 cannot be combined with
``checkpoint``/``resume``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from strgm.chains.runner import SerialPool, map_chains
from strgm.datasets.paradigm import Paradigm
from strgm.errors import OptionError
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import TrainResult, train_phonology
from strgm.progress import tagged
from strgm.validate import check_float, check_int, check_probability
from fst_factors.transducers.edit import P_COPY


def perturbed(model: PhonologyEditModel, scale: float, seed: list) -> PhonologyEditModel:
    """θ + scale·N(0, I), drawn with ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return model.with_theta(model.theta + scale * rng.standard_normal(len(model.theta)))


def best_index(objectives: list) -> int:
    """The index of the highest final objective (the first on ties)."""
    return int(np.argmax(np.asarray(objectives, dtype=float)))


def train_with_restarts(paradigm: Paradigm, *, restarts: int = 1,
                        restart_scale: float = 0.3, restart_seed: int = 0,
                        model: Optional[PhonologyEditModel] = None, p_copy: float = P_COPY,
                        report: Optional[Callable[[dict], None]] = None, pool=None,
                        **em_opts) -> TrainResult:
    """The best of ``restarts`` EM runs (module docstring); ``em_opts`` go to
    :func:`~strgm.models.em.train_phonology`. The runs are the chains of
    :func:`strgm.chains.runner.map_chains` on ``pool`` (default: here, one after the
    other). The result's ``restart_objectives`` lists every run's final objective, and
    ``restart`` the index of the one returned."""
    restarts = check_int("restarts", restarts, min=1)
    restart_scale = check_float("restart_scale", restart_scale, min=0)
    restart_seed = check_int("restart_seed", restart_seed, min=0)
    p_copy = check_probability("p_copy", p_copy)
    if restarts > 1 and (em_opts.get("checkpoint") or em_opts.get("resume")):
        raise OptionError("restarts", restarts, "a checkpoint holds one run, so restarts "
                          "> 1 cannot be combined with checkpoint or resume")
    first = em_opts.pop("first_step", None)  # restart 0's start only
    if restarts == 1:
        r = train_phonology(paradigm, model=model, p_copy=p_copy, report=report,
                            first_step=first, **em_opts)
        return replace(r, restart_objectives=[r.trace[-1]["objective"]], restart=0)
    if model is None:
        model = PhonologyEditModel(em_opts.get("alphabet") or paradigm.alphabet()
                                   ).initial(p_copy)
    said = em_opts.get("progress")

    def restart(i: int, _problem) -> TrainResult:
        start = model if i == 0 else perturbed(model, restart_scale, [restart_seed, i])
        tag = (lambda e: report(dict(e, restart=i))) if report else None
        tell = (lambda msg: said(tagged(msg, f"restart {i} ({i + 1} of {restarts})"))
                ) if said else None
        return train_phonology(paradigm, model=start, report=tag,
                               first_step=first if i == 0 else None,
                               **{**em_opts, "progress": tell})
    runs = map_chains(pool or SerialPool(), restart, None, list(range(restarts)),
                      "strgm-em-restart")
    finals = [r.trace[-1]["objective"] for r in runs]
    best = best_index(finals)
    return replace(runs[best], restart_objectives=finals, restart=best)
