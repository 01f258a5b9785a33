"""The rule family's search, old revision vs new, side by side: CPU time and identical
answers of ``strgm rules PROBLEM --holdout 0.1 --seed S --json OUT``.

Checks out ``--old`` and ``--new`` as temporary git worktrees (``--new .``: this
checkout) and runs each problem in fresh child processes, each importing ``strgm`` from
its own revision, old and new at the same time in every repeat (the same machine load
for both; the ratio of medians is meaningful on a shared machine even when the seconds
are not). Per run: the process CPU seconds of the whole command (parsing, candidate URs,
search, predictions) and of the search alone (``learn_rules``). The JSON documents the
command writes (rules, description length, URs, history, every held-out prediction)
must be equal old vs new — and across repeats — after dropping timing fields (there
are none today); any difference is reported, not hidden.

    python -m benchmarks.phonology.rule_search_speed [--old b93a415] [--new HEAD] [--reps 3]
        [--reps3 PROBLEM ...] [--seed-problems PROBLEM ...] [--jobs 2]

Problems: the shipped example:english-verbs and every paradigm in
/work/shared/data/phonology/*.tsv with seed 0 (timed, ``--reps`` repeats; 3 for the
``--reps3`` problems), and seeds 1 and 2 on the ``--seed-problems`` (identity, one run
each side); ``--jobs`` child processes at a time. Both sides first run Zoque once,
untimed (numba compiles the kernels into a fresh worktree's cache; ``--no-warm``
times that too). Writes ``results/rule_search_speed{--tag}.{json,md,png}``;
``--report`` only rewrites the .md/.png from the .json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from benchmarks import harness

ROOT = str(harness.ROOT)
NAME = "rule_search_speed"
DATA = str(harness.PHONOLOGY)
SEED_PROBLEMS = ["example:english-verbs", "Roca_25_Zoque.tsv", "Halle_85_Turkish.tsv",
                 "Odden_3.2_Polish.tsv"]

CHILD = r"""
import json, sys, time, warnings
# an editable install puts a finder ahead of PYTHONPATH; drop it so that the worktree
# on PYTHONPATH is what gets imported (checked by the parent against strgm.__file__)
sys.meta_path[:] = [f for f in sys.meta_path
                    if not getattr(f, "__module__", "").startswith("__editable__")]
warnings.simplefilter("ignore")
import strgm
import strgm.models.rule_phonology as rp
from strgm.cli.app import main
spent = [0.0]
real = rp.learn_rules
def timed(*a, **k):
    c = time.process_time()
    try:
        return real(*a, **k)
    finally:
        spent[0] += time.process_time() - c
rp.learn_rules = timed
c0 = time.process_time()
status = main(["rules", {problem!r}, "--holdout", "0.1", "--seed", {seed!r}, "--quiet",
               "--json", {out!r}])
print(json.dumps({{"cpu_seconds": time.process_time() - c0, "status": status,
                  "search_cpu_seconds": spent[0], "strgm": strgm.__file__}}))
"""


def worktree(rev: str, where: str) -> str:
    path = os.path.join(where, rev.replace("/", "_"))
    subprocess.run(["git", "worktree", "add", "--detach", path, rev], cwd=ROOT,
                   check=True, capture_output=True)
    return path


def _strip(doc):
    """The document without timing fields (keys naming seconds or time)."""
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items()
                if "second" not in k and "time" not in k}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


def run_child(tree: str, problem: str, seed: int, tmp: str) -> dict:
    os.makedirs(tmp, exist_ok=True)
    out = os.path.join(tmp, "out.json")
    if os.path.exists(out):
        os.remove(out)
    code = CHILD.format(problem=problem, seed=str(seed), out=out)
    env = dict(os.environ, PYTHONPATH=tree)
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{problem} seed {seed} in {tree}: {proc.stderr[-2000:]}")
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    if not rec["strgm"].startswith(tree):
        raise RuntimeError(f"child imported {rec['strgm']}, not the worktree {tree}")
    with open(out, encoding="utf-8") as fh:
        rec["document"] = _strip(json.load(fh))
    return rec


def problems() -> list:
    return ["example:english-verbs"] + sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))


def task_list(todo: list, reps: int, reps3: list, seed_problems: list) -> list:
    """(problem, seed, repeat) to run on both sides: seed 0 timed (``reps`` repeats, 3
    for the problems of ``reps3``), seeds 1 and 2 once on ``seed_problems``."""
    out = []
    for p in todo:
        name = os.path.basename(p)
        out += [(p, 0, r) for r in range(3 if name in reps3 else reps)]
        out += [(p, seed, 0) for seed in (1, 2) if name in seed_problems]
    return out


def run_all(trees: dict, tasks: list, jobs: int, tmp: str) -> list:
    """Every task on both sides, ``jobs`` child processes at a time (old and new of one
    task are submitted together, so they share the machine's load); one record per
    (problem, seed) with its runs and whether every document is the same."""
    with ThreadPoolExecutor(jobs) as pool:
        futs = [(t, side, pool.submit(run_child, trees[side], t[0], t[1],
                                      os.path.join(tmp, f"{k}_{side}")))
                for k, t in enumerate(tasks) for side in ("old", "new")]
        results = []
        for (p, seed, rep), side, fut in futs:
            rec = fut.result()
            print(f"{os.path.basename(p)} seed {seed} rep {rep} {side}: "
                  f"{rec['cpu_seconds']:.1f} CPU s (search "
                  f"{rec['search_cpu_seconds']:.1f})", flush=True)
            results.append((p, seed, side, rec))
    rows: dict = {}
    for p, seed, side, rec in results:
        row = rows.setdefault((p, seed), {"runs": {"old": [], "new": []}, "docs": []})
        row["runs"][side].append({k: rec[k] for k in ("cpu_seconds", "search_cpu_seconds")})
        row["docs"].append(rec["document"])
    out = []
    for (p, seed), row in rows.items():
        doc = row["docs"][0]
        out.append({"problem": os.path.basename(p), "seed": seed,
                    "reps": len(row["runs"]["old"]), "runs": row["runs"],
                    "identical": all(d == doc for d in row["docs"]),
                    "rules": [r["text"] for r in doc.get("rules", [])],
                    "description_length": doc.get("description_length"),
                    "exact_match": (doc.get("holdout") or {}).get("exact_match")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", default="b93a415", help="baseline git revision")
    ap.add_argument("--new", default="HEAD", help="git revision, or . for this checkout")
    ap.add_argument("--reps", type=int, default=3, help="timed repeats of seed 0")
    ap.add_argument("--reps3", nargs="*", default=[],
                    help="problems timed 3 times whatever --reps says")
    ap.add_argument("--jobs", type=int, default=2, help="child processes at a time")
    ap.add_argument("--only", nargs="*", help="problem names to run (default: all)")
    ap.add_argument("--seed-problems", nargs="*", default=SEED_PROBLEMS)
    ap.add_argument("--report", action="store_true", help="only rewrite .md/.png")
    ap.add_argument("--no-warm", dest="warm", action="store_false",
                    help="time the first runs with numba's cache still empty")
    ap.add_argument("--tag", default="", help="suffix of the output files")
    a = ap.parse_args()
    global NAME
    NAME += a.tag
    if not a.report:
        rev = harness.git_revision
        rec = {"old": rev(a.old), "new": "working tree" if a.new == "." else rev(a.new),
               "command": "strgm rules PROBLEM --holdout 0.1 --seed S --json OUT",
               "warm": a.warm}
        todo = [p for p in problems() if not a.only or os.path.basename(p) in a.only]
        tasks = task_list(todo, a.reps, a.reps3, a.seed_problems)
        with tempfile.TemporaryDirectory() as tmp:
            trees = {"old": worktree(a.old, tmp),
                     "new": ROOT if a.new == "." else worktree(a.new, tmp)}
            try:
                if a.warm:  # numba compiles into a fresh worktree's cache on first use
                    for side in ("old", "new"):
                        run_child(trees[side], os.path.join(DATA, "Roca_25_Zoque.tsv"),
                                  0, os.path.join(tmp, f"warm_{side}"))
                rows = run_all(trees, tasks, a.jobs, tmp)
            finally:
                for side in ("old", "new"):
                    if trees[side] != ROOT:
                        subprocess.run(["git", "worktree", "remove", "--force",
                                        trees[side]], cwd=ROOT, capture_output=True)
        rec["timed"] = [r for r in rows if r["seed"] == 0]
        rec["seeds"] = [r for r in rows if r["seed"] != 0]
        harness.write_json(NAME, rec)
    print(write_report())


def _median(row: dict, side: str, key: str) -> float:
    return statistics.median(r[key] for r in row["runs"][side])


def write_report() -> str:
    """``.md`` (and ``.png``) from the ``.json``."""
    rec = harness.read_json(NAME)
    lines = [f"# Rule search speed: {rec['old']} (old) vs {rec['new']} (new)", "",
             f"`{rec['command']}`, process CPU seconds, medians of "
             f"{rec['timed'][0]['reps'] if rec['timed'] else 0} paired runs in "
             "fresh processes (whole command; search = `learn_rules`). *Identical*: the "
             "JSON documents (rules, DL, URs, history, held-out predictions) of every "
             "run, old and new, are equal. Old and new ran at the same time on a "
             "shared 2-core machine" + ("" if rec.get("warm", False) else
                                        "; the new side's first runs include numba's "
                                        "compilation into a fresh worktree's cache")
             + ".", "",
             "| problem | seed | old CPU s | new CPU s | speed-up | old search s | "
             "new search s | search speed-up | identical | rules | DL | exact |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rec["timed"] + rec["seeds"]:
        o, n = _median(row, "old", "cpu_seconds"), _median(row, "new", "cpu_seconds")
        so = _median(row, "old", "search_cpu_seconds")
        sn = _median(row, "new", "search_cpu_seconds")
        lines.append(f"| {row['problem']} | {row['seed']} | {o:.1f} | {n:.1f} | "
                     f"{o / n:.1f}× | {so:.1f} | {sn:.1f} | {so / max(sn, 1e-9):.1f}× | "
                     f"{'yes' if row['identical'] else '**NO**'} | {len(row['rules'])} | "
                     f"{row['description_length']} | {row['exact_match']} |")
    every = all(r["identical"] for r in rec["timed"] + rec["seeds"])
    lines += ["", f"All identical: {every}.", "",
              "`" + harness.command(__name__, f"--old {rec['old']} --new "
                                    f"{rec['new'] if rec['new'] != 'working tree' else '.'}")
              + "`", ""]
    harness.write_markdown(NAME, "\n".join(lines))
    _plot(rec)
    return "\n".join(lines)


def _plot(rec: dict) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    rows = rec["timed"]
    names = [r["problem"].replace(".tsv", "").replace("example:", "") for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(9, 4))
    for k, (side, key, label) in enumerate((("old", "cpu_seconds", "old, whole"),
                                            ("new", "cpu_seconds", "new, whole"),
                                            ("old", "search_cpu_seconds", "old, search"),
                                            ("new", "search_cpu_seconds", "new, search"))):
        ax.bar([i + (k - 1.5) * 0.2 for i in x], [_median(r, side, key) for r in rows],
               0.2, label=label)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("CPU seconds (median)")
    ax.set_title(f"strgm rules --holdout 0.1 --seed 0: {rec['old']} vs {rec['new']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, NAME, dpi=110)


if __name__ == "__main__":
    main()
