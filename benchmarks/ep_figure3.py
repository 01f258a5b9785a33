"""Figure-3 analogue (PEP §7): speed and accuracy of pruned-20 BP, EP (1/2/3-gram),
PEP-prox and PEP-grow on the untrained phonology model (copy-biased edit transducer).
EP is gradient-based as in the paper's Figure 3 (``ep1``–``ep3``); the closed-form
variants (``ep1_closed``–``ep3_closed``, dashed in the plot) are extra rows.

    python benchmarks/ep_figure3.py run --dataset synthetic --words 50 100 --reps 1
    python benchmarks/ep_figure3.py run --dataset english --words 100
    python benchmarks/ep_figure3.py report        # JSON -> markdown + PNG

``run`` writes one record per (dataset, words, method) to ``results/ep_figure3_runs/``
(merged into ``results/ep_figure3.json`` by ``report``): median wall and CPU time over
``--reps`` runs (each run's times and the count are stored), accuracy from the first run.
Synthetic data have gold URs (mean −log b_M(gold), nats); on both datasets (English:
CMUdict regular verbs, 4 words per root) ``--holdout`` (10%) of the words are hidden and
scored (exact match of the 1-best surface, mean −log p). ``report`` also writes the
issue's acceptance targets at 500 words and appends ``results/ep_figure3_notes.md``.
Each method run is capped by ``--max-iters`` iterations (default 5). Plots need
matplotlib (skipped gracefully without it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from ep_common import RESULTS, METHODS, build, median_runs, plt_or_none  # noqa: E402
from strgm.progress import StepProgress  # noqa: E402

OUT = os.path.join(RESULTS, "ep_figure3.json")


def part_path(ds: str, words: int, method: str) -> str:
    return os.path.join(RESULTS, "ep_figure3_runs", f"{ds}_{words}_{method}.json")


def load() -> list:
    """All records: the per-run files (written by concurrent ``run`` processes)."""
    import glob

    rows = []
    for f in sorted(glob.glob(os.path.join(RESULTS, "ep_figure3_runs", "*.json"))):
        with open(f) as fh:
            rows.append(json.load(fh))
    return rows


def dump_one(rec: dict) -> None:
    path = part_path(rec["dataset"], rec["words"], rec["method"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(rec, fh, indent=1)


def dataset(name: str, words: int, seed: int, holdout: float = 0.1):
    """(model, gold URs or None, held-out words or None); ``holdout`` of the words are
    hidden (their surface forms become the held-out test)."""
    if name == "synthetic":
        from strgm.datasets.synthetic import synthetic_paradigm

        d = synthetic_paradigm(words, seed=seed)
        model, gold_words = build(d.paradigm, alphabet=d.alphabet, holdout=holdout,
                                  seed=seed)
        return model, d.gold_urs, gold_words or None
    from strgm.datasets.cmudict_paradigm import english_paradigm

    para = english_paradigm(max(1, words // 4), seed=seed)
    model, gold_words = build(para, holdout=holdout, seed=seed)
    return model, None, gold_words or None


def code_revision() -> str:
    """The last commit that changed the library (``strgm``, ``fst_factors.transducers``), plus
    ``+dirty`` for uncommitted library changes: the code a record was produced with."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        rev = subprocess.run(["git", "log", "-1", "--format=%h", "--", "../strgm"], cwd=here, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "../strgm"], cwd=here, capture_output=True,
                               text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run(args) -> None:
    bar = StepProgress(len(args.words) * len(args.methods), "ep_figure3 runs")  # ETA, tty
    for words in args.words:
        model, gold_urs, gold_words = dataset(args.dataset, words, args.seed, args.holdout)
        rev = code_revision()
        for name in args.methods:
            bar.step(f"{words} words, {name}", show=False)  # counts runs started
            print(f"{args.dataset} {words} {name} ...", flush=True)
            meta = {"dataset": args.dataset, "words": words, "reps": args.reps,
                    "latent": len(model.graph.latent), "holdout": args.holdout,
                    "heldout_words": len(gold_words or ()), "code": rev}
            try:
                rec = median_runs(name, model, args.reps, gold_urs=gold_urs,
                                  gold_words=gold_words, max_iters=args.max_iters,
                                  progress=args.progress,
                                  on_rep=lambda r: dump_one({**r, **meta}))
            except Exception as e:  # record the failure, keep going
                rec = {"method": name, "error": f"{type(e).__name__}: {e}"[:300]}
            rec.update(meta)
            print(json.dumps(rec), flush=True)
            dump_one(rec)


NOTES = os.path.join(RESULTS, "ep_figure3_notes.md")


def report(_args) -> None:
    """JSON + markdown table (+ ``ep_figure3_notes.md`` appended) + PNG from the records."""
    rows = load()
    with open(OUT, "w") as fh:
        json.dump(rows, fh, indent=1)
    cols = ["cpu_seconds", "seconds", "iterations", "gold_xent", "gold_missed", "heldout_exact",
            "heldout_neglogp", "features_per_belief", "reps", "code"]
    lines = ["# EP/PEP Figure-3 analogue (untrained phonology)", "",
             "Generated by `benchmarks/ep_figure3.py report` from `results/ep_figure3_runs/`. "
             "cpu_seconds = process CPU time, the fair speed measure here (runs were executed "
             "concurrently on a 2-core machine, so wall `seconds` are inflated by "
             "contention); medians of `reps` runs (accuracy from the first run: the methods "
             "are deterministic); gold_xent = mean −log b_M(gold UR) in nats (floor 1e-12; "
             "gold_missed counts floored morphemes); held-out = 10% of the words hidden "
             "(exact match of the 1-best surface form, mean −log p of the true one); "
             "features_per_belief = mean nonzero θ entries at the approximated variables; "
             "code = last library commit (`strgm`, `fst_factors.transducers`) the run used.", ""]
    for ds in sorted({r["dataset"] for r in rows}):
        lines += [f"## {ds}", "", "| words | method | " + " | ".join(cols) + " |",
                  "|---" * (len(cols) + 2) + "|"]
        for r in sorted((r for r in rows if r["dataset"] == ds),
                        key=lambda r: (r["words"], list(METHODS).index(r["method"]))):
            if "error" in r:
                lines.append(f"| {r['words']} | {r['method']} | error: {r['error'][:80]} |")
                continue
            cells = []
            for c in cols:
                v = r.get("reps_done", r.get(c, "")) if c == "reps" else r.get(c, "")
                cells.append(f"{v:.3g}" if isinstance(v, float) else str(v))
            lines.append(f"| {r['words']} | {r['method']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += targets(rows)
    if os.path.exists(NOTES):
        with open(NOTES) as fh:
            lines += [fh.read()]
    with open(os.path.join(RESULTS, "ep_figure3.md"), "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))
    plot(rows)


def targets(rows: list, words: int = 500) -> list[str]:
    """The issue's acceptance targets at ``words`` words, computed from the records:
    PEP ≥ 5× faster than pruned-20 with accuracy no worse; PEP ≤ 1.5× bigram-EP time;
    PEP cross-entropy within 10% of trigram EP's. Accuracy = gold cross-entropy
    (synthetic) or held-out −log p (English)."""
    out = [f"## Targets at {words} words (computed from the records above)", ""]
    for ds in sorted({r["dataset"] for r in rows}):
        at = {r["method"]: r for r in rows
              if r["dataset"] == ds and r["words"] == words and "cpu_seconds" in r}
        key = "gold_xent" if ds == "synthetic" else "heldout_neglogp"
        if "pruned20" not in at:
            continue
        base = at["pruned20"]
        out += [f"### {ds} (accuracy: {key})", "",
                "| method | CPU s (reps) | × pruned-20 CPU | accuracy (pruned-20) | "
                "× EP-2 CPU | accuracy vs EP-3 |", "|---|---|---|---|---|---|"]
        for m in ("pep_prox", "pep_grow"):
            if m not in at:
                continue
            r = at[m]
            cells = [m, f"{r['cpu_seconds']:.1f} ({r.get('reps_done', r.get('reps'))})",
                     f"{r['cpu_seconds'] / base['cpu_seconds']:.2f}",
                     f"{r.get(key, float('nan')):.3g} ({base.get(key, float('nan')):.3g})"]
            cells.append(f"{r['cpu_seconds'] / at['ep2']['cpu_seconds']:.2f}"
                         if "ep2" in at else "—")
            if "ep3" in at and at["ep3"].get(key):
                e3 = at["ep3"][key]
                cells.append(f"{r[key]:.3g} vs {e3:.3g} ({100 * (r[key] - e3) / e3:+.0f}%)")
            else:
                cells.append("no finished EP-3 run (see notes)")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return out


def style(method: str) -> str:
    """Closed-form EP variants dashed, the Figure-3 methods solid."""
    return "--" if method.endswith("_closed") else "-"


def plot(rows: list) -> None:
    """Speed vs accuracy (left) and scaling (right), synthetic (top) and English (bottom)."""
    plt = plt_or_none()
    if plt is None:
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    acc = {"synthetic": ("gold_xent", "mean −log b(gold UR) [nats]"),
           "english": ("heldout_neglogp", "held-out mean −log p(surface) [nats]")}
    for row, ds in enumerate(("synthetic", "english")):
        key, label = acc[ds]
        recs = [r for r in rows if r.get("dataset") == ds and "cpu_seconds" in r]
        for m in METHODS:
            pts = sorted((r["words"], r["cpu_seconds"], r.get(key)) for r in recs
                         if r["method"] == m)
            if not pts:
                continue
            scored = [(w, c, y) for w, c, y in pts if y is not None]
            if scored:
                line = axes[row][0].plot([c for _, c, _ in scored], [y for *_, y in scored],
                                         marker="o", label=m, linestyle=style(m))[0]
                for w, c, y in scored:
                    axes[row][0].annotate(str(w), (c, y), fontsize=6, color=line.get_color())
            axes[row][1].plot([w for w, *_ in pts], [c for _, c, _ in pts], marker="o", label=m,
                              linestyle=style(m))
        axes[row][0].set_xscale("log")
        axes[row][0].set_xlabel("CPU seconds (log)")
        axes[row][0].set_ylabel(label)
        axes[row][0].set_title(f"{ds}: speed vs accuracy (labels: words)", fontsize=9)
        axes[row][0].legend(fontsize=7)
        axes[row][1].set_yscale("log")
        axes[row][1].set_xlabel("words")
        axes[row][1].set_ylabel("CPU seconds (log)")
        axes[row][1].set_title(f"{ds}: scaling", fontsize=9)
        axes[row][1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "ep_figure3.png"), dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dataset", choices=["synthetic", "english"], default="synthetic")
    r.add_argument("--words", type=int, nargs="+", default=[100])
    r.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    r.add_argument("--reps", type=int, default=1)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--max-iters", type=int, default=5)
    r.add_argument("--holdout", type=float, default=0.1,
                   help="fraction of words hidden for the held-out metrics (default 0.1)")
    r.add_argument("--progress", action="store_true",
                   help="print the engine's position to stderr about once a minute")
    sub.add_parser("report")
    a = p.parse_args()
    run(a) if a.cmd == "run" else report(a)


if __name__ == "__main__":
    main()
