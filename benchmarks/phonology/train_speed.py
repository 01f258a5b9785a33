"""How long `strgm train` takes with its defaults, run as a user runs it, and whether it
shows progress while its output goes to a file.

    python -m benchmarks.phonology.train_speed [--words 300] [--repeats 3] [--files F...]
                                               [--compare-one-core] [--old REV]

Inputs: a synthetic paradigm of ``--words`` words (``strgm.datasets.synthetic``, seed 0:
each root bare and with 4 suffixes; vowel harmony, voicing assimilation, final devoicing) written
to a temporary TSV, plus any ``--files``. Each input is trained ``--repeats`` times with
``strgm train FILE --holdout 0.1 --seed 0`` (all defaults: pruned-BP E-step, 3 EM
iterations) in a subprocess whose stdout and stderr go to files. Measured: wall seconds
and child CPU seconds (medians), the largest peak resident memory (the child's and its
own children's, from ``wait4``), held-out exact match, and the longest gap between two
lines appearing in the output files while the run went (polled every 0.5 s): the time a
user watching the log sees nothing. Target: ≤ 300 s for 300 words. With
``--compare-one-core`` each repeat also runs ``strgm train ... --one-core`` (the rule
family after EM, in the same process) right after the default run, so that the two
are measured side by side. With ``--old REV`` each repeat also runs the library of
revision REV (a temporary git worktree on PYTHONPATH) right before this checkout's, and
the CPU ratio new/old of the medians is reported with each side's held-out results
(``--words 0``: no synthetic input; ``--example``: the shipped english-verbs too).
Before timing, each side runs once untimed on the first input, so that the compiled
kernels and the modules' bytecode are cached as they are in an installed package (the
children may write bytecode even where PYTHONDONTWRITEBYTECODE is set).
Writes benchmarks/results/phonology_train_speed.{json,md,png} (``--out NAME``:
NAME.{json,md,png}).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import harness

TARGET_SECONDS = 300.0


def synthetic_file(words: int, folder: str) -> str:
    from strgm.datasets.synthetic import synthetic_paradigm

    data = synthetic_paradigm(words, seed=0)
    path = os.path.join(folder, f"synthetic_{words}.tsv")
    with open(path, "w", encoding="utf-8") as fh:
        for e in data.paradigm.entries:
            fh.write(" ".join(e.morphemes) + "\t" + e.surface + "\n")
    return path


def one_run(path: str, folder: str, extra: tuple = (), env: dict = None) -> dict:
    """Run ``strgm train`` once (with the options ``extra``); wall/CPU seconds and peak
    resident memory (the child's, and its own children's), exact match, longest silent
    gap."""
    out_p, err_p = os.path.join(folder, "out.txt"), os.path.join(folder, "err.txt")
    t0 = time.perf_counter()
    with open(out_p, "w") as out, open(err_p, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "strgm.cli", "train", path,
                                 "--holdout", "0.1", "--seed", "0", *extra],
                                stdout=out, stderr=err, env=env, cwd=folder)
        size, last, gap = 0, t0, 0.0
        while True:
            # wait4: this child's own resource usage, its waited-for children included
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.5)
            now = time.perf_counter()
            grown = os.path.getsize(out_p) + os.path.getsize(err_p)
            if grown != size:
                size, last = grown, now
            gap = max(gap, now - last)
    wall = time.perf_counter() - t0
    text = open(out_p, encoding="utf-8").read()
    if proc.returncode != 0:
        raise SystemExit(f"strgm train {path} failed ({proc.returncode}): "
                         + open(err_p, encoding="utf-8").read()[-500:])
    m = re.search(r"exact match: ([0-9.]+)%", text)
    fam = re.search(r"families chosen per held-out word: exact match ([0-9.]+)%\s+mean "
                    r"-log p\(true form\): ([0-9.]+|inf)", text)
    return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024,
            "exact_match": float(m.group(1)) / 100 if m else None,
            "family_exact_match": float(fam.group(1)) / 100 if fam else None,
            "family_neg_logp": float(fam.group(2)) if fam else None,
            "longest_silence_seconds": gap,
            "em_lines": len(re.findall(r"^EM \d+: objective", text, re.M))}


def _peak(runs: list) -> str:
    """The largest peak resident memory of the runs (MB), or "" for older records."""
    peaks = [x["peak_mb"] for x in runs if "peak_mb" in x]
    return f"{max(peaks):.0f}" if peaks else ""


def write(rows: list, a) -> str:
    rev = harness.git_revision()
    harness.write_json(a.out, {"settings": {"repeats": a.repeats, "words": a.words,
                                            "revision": rev,
                                            "command": "strgm train FILE --holdout 0.1 "
                                                       "--seed 0",
                                            "target_seconds": TARGET_SECONDS},
                               "inputs": rows})
    lines = ["| input | words | median wall s | median CPU s | runs (wall s) | held-out exact "
             "(edit / family choice) | longest silence s | peak MB | ≤ 300 s? |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        walls = [x["wall_seconds"] for x in r["runs"]]
        cpus = [x["cpu_seconds"] for x in r["runs"]]
        med = statistics.median(walls)
        lines.append(f"| {r['input']} | {r['words']} | {med:.1f} | "
                     f"{statistics.median(cpus):.1f} | "
                     + ", ".join(f"{w:.1f}" for w in walls)
                     + f" | {100 * r['runs'][0]['exact_match']:.1f}% / "
                     f"{100 * (r['runs'][0]['family_exact_match'] or 0):.1f}% | "
                     f"{max(x['longest_silence_seconds'] for x in r['runs']):.1f} | "
                     f"{_peak(r['runs'])} | "
                     f"{'yes' if med <= TARGET_SECONDS else 'no'} |")
    md = ("# `strgm train` with defaults: time and progress\n\n"
          "What was run: `" + harness.command(
              __name__, f"--words {a.words} --repeats {a.repeats}"
                        f"{' --compare-one-core' if a.compare_one_core else ''}"
                        f"{' --example' if a.example else ''}"
                        f"{' --old ' + a.old if a.old else ''}")
          + f"` at {rev} on a 2-core machine: `strgm train FILE --holdout 0.1 "
          "--seed 0` in a subprocess with stdout/stderr to files, after one untimed "
          "run per side (compiled kernels and bytecode cached, as in an installed "
          "package). Longest silence: the "
          "longest time no new output appeared in those files (polled every 0.5 s).\n\n"
          + "\n".join(lines) + "\n")
    harness.write_markdown(a.out, md)
    plt = harness.pyplot()
    if plt is None:
        return md
    fig, ax = plt.subplots(figsize=(6, 3))
    names = [r["input"] for r in rows]
    ax.barh(names, [statistics.median(x["wall_seconds"] for x in r["runs"]) for r in rows])
    ax.axvline(TARGET_SECONDS, color="red", ls="--", label="target (300 s)")
    ax.set_xlabel("median wall seconds, strgm train defaults")
    ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, a.out, dpi=100)
    return md


def child_env(env: dict = None) -> dict:
    """``env`` (default: this process's) with bytecode caching allowed: an installed
    package has its modules compiled once, so a timed run must not compile them again
    (which PYTHONDONTWRITEBYTECODE, set on some machines, makes every run do)."""
    out = dict(os.environ if env is None else env)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def old_env(rev: str, folder: str) -> dict:
    """The environment of a child that imports ``strgm`` from revision ``rev`` (a git
    worktree made under ``folder``)."""
    tree = os.path.join(folder, "old")
    subprocess.run(["git", "worktree", "add", "--detach", tree, rev], check=True,
                   capture_output=True, cwd=harness.ROOT)
    return dict(os.environ, PYTHONPATH=tree)


def compare_lines(rows: list, rev: str) -> list:
    """Markdown rows: per input, median CPU old → new, the ratio, and both sides'
    family-choice results (which must agree where only speed changed)."""
    out = [f"| input | CPU s at {rev} | CPU s here | new/old | family exact, −log p "
           f"at {rev} | here |", "|---|---|---|---|---|---|"]
    by = {r["input"]: r for r in rows}
    for name, r in by.items():
        if not name.endswith(" old"):
            continue
        new = by[name[:-4]]
        o = statistics.median(x["cpu_seconds"] for x in r["runs"])
        n = statistics.median(x["cpu_seconds"] for x in new["runs"])
        res = lambda x: f"{100 * (x['family_exact_match'] or 0):.1f}%, {x['family_neg_logp']}"  # noqa: E731,E501
        out.append(f"| {name[:-4]} | {o:.1f} | {n:.1f} | {n / o:.2f}× | "
                   f"{res(r['runs'][0])} | {res(new['runs'][0])} |")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--files", nargs="*", default=[])
    ap.add_argument("--example", action="store_true")
    ap.add_argument("--compare-one-core", action="store_true")
    ap.add_argument("--old", default=None, metavar="REV")
    ap.add_argument("--out", default="phonology_train_speed",
                    help="base name of the result files in benchmarks/results")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        env = child_env(old_env(a.old, folder)) if a.old else None
        new_env = child_env()
        inputs = ([synthetic_file(a.words, folder)] if a.words else []) + \
            [os.path.abspath(f) for f in a.files]
        if a.example:
            from strgm.datasets.examples import example_path
            inputs.insert(0, str(example_path("english-verbs")))
        for side in ([env] if a.old else []) + [new_env]:  # untimed: kernels, bytecode
            one_run(inputs[0], folder, (), side)
        for path in inputs:
            with open(path, encoding="utf-8") as fh:
                n = sum(1 for line in fh if line.strip() and not line.startswith("#"))
            modes = ([("old",)] if a.old else []) + [()] + \
                ([("--one-core",)] if a.compare_one_core else [])
            runs: dict = {m: [] for m in modes}
            for i in range(a.repeats):
                for m in modes:  # interleaved: drifts of the machine hit both alike
                    old = m == ("old",)
                    runs[m].append(one_run(path, folder, () if old else m,
                                           env if old else new_env))
                    print(f"{os.path.basename(path)} {' '.join(m)} run {i}: {runs[m][-1]}",
                          file=sys.stderr, flush=True)
            for m in modes:
                rows.append({"input": " ".join((os.path.basename(path),) + m), "words": n,
                             "runs": runs[m]})
        if a.old:
            subprocess.run(["git", "worktree", "remove", "--force",
                            os.path.join(folder, "old")], capture_output=True,
                           cwd=harness.ROOT)
    md = write(rows, a)
    if a.old:
        md += "\n" + "\n".join(compare_lines(rows, a.old)) + "\n"
        harness.write_markdown(a.out, md)
    print(md)


if __name__ == "__main__":
    main()
