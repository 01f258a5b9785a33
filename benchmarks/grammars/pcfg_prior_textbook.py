"""The grammar prior against the n-gram (unigram) prior on the shared textbook problems.

For every problem in ../shared/data/phonology and every seed, two user commands side by
side, differing only in the UR prior:

    strgm infer PROBLEM --method pep --holdout 0.1 --seed S --json OUT               (unigram)
    strgm infer PROBLEM --method pep --holdout 0.1 --seed S --prior pcfg --json OUT  (syllables)

Recorded per run: held-out exact match and mean −log p(true form) from the JSON, and the
process's CPU seconds (children's rusage). Output: results/pcfg_prior_textbook.{json,md}
and a plot (CPU ratio and accuracy change per problem).

    python -m benchmarks.grammars.pcfg_prior_textbook [--seeds 0 1] [--timeout 900]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import harness

NAME = "pcfg_prior_textbook"
PRIORS = {"unigram": [], "pcfg": ["--prior", "pcfg"]}


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_one(path: str, prior: str, seed: int, timeout: float, work: str) -> dict:
    name = os.path.basename(path)[:-4]
    out = os.path.join(work, f"{name}_{prior}_{seed}.json")
    cmd = [sys.executable, "-m", "strgm.cli", "infer", path, "--method", "pep", "--holdout",
           "0.1", "--seed", str(seed), "--json", out, "--quiet", *PRIORS[prior]]
    c0, t0 = cpu_children(), time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, err = p.returncode, p.stderr.strip().splitlines()[-1:] if p.returncode else []
    except subprocess.TimeoutExpired:
        code, err = "timeout", [f"no result in {timeout:.0f} s"]
    rec = {"problem": name, "prior": prior, "seed": seed, "exit": code,
           "cpu_seconds": cpu_children() - c0, "wall_seconds": time.perf_counter() - t0}
    if code == 0:
        with open(out, encoding="utf-8") as fh:
            h = json.load(fh)["holdout"]
        rec.update(exact_match=h["exact_match"], neg_logp=h["mean_neg_logp"], n=h["n"])
    else:
        rec["error"] = " ".join(err)[:300]
    return rec


def table(rows: list) -> str:
    lines = ["| problem | unigram exact | pcfg exact | unigram −log p | pcfg −log p | "
             "unigram CPU s | pcfg CPU s | CPU ratio |", "|---|---|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault(r["problem"], {}).setdefault(r["prior"], []).append(r)

    def med(rs, key):
        v = [float(r[key]) for r in rs if key in r]  # strict JSON writes ∞ as "Infinity"
        return statistics.median(v) if v else float("nan")

    for prob in sorted(by):
        u, g = by[prob].get("unigram", []), by[prob].get("pcfg", [])
        cu, cg = med(u, "cpu_seconds"), med(g, "cpu_seconds")
        lines.append(f"| {prob} | {med(u, 'exact_match'):.1%} | {med(g, 'exact_match'):.1%} | "
                     f"{med(u, 'neg_logp'):.2f} | {med(g, 'neg_logp'):.2f} | {cu:.1f} | "
                     f"{cg:.1f} | {cg / cu:.2f} |")
    ok = [r for r in rows if "exact_match" in r]
    for prior in PRIORS:
        sel = [r for r in ok if r["prior"] == prior]
        if sel:
            lines.append(f"| **mean, {prior}** | {statistics.mean(r['exact_match'] for r in sel):.1%}"
                         f" | | {statistics.mean(float(r['neg_logp']) for r in sel):.2f} | | "
                         f"{sum(r['cpu_seconds'] for r in sel):.0f} (total) | | |")
    bad = [r for r in rows if r["exit"] != 0]
    if bad:
        lines.append("")
        lines += [f"* {r['problem']} {r['prior']} seed {r['seed']}: {r['exit']} — "
                  f"{r.get('error', '')}" for r in bad]
    return "\n".join(lines)


def plot(rows: list) -> None:
    """CPU seconds against −log p per run, by prior (:func:`strgm.plot.plot_tradeoff`)."""
    if harness.pyplot() is None:
        return
    from strgm.plot import plot_tradeoff

    pts = [{"cpu_seconds": r["cpu_seconds"], "mean_neg_logp": float(r["neg_logp"]),
            "label": r["problem"].split("_")[-1], "prior": r["prior"]}
           for r in rows if "neg_logp" in r]
    if pts:
        harness.save_figure(plot_tradeoff(pts, by="prior", logx=True), NAME, dpi=100,
                            bbox_inches="tight")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--render", action="store_true", help="rebuild the table and plot "
                    "from the last run's JSON")
    a = ap.parse_args()
    if a.render:
        return write(harness.read_json(NAME))
    problems = sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for path in problems:
            for seed in a.seeds:
                for prior in PRIORS:
                    rows.append(run_one(path, prior, seed, a.timeout, work))
                    print(json.dumps(rows[-1]), flush=True)
    doc = {"seeds": a.seeds, "rows": rows, "revision": harness.git_revision()}
    harness.write_json(NAME, doc)
    return write(doc)


def write(doc: dict) -> int:
    args = "--seeds " + " ".join(map(str, doc["seeds"]))
    md = ("# Grammar prior vs unigram prior, PEP, shared textbook problems\n\n"
          f"`{harness.command(__name__, args)}`"
          + (f" at {doc['revision']}" if "revision" in doc else "")
          + " (medians over seeds; CPU seconds of each "
          "`strgm infer` process; −log p is ∞ when a held-out word has a segment no "
          "training word has)\n\n" + table(doc["rows"]) + "\n")
    harness.write_markdown(NAME, md)
    plot([r for r in doc["rows"] if math.isfinite(float(r.get("neg_logp", "nan")))])
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
