"""Do local transitions help, and when? LT against the plain HDP-HMM on synthetic data
with and without a geometry, as the amount of training data shrinks.

The seed's claim (Dawson 2015) is that the local-transition prior helps where the
states lie on a low-dimensional manifold. A prior matters most where the data say
little, so the comparison is made at several training sizes: the first N of the 300
training sequences of each data set of benchmarks/hmm/synthetic.py (hmm.common:
``tuned_synthetic``, 8 states, 12 symbols, sequences of 30; kinds "local" and
"nonlocal", data seeds 0–2) and of data sets made the same way with 30 states and 40
symbols ("local-30", "nonlocal-30": fewer jumps per transition row), the same 100 test
sequences throughout. Each chain is what
``strgm hmm train --model lt|hdp`` runs (L = 50, η = 0.1, hyperparameters sampled, the
default start, ``--iters`` sweeps, burn-in half, at most 20 samples); its score is the
posterior predictive's held-out log-likelihood per symbol given the lengths, minus the
true model's. LT "wins" a data set when its median over chains is higher than HDP's by
more than TIE nats per symbol.

    python -m benchmarks.hmm.locality [--sizes 25 50 100 300] [--seeds 0 1 2] [--iters 200]
        [--kinds local nonlocal local-30 nonlocal-30] [--starts default truth]

Writes benchmarks/results/hmm_locality.{json,md,png} with the commit hash (``--replot``:
the markdown and the plot again from the JSON). CPU seconds are this process's, BLAS on
one thread.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks.hmm.common import add_replot_option, commit_label, replot, true_start, \
    tuned_synthetic, write_results  # noqa: E402
from strgm.errors import TruncationWarning  # noqa: E402
from strgm.hmm import Categorical, HMMSampler, HMMSettings  # noqa: E402
from strgm.hmm.data import Sequences  # noqa: E402
from strgm.hmm.training import default_schedule, posterior_of, run_chain  # noqa: E402

MODELS = ("lt", "hdp")
#: Kinds of data: label → (hmm.common kind, states, symbols). With 30 states each row of
#: the transition matrix sees few jumps at small sizes, where a prior matters most.
KINDS = {"local": ("local", 8, 12), "nonlocal": ("nonlocal", 8, 12),
         "local-30": ("local", 30, 40), "nonlocal-30": ("nonlocal", 30, 40)}
#: LT beats HDP on a data set when its median score is higher by more than this.
TIE = 0.005


def gap(ds, train: Sequences, model: str, start: str, seed: int, iters: int
        ) -> tuple[float, float]:
    """(held-out gap to the truth given the lengths, CPU seconds) of one chain from the
    default start or the true parameters (``start`` "truth")."""
    kernel = HMMSampler(train, HMMSettings(model=model, L=50), Categorical(ds.V, 0.1))
    burn, thin = default_schedule(iters)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        first = (true_start(kernel, ds, np.random.default_rng(seed)) if start == "truth"
                 else kernel.init(seed))
        state = run_chain(kernel, first, iters, burn, thin)
    cpu = time.process_time() - t0
    post = posterior_of(state, kernel, ())
    score = post.log_likelihoods_given_lengths(ds.test).sum() / ds.test.num_tokens
    return float(score - ds.truth), cpu


def cells(res) -> dict:
    """{(kind, size, start): {"per_data": {name: LT − HDP}, "wins": k, "losses": k',
    "n": n, "median": m, "gap": {model: median gap over data sets}}}."""
    out = {}
    for kind in res["kinds"]:
        for n in res["sizes"]:
            for start in res["starts"]:
                out[kind, n, start] = _cell(res, kind, n, start)
    return out


def _cell(res, kind, n, start) -> dict:
    runs = [r for r in res["runs"] if r["kind"] == kind and r["size"] == n
            and r["start"] == start]
    per, gaps = {}, {m: [] for m in MODELS}
    for d in (d for d in res["data"] if d["label"] == kind):
        med = {m: statistics.median(r["gap"] for r in runs
                                    if r["data"] == d["name"] and r["model"] == m)
               for m in MODELS}
        per[d["name"]] = med["lt"] - med["hdp"]
        for m in MODELS:
            gaps[m].append(med[m])
    return {"per_data": per, "n": len(per),
            "gap": {m: statistics.median(v) for m, v in gaps.items()},
            "wins": sum(v > TIE for v in per.values()),
            "losses": sum(v < -TIE for v in per.values()),
            "median": statistics.median(per.values())}


def markdown(res) -> str:
    c = cells(res)
    lines = [f"# Local transitions against the plain HDP-HMM by training size "
             f"(commit {res['commit']})", "",
             f"Command: `{res['command']}` ({res['seconds']:.0f} s wall, "
             f"{res['cpu']:.0f} CPU s). Chains per model, start and data set: "
             f"{len(res['seeds'])} (seeds {res['seeds']}), {res['iters']} sweeps. Score: "
             "held-out nats per symbol given the lengths minus the true model's (0 is the "
             "truth), median over chains. Start: the default, or the true parameters "
             "(hmm.common.true_start: what each model's posterior gives when mixing is "
             "not in the way).", "",
             "| kind | training sequences | start | LT gap (median over data sets) | "
             "HDP gap | LT − HDP per data set | LT better / worse by > "
             f"{TIE} |", "|---|---|---|---|---|---|---|"]
    for (kind, n, start), v in c.items():
        lines.append(f"| {kind} | {n} | {start} | {v['gap']['lt']:+.4f} | "
                     f"{v['gap']['hdp']:+.4f} | "
                     + ", ".join(f"{x:+.4f}" for x in v["per_data"].values())
                     + f" | {v['wins']} / {v['losses']} of {v['n']} |")
    lines += ["", "## Reading", ""]
    for kind in res["kinds"]:
        for start in res["starts"]:
            cs = {n: c[kind, n, start] for n in res["sizes"]}
            won = [n for n, v in cs.items() if v["wins"] > v["n"] / 2]
            lost = [n for n, v in cs.items() if v["losses"] > v["n"] / 2]
            lines.append(f"- {kind} data, {start} start: LT beats HDP on most data sets "
                         + (f"at {', '.join(map(str, won))} training sequences" if won
                            else "at no training size")
                         + "; HDP beats LT on most "
                         + (f"at {', '.join(map(str, lost))}" if lost else "at none")
                         + "; median LT − HDP by size: "
                         + ", ".join(f"{n}: {v['median']:+.4f}" for n, v in cs.items())
                         + ".")
    return "\n".join(lines) + "\n"


def plot(res, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    c = cells(res)
    fig, axes = plt.subplots(1, len(res["starts"]), figsize=(6 * len(res["starts"]), 4),
                             squeeze=False, sharey=True)
    for ax, start in zip(axes[0], res["starts"]):
        for i, kind in enumerate(res["kinds"]):
            for j, d in enumerate(x for x in res["data"] if x["label"] == kind):
                ax.plot(res["sizes"],
                        [c[kind, n, start]["per_data"][d["name"]] for n in res["sizes"]],
                        "o-", color=f"C{i}", alpha=0.6, label=kind if j == 0 else None)
        ax.axhline(0, color="k", lw=1, ls=":")
        ax.set_xscale("log")
        ax.set_xticks(res["sizes"], [str(n) for n in res["sizes"]])
        ax.minorticks_off()
        ax.set(xlabel="training sequences (of 30 symbols)",
               ylabel="LT − HDP, held-out nats/symbol",
               title=f"local transitions: gain over the HDP-HMM ({start} start)")
        ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 300])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="chain seeds")
    ap.add_argument("--data-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--starts", nargs="+", default=["default", "truth"],
                    choices=["default", "truth"])
    add_replot_option(ap)
    a = ap.parse_args()
    if a.replot:
        replot("hmm_locality", markdown, plot)
        return 0
    t0, cpu0, source = time.time(), time.process_time(), commit_label()
    data = []
    for label in a.kinds:
        for s in a.data_seeds:
            data.append(tuned_synthetic(KINDS[label][0], s, *KINDS[label][1:]))
            data[-1].label = label
    runs = []
    for ds in data:
        for n in a.sizes:
            train = Sequences.from_list([ds.train.sequence(i) for i in range(n)])
            for model, start, seed in itertools.product(MODELS, a.starts, a.seeds):
                g, cpu = gap(ds, train, model, start, seed, a.iters)
                runs.append({"data": ds.name, "kind": ds.label, "size": n, "model": model,
                             "start": start, "seed": seed, "gap": g, "cpu": cpu})
                print(f"{ds.name} n={n} {model} {start} seed {seed}: gap {g:+.4f} "
                      f"({cpu:.1f} s)", flush=True)
    res = {"commit": source, "command": harness.command(__name__), "sizes": a.sizes, "seeds": a.seeds, "kinds": a.kinds,
           "starts": a.starts,
           "iters": a.iters, "data": [{**d.summary(), "label": d.label} for d in data],
           "runs": runs,
           "seconds": time.time() - t0, "cpu": time.process_time() - cpu0}
    write_results("hmm_locality", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
