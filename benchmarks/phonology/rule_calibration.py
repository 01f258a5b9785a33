"""Calibrated q over undecided forms (strgm/models/rule_calibration.py): its defaults chosen
on training words, and its effect on held-out words, before vs after.

    python -m benchmarks.phonology.rule_calibration [--seeds 0 1 ...] [--problems ...]
                                          [--cache DIR [--cached-only]] [--tag T]

For every problem and seed the rule family is learned on the training words of
``holdout_split(paradigm, 0.1, seed)`` (``--cache DIR``: the learned RuleRun is pickled
there and reused; the search is deterministic), and the edit phonology's per-word
p(true form) is read from ``benchmarks/results/phonology_textbook.json`` (the trained EM
phonology of the same words), so only the combination is recomputed.

1. Defaults, on training words only. Every (problem, seed) gives its leave-one-out cases
   (:func:`strgm.models.rule_calibration.loo_cases`). For each hyperprior (mode α₀ on
   the grid, scale σ) every case v is scored by ℓᵥ(α̂₋ᵥ), α̂₋ᵥ fitted on the other
   cases of its (problem, seed) under that hyperprior — a leave-one-out of the fit
   itself. The best (α₀, σ) is reported; the library's PRIOR_CONCENTRATION and
   PRIOR_SCALE are set to it by hand (the table says whether they agree).
2. Effect, on held-out words: exact match and mean −log p(true form) of the family
   choice (strgm/workflows/family_choice.py) with the uncalibrated q = s/S (before) and
   with the calibrated q (after), and the largest q printed for an undecided word.

Writes benchmarks/results/rule_calibration{tag}.{json,md}.
"""
import argparse
import glob
import json
import math
import os
import pickle
import sys
import time
import warnings

import numpy as np

from strgm.datasets.paradigm import read_paradigm
from strgm.models import rule_calibration as rc
from strgm.models.phonology import holdout_split
from strgm.models.rule_phonology import train_rule_phonology
from strgm.workflows import family_choice

from benchmarks import harness

DATA = str(harness.PHONOLOGY)
OUT = str(harness.RESULTS)
SCALES = (0.25, 0.5, 1.0, 2.0, 4.0, 1e9)
#: the library's hyperprior (mode, scale) as imported, before the per-seed selections
LIBRARY_PRIOR = (rc.PRIOR_CONCENTRATION, rc.PRIOR_SCALE)


def rule_run(path, seed, cache):
    name = os.path.splitext(os.path.basename(path))[0]
    f = os.path.join(cache, f"{name}_s{seed}.pkl") if cache else None
    if f and os.path.exists(f):
        with open(f, "rb") as fh:
            return pickle.load(fh)
    para = read_paradigm(path)
    run = train_rule_phonology(para, holdout_split(para, 0.1, seed))
    if f:
        with open(f, "wb") as fh:
            pickle.dump(run, fh)
    return run


class _Uncalibrated:
    """calibrated_forms as it was: q = s/S (RuleRun.ranked_forms)."""

    def __init__(self, run):
        self.alpha, self.cases, self.ranked = 0.0, [], run.ranked_forms()


def combine(run, edit_words, calibrated: bool):
    """family_choice.combine with the calibrated q, or with q = s/S (before)."""
    saved = family_choice.calibrated_forms
    if not calibrated:
        family_choice.calibrated_forms = _Uncalibrated
    try:
        return family_choice.combine(run, edit_words)
    finally:
        family_choice.calibrated_forms = saved


def summary(choice) -> dict:
    undecided = [w for w in choice.per_word.values() if len(w["rules_forms"]) > 1]
    return {"exact": choice.exact_match, "neg_logp": choice.mean_neg_logp,
            "undecided": len(undecided),
            "max_q_undecided": max((max(w["rules_weights"]) for w in undecided),
                                   default=float("nan")),
            "gold_in_forms": sum(w["gold"] in w["rules_forms"] for w in undecided),
            "per_word": {k: {"gold": w["gold"], "predicted": w["predicted"],
                             "family": w["family"], "neg_logp": w["neg_logp"],
                             "forms": w["rules_forms"], "q": w["rules_weights"]}
                         for k, w in choice.per_word.items()}}


def select_defaults(groups) -> dict:
    """Step 1 of the module docstring: ``groups`` [(problem, seed, cases)]."""
    grid = np.array(rc.GRID)
    mats = [np.array([[math.log(rc.loo_probability(p, o, w, a)) for a in grid]
                      for p, o, w in cases]) for _, _, cases in groups if cases]
    table = []
    for mode in grid:
        for scale in SCALES:
            prior = -0.5 * ((np.log(grid) - math.log(mode)) / scale) ** 2
            total = 0.0
            for m in mats:
                fit = m.sum(axis=0)[None, :] - m + prior[None, :]
                best = fit.max(axis=1, keepdims=True)
                # ties to the larger α, as fit_concentration
                pick = fit.shape[1] - 1 - np.argmax((fit == best)[:, ::-1], axis=1)
                total += m[np.arange(len(m)), pick].sum()
            table.append({"mode": float(mode), "scale": scale, "loo_loglik": float(total)})
    best = max(table, key=lambda r: (round(r["loo_loglik"], 9), -abs(math.log(r["mode"]))))
    return {"best": best, "cases": int(sum(len(m) for m in mats)), "table": table}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--cache")
    ap.add_argument("--cached-only", action="store_true",
                    help="only the (problem, seed) runs already in --cache")
    ap.add_argument("--tag", default="")
    ap.add_argument("--textbook", default=os.path.join(OUT, "phonology_textbook.json"))
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    with open(a.textbook, encoding="utf-8") as fh:
        textbook = json.load(fh)["problems"]
    paths = [p for p in sorted(glob.glob(os.path.join(DATA, "*.tsv")))
             if not a.problems or any(q in os.path.basename(p) for q in a.problems)]
    t0 = time.perf_counter()
    runs = {}
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        em = {r["seed"]: r for r in textbook[name]}
        for seed in a.seeds:
            cached = a.cache and os.path.exists(os.path.join(a.cache, f"{name}_s{seed}.pkl"))
            if seed in em and (cached or not a.cached_only):
                run = rule_run(path, seed, a.cache)
                runs[name, seed] = (run, em[seed]["trained"]["per_word"],
                                    rc.calibrated_forms(run).cases)
    rows, defaults = [], {}
    for seed in a.seeds:
        defaults[seed] = select_defaults([(p, s, c) for (p, s), (_, _, c) in runs.items()
                                          if s == seed])
        best = defaults[seed]["best"]
        rc.PRIOR_CONCENTRATION, rc.PRIOR_SCALE = best["mode"], best["scale"]
        for (name, s), (run, edit, _) in runs.items():
            if s == seed:
                rows.append(evaluate(name, seed, run, edit))
    res = {"settings": {"seeds": a.seeds, "problems": a.problems, "max_q": rc.MAX_Q,
                        "library_prior": [LIBRARY_PRIOR], "wall_seconds":
                        time.perf_counter() - t0},
           "defaults": {str(k): v for k, v in defaults.items()}, "runs": rows}
    harness.write_json(f"rule_calibration{a.tag}", res)
    write_md(res, a)


def evaluate(name, seed, run, edit) -> dict:
    """Before/after of one (problem, seed) with the hyperprior now in rule_calibration."""
    t1 = time.perf_counter()
    after = combine(run, edit, True)
    secs = time.perf_counter() - t1
    before = combine(run, edit, False)
    row = {"problem": name, "seed": seed, "alpha": after.concentration,
           "prior": [rc.PRIOR_CONCENTRATION, rc.PRIOR_SCALE],
           "combine_seconds": secs, "before": summary(before), "after": summary(after)}
    print(f"{name} seed {seed}: α̂ {after.concentration:.3g} exact "
          f"{row['before']['exact']:.3f} → {row['after']['exact']:.3f}  −log p "
          f"{row['before']['neg_logp']:.3f} → {row['after']['neg_logp']:.3f}",
          file=sys.stderr, flush=True)
    return row


def write_md(res, a) -> None:
    s = res["settings"]
    lines = [
        "# Calibrated q over undecided forms: defaults and effect", "",
        f"What was run: `python -m benchmarks.phonology.rule_calibration --seeds "
        f"{' '.join(map(str, a.seeds))}{' --cache DIR' if a.cache else ''}` "
        f"({s['wall_seconds'] / 60:.1f} min with the rule runs cached, shared 2-core "
        "machine). Edit phonology's p(true form): `phonology_textbook.json` (trained EM, "
        "the same held-out words).", "",
        "## Defaults, chosen on training words only", "",
        "Per seed, on that seed's training words of all problems: the hyperprior (mode α₀, "
        "scale σ of log α) whose fit, left out case by case, gives the highest "
        "leave-one-out log-likelihood (module docstring). That seed's held-out words are "
        "then scored with it. Library: PRIOR_CONCENTRATION = "
        f"{s['library_prior'][0][0]:g}, PRIOR_SCALE = {s['library_prior'][0][1]:g}.", "",
        "| seed | LOO cases | best α₀ | best σ | LOO log-lik | best α₀ per σ (log-lik) |",
        "|---|---|---|---|---|---|"]
    for seed, d in res["defaults"].items():
        b = d["best"]
        per = "; ".join(
            f"σ={sc:g}: {r['mode']:.3g} ({r['loo_loglik']:.2f})" for sc in SCALES
            for r in [max((r for r in d["table"] if r["scale"] == sc),
                          key=lambda r: r["loo_loglik"])])
        lines.append(f"| {seed} | {d['cases']} | {b['mode']:.4g} | {b['scale']:g} | "
                     f"{b['loo_loglik']:.2f} | {per} |")
    lines += ["", "## Held-out words, before (q = s/S) vs after (calibrated q)", "",
              "Family choice per held-out word (rules unless ε ≥ ½); −log p of the true form "
              "under the mixture (1 − ε)·q + ε·p_edit. *undecided*: held-out words with "
              "several forms (with the true form among them); *max q*: the largest q given "
              "to an undecided word's form.", "",
              "| problem | seed | α̂ | undecided | exact before | exact after | "
              "−log p before | −log p after | max q before | max q after |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        bf, af = r["before"], r["after"]
        lines.append(f"| {r['problem']} | {r['seed']} | {r['alpha']:.3g} | "
                     f"{bf['undecided']} ({bf['gold_in_forms']}) | {bf['exact']:.1%} | "
                     f"{af['exact']:.1%} | {bf['neg_logp']:.3f} | {af['neg_logp']:.3f} | "
                     f"{bf['max_q_undecided']:.3f} | {af['max_q_undecided']:.3f} |")
    probs = sorted({r["problem"] for r in res["runs"]})

    def mean(k, side):
        return np.mean([np.mean([r[side][k] for r in res["runs"] if r["problem"] == p])
                        for p in probs])
    lines += ["", "Per problem, mean over its seeds:", "",
              "| problem | seeds | undecided words | exact before | exact after | "
              "−log p before | −log p after |", "|---|---|---|---|---|---|---|"]
    for p in probs:
        rs = [r for r in res["runs"] if r["problem"] == p]
        lines.append(
            f"| {p} | {len(rs)} | {sum(r['before']['undecided'] for r in rs)} | "
            f"{np.mean([r['before']['exact'] for r in rs]):.1%} | "
            f"{np.mean([r['after']['exact'] for r in rs]):.1%} | "
            f"{np.mean([r['before']['neg_logp'] for r in rs]):.3f} | "
            f"{np.mean([r['after']['neg_logp'] for r in rs]):.3f} |")
    lines.append(f"| **mean over problems** | | | {mean('exact', 'before'):.1%} | "
                 f"{mean('exact', 'after'):.1%} | {mean('neg_logp', 'before'):.3f} | "
                 f"{mean('neg_logp', 'after'):.3f} |")
    harness.write_markdown(f"rule_calibration{a.tag}", "\n".join(lines))


if __name__ == "__main__":
    main()
