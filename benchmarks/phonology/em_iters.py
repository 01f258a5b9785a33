"""Does `strgm train` need its third EM iteration? The answer and the CPU time of
``strgm train FILE --holdout 0.1 --seed S --em-iters K`` for each K, side by side.

    python -m benchmarks.phonology.em_iters [--iters 2 3] [--seeds 0 1 2 3 4]
                                            [--files F ...] [--jobs 2]
                                            [--synthetic WORDS SEED ...] [--out NAME]

Every (file, seed, K) runs once as a user runs it, in a subprocess (``--jobs`` at a
time); recorded: the families chosen per held-out word (exact match, mean −log p of
the true form, as printed), the trained EM phonology's exact match, child CPU seconds,
the number of EM iterations run, and the same two scores over the held-out words whose
morphemes all occur in a training word (the protocol of
``benchmarks/phonology/textbook.py``; the other words are counted). Default inputs:
the 8 problems of ``../shared/data/phonology``. On those it is a check that removing work does not change
the 5-seed table (the held-out words are the table's own); ``--synthetic WORDS SEED
...`` runs synthetic paradigms (:func:`strgm.datasets.synthetic.synthetic_paradigm`,
one per seed) instead, a development set that no table is read from. Writes
benchmarks/results/NAME.{json,md,png} (default NAME: phonology_em_iters).
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from benchmarks import harness

DATA = str(harness.PHONOLOGY)


def synthetic_files(words: int, seeds: list, folder: str) -> list:
    from strgm.datasets.synthetic import synthetic_paradigm

    out = []
    for seed in seeds:
        path = os.path.join(folder, f"synthetic_{words}_seed{seed}.tsv")
        with open(path, "w", encoding="utf-8") as fh:
            for e in synthetic_paradigm(words, seed=seed).paradigm.entries:
                fh.write(" ".join(e.morphemes) + "\t" + e.surface + "\n")
        out.append(path)
    return out


def one_run(path: str, seed: int, iters: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "run.json")
        proc = subprocess.run(["/usr/bin/env", "time", "-f", "CPU %U %S", sys.executable,
                               "-m", "strgm.cli", "train", path, "--holdout", "0.1",
                               "--seed", str(seed), "--em-iters", str(iters), "--quiet",
                               "--json", doc], capture_output=True, text=True)
        words = per_word(doc) if proc.returncode == 0 else {}
    if proc.returncode != 0:
        raise SystemExit(f"strgm train {path} --seed {seed} --em-iters {iters} failed: "
                         + proc.stderr[-500:])
    text = proc.stdout
    cpu = re.findall(r"CPU ([0-9.]+) ([0-9.]+)", proc.stderr)[-1]
    edit = re.search(r"exact match: ([0-9.]+)%", text)
    fam = re.search(r"families chosen per held-out word: exact match ([0-9.]+)%\s+mean "
                    r"-log p\(true form\): ([0-9.]+|inf)", text)
    return {"file": os.path.basename(path), "seed": seed, "em_iters": iters,
            "cpu_seconds": float(cpu[0]) + float(cpu[1]),
            "edit_exact": float(edit.group(1)) / 100 if edit else None,
            "family_exact": float(fam.group(1)) / 100 if fam else None,
            "family_neg_logp": float(fam.group(2)) if fam else None,
            "em_lines": len(re.findall(r"^EM \d+: objective", text, re.M)),
            "per_word": words, **predictable(words)}


def per_word(doc: str) -> dict:
    """Held-out word -> the printed answer's record (``strgm train --json``)."""
    with open(doc, encoding="utf-8") as fh:
        pw = json.load(fh)["holdout"]["per_word"]
    keep = ("gold", "predicted", "exact", "neg_logp", "family", "unseen_morphemes")
    return {k: {f: v[f] for f in keep if f in v} for k, v in pw.items()}


def predictable(words: dict) -> dict:
    """Exact match and mean −log p over the held-out words whose morphemes all occur in
    a training word (the protocol of benchmarks/phonology/textbook.py: no system can
    spell a morpheme it never saw), and how many words were left out for that."""
    seen = [w for w in words.values() if not w.get("unseen_morphemes")]
    if not seen:
        return {"seen_exact": None, "seen_neg_logp": None, "unseen_words": len(words)}
    return {"seen_exact": statistics.mean(bool(w["exact"]) for w in seen),
            "seen_neg_logp": statistics.mean(float(w["neg_logp"]) for w in seen),
            "unseen_words": len(words) - len(seen)}


def table(runs: list, iters: list) -> list:
    files = sorted({r["file"] for r in runs})
    head = "| problem | " + " | ".join(
        f"K={k}: family exact / −log p / edit exact / CPU s (median) / words with every "
        "morpheme seen: exact / −log p (unseen-morpheme words)" for k in iters) + " |"
    lines = [head, "|---|" + "---|" * len(iters)]
    means = {k: [] for k in iters}
    for f in files:
        cells = []
        for k in iters:
            rs = [r for r in runs if r["file"] == f and r["em_iters"] == k]
            ex = statistics.mean(r["family_exact"] for r in rs)
            lp = statistics.mean(r["family_neg_logp"] for r in rs)
            ed = statistics.mean(r["edit_exact"] for r in rs)
            cpu = statistics.median(r["cpu_seconds"] for r in rs)
            se = [r for r in rs if r.get("seen_exact") is not None]
            sx = statistics.mean(r["seen_exact"] for r in se) if se else float("nan")
            sl = statistics.mean(r["seen_neg_logp"] for r in se) if se else float("nan")
            un = sum(r.get("unseen_words", 0) for r in rs) if "per_word" in rs[0] else None
            means[k].append((ex, lp, ed, cpu, sx, sl))
            cells.append(f"{100 * ex:.1f}% / {lp:.3f} / {100 * ed:.1f}% / {cpu:.1f}"
                         + (f" / {100 * sx:.1f}% / {sl:.3f} ({un})" if un is not None
                            else " / – / – (–)"))
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines.append("| **mean over problems** | " + " | ".join(
        f"{100 * statistics.mean(m[0] for m in means[k]):.1f}% / "
        f"{statistics.mean(m[1] for m in means[k]):.3f} / "
        f"{100 * statistics.mean(m[2] for m in means[k]):.1f}% / "
        f"{statistics.mean(m[3] for m in means[k]):.1f} / "
        f"{100 * statistics.mean(m[4] for m in means[k]):.1f}% / "
        f"{statistics.mean(m[5] for m in means[k]):.3f}" for k in iters) + " |")
    return lines


def plot(runs: list, iters: list, name: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    files = sorted({r["file"] for r in runs})
    seen = all(r.get("seen_neg_logp") is not None for r in runs)
    lp = "seen_neg_logp" if seen else "family_neg_logp"
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(iters)
    for j, k in enumerate(iters):
        xs = [i + j * width for i in range(len(files))]
        for ax, key in zip(axes, (lp, "cpu_seconds")):
            ax.bar(xs, [statistics.mean(r[key] for r in runs
                                        if r["file"] == f and r["em_iters"] == k)
                        for f in files], width, label=f"--em-iters {k}")
    n = len({r["seed"] for r in runs})
    for ax, title in zip(axes, ("mean −log p of the true form" + (
            "\n(words with every morpheme seen in training)" if seen else "")
            + f" ({n} seeds)", f"CPU s (mean of {n} seeds)")):
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(files))])
        ax.set_xticklabels([f.split("_")[-1].replace(".tsv", "") for f in files],
                           rotation=45)
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--files", nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--synthetic", type=int, nargs="+", default=None,
                    metavar="WORDS SEED")
    ap.add_argument("--out", default="phonology_em_iters")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    files = synthetic_files(a.synthetic[0], a.synthetic[1:], tmp) if a.synthetic else \
        (a.files or sorted(glob.glob(os.path.join(DATA, "*.tsv"))))
    tasks = [(f, s, k) for f in files for s in a.seeds for k in a.iters]
    with ThreadPoolExecutor(a.jobs) as pool:
        runs = []
        for r in pool.map(lambda t: one_run(*t), tasks):
            print(r, file=sys.stderr, flush=True)
            runs.append(r)
    rev = harness.git_revision()
    harness.write_json(a.out, {"revision": rev, "iters": a.iters, "seeds": a.seeds,
                               "runs": runs})
    md = ["# `strgm train --em-iters K`: the answer and its CPU time", "",
          f"What was run: `python -m benchmarks.phonology.em_iters --iters "
          f"{' '.join(map(str, a.iters))} --seeds {' '.join(map(str, a.seeds))}"
          + (f" --synthetic {' '.join(map(str, a.synthetic))}" if a.synthetic else "")
          + (f" --out {a.out}" if a.out != "phonology_em_iters" else "") + "` at "
          + f"{rev}, {a.jobs} runs at a time on a 2-core machine: `strgm train FILE "
          "--holdout 0.1 --seed S --em-iters K`, one run per cell. Cells: means over the "
          "seeds of the families chosen per held-out word (exact match, mean −log p of "
          "the true form), the EM phonology's exact match, the median child CPU "
          "seconds, and the families' exact match and −log p over the words whose "
          "morphemes all occur in a training word, with the number of other words "
          "(summed over seeds) in brackets.", ""] + table(runs, a.iters)
    harness.write_markdown(a.out, "\n".join(md))
    plot(runs, a.iters, a.out)
    print("\n".join(md))


if __name__ == "__main__":
    main()
