"""Where PEP's time goes (explains the Figure-3 speed gap; PEP §6.1, §7).

Runs one method on the synthetic paradigm under cProfile (timer: process CPU time) and records the CPU time, the
number of variable-side θ updates, and the cumulative time of the steps that dominate:
p̂ moments (composition of μ_{F→V} ⊙ ENCODE(θ_{V→F}) with the feature DFA plus
forward–backward), q moments (the linear solve on ENCODE(θ_V)), the tree prox, and
factor-side messages. ``--K-early`` and ``--early-iters`` override PEP's schedule (the
engine's defaults, :mod:`strgm.inference.ep_settings`) for an ablation.

Caution: cProfile charges its own overhead to every Python call, so it overstates code
made of many small calls. In the seventh session it put ~40% of PEP-prox's time in the
feature-set bookkeeping (tries, DFA construction, active sets); replacing that code with
numpy measured 1.11× uninstrumented (benchmarks/infra/compare_revisions.py). For shares of real time,
sample instead: ``py-spy record -f raw -o out.txt -- python …`` (py-spy from PyPI).

    python -m benchmarks.pep.profile --words 100 [--method pep_prox] [--K-early 20]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
import warnings

from benchmarks import harness
from benchmarks.ep.common import METHODS, gold_xent
from benchmarks.ep.figure3 import dataset
from strgm.inference import infer

STEPS = {
    "p_moments": "moments.py:p_moments",
    "q_moments": "moments.py:q_moments",
    "prox_step": "prox.py:prox_step",
    "tree_prox": "prox.py:tree_prox",
    "factor_messages": "factors.py:message_to",
    "variable_visits": "ep.py:_visit",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--words", type=int, default=100)
    ap.add_argument("--method", default="pep_prox", choices=list(METHODS))
    ap.add_argument("--K-early", type=int, default=None)
    ap.add_argument("--early-iters", type=int, default=None)
    ap.add_argument("--max-iters", type=int, default=5)
    a = ap.parse_args()
    model, gold_urs, _ = dataset("synthetic", a.words, seed=0, holdout=0.0)
    method, opts = METHODS[a.method]
    opts = dict(opts)
    if a.K_early is not None:
        opts["K_early"] = a.K_early
    if a.early_iters is not None:
        opts["early_iters"] = a.early_iters
    prof = cProfile.Profile(time.process_time)  # CPU time: the machine is shared
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        prof.enable()
        r = infer(model.graph, method, max_iters=a.max_iters, **opts)
        prof.disable()
        cpu = time.process_time() - c0
    stats = pstats.Stats(prof).stats
    out = {"words": a.words, "method": a.method, "code": harness.git_revision(dirty="+dirty"),
           "options": opts, "cpu_seconds": cpu,
           "iterations": r.iterations, "gold_xent": gold_xent(r, model, gold_urs)[0]}
    for key in ("updates", "projection_seconds", "message_repairs"):
        if key in r.extra:
            out[key] = r.extra[key]
    for name, suffix in STEPS.items():
        file_part, func = suffix.split(":")
        hits = [(v[0], v[3]) for (f, _, fn), v in stats.items()
                if f.endswith(file_part) and fn == func]
        if hits:
            out[name] = {"calls": sum(h[0] for h in hits),
                         "cumulative_seconds": sum(h[1] for h in hits)}
    print(json.dumps(out, indent=1))
    tag = f"{a.method}_{a.words}" + (f"_K{a.K_early}" if a.K_early is not None else "")
    harness.write_json(f"pep_profile/{tag}", out)


if __name__ == "__main__":
    main()
