"""Exact BP vs pruned BP (k = 20) on the eight shared textbook phonology problems.

    python -m benchmarks.ep.bp_vs_pruned [--repeats 3] [--bp-timeout 60] [--max-states 50000]

Each run is a fresh subprocess (so a run that exceeds --bp-timeout can be stopped); the
table reports the median wall time of --repeats runs, the outcome (converged / stopped at
the iteration cap / message too large / time-out) and, for pruned BP, how many roots'
1-best UR equals their bare surface form. Writes benchmarks/results/bp_vs_pruned.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from benchmarks import harness

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
from strgm.datasets.paradigm import read_paradigm_tsv
from strgm.models.phonology import build_phonology_model
from strgm.inference import infer
from strgm.errors import MessageTooLargeError
path, method, max_states = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = read_paradigm_tsv(path)
m = build_phonology_model(p)
t0 = time.perf_counter()
try:
    r = infer(m.graph, method, max_states=max_states)
    bare = {e.morphemes[0]: e.surface for e in p.entries if len(e.morphemes) == 1}
    hits = sum(r.belief(m.morpheme_vars[k]).kbest(1)[0][0] == s for k, s in bare.items())
    out = {"outcome": "converged" if r.converged else "iteration cap",
           "seconds": time.perf_counter() - t0, "iterations": r.iterations,
           "roots_bare": [hits, len(bare)]}
except MessageTooLargeError as e:
    out = {"outcome": "message too large", "seconds": time.perf_counter() - t0}
print(json.dumps(out))
"""


def run(path, method, max_states, timeout):
    t0 = time.perf_counter()
    try:
        cp = subprocess.run([sys.executable, "-c", CHILD, path, method, str(max_states)],
                            capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": f"time-out ({timeout}s)", "seconds": time.perf_counter() - t0}
    if cp.returncode != 0:
        return {"outcome": "error", "detail": cp.stderr.strip().splitlines()[-1:]}
    return json.loads(cp.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bp-timeout", type=float, default=60)
    ap.add_argument("--pruned-timeout", type=float, default=600)
    ap.add_argument("--max-states", type=int, default=50_000)
    args = ap.parse_args()
    files = sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    if not files:
        sys.exit(f"no data in {harness.PHONOLOGY}: ../shared/data is needed")
    rows = []
    for f in files:
        name = os.path.basename(f)[:-4]
        row = {"problem": name}
        for method, timeout in (("pruned", args.pruned_timeout), ("bp", args.bp_timeout)):
            runs = [run(f, method, args.max_states, timeout) for _ in range(args.repeats)]
            times = [r["seconds"] for r in runs if "seconds" in r]
            row[method] = {"runs": runs, "median_seconds": statistics.median(times)
                           if times else None, "outcome": runs[0]["outcome"]}
            print(name, method, row[method]["outcome"], row[method]["median_seconds"],
                  flush=True)
        rows.append(row)
    meta = {"repeats": args.repeats, "bp_timeout": args.bp_timeout,
            "max_states": args.max_states, "cpu_count": os.cpu_count(),
            "command": harness.command(__name__), "revision": harness.git_revision()}
    harness.write_json("bp_vs_pruned", {"meta": meta, "rows": rows})
    cells = []
    for r in rows:
        p, b = r["pruned"], r["bp"]
        rb = p["runs"][0].get("roots_bare")
        cells.append([r["problem"], f"{p['median_seconds']:.1f}", p["outcome"],
                      f"{rb[0]}/{rb[1]}" if rb else "–", f"{b['median_seconds']:.1f}",
                      b["outcome"]])
    text = harness.markdown(
        "Exact BP vs pruned BP (k = 20), untrained copy-biased phonology",
        ["problem", "pruned: time (s)", "pruned: outcome", "roots 1-best = bare",
         "exact BP: time (s)", "exact BP: outcome"], cells,
        run=f"`{meta['command']}` at {meta['revision']} — median of {args.repeats} runs, "
            f"fresh process each; exact BP capped at {args.bp_timeout:.0f} s and "
            f"{args.max_states} states per message.")
    harness.write_markdown("bp_vs_pruned", text)
    print(text)


if __name__ == "__main__":
    main()
