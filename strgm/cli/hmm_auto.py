"""``strgm hmm train --model auto`` and ``--restarts R``: the chain chosen on a held-out
split of the training sequences (:mod:`strgm.hmm.selection`), announced on stderr, whose
parameters start the run on all the sequences; or — when a run is resumed — the model
its checkpoint records."""

from __future__ import annotations

import sys
import warnings

from strgm.errors import OptionError, TruncationWarning

__all__ = ["choose"]


def choose(args, kernel_for, burn: int, thin: int):
    """(the choice for the model file's training summary, the final run's first state or
    None); sets ``args.model`` to the chosen model. ``kernel_for(model)`` builds the run's
    kernel for a model. A named model with ``--restarts 1`` makes no choice: (None, None)."""
    from strgm.hmm.selection import CANDIDATES, choose_model, start_from, starts_for

    if args.model != "auto" and args.restarts == 1:
        return None, None
    if args.resume:
        return _resumed(args), None
    candidates = CANDIDATES if args.model == "auto" else (args.model,)
    say = (lambda text: None) if args.quiet else (
        lambda text: print(f"strgm hmm train: {text}", file=sys.stderr, flush=True))
    runs = "one chain" if args.restarts == 1 else f"{args.restarts} chains"
    starts = starts_for(kernel_for(candidates[0]))
    say(f"--model {args.model}: {runs} of {args.iters} sweeps of each of "
        f"{', '.join(candidates)} from the {' and '.join(starts)} start"
        f"{'s' if len(starts) > 1 else ''} on 90% of the sequences, scored on the other 10%")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = choose_model(kernel_for, args.iters, burn, thin, args.seed,
                              candidates=candidates, restarts=args.restarts,
                              on_candidate=lambda m, st, s: say(
                                  f"trying {m}, {st} start, seed {s}"))
    args.model = choice.model
    say(f"chose {choice.describe()}")
    summary = {"model": choice.model, "held_out_per_symbol": choice.scores,
               "chains": choice.chains, "start": choice.start, "seed": choice.seed,
               "restarts": args.restarts}
    first = None if choice.state is None else start_from(kernel_for(choice.model), choice)
    return summary, first


def _resumed(args) -> dict:
    """The model recorded in the ``--resume`` checkpoint (checked in full later)."""
    from strgm.hmm import HMMState

    if args.model != "auto":  # the checkpoint's kernel check compares the settings
        return {"model": args.model, "held_out_per_symbol": {}, "resumed": True}
    model = HMMState.load(args.resume).settings.get("--model")
    if model not in ("lt", "hdp", "sticky"):
        raise OptionError("--model", "auto", f"checkpoint {args.resume} does not record its "
                          "model: give --model lt, hdp or sticky as in the interrupted run")
    args.model = model
    return {"model": model, "held_out_per_symbol": {}, "resumed": True}
