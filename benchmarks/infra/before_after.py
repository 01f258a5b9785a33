"""Do the PEP, PCFG and TSG benchmarks give the same numbers under two library revisions?

    python -m benchmarks.infra.before_after --old REV [--new REV] [--tsg-seeds 0 1 2]

A refactoring that keeps every capability must keep the numbers too. Each revision is
checked out as a temporary git worktree and runs *its own* copy of each benchmark (the
script's path at that revision: ``benchmarks/treebank_pcfg.py`` before the topic folders,
``python -m benchmarks.grammars.treebank_pcfg`` after), so that neither side runs code
written for the other:

* **PEP**: ``compare_revisions`` (this checkout's) runs proximal PEP on 100 English words
  and 300 synthetic words, old and new alternately, 3 runs each: median CPU seconds and
  whether the beliefs are the same (gold cross-entropy and features per belief to 1e-9).
* **Treebank PCFG**: ``treebank_pcfg --markov 1 --max-length 25`` (train wsj_0001–0159,
  test wsj_0160–0179): F1 of Viterbi and max-rule decoding.
* **PCFG estimators**: ``pcfg_morphology`` on 100 words at α = 0.01 and 1 (EM, VB, CVB,
  and MH with 2 chains of 50–100 sweeps): segmentation F1 and held-out perplexity.
* **TSG**: ``tsg_wsj`` with 5 sweeps per chain, 40 test sentences of at most 20 words, 10
  MER samples, one run per seed of ``--tsg-seeds``: F1 per sampler, initialisation and
  decoder (mean ± standard deviation over seeds) and CPU seconds per sweep. Chains whose
  random streams were re-plumbed cannot be equal draw for draw; they must agree within
  the seeds' spread.

A row is *same* when both revisions give equal numbers, *within noise* when the means
differ by at most twice the larger standard deviation over seeds, else *differs*.
Writes benchmarks/results/NAME.{json,md} (NAME: ``--out``, default spine_before_after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import harness

#: (label, name before the topic folders, module after, arguments, results file)
RUNS = {
    "treebank_pcfg": ("treebank_pcfg", "benchmarks.grammars.treebank_pcfg",
                      ["--markov", "1", "--max-length", "25"], "treebank_pcfg.json"),
    "pcfg_morphology": ("pcfg_morphology", "benchmarks.grammars.pcfg_morphology",
                        ["--words", "100", "--alphas", "0.01,1", "--mh-chains", "2",
                         "--mh-min-sweeps", "50", "--mh-max-sweeps", "100",
                         "--mh-check-every", "50"], "pcfg_morphology.json"),
    "tsg_wsj": ("tsg_wsj", "benchmarks.grammars.tsg_wsj",
                ["--seconds", "100000", "--max-iters", "5", "--samples", "10",
                 "--max-length", "20", "--limit", "40", "--jobs", "2"], "tsg_wsj.json"),
}
PEP = [("english", 100), ("synthetic", 300)]


def worktree(rev: str, folder: str) -> Path:
    path = Path(folder) / rev
    subprocess.run(["git", "worktree", "add", "--detach", "-f", str(path), rev],
                   cwd=harness.ROOT, check=True, capture_output=True)
    return path


def run_benchmark(tree: Path, key: str, extra: list, scratch: Path) -> dict:
    """Run benchmark ``key`` of :data:`RUNS` as it exists in ``tree``; its JSON result."""
    old, module, args, result = RUNS[key]
    out = scratch / f"{tree.name}_{key}"
    out.mkdir(parents=True, exist_ok=True)
    args = list(args) + extra
    if key == "pcfg_morphology":
        args += ["--out", str(out)]
    script = tree / "benchmarks" / f"{old}.py"
    cmd = [sys.executable, str(script)] if script.exists() else [sys.executable, "-m", module]
    env = {**os.environ, "PYTHONPATH": str(tree), "STRGM_BENCH_RESULTS": str(out),
           "STRGM_SHARED_DATA": str(harness.DATA)}  # the worktree has no ../shared
    print(f"{tree.name}: {' '.join(cmd[1:] + args)}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd + args, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{key} at {tree.name} failed:\n{done.stderr[-3000:]}")
    for folder in (out, tree / "benchmarks" / "results"):  # old scripts write in-tree
        if (folder / result).exists():
            return json.loads((folder / result).read_text(encoding="utf-8"))
    raise FileNotFoundError(f"{key} at {tree.name} wrote no {result}")


def pep_rows(old: str, new: str, scratch: Path) -> list:
    rows = []
    for dataset, words in PEP:
        out = scratch / f"pep_{dataset}"
        env = {**os.environ, "STRGM_BENCH_RESULTS": str(out)}
        done = subprocess.run([sys.executable, "-m", "benchmarks.infra.compare_revisions",
                               "--old", old, "--new", new, "--method", "pep_prox",
                               "--dataset", dataset, "--words", str(words), "--reps", "3"],
                              cwd=harness.ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"compare_revisions ({dataset}) failed:\n{done.stderr[-3000:]}")
        rec = json.loads(next(out.rglob("*.json")).read_text(encoding="utf-8"))
        cpu = {s: statistics.median(r["cpu_seconds"] for r in rec["runs"][s])
               for s in ("old", "new")}
        keys = ("gold_xent", "features_per_belief")
        same = all(abs((a.get(k) or 0) - (b.get(k) or 0))
                   <= 1e-9 * max(1.0, abs(a.get(k) or 0))
                   for a in rec["runs"]["old"] for b in rec["runs"]["new"] for k in keys)
        rows.append({"benchmark": f"PEP (proximal), {dataset} {words} words",
                     "measure": "median CPU s; beliefs",
                     "old": f"{cpu['old']:.1f}", "new": f"{cpu['new']:.1f}",
                     "verdict": "same beliefs" if same else "differs"})
    return rows


def same_row(benchmark: str, measure: str, a: float, b: float) -> dict:
    return {"benchmark": benchmark, "measure": measure, "old": f"{a:.4f}", "new": f"{b:.4f}",
            "verdict": "same" if abs(a - b) < 1e-9 else "differs"}


def pcfg_rows(res: dict) -> list:
    rows = []
    for side in ("old", "new"):
        res[side]["tb"] = {r["decode"]: r["f1"] for r in res[side]["treebank_pcfg"]["rows"]}
    for dec in ("viterbi", "maxrule"):
        rows.append(same_row("treebank PCFG, markov 1, ≤ 25 words", f"F1, {dec}",
                             res["old"]["tb"][dec], res["new"]["tb"][dec]))
    for a, b in zip(res["old"]["pcfg_morphology"]["rows"],
                    res["new"]["pcfg_morphology"]["rows"]):
        for k in ("f1", "heldout_perplexity"):
            x, y = float(a[k]), float(b[k])
            row = same_row(f"PCFG {a['method']}, α = {a['alpha']}", k, x, y)
            row["verdict"] = "same" if x == y or abs(x - y) <= 1e-9 * abs(x) else "differs"
            rows.append(row)
    return rows


def tsg_rows(res: dict, seeds: list) -> list:
    rows = []
    first = res["old"]["tsg"][seeds[0]]["parses"]
    for p in first:
        if p["model"] == "treebank PCFG":
            continue
        vals = {side: [next(q["f1"] for q in res[side]["tsg"][s]["parses"]
                            if q["model"] == p["model"] and q["decode"] == p["decode"])
                       for s in seeds] for side in ("old", "new")}
        rows.append(spread_row(f"TSG {p['model']}", f"F1, {p['decode']}", vals))
    for c in res["old"]["tsg"][seeds[0]]["chains"]:
        vals = {side: [next(x["trace"][-1]["cpu"] / len(x["trace"][1:])
                            for x in res[side]["tsg"][s]["chains"]
                            if x["sampler"] == c["sampler"] and x["init"] == c["init"])
                       for s in seeds] for side in ("old", "new")}
        rows.append(spread_row(f"TSG {c['sampler']}_{c['init']}", "CPU s per sweep", vals))
    return rows


def spread_row(benchmark: str, measure: str, vals: dict) -> dict:
    m = {k: statistics.mean(v) for k, v in vals.items()}
    sd = {k: statistics.stdev(v) if len(v) > 1 else 0.0 for k, v in vals.items()}
    scale = 100 if measure.startswith("F1") else 1
    verdict = ("same" if vals["old"] == vals["new"] else
               "within noise" if abs(m["old"] - m["new"]) <= 2 * max(sd.values()) else
               "differs")
    return {"benchmark": benchmark, "measure": measure,
            "old": f"{scale * m['old']:.2f} ± {scale * sd['old']:.2f}",
            "new": f"{scale * m['new']:.2f} ± {scale * sd['new']:.2f}", "verdict": verdict}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="git revision before")
    ap.add_argument("--new", default="HEAD", help="git revision after (default HEAD)")
    ap.add_argument("--tsg-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default="spine_before_after")
    a = ap.parse_args()
    revs = {"old": harness.git_revision(a.old), "new": harness.git_revision(a.new)}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        trees = {side: worktree(rev, tmp) for side, rev in revs.items()}
        try:
            res = {side: {"tsg": {}} for side in trees}
            for side in ("new", "old"):  # the new side first: it fails sooner if at all
                tree = trees[side]
                for key in ("treebank_pcfg", "pcfg_morphology"):
                    res[side][key] = run_benchmark(tree, key, [], scratch)
                for s in a.tsg_seeds:
                    res[side]["tsg"][s] = run_benchmark(tree, "tsg_wsj", ["--seed", str(s)],
                                                        scratch / f"seed{s}")
            rows = (pep_rows(revs["old"], revs["new"], scratch) + pcfg_rows(res)
                    + tsg_rows(res, a.tsg_seeds))
        finally:
            for tree in trees.values():
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)],
                               cwd=harness.ROOT, capture_output=True)
    harness.write_json(a.out, {"revisions": revs, "tsg_seeds": a.tsg_seeds, "rows": rows})
    text = harness.markdown(
        f"Benchmarks before and after: {revs['old']} → {revs['new']}",
        ["benchmark", "measure", revs["old"], revs["new"], "verdict"],
        [[r["benchmark"], r["measure"], r["old"], r["new"], r["verdict"]] for r in rows],
        run=harness.run_line(__name__, rev=revs["new"]),
        intro=["Each revision runs its own copy of each benchmark (module docstring); TSG "
               f"rows: mean ± sd over seeds {', '.join(map(str, a.tsg_seeds))}."])
    harness.write_markdown(a.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
