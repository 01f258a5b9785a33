"""EP's repairs against its accuracy, iteration by iteration (why closed-form EP degrades).

When a cavity or an outgoing message θ_{V→F} is not normalisable, EP repairs it
(``message_repairs_by_kind`` of the result): a length penalty on the message
(``message_length_penalty``), a fit to a length-damped p̂ (``damped_update``), damped
concatenation parts. Each repair biases toward shorter strings. This script runs each
method for 2, 3 and 5 iterations on the same synthetic paradigm (no held-out words) and
records CPU time, mean gold cross-entropy, morphemes below the floor, θ updates and the
repairs by kind, so their growth can be set against the accuracy.

    python -m benchmarks.ep.repairs --words 50 [--methods ep2_closed ep3_closed ep2 ep3 pep_prox]
                                               [--iters 2 3 5]

Writes ``results/ep_repairs.{json,md}``.
"""

from __future__ import annotations

import argparse
import time
import warnings

from benchmarks import harness
from benchmarks.ep.common import METHODS, gold_xent
from benchmarks.ep.figure3 import code_revision, dataset
from strgm.inference import infer

KINDS = ["message_length_penalty", "message_is_belief", "damped_update",
         "damped_concat_parts"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--words", type=int, default=50)
    ap.add_argument("--methods", nargs="+", default=["ep2_closed", "ep3_closed", "ep2", "ep3", "pep_prox"],
                    choices=list(METHODS))
    ap.add_argument("--iters", nargs="+", type=int, default=[2, 3, 5])
    a = ap.parse_args()
    model, gold_urs, _ = dataset("synthetic", a.words, seed=0, holdout=0.0)
    rows = []
    for name in a.methods:
        method, opts = METHODS[name]
        for iters in a.iters:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c0 = time.process_time()
                r = infer(model.graph, method, max_iters=iters, **opts)
                cpu = time.process_time() - c0
            xent, missed = gold_xent(r, model, gold_urs)
            kinds = r.extra.get("message_repairs_by_kind", {})
            rows.append({"method": name, "iterations": iters, "cpu_seconds": cpu,
                         "gold_xent": xent, "gold_missed": missed,
                         "updates": r.extra.get("updates"),
                         "repairs": r.extra.get("message_repairs", 0),
                         **{k: kinds.get(k, 0) for k in KINDS}})
            print(rows[-1], flush=True)
    head = ["method", "iterations", "cpu_seconds", "gold_xent", "gold_missed", "updates",
            "repairs"] + KINDS
    code = code_revision()
    args = (f"--words {a.words} --methods {' '.join(a.methods)} "
            f"--iters {' '.join(map(str, a.iters))}")
    md = harness.markdown(
        f"EP repairs and accuracy by iteration (synthetic, {a.words} words)",
        head, [[r[h] for h in head] for r in rows],
        run=f"`{harness.command(__name__, args)}`; library {code}. gold_xent = mean "
            "−log b_M(gold UR), nats (floor 1e-12).")
    harness.write_json("ep_repairs", {"words": a.words, "code": code, "rows": rows})
    harness.write_markdown("ep_repairs", md)


if __name__ == "__main__":
    main()
