"""The size guard on runs that used to exhaust memory, and on normal runs that must not change.

    python -m benchmarks.infra.memory_guard [--repeats 3] [--baseline DIR] [--limit-gb 6]

Cases (each a fresh ``strgm`` subprocess, medians of ``--repeats`` runs):

* exact BP on Odden 1.12 English (80 words), default ``--max-memory`` and ``3G`` — before
  the guard it grew to 6.8 GB and aborted with ``std::bad_alloc``;
* exact BP on a paradigm with one 500-segment root in three words (and 200 segments),
  default ``--max-memory`` and ``2G``;
* the ``strgm demo`` paradigm (30 CMUdict verbs) with ``--method bp``: before the guard it
  aborted with ``std::bad_alloc`` past 6 GB, so it must now stop with an error;
* runs that must still succeed: a small loopy paradigm with exact BP, the demo and
  English with pruned BP. With ``--baseline DIR`` (a checkout of the revision before the
  guard) the marked cases also run from there: the guard's cost on normal runs, and what
  the failing runs did before (exit -6 = SIGABRT).

Wall time and peak RSS come from ``os.wait4`` (the child's own rusage). Every child runs
under an address-space limit of ``--limit-gb`` so that a regression aborts instead of
taking the machine. Writes ``benchmarks/results/memory_guard.{json,md,png}``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import harness

ENGLISH = str(harness.PHONOLOGY / "Odden_1.12_English.tsv")
NAME = "memory_guard"


def long_word_paradigm(directory: str, n: int) -> str:
    rng = random.Random(0)
    root = "".join(rng.choice("ptkbdgaeiou") for _ in range(n))
    path = os.path.join(directory, f"long{n}.tsv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"# one root of {n} segments\nR1\t{root}\nR1 PAST\t{root}d\n"
                 f"R1 3SG\t{root}z\nR2\tkat\nR2 PAST\tkatd\nR2 3SG\tkatz\n")
    return path


SMALL = ("R1\tpata\nR1 PAST\tpatad\nR1 3SG\tpataz\nR2\tkiti\nR2 PAST\tkitid\n"
         "R2 3SG\tkitiz\nR3\tbodu\nR3 3SG\tboduz\n")


def cases(tmp: str) -> list[dict]:
    """``expect``: "error" (a one-line error, exit 2) or "ok"; ``baseline``: also run
    from the ``--baseline`` checkout."""
    out = []
    if os.path.exists(ENGLISH):
        out += [{"name": "English bp", "argv": ["infer", ENGLISH, "--method", "bp"],
                 "expect": "error", "baseline": True},
                {"name": "English bp --max-memory 3G",
                 "argv": ["infer", ENGLISH, "--method", "bp", "--max-memory", "3G"],
                 "expect": "error"}]
    for n in (200, 500):
        p = long_word_paradigm(tmp, n)
        out += [{"name": f"{n}-segment word bp", "argv": ["infer", p, "--method", "bp"],
                 "expect": "error", "baseline": n == 500},
                {"name": f"{n}-segment word bp --max-memory 2G",
                 "argv": ["infer", p, "--method", "bp", "--max-memory", "2G"],
                 "expect": "error"}]
    out += [{"name": "demo bp", "argv": ["demo", "--method", "bp"], "expect": "error",
             "baseline": True}]
    small = os.path.join(tmp, "small.tsv")
    with open(small, "w", encoding="utf-8") as fh:
        fh.write(SMALL)
    out += [{"name": "small loopy paradigm bp", "argv": ["infer", small, "--method", "bp"],
             "expect": "ok", "baseline": True},
            {"name": "demo pruned", "argv": ["demo", "--method", "pruned"], "expect": "ok",
             "baseline": True}]
    if os.path.exists(ENGLISH):
        out += [{"name": "English pruned", "argv": ["infer", ENGLISH, "--method", "pruned"],
                 "expect": "ok", "baseline": True}]
    return out


def run_once(argv: list[str], limit_gb: float, pythonpath: str | None) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    limit = int(limit_gb * (1 << 30))

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-m", "strgm.cli", *argv, "--quiet"],
                             stdout=out, stderr=err, env=env, preexec_fn=cap,
                             cwd=pythonpath or None)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
        err.seek(0)
        lines = [ln for ln in err.read().splitlines() if ln.strip()]
    code = os.waitstatus_to_exitcode(status)
    return {"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "exit": code,
            "stderr_lines": len(lines), "message": lines[-1] if lines else ""}


def run_case(case: dict, repeats: int, limit_gb: float, pythonpath=None) -> dict:
    runs = [run_once(case["argv"], limit_gb, pythonpath) for _ in range(repeats)]
    ok = all(r["exit"] == 0 for r in runs)
    clean = all(r["exit"] == 2 and r["stderr_lines"] == 1 for r in runs)
    return {**{k: v for k, v in case.items() if k not in ("argv", "baseline")},
            "argv": [os.path.basename(a) if os.sep in a else a for a in case["argv"]],
            "seconds": statistics.median(r["seconds"] for r in runs),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
            "exits": [r["exit"] for r in runs],
            "met": ok if case["expect"] == "ok" else clean,
            "message": runs[-1]["message"] if not ok else ""}


def markdown(res: dict) -> str:
    s = res["settings"]
    lines = [f"# Size guard: runs that used to exhaust memory ({s['revision']})", "",
             *([f"What was run: `{s['command']}` at {s['revision']}.", ""]
               if "command" in s else []),
             f"Medians of {s['repeats']} runs; children under RLIMIT_AS {s['limit_gb']} GB; "
             f"MemAvailable at start {s['mem_available_gb']:.1f} GB (default --max-memory: "
             "current RSS + half of it).", "",
             "| case | expected | met | wall s | peak RSS MB | exit codes |",
             "|---|---|---|---:|---:|---|"]
    for r in res["cases"]:
        lines.append(f"| {r['name']}{' (' + r['revision'] + ')' if 'revision' in r else ''} "
                     f"| {r['expect']} | {'yes' if r['met'] else 'NO'} | {r['seconds']:.1f} "
                     f"| {r['peak_rss_mb']:.0f} | {r['exits']} |")
    lines += ["", "met: the expected outcome in every run (exit 2 with one stderr line for "
              "'error'; exit 0 for 'ok'). Exit -6: SIGABRT (std::bad_alloc at the address-"
              "space limit). Error lines:", ""]
    for r in res["cases"]:
        if r["message"]:
            label = r["name"] + (f" ({r['revision']})" if "revision" in r else "")
            lines.append(f"* {label}: `{r['message']}`")
    return "\n".join(lines) + "\n"


def plot(res: dict) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    rows = res["cases"]
    names = [r["name"] + (f" ({r['revision']})" if "revision" in r else "") for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    colours = ["tab:red" if r["expect"] == "error" else "tab:green" for r in rows]
    axes[0].barh(names, [r["seconds"] for r in rows], color=colours)
    axes[0].axvline(60, ls="--", c="k", lw=1)
    axes[0].set_xlabel("wall time, s (dashed: 60 s)")
    axes[1].barh(names, [r["peak_rss_mb"] / 1024 for r in rows], color=colours)
    axes[1].set_xlabel("peak RSS, GB")
    axes[0].invert_yaxis()
    fig.suptitle("size guard: red = must stop with a one-line error, green = must succeed")
    fig.tight_layout()
    harness.save_figure(fig, NAME, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit-gb", type=float, default=6.0)
    ap.add_argument("--baseline", default=None, help="checkout before the guard")
    a = ap.parse_args()
    from fst_factors.wfsa.guard import available_memory

    rev = harness.git_revision()
    res = {"settings": {"repeats": a.repeats, "limit_gb": a.limit_gb, "revision": rev,
                        "command": harness.command(__name__),
                        "mem_available_gb": available_memory() / (1 << 30)}, "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(tmp):
            r = run_case(case, a.repeats, a.limit_gb)
            res["cases"].append(r)
            print(f"{r['name']}: {r['seconds']:.1f}s {r['peak_rss_mb']:.0f} MB "
                  f"exits {r['exits']} met={r['met']}", flush=True)
            if a.baseline and case.get("baseline"):
                brev = harness.git_revision(cwd=a.baseline)
                b = run_case(case, a.repeats, a.limit_gb, pythonpath=a.baseline)
                b["revision"] = f"before the guard, {brev}"
                res["cases"].append(b)
                print(f"  baseline: {b['seconds']:.1f}s {b['peak_rss_mb']:.0f} MB", flush=True)
    harness.write_json(NAME, res)
    harness.write_markdown(NAME, markdown(res))
    plot(res)


if __name__ == "__main__":
    main()
