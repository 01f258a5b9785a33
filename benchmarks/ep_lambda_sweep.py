"""Figure-4 analogue: fixed beliefs, sweep λ; number of features vs accuracy (PEP §7.1).

Beliefs b_V come from pruned-20 BP on a synthetic paradigm (as the paper used the
baseline's messages); each morpheme belief is projected with PEP-prox (and PEP-grow) at
several λ; we report features (nonzero θ) and −log q(gold UR), medians over variables.

    python benchmarks/ep_lambda_sweep.py [--words 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from ep_common import build, plt_or_none, save
from strgm.datasets.synthetic import synthetic_paradigm
from strgm.features import q_moments
from strgm.inference import infer
from strgm.projection import grow, proximal_projection
from strgm.wfsa import score_strings

LAMBDAS = [0.0005, 0.002, 0.01, 0.05, 0.2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iters", type=int, default=60)
    a = ap.parse_args()
    d = synthetic_paradigm(a.words, seed=a.seed)
    model, _ = build(d.paradigm, d.alphabet, holdout=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bp = infer(model.graph, "pruned", max_iters=3)
    n = d.alphabet.size
    rows = []
    for lam in LAMBDAS:
        for proj in ("prox", "grow"):
            feats, xent, secs = [], [], []
            for m, ur in d.gold_urs.items():
                p = bp.belief(model.morpheme_vars[m]).fst
                t0 = time.perf_counter()
                th = proximal_projection(p, n, lam=lam, eta=0.5, iters=a.iters) \
                    if proj == "prox" else grow(p, n, lam=lam)
                secs.append(time.perf_counter() - t0)
                enc = th.features.dfa.encode(th.values)
                lp = score_strings(enc, [d.alphabet.encode(ur)])[0] - q_moments(th).log_z
                feats.append(th.nnz)
                xent.append(-lp)
            rows.append({"lambda": lam, "projection": proj,
                         "median_features": float(np.median(feats)),
                         "mean_features": float(np.mean(feats)),
                         "mean_gold_xent": float(np.mean(xent)),
                         "seconds_per_projection": float(np.median(secs))})
            print(rows[-1], flush=True)
    md = ["# λ sweep on fixed beliefs (Figure-4 analogue)", "",
          f"synthetic paradigm, {a.words} words, seed {a.seed}; beliefs from pruned-20 BP",
          "", "| projection | λ | mean features | mean −log q(gold UR) | s/projection |",
          "|---|---|---|---|---|"]
    md += [f"| {r['projection']} | {r['lambda']} | {r['mean_features']:.1f} | "
           f"{r['mean_gold_xent']:.3f} | {r['seconds_per_projection']:.3f} |" for r in rows]
    save("ep_lambda_sweep", {"args": vars(a), "rows": rows}, "\n".join(md) + "\n")
    plt = plt_or_none()
    if plt:
        fig, ax = plt.subplots(figsize=(5, 4))
        for proj in ("prox", "grow"):
            rr = [r for r in rows if r["projection"] == proj]
            ax.plot([r["mean_features"] for r in rr], [r["mean_gold_xent"] for r in rr],
                    "o-", label=f"PEP-{proj}")
        ax.set_xscale("log")
        ax.set_xlabel("features per belief")
        ax.set_ylabel("mean −log q(gold UR)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{__import__('ep_common').RESULTS}/ep_lambda_sweep.png", dpi=120)


if __name__ == "__main__":
    main()
