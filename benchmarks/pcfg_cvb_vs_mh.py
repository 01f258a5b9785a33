"""CVB vs collapsed MH: wall time to reach MH's final held-out perplexity (±2%).

Wang & Blunsom (2013, §4.1) report CVB converging in <10 iterations (1.5 min) where the
Hastings sampler needs ~1000 (20 min) on Sesotho verbs.  Here: the cmudict morphology
corpus and substring grammar (strgm.grammars.morphology), α = 1e-5, a 10% held-out split,
both methods started uniform over parses.  MH's held-out perplexity is measured every
``--eval-every`` sweeps under E[θ | t]; its *final* perplexity is the median of the last 5
measurements.  CVB's time to target is the first sweep whose held-out perplexity is within
2% of MH's final value or below it.  Evaluation time is excluded for MH; CVB's time includes its own
per-sweep training-set evaluation.  Medians over ``--repeats`` seeds.

    python benchmarks/pcfg_cvb_vs_mh.py [--words 500] [--mh-iters 40] [--repeats 3]
Writes benchmarks/results/pcfg_cvb_vs_mh.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.estimators import cvb
from strgm.grammars.evaluation import heldout_perplexity
from strgm.grammars.morphology import build_corpus, substring_grammar, train_test_split
from strgm.grammars.samplers import CollapsedMH

OUT = Path(__file__).resolve().parent / "results"


def one(seed, a, words):
    tr, te = train_test_split(words, 0.1, seed=seed)
    train, test = [words[i] for i in tr], [words[i] for i in te]
    g = substring_grammar(words, seed=seed)
    cg = compile_grammar(g)
    theta0 = np.ones(len(g.rules))
    # MH
    k = CollapsedMH(g, train, alpha=a.alpha, compiled=cg)
    st = k.init(seed, theta0=theta0)
    mh_curve, el = [], 0.0
    for it in range(1, a.mh_iters + 1):
        t = time.perf_counter()
        st = k.sample(st)
        el += time.perf_counter() - t
        if it % a.eval_every == 0 or it == a.mh_iters:
            ppl = heldout_perplexity(cg, test, k.posterior_mean(st))["per_word"]
            mh_curve.append((it, el, ppl))
    mh_final = statistics.median(p for _, _, p in mh_curve[-5:])
    # CVB
    curve = []
    t0 = time.perf_counter()
    excl = [0.0]

    def cb(it, mean, row):
        t = time.perf_counter()
        ppl = heldout_perplexity(cg, test, mean)["per_word"]
        excl[0] += time.perf_counter() - t
        curve.append((it, time.perf_counter() - t0 - excl[0], ppl))
    cvb(g, train, alpha=a.alpha, iters=a.cvb_iters, seed=seed, theta0=theta0, callback=cb)
    # reached: within 2% of MH's final value or better (lower perplexity)
    hit = next(((it, s, p) for it, s, p in curve if p <= mh_final * 1.02), None)
    best = min(curve, key=lambda r: r[2])
    res = {"seed": seed, "mh_final_perplexity": mh_final, "mh_seconds": el,
           "mh_sweeps": a.mh_iters, "mh_acceptance": st.accepted / max(1, st.proposed),
           "mh_curve": mh_curve, "cvb_curve": curve,
           "cvb_hit": None if hit is None else {"iteration": hit[0], "seconds": hit[1],
                                                 "perplexity": hit[2]},
           "cvb_final_perplexity": curve[-1][2], "cvb_best_perplexity": best[2]}
    print(f"seed {seed}: MH final ppl {mh_final:.1f} after {el:.1f}s ({a.mh_iters} sweeps, "
          f"accept {res['mh_acceptance']:.3f}); CVB final {curve[-1][2]:.1f}; "
          f"CVB hit {res['cvb_hit']}", flush=True)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=500)
    ap.add_argument("--alpha", type=float, default=1e-5)
    ap.add_argument("--mh-iters", type=int, default=40)
    ap.add_argument("--eval-every", type=int, default=2)
    ap.add_argument("--cvb-iters", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    words, _ = build_corpus(a.words, seed=0)
    runs = [one(s, a, words) for s in range(a.repeats)]
    mh_s = statistics.median(r["mh_seconds"] for r in runs)
    hits = [r["cvb_hit"]["seconds"] for r in runs if r["cvb_hit"]]
    cvb_s = statistics.median(hits) if len(hits) == len(runs) else None
    summary = {"mh_median_seconds": mh_s, "cvb_median_seconds_to_target": cvb_s,
               "cvb_reached_target_in": f"{len(hits)}/{len(runs)} runs",
               "time_ratio_mh_over_cvb": (mh_s / cvb_s) if cvb_s else None,
               "mh_median_final_perplexity": statistics.median(r["mh_final_perplexity"] for r in runs),
               "cvb_median_final_perplexity": statistics.median(r["cvb_final_perplexity"] for r in runs)}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pcfg_cvb_vs_mh.json").write_text(json.dumps({"argv": vars(a), "summary": summary,
                                                         "runs": runs}, indent=1))
    md = ["# CVB vs collapsed MH: time to MH's final held-out perplexity", "",
          f"cmudict morphology corpus, {a.words} word types (10% held out), α = {a.alpha}, "
          f"MH {a.mh_iters} sweeps, CVB {a.cvb_iters} sweeps, {a.repeats} seeds (medians).", "",
          "| seed | MH final ppl | MH seconds | MH acceptance | CVB final ppl | CVB sweeps to ±2% | CVB seconds to ±2% |",
          "|---|---|---|---|---|---|---|"]
    for r in runs:
        h = r["cvb_hit"]
        md.append(f"| {r['seed']} | {r['mh_final_perplexity']:.1f} | {r['mh_seconds']:.1f} | "
                  f"{r['mh_acceptance']:.3f} | {r['cvb_final_perplexity']:.1f} | "
                  f"{h['iteration'] if h else 'not reached'} | {h['seconds'] if h else float('nan'):.1f} |")
    md += ["", "Summary: " + json.dumps(summary), "",
           f"Command: `python benchmarks/pcfg_cvb_vs_mh.py --words {a.words} --mh-iters "
           f"{a.mh_iters} --repeats {a.repeats}`"]
    (out / "pcfg_cvb_vs_mh.md").write_text("\n".join(md) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
