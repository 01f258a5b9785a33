"""Infinite HMMs on synthetic data with local transitions and known states: state
recovery and held-out fit of the LT, plain and sticky HDP-HMMs against the true model.

The true model has K = 8 states on a line; from state k the chain stays with
probability 0.5, moves to k ± 1 with 0.2 each (reflected at the ends) and jumps to a
uniformly chosen state with the remaining 0.1; each sequence ends after a symbol with
probability 0.05. State k emits symbol k with probability 0.7, k + 1 (mod V = 8) with
0.15 and the other six with 0.025 each, so neighbouring states share symbols and a state
is not identified by its symbol alone: even the true model's Viterbi path misses about a
quarter of the states (reported). 300 training sequences, 100 held out.

For each model and seed the chain runs ``--iters`` sweeps (L = 20); every ``--every``
sweeps it records the normalised Hamming distance between the sampled and the true
training states after the best one-to-one matching (Hungarian algorithm on the
co-occurrence counts; tokens of unmatched states count as errors), the many-to-one
distance (each sampled state mapped to the true state it overlaps most, so splitting a
true state costs nothing) and the held-out
log-likelihood per symbol of the current state's HMM, with cumulative CPU seconds.

    python benchmarks/hmm_synthetic.py [--iters 300] [--seeds 0 1 2]

Writes benchmarks/results/hmm_synthetic.{json,md,png} with the commit hash.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hmm_common import commit, write_results  # noqa: E402

from strgm.errors import TruncationWarning  # noqa: E402
from strgm.hmm import Categorical, HMMSampler, HMMSettings  # noqa: E402
from strgm.hmm.data import Sequences  # noqa: E402
from strgm.hmm.model import HMM, hmm_of_state  # noqa: E402
from strgm.hmm.training import run_chain  # noqa: E402

K, V, STOP = 8, 8, 0.05


def true_model() -> HMM:
    P = np.full((K, K), 0.1 / K)
    for k in range(K):
        P[k, k] += 0.5
        for j in (k - 1, k + 1):
            P[k, -j if j < 0 else (2 * (K - 1) - j if j >= K else j)] += 0.2
    theta = np.full((K, V), 0.15 / (V - 2))
    for k in range(K):
        theta[k, k % V], theta[k, (k + 1) % V] = 0.7, 0.15
    return HMM(np.full(K, 1.0 / K), P, np.full(K, STOP), {"theta": theta},
               Categorical(V, 1.0))


def simulate(h: HMM, n: int, rng) -> tuple[Sequences, np.ndarray]:
    seqs, zs = [], []
    for _ in range(n):
        z = [rng.choice(K, p=h.p0)]
        while rng.random() >= STOP and len(z) < 200:
            z.append(rng.choice(K, p=h.P[z[-1]]))
        z = np.array(z)
        zs.append(z)
        seqs.append(np.array([rng.choice(V, p=h.params["theta"][k]) for k in z]))
    return Sequences.from_list(seqs), np.concatenate(zs)


def hamming(z_true, z) -> float:
    """Normalised Hamming distance after the best one-to-one state matching."""
    c = np.zeros((K, int(z.max()) + 1))
    np.add.at(c, (z_true, z), 1)
    rows, cols = linear_sum_assignment(-c)
    return 1.0 - c[rows, cols].sum() / len(z)


def many_to_one(z_true, z) -> float:
    c = np.zeros((K, int(z.max()) + 1))
    np.add.at(c, (z_true, z), 1)
    return 1.0 - c.max(axis=0).sum() / len(z)


def run(model, train, z_true, test, iters, every, seed) -> dict:
    kernel = HMMSampler(train, HMMSettings(model=model, L=20), Categorical(V, 0.5))
    state = kernel.init(seed)
    curve, clock, cpu = [], [time.process_time()], [0.0]

    def on_sweep(st):
        cpu[0] += time.process_time() - clock[0]
        if st.iteration % every == 0 or st.iteration == 1:
            h = hmm_of_state(st, kernel.settings, kernel.emissions)
            curve.append({"sweep": st.iteration, "cpu": cpu[0], "hamming": hamming(z_true, st.z),
                          "many_to_one": many_to_one(z_true, st.z),
                          "heldout": float(h.log_likelihoods(test).sum() / test.num_tokens),
                          "states": st.trace[-1]["states"]})
        clock[0] = time.process_time()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        run_chain(kernel, state, iters, iters - 1, 1, on_sweep=on_sweep)
    return {"model": model, "seed": seed, "curve": curve}


def summarise(runs, truth_ll, truth_viterbi, tail: int) -> list:
    rows = []
    for m in dict.fromkeys(r["model"] for r in runs):
        mine = [r for r in runs if r["model"] == m]
        last = [r["curve"][-tail:] for r in mine]
        rows.append({"model": m, "seeds": len(mine),
                     "hamming": statistics.median(np.mean([p["hamming"] for p in c]) for c in last),
                     "many_to_one": statistics.median(np.mean([p["many_to_one"] for p in c])
                                                      for c in last),
                     "heldout": statistics.median(np.mean([p["heldout"] for p in c]) for c in last),
                     "states": statistics.median(c[-1]["states"] for c in last),
                     "cpu_per_sweep": statistics.median(r["curve"][-1]["cpu"] / r["curve"][-1]["sweep"]
                                                        for r in mine)})
    rows.append({"model": "true model (its Viterbi path)", "seeds": 0,
                 "hamming": truth_viterbi, "many_to_one": truth_viterbi, "heldout": truth_ll,
                 "states": K, "cpu_per_sweep": None})
    return rows


def plot(res, path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = {"lt": "C0", "hdp": "C1", "sticky": "C2"}
    for r in res["runs"]:
        c = r["curve"]
        kw = {"color": colours[r["model"]], "alpha": 0.8,
              "label": r["model"] if r["seed"] == res["seeds"][0] else None}
        axes[0].plot([p["sweep"] for p in c], [p["hamming"] for p in c], **kw)
        axes[1].plot([p["cpu"] for p in c], [p["heldout"] for p in c], **kw)
    axes[1].axhline(res["truth_heldout"], color="k", ls="--", lw=1, label="true model")
    axes[0].axhline(res["summary"][-1]["hamming"], color="k", ls="--", lw=1,
                    label="true model's Viterbi path")
    axes[0].set(xlabel="sweep", ylabel="normalised Hamming distance", title="state recovery")
    axes[1].set(xlabel="CPU seconds", ylabel="held-out nats per symbol", title="held-out fit")
    for ax in axes:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def markdown(res) -> str:
    lines = [f"# Infinite HMMs on synthetic local-transition data (commit {res['commit']})", "",
             f"K = {K} true states, V = {V} symbols, {res['n_train']} training sequences "
             f"({res['train_tokens']} symbols), {res['n_test']} held out. L = 20, "
             f"{res['iters']} sweeps, seeds {res['seeds']}. Medians over seeds of the means "
             f"over the last {res['tail']} recorded points.", "",
             "| model | Hamming, one-to-one | Hamming, many-to-one | held-out nats/symbol "
             "| states used | CPU s/sweep |", "|---|---|---|---|---|---|"]
    for r in res["summary"]:
        cps = "–" if r["cpu_per_sweep"] is None else f"{r['cpu_per_sweep']:.3f}"
        lines.append(f"| {r['model']} | {r['hamming']:.3f} | {r['many_to_one']:.3f} | "
                     f"{r['heldout']:.4f} | "
                     f"{r['states']} | {cps} |")
    lines += ["", f"Command: `{res['command']}` ({res['seconds']:.0f} s in all)."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["lt", "hdp", "sticky"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = ap.parse_args()
    t0 = time.time()
    rng = np.random.default_rng(1234)
    h = true_model()
    train, z_true = simulate(h, 300, rng)
    test, _ = simulate(h, 100, rng)
    truth = float(h.log_likelihoods(test).sum() / test.num_tokens)
    truth_viterbi = hamming(z_true, h.viterbi(train)[0])
    runs = [run(m, train, z_true, test, a.iters, a.every, s) for s in a.seeds for m in a.models]
    tail = max(1, len(runs[0]["curve"]) // 4)
    res = {"commit": commit(), "command": "python benchmarks/hmm_synthetic.py " + " ".join(sys.argv[1:]),
           "n_train": 300, "n_test": 100, "train_tokens": train.num_tokens,
           "iters": a.iters, "seeds": a.seeds, "tail": tail, "truth_heldout": truth,
           "runs": runs, "summary": summarise(runs, truth, truth_viterbi, tail), "seconds": time.time() - t0}
    write_results("hmm_synthetic", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
