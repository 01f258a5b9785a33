"""The DP-TSG's horizontal Markov order (``strgm tsg train --markov``), chosen on the
development split.

For each order and seed, train the blocked-sampler DP-TSG of
benchmarks/grammars/tsg_mer_dev.py (its ``train_model``: wsj_0001-0139 binarised with that
order, minimal initialisation, hyperparameters slice-sampled, ``--seconds`` CPU seconds,
one chain per seed), decode the sentences of at most ``--max-length`` words of wsj_0140-0159 by MER (product, the
default of ``strgm tsg parse``) with its ``decode_dev``, and score with evalb's
COLLINS.prm conventions.  The test files wsj_0160-0179 are not read.  An order replaces
the current default (the first of ``--orders``) when its mean F1 is higher by more than
the larger of the two orders' seed standard deviations.

    python -m benchmarks.grammars.tsg_markov_dev [--orders 1 2] [--seeds 0 1 2] [--seconds 120]

Writes benchmarks/results/tsg_markov_dev.{json,md} with the commit hash and the command.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from benchmarks import harness
from benchmarks.grammars.tsg_mer_dev import (chain_arguments, decode_dev, train_model,
                                             treebank_missing, write_results)


def one_run(job) -> dict:
    """Train and decode one (order, seed)."""
    order, seed, seconds, samples, max_length = job
    m = train_model(seed, seconds, markov=order)
    row = decode_dev(m, seed, samples, max_length, decodes=("mer-product",))[0]
    return {**row, "markov": order}


def report(res) -> str:
    a = res["settings"]
    lines = [f"# DP-TSG horizontal Markov order, development split (commit {res['commit']})",
             "", "What was run: `" + harness.command(
                 __name__, f"--orders {' '.join(map(str, a['orders']))} --seeds "
                           f"{' '.join(map(str, a['seeds']))} --seconds {a['seconds']:g} "
                           f"--samples {a['samples']} --max-length {a['max_length']}")
             + "`. Train wsj_0001-0139 (blocked sampler, minimal init, one "
             "chain per seed), decode wsj_0140-0159 sentences of at most "
             f"{a['max_length']} words by MER (product); evalb COLLINS.prm conventions. "
             "F1 in %, mean ± sd over seeds, then each seed.", "",
             "| order | F1 mean ± sd | P | R | per seed | sweeps |", "|---|---|---|---|---|---|"]
    stats = {}
    for o in a["orders"]:
        rs = [r for r in res["rows"] if r["markov"] == o]
        f1 = [100 * r["f1"] for r in rs]
        sd = statistics.stdev(f1) if len(f1) > 1 else 0.0
        stats[o] = (statistics.mean(f1), sd)
        lines.append(f"| {o} | {stats[o][0]:.2f} ± {sd:.2f} | "
                     f"{100 * statistics.mean(r['precision'] for r in rs):.2f} | "
                     f"{100 * statistics.mean(r['recall'] for r in rs):.2f} | "
                     f"{', '.join(f'{x:.2f}' for x in f1)} | "
                     f"{', '.join(str(r['sweeps']) for r in rs)} |")
    first = a["orders"][0]
    best = max(stats, key=lambda o: stats[o][0])
    gain = stats[best][0] - stats[first][0]
    spread = max(stats[best][1], stats[first][1])
    verdict = f"order {best} replaces {first}" if best != first and gain > spread else \
        f"keep order {first}"
    lines += ["", f"Rule: an order replaces the default ({first}) when its mean F1 is higher "
              f"by more than the larger seed sd. Best: {best}, {gain:+.2f} points against a "
              f"spread of {spread:.2f} → {verdict}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, nargs="+", default=[1, 2])
    chain_arguments(ap)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if treebank_missing():
        return 0
    jobs = [(o, s, a.seconds, a.samples, a.max_length) for o in a.orders for s in a.seeds]
    rows = harness.map_jobs(one_run, jobs, a.jobs)
    res = {"commit": harness.git_revision(), "settings": vars(a), "rows": rows}
    write_results("tsg_markov_dev", res, report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
