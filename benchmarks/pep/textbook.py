"""`strgm infer <problem> --method M --json` on every shared textbook problem, for
M = pruned and pep side by side (each problem's PEP CPU time over its pruned-BP time).

    python -m benchmarks.pep.textbook run [--out DIR] [--timeout S] [--methods pruned pep]
    python -m benchmarks.pep.textbook collect DIR     # summarise an earlier run's outputs

``run`` first runs each method once untimed on the bundled English verbs (compiling the
kernels, once per source digest: :mod:`fst_factors.wfsa.compiled`), then starts one ``strgm
infer`` process per problem (exactly the user's command) and records exit status, wall
and CPU seconds (children's rusage), peak memory, and from the JSON written: iterations,
whether the belief change fell below tol, and how many roots' 1-best UR equals their bare
(unaffixed) surface form. ``collect`` rebuilds the table from a
directory holding ``<problem>.json`` and ``times.txt`` lines in the format
``<problem> <wall> s wall <user> s user <KB> KB exit <code>`` (what ``run`` writes, and
what ``/usr/bin/time -f "%e s wall %U s user %M KB exit %x"`` prints). Output:
``results/pep_textbook.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

from benchmarks import harness
from strgm.progress import StepProgress

TIME_LINE = re.compile(r"^(\S+) ([\d.]+) s wall ([\d.]+) s user (\d+) KB exit (-?\d+)")


def summarise(name: str, out_json: str, wall: float, cpu: float, kb: int, code: int):
    problem, _, method = name.partition("__")
    rec = {"problem": problem, "method": method or "pep", "exit": code,
           "wall_seconds": wall, "cpu_seconds": cpu, "max_rss_mb": kb / 1024}
    if code == 0 and os.path.exists(out_json):
        with open(out_json, encoding="utf-8") as fh:
            d = json.load(fh)
        rec.update(iterations=d["timing"]["iterations"], converged=d["timing"]["converged"])
        from strgm.datasets.paradigm import read_paradigm

        surfaces: dict = {}
        for e in read_paradigm(d["source"]).entries:
            if e.surface is not None and len(e.morphemes) == 1:  # a bare form
                surfaces.setdefault(e.morphemes[0], set()).add(e.surface)
        bare = [m for m in d["morphemes"] if m in surfaces]
        rec["bare_roots"] = len(bare)
        rec["ur_is_bare_form"] = sum(1 for m in bare if d["morphemes"][m]
                                     and d["morphemes"][m][0][0] in surfaces[m])
    return rec


def run(args) -> list:
    os.makedirs(args.out, exist_ok=True)
    times = os.path.join(args.out, "times.txt")
    if os.path.exists(times):  # a new run replaces the old one's table
        os.remove(times)
    rows = []
    grid = [(path, method) for path in sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
            for method in args.methods]
    for method in args.methods:  # untimed: the kernels compile once per source digest
        subprocess.run(["strgm", "infer", "example:english-verbs", "--method", method,
                        "--max-iters", "2", "--quiet"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    with StepProgress(len(grid), "pep_textbook runs") as bar:  # a bar with ETA on a tty
        for path, method in grid:
            rows.append(run_one(args, path, method))
            print(json.dumps(rows[-1]), flush=True)
            bar.step(f"{os.path.basename(path)} {method}", show=False)
    return rows


def run_one(args, path: str, method: str) -> dict:
    p = os.path.basename(path)[:-4] + "__" + method
    out = os.path.join(args.out, p + ".json")
    t0 = time.perf_counter()
    # os.wait4 gives this child's own rusage (RUSAGE_CHILDREN's peak memory would be
    # the maximum over every problem run so far)
    proc = subprocess.Popen(["strgm", "infer", path, "--method", method, "--json", out,
                             "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    timer = threading.Timer(args.timeout, proc.kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timed_out = not timer.is_alive()
    timer.cancel()
    code = 124 if timed_out else os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    cpu = usage.ru_utime + usage.ru_stime
    with open(os.path.join(args.out, "times.txt"), "a") as fh:
        fh.write(f"{p} {wall:.2f} s wall {cpu:.2f} s user {usage.ru_maxrss} KB exit "
                 f"{code}\n")
    return summarise(p, out, wall, cpu, usage.ru_maxrss, code)


def collect(directory: str) -> list:
    rows = []
    with open(os.path.join(directory, "times.txt")) as fh:
        for line in fh:
            m = TIME_LINE.match(line.strip())
            if m:
                p, wall, cpu, kb, code = m.groups()
                rows.append(summarise(p, os.path.join(directory, p + ".json"), float(wall),
                                      float(cpu), int(kb), int(code)))
    return rows


def write(rows: list, how: str) -> None:
    harness.write_json("pep_textbook", rows)
    pruned = {r["problem"]: r["cpu_seconds"] for r in rows if r["method"] == "pruned"}
    cells = []
    for r in rows:
        ratio = f"{r['cpu_seconds'] / pruned[r['problem']]:.2f}" \
            if r["problem"] in pruned else ""
        cells.append([r["problem"], r["method"], r["exit"], f"{r['wall_seconds']:.0f}",
                      f"{r['cpu_seconds']:.1f}", ratio, f"{r['max_rss_mb']:.0f}",
                      r.get("iterations", ""), r.get("converged", ""),
                      f"{r.get('ur_is_bare_form', '')}/{r.get('bare_roots', '')}"])
    faster = [r["problem"] for r in rows if r["method"] == "pep" and r["problem"] in pruned
              and r["cpu_seconds"] < pruned[r["problem"]]]
    notes = [f"PEP took less CPU time than pruned BP on {len(faster)} of {len(pruned)} "
             "problems."] if pruned else []
    text = harness.markdown(
        "`strgm infer <problem> --method pruned|pep --json` on the shared problems",
        ["problem", "method", "exit", "wall s", "CPU s", "× pruned CPU", "peak MB",
         "iterations", "converged",
         "morphemes with a bare form whose 1-best UR is that form"], cells,
        run=how, notes=notes)
    harness.write_markdown("pep_textbook", text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", default=str(harness.result_path("pep_textbook_runs")))
    r.add_argument("--timeout", type=float, default=1800)
    r.add_argument("--methods", nargs="+", default=["pruned", "pep"],
                   choices=["pruned", "pep", "ep", "bp"])
    c = sub.add_parser("collect")
    c.add_argument("dir")
    c.add_argument("--how", default="")
    a = ap.parse_args()
    if a.cmd == "run":
        write(run(a), harness.run_line(__name__) + " One process per problem and method, "
              "default settings; CPU seconds from the child's rusage, other jobs may have "
              "shared the machine.")
    else:
        write(collect(a.dir), a.how or f"Collected from `{a.dir}`.")


if __name__ == "__main__":
    sys.exit(main())
