"""Why the infinite HMMs learn little on synthetic local-transition data: mixing,
initialisation, the emission prior, the hyperparameter updates or the truncation?

Data: the three "local" data sets of benchmarks/hmm/synthetic.py (hmm.common.synthetic:
8 states on a line, 12 symbols, 300 training and 100 test sequences of 30 symbols). Every
score is the held-out log-likelihood per symbol *given the lengths* minus the true
model's (the "gap"; 0 is the truth, the unigram's gap is tabulated).

1. **Starts** (models lt and hdp, ``--long`` sweeps, defaults otherwise): a chain started
   at the true parameters (the 8 true states in the first slots of L; the other slots
   entered with probability 1e-6; for lt the locations spaced 0.25 on a line and π
   divided by φ so that π·φ gives the true rows) must stay near the truth if the
   sampler is right and the posterior is near the truth (the stationarity check; lt
   with spacing 0.8 too, on the first data set for ``--short`` sweeps: see WIDE);
   "symbols" (each token's state its symbol's frequency rank: the bigram model, the
   default), "random" (every token's state uniform over L) and "prior" (every
   parameter from the prior) are the three initialisations of ``HMMSampler.init``.
   Every ``--every`` sweeps: the states holding ≥ 1 token and ≥ 1% of the tokens of the
   sampled z, and the gap of that sweep's HMM; at the end the gap of the posterior
   average over the second half (at most 20 samples, as ``strgm hmm train``).
2. **Factors** (``--short`` sweeps from the default start, the posterior average over
   the second half): the model (lt, hdp, sticky; also CPU seconds per sweep), the
   emission prior η (0.1, the default; 0.5; 1.0), the hyperparameters sampled (default)
   or fixed at α = γ = λ = 1, and the truncation L (20, 50 = the default, 100); each
   varied alone from lt with the defaults.

    python -m benchmarks.hmm.diagnosis [--quick] [--long 1000] [--short 300] [--every 50]

Writes benchmarks/results/hmm_diagnosis.{json,md,png} with the commit hash (``--replot``:
the markdown and the plot again from the JSON). CPU seconds are this process's, in the
sweeps only (BLAS on one thread).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.hmm.common import SPACING, SYN_K, SYN_V, add_replot_option, \
    commit_label, replot, synthetic, true_start, write_results  # noqa: E402
from strgm.errors import TruncationWarning  # noqa: E402
from strgm.hmm import Categorical, HMMSampler, HMMSettings  # noqa: E402
from strgm.hmm.model import HMMPosterior, hmm_of_state  # noqa: E402
from strgm.hmm.training import default_schedule  # noqa: E402

#: Distance between neighbouring true states' locations in the LT truth start is
#: hmm.common.SPACING (0.25). With 0.8 (as first tried) φ between far-apart locations is
#: tiny and π = rows/φ is huge for the 1e-6 entries: a state far in the tail of the
#: prior π ~ Gamma(αβ, 1), from which α climbs and the sweeps slow down; the chain
#: started there is measured too, as start "truth, spacing 0.8".
WIDE = 0.8
#: The starts compared in part 1 (module docstring).
STARTS = ("truth", "symbols", "random", "prior")
WIDE_START = f"truth, spacing {WIDE}"

#: (label, settings changed from the defaults) of the factor runs; the first is the base.
FACTORS = [("lt (base)", {}), ("hdp", {"model": "hdp"}),
           ("sticky", {"model": "sticky", "kappa": 1.0}),
           ("eta 0.5", {"eta": 0.5}), ("eta 1.0", {"eta": 1.0}),
           ("fixed hypers", {"sample_hypers": False}),
           ("L 20", {"L": 20}), ("L 100", {"L": 100})]


def gap(hmms, settings, ds) -> float:
    """Held-out nats per symbol given the lengths of the average of ``hmms``, minus the
    truth's."""
    post = HMMPosterior(tuple(hmms), (), settings)
    return float(post.log_likelihoods_given_lengths(ds.test).sum() / ds.test.num_tokens
                 - ds.truth)


def used(z, L) -> tuple[int, int]:
    """(states with ≥ 1 token, states with ≥ 1% of the tokens) of z."""
    c = np.bincount(z, minlength=L)
    return int((c > 0).sum()), int((c >= 0.01 * len(z)).sum())


def chain(ds, settings, start: str | None, iters: int, every: int, seed: int = 0) -> dict:
    """One chain (module docstring); CPU seconds count the sweeps only."""
    kernel = HMMSampler(ds.train, settings, Categorical(SYN_V, settings.eta))
    if start is not None and start.startswith("truth"):
        state = true_start(kernel, ds, np.random.default_rng(seed),
                           WIDE if start == WIDE_START else SPACING)
    else:
        state = kernel.init(seed, start=start)
    pi_start = float(state.pi.max())
    burn, thin = default_schedule(iters)
    curve, kept, cpu = [], [], 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        for i in range(1, iters + 1):
            t0 = time.process_time()
            state = kernel.sample(state)
            cpu += time.process_time() - t0
            h = None
            if i > burn and (i - burn) % thin == 0:
                h = hmm_of_state(state, settings, kernel.emissions)
                kept.append(h)
            if every and (i % every == 0 or i == 1):
                if h is None:
                    h = hmm_of_state(state, settings, kernel.emissions)
                one, pct = used(state.z, settings.L)
                curve.append({"sweep": i, "states": one, "states_1pct": pct,
                              "gap": gap([h], settings, ds)})
    one, pct = used(state.z, settings.L)
    return {"data": ds.name, "model": settings.model, "start": start or "default", "iters": iters,
            "cpu": cpu, "cpu_per_sweep": cpu / iters, "states": one, "states_1pct": pct,
            "gap": gap(kept, settings, ds), "alpha": state.alpha, "gamma": state.gamma,
            "pi_max_start": pi_start,
            "curve": curve}


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def markdown(res) -> str:
    d = res["data"]
    lines = [f"# Infinite-HMM diagnosis on synthetic local-transition data "
             f"(commit {res['commit']})", "",
             f"Command: `{res['command']}` ({res['seconds']:.0f} s wall, "
             f"{res['cpu']:.0f} CPU s in the sweeps). Data sets (hmm.common.synthetic): "
             + "; ".join(f"{x['name']}: truth {x['truth']:.4f}, unigram gap "
                         f"{x['unigram'] - x['truth']:+.3f}" for x in d)
             + ". Gap = held-out nats per symbol given the lengths minus the truth's "
             "(0 is the truth). States: with ≥ 1 token / with ≥ 1% of the tokens in the "
             "last sweep's z (8 true states).", "",
             f"## 1. Starts ({res['long']} sweeps, posterior average over the second half)",
             "", "| model | start | gap per data set | median gap | states (≥1 token) | "
             "states (≥1%) | CPU s/sweep |", "|---|---|---|---|---|---|---|"]
    for model in res["start_models"]:
        for start in STARTS:
            rows = [r for r in res["starts"] if r["model"] == model and r["start"] == start]
            lines.append(f"| {model} | {start} | "
                         + ", ".join(f"{r['gap']:+.3f}" for r in rows)
                         + f" | {med(rows, 'gap'):+.3f} | "
                         + ", ".join(str(r["states"]) for r in rows) + " | "
                         + ", ".join(str(r["states_1pct"]) for r in rows)
                         + f" | {med(rows, 'cpu_per_sweep'):.4f} |")
    w = res["wide"]
    if w:
        lines += ["", f"lt started at the truth with the locations spaced {WIDE} instead of "
                  f"{SPACING} ({w['data']}, {w['iters']} sweeps): gap {w['gap']:+.3f}, "
                  f"{w['states']} states (≥1 token), {w['states_1pct']} (≥1%), final α "
                  f"{w['alpha']:.1f}, {w['cpu_per_sweep']:.4f} CPU s/sweep; sweep by sweep "
                  "(sweep: gap / states ≥1% / ≥1 token): "
                  + "; ".join(f"{p['sweep']}: {p['gap']:+.3f} / {p['states_1pct']} / "
                              f"{p['states']}" for p in w["curve"]) + "."]
    lines += ["", "Sweep by sweep (median over data sets of the single sweep's gap; "
              "states with ≥ 1% of the tokens):", "",
              "| model | start | " + " | ".join(str(s) for s in res["checkpoints"]) + " |",
              "|---|---|" + "---|" * len(res["checkpoints"])]
    for model in res["start_models"]:
        for start in STARTS:
            rows = [r for r in res["starts"] if r["model"] == model and r["start"] == start]
            cells = []
            for s in res["checkpoints"]:
                pts = [p for r in rows for p in r["curve"] if p["sweep"] == s]
                cells.append(f"{statistics.median(p['gap'] for p in pts):+.3f} / "
                             f"{statistics.median(p['states_1pct'] for p in pts):.0f}")
            lines.append(f"| {model} | {start} | " + " | ".join(cells) + " |")
    lines += ["", f"## 2. Factors ({res['short']} sweeps from the default start, one "
              "chain per data set, each varied alone from lt with the defaults)", "",
              "| setting | gap per data set | median gap | states (≥1 token) | states (≥1%) "
              "| CPU s/sweep |", "|---|---|---|---|---|---|"]
    for label, _ in FACTORS:
        rows = [r for r in res["factors"] if r["label"] == label]
        lines.append(f"| {label} | " + ", ".join(f"{r['gap']:+.3f}" for r in rows)
                     + f" | {med(rows, 'gap'):+.3f} | "
                     + ", ".join(str(r["states"]) for r in rows) + " | "
                     + ", ".join(str(r["states_1pct"]) for r in rows)
                     + f" | {med(rows, 'cpu_per_sweep'):.4f} |")
    speed = res["cpu_per_sweep"]
    lines += ["", "CPU seconds per sweep by model (L = 50, median over data sets): "
              + ", ".join(f"{m} {v:.4f}" for m, v in speed.items())
              + f"; slowest / fastest = {max(speed.values()) / min(speed.values()):.1f}×.",
              "", "## Findings (from the numbers above)", ""]
    lines += [f"- {f}" for f in res["findings"]]
    return "\n".join(lines) + "\n"


def findings(res) -> list:
    """Sentences read off the results (no number in them is typed in)."""
    def g(model, start, key="gap"):
        return med([r for r in res["starts"] if r["model"] == model and r["start"] == start],
                   key)

    def f(label, key="gap"):
        return med([r for r in res["factors"] if r["label"] == label], key)

    out = []
    for m in res["start_models"]:
        out.append(f"{m}: started at the truth the chain ends {g(m, 'truth'):+.3f} nats from "
                   f"it with {g(m, 'truth', 'states_1pct'):.0f} states (≥1%); from the "
                   f"symbols start {g(m, 'symbols'):+.3f} with "
                   f"{g(m, 'symbols', 'states_1pct'):.0f} ({g(m, 'symbols', 'states'):.0f} "
                   f"with ≥1 token); from the "
                   f"random start {g(m, 'random'):+.3f} with {g(m, 'random', 'states_1pct'):.0f}"
                   f" ({g(m, 'random', 'states'):.0f} with ≥1 token); from the prior "
                   f"{g(m, 'prior'):+.3f} with {g(m, 'prior', 'states_1pct'):.0f}, after "
                   f"{res['long']} sweeps (medians over data sets).")
    w = res["wide"]
    if w:
        out.append(f"lt started at the truth with locations spaced {WIDE} (largest π "
                   f"{w['pi_max_start']:.0e}): α ends at {w['alpha']:.0f} against "
                   f"{med([r for r in res['starts'] if r['model'] == 'lt' and r['start'] == 'truth'], 'alpha'):.1f}"
                   f" with spacing {SPACING}, {w['states']} states hold a token "
                   f"({w['states_1pct']} ≥1%), gap {w['gap']:+.3f}, "
                   f"{w['cpu_per_sweep']:.3f} CPU s/sweep.")
    base = f("lt (base)")
    out.append(f"Factors at {res['short']} sweeps, median gap (base lt {base:+.3f}): "
               + ", ".join(f"{lab} {f(lab):+.3f}" for lab, _ in FACTORS[1:]) + ".")
    out.append("States (≥1%) at the same point: "
               + ", ".join(f"{lab} {f(lab, 'states_1pct'):.0f}" for lab, _ in FACTORS) + ".")
    return out


def plot(res, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    colour = {"truth": "C2", "symbols": "C1", "random": "C0", "prior": "C3"}
    style = {"lt": "-", "hdp": "--"}
    for r in res["starts"]:
        c = r["curve"]
        first = r["data"] == res["data"][0]["name"]
        kw = {"color": colour[r["start"]], "ls": style.get(r["model"], ":"), "alpha": 0.7,
              "label": f"{r['model']}, {r['start']} start" if first else None}
        axes[0].plot([p["sweep"] for p in c], [p["states_1pct"] for p in c], **kw)
        axes[1].plot([p["sweep"] for p in c], [p["gap"] for p in c], **kw)
    if res["wide"]:
        c = res["wide"]["curve"]
        kw = {"color": "0.5", "ls": "-.", "label": f"lt, {WIDE_START} ({res['wide']['data']})"}
        axes[0].plot([p["sweep"] for p in c], [p["states_1pct"] for p in c], **kw)
        axes[1].plot([p["sweep"] for p in c], [p["gap"] for p in c], **kw)
    axes[0].axhline(SYN_K, color="k", lw=1, ls=":")
    axes[0].set(xlabel="sweep", ylabel="states with ≥ 1% of the tokens",
                title="states in use (true: 8)")
    axes[1].axhline(0, color="k", lw=1, ls=":")
    axes[1].set(xlabel="sweep", ylabel="held-out gap to the truth (nats/symbol)",
                title="that sweep's HMM, given the lengths")
    axes[1].set_ylim(max(-0.3, axes[1].get_ylim()[0]), None)
    labels = [lab for lab, _ in FACTORS]
    for i, lab in enumerate(labels):
        ys = [r["gap"] for r in res["factors"] if r["label"] == lab]
        axes[2].plot([i] * len(ys), ys, "o", color="C0", alpha=0.7)
    uni = [x["unigram"] - x["truth"] for x in res["data"]]
    axes[2].axhline(statistics.median(uni), color="C3", lw=1, ls="--",
                    label="unigram (median)")
    axes[2].axhline(0, color="k", lw=1, ls=":")
    axes[2].set_xticks(range(len(labels)), labels, rotation=30, ha="right")
    axes[2].set(ylabel="gap, posterior average", title=f"factors ({res['short']} sweeps)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long", type=int, default=1000, help="sweeps of the start chains")
    ap.add_argument("--short", type=int, default=300, help="sweeps of the factor chains")
    ap.add_argument("--every", type=int, default=50, help="sweeps between curve points")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                    help="seeds of the local data sets")
    ap.add_argument("--start-models", nargs="+", default=["lt", "hdp"])
    ap.add_argument("--quick", action="store_true",
                    help="one data set, 200 and 100 sweeps, a point every 25")
    add_replot_option(ap)
    a = ap.parse_args()
    if a.replot:
        replot("hmm_diagnosis", markdown, plot)
        return 0
    if a.quick:
        a.long, a.short, a.every, a.seeds = 200, 100, 25, a.seeds[:1]
    t0, cpu0, source = time.time(), time.process_time(), commit_label()
    data = [synthetic("local", s, 1.0) for s in a.seeds]
    starts, factors, wide = [], [], None
    for ds in data:
        for model in a.start_models:
            for start in STARTS:
                r = chain(ds, HMMSettings(model=model, kappa=1.0 if model == "sticky" else 0.0),
                          start, a.long, a.every)
                print(f"{ds.name} {model} {start}: gap {r['gap']:+.4f}, {r['states']} / "
                      f"{r['states_1pct']} states, {r['cpu_per_sweep']:.4f} s/sweep",
                      flush=True)
                starts.append(r)
        if ds is data[0] and "lt" in a.start_models:
            wide = chain(ds, HMMSettings(model="lt"), WIDE_START, a.short, a.every)
            print(f"{ds.name} lt {WIDE_START}: gap {wide['gap']:+.4f}, {wide['states']} / "
                  f"{wide['states_1pct']} states, {wide['cpu_per_sweep']:.4f} s/sweep, "
                  f"α {wide['alpha']:.1f}", flush=True)
        for label, change in FACTORS:
            r = chain(ds, HMMSettings(**change), None, a.short, 0)
            r["label"] = label
            print(f"{ds.name} {label}: gap {r['gap']:+.4f}, {r['states']} / "
                  f"{r['states_1pct']} states, {r['cpu_per_sweep']:.4f} s/sweep", flush=True)
            factors.append(r)
    speed = {m: med([r for r in factors if r["label"] == lab], "cpu_per_sweep")
             for m, lab in (("lt", "lt (base)"), ("hdp", "hdp"), ("sticky", "sticky"))}
    res = {"commit": source,
           "command": harness.command(__name__),
           "long": a.long, "short": a.short, "every": a.every,
           "checkpoints": [p["sweep"] for p in starts[0]["curve"]
                           if p["sweep"] in (1, 50, 100, 200, 300, 500, a.long)],
           "start_models": a.start_models, "data": [d.summary() for d in data],
           "starts": starts, "factors": factors, "wide": wide, "cpu_per_sweep": speed,
           "seconds": time.time() - t0, "cpu": time.process_time() - cpu0}
    res["findings"] = findings(res)
    write_results("hmm_diagnosis", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
