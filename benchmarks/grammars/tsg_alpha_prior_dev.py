"""The DP-TSG's Gamma prior on α_c, chosen on the development split: parsing F1 and the
median α_c for several (shape, scale).

For each prior and seed, train the blocked-sampler DP-TSG of
benchmarks/grammars/tsg_mer_dev.py (its ``train_model``: wsj_0001-0139, minimal
initialisation, hyperparameters slice-sampled, ``--seconds`` CPU seconds, one chain per
seed) with α_c ~ Gamma(shape, scale) for every label c, then decode the sentences of at most ``--max-length`` words of wsj_0140-0159
with its ``decode_dev`` by ``--decodes`` (default: MER product, the default of
``strgm tsg parse``, and MPD) and score with evalb's COLLINS.prm conventions. The test
files wsj_0160-0179 are not read. Reported per prior: F1 mean ± sd over seeds, each
seed's F1, the median over labels of the chain's last α_c (then its median over seeds)
and the sweeps done.

A prior beats the default (the first of ``--priors``) when its mean MER-product F1 is
higher by more than the larger of the two priors' seed standard deviations.

    python -m benchmarks.grammars.tsg_alpha_prior_dev [--priors 1e-4,1e4 1,1e4 1,100 1,1]
        [--seeds 0 1 2] [--seconds 120] [--samples 100] [--jobs 2]

Writes benchmarks/results/tsg_alpha_prior_dev.{json,md,png} with the commit hash and the
command.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from multiprocessing import Pool

from benchmarks import harness
from benchmarks.grammars.tsg_mer_dev import DATA, decode_dev, train_model, write_results

NAME = "tsg_alpha_prior_dev"
HEADLINE = "mer-product"


def prior_arg(text: str) -> tuple:
    shape, scale = (float(x) for x in text.split(","))
    if shape <= 0 or scale <= 0:
        raise argparse.ArgumentTypeError(f"prior {text!r}: shape and scale must be > 0")
    return shape, scale


def run_one(job) -> list:
    """One chain under one prior: its decode rows, each with the prior and median α_c."""
    import numpy as np

    prior, seed, seconds, samples, max_length, decodes = job
    m = train_model(seed, seconds, prior)
    alpha = np.asarray(m.state.alpha, dtype=float)
    extra = {"prior": list(prior), "alpha_median": float(np.median(alpha)),
             "alpha_q10": float(np.quantile(alpha, 0.1)),
             "alpha_q90": float(np.quantile(alpha, 0.9))}
    return [dict(r, **extra) for r in decode_dev(m, seed, samples, max_length, decodes)]


def _label(prior) -> str:
    return f"({prior[0]:g}, {prior[1]:g})"


def summarise(rows, priors, decodes) -> list:
    """Per prior and decode: F1 mean, sd, per seed, median α_c, sweeps."""
    out = []
    for p in priors:
        for d in decodes:
            rs = sorted((r for r in rows if tuple(r["prior"]) == p and r["decode"] == d),
                        key=lambda r: r["seed"])
            f1 = [100 * r["f1"] for r in rs]
            out.append({"prior": list(p), "decode": d, "f1_mean": statistics.mean(f1),
                        "f1_sd": statistics.stdev(f1) if len(f1) > 1 else 0.0,
                        "f1_per_seed": f1, "seeds": [r["seed"] for r in rs],
                        "precision": 100 * statistics.mean(r["precision"] for r in rs),
                        "recall": 100 * statistics.mean(r["recall"] for r in rs),
                        "alpha_median_per_seed": [r["alpha_median"] for r in rs],
                        "alpha_median": statistics.median(r["alpha_median"] for r in rs),
                        "sweeps": [r["sweeps"] for r in rs]})
    return out


def verdict(summary, priors) -> dict:
    """Which prior wins on the headline decode (module docstring's rule)."""
    head = {tuple(s["prior"]): s for s in summary if s["decode"] == HEADLINE}
    base = head[priors[0]]
    best = max(head.values(), key=lambda s: s["f1_mean"])
    margin = best["f1_mean"] - base["f1_mean"]
    spread = max(best["f1_sd"], base["f1_sd"])
    wins = tuple(best["prior"]) != priors[0] and margin > spread
    return {"default": list(priors[0]), "best": best["prior"], "margin": margin,
            "spread": spread, "change_default": wins}


def report(res) -> str:
    a, v = res["settings"], res["verdict"]
    lines = [f"# DP-TSG α prior on the development split (commit {res['commit']})", "",
             f"What was run: `{res['command']}`. Train wsj_0001-0139 (blocked sampler, "
             f"minimal init, hyperparameters resampled, {a['seconds']:g} CPU s per chain, "
             f"one chain per seed), decode wsj_0140-0159 sentences of at most "
             f"{a['max_length']} words ({a['samples']} MH draws for MER); evalb "
             "COLLINS.prm conventions. Prior: α_c ~ Gamma(shape, scale) on every label. "
             "F1 in %, mean ± sd over seeds, then each seed; median α_c = median over "
             "labels of the last state's α, then median over seeds (each seed's in "
             "brackets).", "",
             "| prior (shape, scale) | decode | F1 mean ± sd | P | R | per seed | median α_c "
             "| sweeps |", "|---|---|---|---|---|---|---|---|"]
    for s in res["summary"]:
        lines.append(
            f"| {_label(s['prior'])} | {s['decode']} | {s['f1_mean']:.2f} ± {s['f1_sd']:.2f}"
            f" | {s['precision']:.2f} | {s['recall']:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in s['f1_per_seed'])} | {s['alpha_median']:.3g} "
            f"[{', '.join(f'{x:.3g}' for x in s['alpha_median_per_seed'])}] | "
            f"{', '.join(map(str, s['sweeps']))} |")
    lines += ["", f"Rule: a prior replaces the default {_label(v['default'])} when its mean "
              f"{HEADLINE} F1 is higher by more than the larger of the two seed sds. Best: "
              f"{_label(v['best'])}, {v['margin']:+.2f} points against a spread of "
              f"{v['spread']:.2f} → "
              f"{'change the default' if v['change_default'] else 'keep the default'}.", "",
              f"![F1 and median α_c per prior]({NAME}.png)"]
    return "\n".join(lines) + "\n"


def plot(res) -> None:
    """Left: F1 per seed and decode against the prior; right: median α_c per seed."""
    plt = harness.pyplot()
    if plt is None:
        return
    summ = res["summary"]
    priors = [tuple(p) for p in res["settings"]["priors"]]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    for j, d in enumerate(res["settings"]["decodes"]):
        for i, p in enumerate(priors):
            s = next(x for x in summ if tuple(x["prior"]) == p and x["decode"] == d)
            xs = [i + 0.15 * (j - 0.5)] * len(s["f1_per_seed"])
            ax.plot(xs, s["f1_per_seed"], "o", color=f"C{j}", ms=4,
                    label=d if i == 0 else None)
            ax.errorbar(xs[0], s["f1_mean"], yerr=s["f1_sd"], fmt="_", color=f"C{j}",
                        ms=14, capsize=3)
    for i, p in enumerate(priors):
        s = next(x for x in summ if tuple(x["prior"]) == p)
        bx.plot([i] * len(s["alpha_median_per_seed"]), s["alpha_median_per_seed"], "ko",
                ms=4)
    for x in (ax, bx):
        x.set_xticks(range(len(priors)), [_label(p) for p in priors])
        x.set_xlabel("Gamma prior on α_c (shape, scale)")
    ax.set(ylabel=f"F1 % (wsj_0140-0159, ≤ {res['settings']['max_length']} words)",
           title="dev F1 per seed, mean ± sd")
    bx.set(yscale="log", ylabel="median over labels of α_c", title="last state's α_c")
    ax.legend(fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, NAME, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--priors", type=prior_arg, nargs="+",
                    default=[(1e-4, 1e4), (1.0, 1e4), (1.0, 100.0), (1.0, 1.0)])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--max-length", type=int, default=25)
    ap.add_argument("--decodes", nargs="+", choices=("mer-product", "mer-sum", "mpd"),
                    default=["mer-product", "mpd"])
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if HEADLINE not in a.decodes:
        ap.error(f"--decodes must include {HEADLINE} (the verdict's decode)")
    if not DATA.is_dir():
        print(f"treebank sample not found at {DATA}; nothing to do", file=sys.stderr)
        return 0
    jobs = [(p, s, a.seconds, a.samples, a.max_length, tuple(a.decodes))
            for p in a.priors for s in a.seeds]
    with Pool(a.jobs) as pool:
        rows = [r for rs in pool.map(run_one, jobs, chunksize=1) for r in rs]
    summary = summarise(rows, a.priors, a.decodes)
    res = {"commit": harness.git_revision(), "command": harness.command(__name__),
           "settings": vars(a), "verdict": verdict(summary, a.priors),
           "summary": summary, "rows": rows}
    write_results(NAME, res, report(res))
    plot(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
