"""Infinite HMMs through the command line on synthetic data with known states: held-out
fit against the true model, states in use and CPU time, on data with and without local
transitions.

Data (hmm.common.synthetic): 8 states, 12 symbols, 300 training and 100 test sequences
of 30 symbols, of two kinds, 3 seeds each: **local**, transition weights Gamma(1, 1)·φ with
φ(ℓ, ℓ') = exp(−|ℓ − ℓ'|) for states on a line, and **nonlocal**, φ ≡ 1 with weights
Gamma(0.25, 1) (the same mean row entropy without a geometry). Each state's emissions
peak on 3 symbols; their sharpness is the smallest of hmm.common.SHARPNESS that leaves
a unigram-to-truth gap ≥ 0.15 nats per symbol; a data set that reaches none is skipped
with a note.

For each data set, configuration (``--configs``: option strings appended to
``strgm hmm train TRAIN --save M --seed S --quiet``; the default "" measures whatever the
CLI's defaults are) and chain seed: training and ``strgm hmm score M TEST --json J`` in
subprocesses. Recorded: the held-out log-likelihood per symbol given the lengths
(``per_symbol_given_lengths``, compared with the truth's and a unigram's, both given the
lengths: the data have fixed length 30) and with each sequence's end
(``per_symbol``); the states in use in the saved model's last sample, counted two ways:
**share ≥ 1%** of its expected visits per sequence (``HMM.occupancy``; with
``--no-length`` the visits of a 30-step chain from p0) and **≥ 1 token**, the states that
hold a token in the last sweep's sampled path (the trace's ``states``; every state of a
sample has a positive expected share, so that count is always L); the training
process's CPU seconds (getrusage of the children: everything the command does, its
start-up, reading and any choice of model included), per
sweep, and per sweep after the start-up: (CPU − CPU of a one-sweep run of the same
configuration) / (sweeps − 1).

    python -m benchmarks.hmm.synthetic [--iters N] [--seeds 0 1 2]
        [--configs '' '--model lt' '--model hdp' '--model sticky']

(an option string without a space needs a leading one, ' --fixed-hyper', so that
argparse takes it as a value). Writes benchmarks/results/hmm_synthetic.{json,md,png}
with the commit hash (``--replot``: the markdown and the plot again from the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.hmm.common import MIN_GAP, SYN_K, SYN_T, add_replot_option, commit_label, \
    replot, tuned_synthetic, write_results
from strgm.hmm.model_file import load_model

CONFIGS = ["", "--model lt", "--model hdp", "--model sticky"]
#: A configuration is "near the truth" within this many nats per symbol, and has about
#: the right number of states within this fraction of SYN_K.
NEAR, STATES_TOL = 0.03, 0.5
#: LT "beats" HDP on a data set when its median score is higher by more than this.
TIE = 0.005
#: The child processes use one BLAS thread (L × L matrices gain nothing from more).
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1"}


def label(config: str) -> str:
    return config.strip() or "(defaults)"


def strgm(*args) -> float:
    """Run ``strgm ARGS`` (output discarded unless it fails); its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, "-m", "strgm.cli", *map(str, args)], env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit(f"strgm {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def visits(h) -> np.ndarray:
    """Expected visits to each state per sequence (module docstring)."""
    if h.stop is not None:
        return h.occupancy()
    v, total = np.asarray(h.p0, dtype=float), np.zeros(len(h.p0))
    for _ in range(SYN_T):
        total, v = total + v, v @ h.P
    return total


def start_up(train, config: str, work: Path) -> float:
    """CPU seconds of a one-sweep training run of ``config`` (start-up, reading, one
    sweep and saving)."""
    model = work / "model.json"
    model.unlink(missing_ok=True)
    return strgm("hmm", "train", train, "--save", model, "--quiet", *shlex.split(config),
                 "--iters", 1)


def run(ds, train, test, config: str, seed: int, iters, work: Path) -> dict:
    model, scores = work / "model.json", work / "scores.json"
    for p in (model, scores):
        p.unlink(missing_ok=True)
    extra = ["--iters", iters] if iters else []
    cpu = strgm("hmm", "train", train, "--save", model, "--seed", seed, "--quiet", *extra,
                *shlex.split(config))
    strgm("hmm", "score", model, test, "--json", scores)
    sc = json.loads(scores.read_text())
    m = load_model(model)
    occ = visits(m.posterior.samples[-1])
    sweeps = m.training["iterations"]
    return {"data": ds.name, "config": label(config), "seed": seed,
            "gap": sc["per_symbol_given_lengths"] - ds.truth,
            "given_lengths": sc["per_symbol_given_lengths"], "with_ends": sc["per_symbol"],
            "states_1pct": int((occ >= 0.01 * occ.sum()).sum()),
            "states_token": m.training.get("last", {}).get("states"),
            "L": len(occ), "model": m.posterior.settings.model, "sweeps": sweeps,
            "cpu": cpu, "cpu_per_sweep": cpu / sweeps}


def add_marginal(runs, once: dict) -> None:
    """Each run's CPU seconds per sweep after the start-up: (CPU − the one-sweep run's)
    / (sweeps − 1)."""
    for r in runs:
        r["cpu_start_up"] = once[r["config"]]
        r["cpu_per_sweep_marginal"] = ((r["cpu"] - once[r["config"]]) / (r["sweeps"] - 1)
                                       if r["sweeps"] > 1 else None)


def spread(rows, key, fmt) -> str:
    """'median [min–max]' of rows[key] (the median alone for one row)."""
    v = [r[key] for r in rows if r[key] is not None]
    if not v:
        return "–"
    if len(v) == 1:
        return format(v[0], fmt)
    return (f"{format(statistics.median(v), fmt)} [{format(min(v), fmt)}, "
            f"{format(max(v), fmt)}]")


def summarise(res) -> tuple[list, list]:
    """(one row per data set and configuration, one summary row per configuration)."""
    cells, summary = [], []
    names = [d["name"] for d in res["data"] if d["used"]]
    for cfg in res["configs"]:
        mine = []
        for name in names:
            rows = [r for r in res["runs"] if r["data"] == name and r["config"] == cfg]
            gap = statistics.median(r["gap"] for r in rows)
            states = statistics.median(r["states_1pct"] for r in rows)
            cells.append({"data": name, "config": cfg, "gap": gap, "states_1pct": states,
                          "near": gap >= -NEAR,
                          "states_ok": abs(states - SYN_K) <= STATES_TOL * SYN_K})
            mine.append(cells[-1])
        summary.append({"config": cfg, "data_sets": len(mine),
                        "near": sum(c["near"] for c in mine),
                        "states_ok": sum(c["states_ok"] for c in mine),
                        "both": sum(c["near"] and c["states_ok"] for c in mine)})
    return cells, summary


def locality(res) -> list:
    """Sentences comparing LT and HDP per kind of data (from the per-data-set medians)."""
    lt, hdp = label("--model lt"), label("--model hdp")
    if not {lt, hdp} <= set(res["configs"]):
        return ["(--model lt and --model hdp were not both run: no comparison.)"]
    gaps = {(c["data"], c["config"]): c["gap"] for c in res["cells"]}
    out = []
    for kind in ("local", "nonlocal"):
        names = [d["name"] for d in res["data"] if d["used"] and d["kind"] == kind]
        if not names:
            continue
        diff = [gaps[n, lt] - gaps[n, hdp] for n in names]
        wins = sum(d > TIE for d in diff)
        verdict = "beats" if wins > len(names) / 2 else "does not beat"
        out.append(f"{kind} data: LT {verdict} HDP — LT's held-out score minus HDP's, per "
                   f"data set (medians over chains): "
                   + ", ".join(f"{n} {d:+.4f}" for n, d in zip(names, diff))
                   + f"; LT better by more than {TIE} on {wins} of {len(names)} (median "
                   f"{statistics.median(diff):+.4f} nats/symbol).")
    return out


def markdown(res) -> str:
    chains = len(res["seeds"])
    lines = [f"# Infinite HMMs on synthetic data through the CLI (commit {res['commit']})", "",
             f"Command: `{res['command']}` ({res['seconds']:.0f} s wall). Training: "
             f"`strgm hmm train TRAIN --save M --seed S --quiet "
             f"{'--iters ' + str(res['iters']) + ' ' if res['iters'] else ''}CONFIG`, "
             f"seeds {res['seeds']}; scoring: `strgm hmm score M TEST --json J`.", "",
             "## Data sets", "", f"Held-out nats per symbol given the lengths; a data set "
             f"is used when the unigram-to-truth gap is ≥ {MIN_GAP}.", "",
             "| data set | emission sharpness | truth | unigram | gap | used |",
             "|---|---|---|---|---|---|"]
    for d in res["data"]:
        lines.append(f"| {d['name']} | {d['sharpness']} | {d['truth']:.4f} | "
                     f"{d['unigram']:.4f} | {d['gap']:.3f} | "
                     f"{'yes' if d['used'] else '**no: gap < ' + str(MIN_GAP) + '**'} |")
    lines += ["", f"## Per data set and configuration (median [min, max] over {chains} "
              "chain(s))", "",
              "Score gap: held-out nats/symbol given the lengths minus the truth's. With "
              "ends: the CLI's score including each sequence's end (no truth to compare: "
              "the data have fixed length). States: share ≥ 1% of the expected visits "
              "of the saved model's last sample / with ≥ 1 token in the last sweep. CPU: "
              "seconds of the training process; per sweep, and per sweep after the start-up "
              "(module docstring).", "",
              "| data set | config | model | score gap | unigram gap | with ends | states ≥1% "
              "| states ≥1 token | CPU s | CPU s/sweep | after start-up |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    uni = {d["name"]: d["unigram"] - d["truth"] for d in res["data"]}
    for d in res["data"]:
        for cfg in res["configs"] if d["used"] else []:
            rows = [r for r in res["runs"] if r["data"] == d["name"] and r["config"] == cfg]
            models = "/".join(sorted({r["model"] for r in rows}))
            lines.append(f"| {d['name']} | `{cfg}` | {models} "
                         f"| {spread(rows, 'gap', '+.4f')} | {uni[d['name']]:+.3f} "
                         f"| {spread(rows, 'with_ends', '.4f')} "
                         f"| {spread(rows, 'states_1pct', 'g')} "
                         f"| {spread(rows, 'states_token', 'g')} | {spread(rows, 'cpu', '.1f')} "
                         f"| {spread(rows, 'cpu_per_sweep', '.4f')} "
                         f"| {spread(rows, 'cpu_per_sweep_marginal', '.4f')} |")
    lines += ["", "## Summary per configuration", "",
              f"Data sets whose median chain is within {NEAR} nats/symbol of the truth, "
              f"has {SYN_K} ± {STATES_TOL:.0%} states (share ≥ 1%), and both.", "",
              "| config | data sets | within 0.03 nats | states within ±50% | both "
              "| CPU s of a one-sweep run | CPU s/sweep after start-up, median [min, max] |",
              "|---|---|---|---|---|---|---|"]
    for s in res["summary"]:
        rows = [r for r in res["runs"] if r["config"] == s["config"]]
        lines.append(f"| `{s['config']}` | {s['data_sets']} | {s['near']} | "
                     f"{s['states_ok']} | {s['both']} | {rows[0]['cpu_start_up']:.1f} "
                     f"| {spread(rows, 'cpu_per_sweep_marginal', '.4f')} |")
    lines += ["", "## Does LT beat HDP where locality is real, and not where it is not?", "",
              f"LT beats HDP on a kind of data when its median score given the lengths is "
              f"higher by more than {TIE} nats/symbol on most of that kind's data sets.", ""]
    lines += [f"- {x}" for x in res["locality"]]
    return "\n".join(lines) + "\n"


def plot(res, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    data = [d for d in res["data"] if d["used"]]
    cfgs = res["configs"]
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(data)), 4.5))
    width = 0.8 / len(cfgs)
    for i, d in enumerate(data):
        ax.hlines(d["unigram"] - d["truth"], i - 0.45, i + 0.45, color="k", ls="--", lw=1,
                  label="unigram" if i == 0 else None)
        for j, cfg in enumerate(cfgs):
            ys = [r["gap"] for r in res["runs"] if r["data"] == d["name"] and r["config"] == cfg]
            ax.plot([i - 0.4 + width * (j + 0.5)] * len(ys), ys, "o", color=f"C{j}",
                    alpha=0.8, label=cfg if i == 0 else None)
    ax.axhline(0, color="grey", lw=1, ls=":")
    ax.set_xticks(range(len(data)), [d["name"] for d in data])
    ax.set(ylabel="held-out nats/symbol given lengths − truth",
           title="score gap to the true model (points: chains)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=None,
                    help="sweeps per chain (default: the CLI's default)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="chain seeds")
    ap.add_argument("--configs", nargs="+", default=CONFIGS,
                    help="option strings for `strgm hmm train`, one per configuration")
    ap.add_argument("--kinds", nargs="+", default=["local", "nonlocal"],
                    choices=["local", "nonlocal"])
    ap.add_argument("--data-seeds", type=int, nargs="+", default=[0, 1, 2])
    add_replot_option(ap)
    a = ap.parse_args()
    if a.replot:
        replot("hmm_synthetic", markdown, plot)
        return 0
    t0, source = time.time(), commit_label()
    data, runs, once = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for kind in a.kinds:
            for s in a.data_seeds:
                ds = tuned_synthetic(kind, s)
                used = ds.gap >= MIN_GAP
                data.append({**ds.summary(), "used": used})
                if not used:
                    print(f"SKIPPED {ds.name}: the unigram-to-truth gap is {ds.gap:.3f} < "
                          f"{MIN_GAP} even at sharpness {ds.sharpness}", file=sys.stderr)
                    continue
                train, test = ds.write(work)
                for cfg in a.configs:
                    if label(cfg) not in once:
                        once[label(cfg)] = start_up(train, cfg, work)
                    for seed in a.seeds:
                        r = run(ds, train, test, cfg, seed, a.iters, work)
                        runs.append(r)
                        print(f"{ds.name} [{r['config']}] seed {seed}: gap {r['gap']:+.4f}, "
                              f"{r['states_1pct']} / {r['states_token']} states, "
                              f"{r['cpu']:.1f} CPU s", flush=True)
    if not runs:
        sys.exit("no data set reached the gap: nothing run")
    add_marginal(runs, once)
    res = {"commit": source,
           "command": harness.command(__name__),
           "iters": a.iters, "seeds": a.seeds, "configs": [label(c) for c in a.configs],
           "data": data, "runs": runs, "seconds": time.time() - t0}
    res["cells"], res["summary"] = summarise(res)
    res["locality"] = locality(res)
    write_results("hmm_synthetic", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
