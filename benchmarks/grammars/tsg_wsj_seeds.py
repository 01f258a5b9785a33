"""Repeated DP-TSG chains: the blocked sampler's CPU time to reach the local sampler's
final training log-likelihood, per seed and its median, from one initialisation.

Runs the blocked and local chains of benchmarks/grammars/tsg_wsj.py (same data, hyperparameters
resampled, ``--seconds`` CPU seconds each, ``--jobs`` at a time) for each seed, and adds
the seed-0 chains of benchmarks/results/tsg_wsj.json when they have the same settings.

    python -m benchmarks.grammars.tsg_wsj_seeds [--init minimal] [--seeds 1 2] [--seconds 480]

Writes benchmarks/results/tsg_wsj_seeds.{json,md} with the commit hash.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from multiprocessing import Pool

from benchmarks import harness
from benchmarks.grammars.tsg_wsj import time_to_reach, train_chain


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", choices=("minimal", "maximal"), default="minimal")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seconds", type=float, default=480.0)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    t0 = time.time()
    jobs = [(s, a.init, a.seconds, 10 ** 9, seed, False) for seed in a.seeds
            for s in ("blocked", "local")]
    with Pool(a.jobs) as pool:
        chains = pool.map(train_chain, jobs, chunksize=1)
    if harness.result_path("tsg_wsj.json").exists():
        prev = harness.read_json("tsg_wsj")
        if prev["settings"]["seconds"] == a.seconds and 0 not in a.seeds:
            chains += [c for c in prev["chains"] if c["init"] == a.init]
    rows = []
    for seed in sorted({c["seed"] for c in chains}):
        b = next(c for c in chains if c["seed"] == seed and c["sampler"] == "blocked")
        loc = next(c for c in chains if c["seed"] == seed and c["sampler"] == "local")
        target = loc["trace"][-1]["log_likelihood"]
        tb = time_to_reach(b["trace"], target)
        rows.append({"seed": seed, "local_final": target, "local_cpu": loc["cpu"],
                     "blocked_final": b["trace"][-1]["log_likelihood"],
                     "blocked_cpu_to_reach": tb,
                     "ratio": None if tb is None else tb / loc["cpu"]})
    ratios = [r["ratio"] if r["ratio"] is not None else float("inf") for r in rows]
    commit = harness.git_revision()
    res = {"commit": commit, "settings": vars(a), "rows": rows,
           "median_ratio": statistics.median(ratios), "wall_seconds": time.time() - t0}
    harness.write_json("tsg_wsj_seeds", res, strict=True)
    lines = [f"# DP-TSG samplers over seeds, {a.init} init (commit {commit})", "",
             "| seed | local final log-lik | blocked final log-lik | blocked CPU s to reach "
             "local's final | ratio to local's CPU s |", "|---|---|---|---|---|"]
    for r in rows:
        reach = "never" if r["blocked_cpu_to_reach"] is None else \
            f"{r['blocked_cpu_to_reach']:.0f}"
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f}"
        lines.append(f"| {r['seed']} | {r['local_final']:.0f} | {r['blocked_final']:.0f} | "
                     f"{reach} | {ratio} |")
    lines += ["", f"Median ratio: {res['median_ratio']:.3f} (target ≤ 1/3).", "",
              "Command: `" + harness.command(
                  __name__, f"--init {a.init} --seeds {' '.join(map(str, a.seeds))} "
                            f"--seconds {a.seconds:g}") + "` "
              f"({res['wall_seconds']:.0f} s wall)."]
    harness.write_markdown("tsg_wsj_seeds", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
