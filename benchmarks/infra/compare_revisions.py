"""Side-by-side CPU time of one inference method under two library revisions.

Checks out ``--old`` and ``--new`` as temporary git worktrees (without ``--new`` the
checkout itself is used: do not edit the library while such a run is going on),
then runs the method on the same dataset alternately (old, new, old, new, …) in fresh
child processes, each importing ``strgm`` from its own revision while the dataset and the
harness come from this checkout (the child starts in a folder that holds only a link to
this checkout's ``benchmarks``, :func:`benchmarks.harness.benchmarks_only`, with the
revision's tree on ``PYTHONPATH``). Alternation exposes both revisions to the same machine
load, so the ratio of medians is meaningful on a shared machine even when the absolute
seconds are not. Also checks that both revisions give the same result (gold
cross-entropy and features per belief). Loopy EP that has not converged can amplify
rounding-level differences (a different summation order in a sparse product, say) into
visibly different beliefs, so a change of result is reported, not hidden.

    python -m benchmarks.infra.compare_revisions --old 4533992 --method pep_prox --words 100

Writes ``results/compare_revisions/<method>_<dataset>_<words>_<old>_vs_<new>.{json,md}``;
``--report STEM`` rewrites ``STEM.md`` from ``STEM.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

from benchmarks import harness
from benchmarks.ep.common import METHODS

ROOT = str(harness.ROOT)

#: Run with ``cwd=`` :func:`benchmarks.harness.benchmarks_only` (``benchmarks`` from this
#: checkout) and ``PYTHONPATH=`` the revision's tree (``strgm`` from there).
CHILD = r"""
import json, sys, time, warnings
# an editable install (pip install -e) puts a finder ahead of PYTHONPATH; drop it so the
# worktree on PYTHONPATH is what gets imported (checked below against strgm.__file__)
sys.meta_path[:] = [f for f in sys.meta_path
                    if not getattr(f, "__module__", "").startswith("__editable__")]
import strgm
from benchmarks.ep.common import METHODS, gold_xent
from benchmarks.ep.figure3 import dataset
from strgm.inference import infer
model, gold, _ = dataset({dataset!r}, {words}, seed=0, holdout=0.0)
method, opts = METHODS[{method!r}]
warnings.simplefilter("ignore")
c0 = time.process_time()
r = infer(model.graph, method, max_iters={iters}, **opts)
cpu = time.process_time() - c0
out = {{"cpu_seconds": cpu, "strgm": strgm.__file__,
        "features_per_belief": r.extra.get("mean_features_per_belief")}}
if gold:
    out["gold_xent"] = gold_xent(r, model, gold)[0]
print(json.dumps(out))
"""


def worktree(rev: str, where: str) -> str:
    path = os.path.join(where, rev)
    subprocess.run(["git", "worktree", "add", "--detach", path, rev], cwd=ROOT, check=True,
                   capture_output=True)
    return path


def run_child(tree: str, a, here: str) -> dict:
    """One run in a child importing ``strgm`` from ``tree`` and the benchmarks from
    ``here`` (:func:`benchmarks.harness.benchmarks_only`)."""
    code = CHILD.format(dataset=a.dataset, words=a.words, method=a.method,
                        iters=a.max_iters)
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=here,
                         capture_output=True, text=True).stdout
    rec = json.loads(out.strip().splitlines()[-1])
    if not rec["strgm"].startswith(tree):
        raise RuntimeError(f"child imported {rec['strgm']}, not the worktree {tree}")
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", help="git revision of the baseline (required unless --report)")
    ap.add_argument("--new", default=None, help="git revision (default: working tree)")
    ap.add_argument("--method", default="pep_prox", choices=list(METHODS))
    ap.add_argument("--dataset", default="synthetic", choices=["synthetic", "english"])
    ap.add_argument("--words", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-iters", type=int, default=5)
    ap.add_argument("--report", metavar="STEM", help="only rewrite STEM.md from STEM.json")
    a = ap.parse_args()
    if a.report:
        print(write_report(os.path.abspath(a.report)))
        return
    if not a.old:
        ap.error("--old is required")
    with tempfile.TemporaryDirectory() as tmp:
        here = harness.benchmarks_only(tmp)
        trees = {"old": worktree(a.old, tmp),
                 "new": worktree(a.new, tmp) if a.new else ROOT}
        try:
            runs: dict[str, list] = {"old": [], "new": []}
            for rep in range(a.reps):
                for side in ("old", "new"):
                    rec = run_child(trees[side], a, here)
                    runs[side].append(rec)
                    print(f"rep {rep} {side}: {rec['cpu_seconds']:.1f} CPU s", flush=True)
        finally:
            for side in ("old", "new"):
                if trees[side] != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", trees[side]],
                                   cwd=ROOT, capture_output=True)
    new_rev = a.new or harness.git_revision() + " (working tree)"
    rec = {"method": a.method, "dataset": a.dataset, "words": a.words, "reps": a.reps,
           "max_iters": a.max_iters, "old": a.old, "new": new_rev, "runs": runs}
    tag = a.new or "worktree"
    iters = "" if a.max_iters == 5 else f"_it{a.max_iters}"
    stem = f"compare_revisions/{a.method}_{a.dataset}_{a.words}{iters}_{a.old}_vs_{tag}"
    harness.write_json(stem, rec)
    print(write_report(stem))


def write_report(stem: str) -> str:
    """``stem.md`` from ``stem.json`` (medians, speed-up, whether the results agree); a
    relative stem is under results/, an absolute one where it says."""
    rec = harness.read_json(stem)
    runs = rec["runs"]
    med = {s: statistics.median(r["cpu_seconds"] for r in runs[s]) for s in runs}
    same = all(math.isclose(runs["old"][0].get(k) or 0.0, runs["new"][0].get(k) or 0.0,
                            rel_tol=1e-9) for k in ("gold_xent", "features_per_belief"))
    lines = [f"# {rec['method']} on {rec['dataset']} {rec['words']} words: "
             f"{rec['old']} vs {rec['new']}", "",
             f"Medians of {rec['reps']} alternating runs (process CPU seconds; "
             f"{rec.get('max_iters', 5)} iterations).", "",
             "| revision | median CPU s | runs | gold cross-entropy | features per belief |",
             "|---|---|---|---|---|"]
    for s in ("old", "new"):
        cpus = ", ".join(f"{r['cpu_seconds']:.1f}" for r in runs[s])
        r0 = runs[s][0]
        lines.append(f"| {rec[s]} | {med[s]:.1f} | {cpus} | {r0.get('gold_xent', '—')} | "
                     f"{r0.get('features_per_belief')} |")
    lines += ["", f"Speed-up {med['old'] / med['new']:.2f}×; same results (to 1e-9 "
              f"relative): {same}.", "",
              "`" + harness.command(
                  __name__, f"--old {rec['old']} "
                  + ("" if "working tree" in rec["new"] else f"--new {rec['new']} ")
                  + f"--method {rec['method']} --dataset {rec['dataset']} --words "
                  f"{rec['words']} --reps {rec['reps']}"
                  + ("" if rec.get("max_iters", 5) == 5 else f" --max-iters {rec['max_iters']}"))
              + "`", ""]
    harness.write_markdown(stem, "\n".join(lines))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
