"""``strgm hmm train --model auto``: the model chosen on a held-out split of the training
sequences (:mod:`strgm.hmm.selection`), announced on stderr, or — when a run is resumed —
the model its checkpoint records."""

from __future__ import annotations

import sys
import warnings

from strgm.errors import OptionError, TruncationWarning

__all__ = ["choose"]


def choose(args, kernel_for, burn: int, thin: int) -> dict:
    """Set ``args.model`` to the chosen model; return the choice for the model file's
    training summary. ``kernel_for(model)`` builds the run's kernel for a model."""
    from strgm.hmm.selection import CANDIDATES, choose_model

    if args.resume:
        return _resumed(args)
    say = (lambda text: None) if args.quiet else (
        lambda text: print(f"strgm hmm train: {text}", file=sys.stderr, flush=True))
    say(f"--model auto: one chain of {args.iters} sweeps of each of {', '.join(CANDIDATES)} "
        "on 90% of the sequences, scored on the other 10%")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = choose_model(kernel_for("hdp"), args.iters, burn, thin, args.seed,
                              on_candidate=lambda m: say(f"trying {m}"))
    args.model = choice.model
    say(f"chose {choice.describe()}")
    return {"model": choice.model, "held_out_per_symbol": choice.scores}


def _resumed(args) -> dict:
    """The model recorded in the ``--resume`` checkpoint (checked in full later)."""
    from strgm.hmm import HMMState

    model = HMMState.load(args.resume).settings.get("--model")
    if model not in ("lt", "hdp", "sticky"):
        raise OptionError("--model", "auto", f"checkpoint {args.resume} does not record its "
                          "model: give --model lt, hdp or sticky as in the interrupted run")
    args.model = model
    return {"model": model, "held_out_per_symbol": {}, "resumed": True}
