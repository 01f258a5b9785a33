"""How far the rule family's answer on the textbook problems can move, and what the training
words say about the held-out words it misses.

    python -m benchmarks.phonology.tie_limits --cache DIR [--seeds 0 1 2 3 4]

For every problem of ../shared/data/phonology and seed, the rule family is learned on the
training words of ``holdout_split(paradigm, 0.1, seed)`` (pickled in ``--cache`` and reused,
as benchmarks/phonology/rule_calibration.py does; the search is deterministic) and combined with the
edit phonology's p(true form) of ``benchmarks/results/phonology_textbook.json``
(strgm/workflows/family_choice.py:combine). Over the held-out words whose morphemes all
occur in a training word:

1. **Where the misses are.** A *tie miss*: the training words leave several forms F(w)
   open (strgm/models/rule_ambiguity.py) and the true form is one of them, not the one
   chosen. A *rules miss*: the true form is not in F(w). Exact match as chosen, the
   expectation of a uniform choice among F(w), and the bound of an oracle that breaks
   every tie right.
2. **An alternation prior** (tried, not adopted). Each form of F(w) is *faithful* when its
   open URs all occur, contiguously, in a training word of their morpheme (as the vote of
   strgm/models/rule_calibration.py), else *alternating*. The base measure of the
   Dirichlet–multinomial gives ρ to the alternating forms and 1 − ρ to the faithful ones,
   q(f) = (n(f) + α π_ρ(f)) / (N + α); (α, ρ) maximise the leave-one-out likelihood of the
   training words (equation (2) of that module with π_ρ for the uniform base and no vote)
   plus the library's log-normal hyperprior on α. The held-out undecided words are then
   ranked by q: right before (the library's ranking) and after.
3. **What a choice of ε can do for −log p.** The family mixture is p = (1 − ε) q(true) +
   ε p_edit(true); the mean −log p with one constant ε per problem, and with an oracle that
   takes per word the larger of q(true) and p_edit(true) — a bound no ε reaches.

Writes benchmarks/results/phonology_tie_limits.{json,md}.
"""
import argparse
import glob
import json
import math
import os
import sys
from itertools import islice, product

import numpy as np

from benchmarks import harness
from benchmarks.phonology.rule_calibration import rule_run
from strgm.models import rule_calibration as rc
from strgm.models.rule_ambiguity import MAX_COMBINATIONS, consistent_urs
from strgm.models.rule_analogy import analogy_support, pair_support
from strgm.models.rule_apply import apply_rules, pack, unpack
from strgm.workflows import family_choice

DATA = str(harness.PHONOLOGY)
TEXTBOOK = str(harness.ROOT / "benchmarks" / "results" / "phonology_textbook.json")
RHO = (0.02, 0.05) + tuple(i / 20 for i in range(2, 19)) + (0.95, 0.98)
EPSILONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7)


def base(flags, rho):
    """π_ρ over forms with these faithful flags (uniform when one class is empty)."""
    k, nf = len(flags), sum(flags)
    if nf in (0, k):
        return [1.0 / k] * k
    return [(1 - rho) / nf if f else rho / (k - nf) for f in flags]


def fit_alternation(cases):
    """(α, ρ) of step 2 on the cases [(pairs, observed, flags)]."""
    best = None
    for a in rc.GRID:
        for rho in RHO:
            s = rc.log_prior(a) + sum(
                math.log((p[o] + a * base(fl, rho)[o]) / (sum(p) + a)) for p, o, fl in cases)
            if best is None or s > best[0] + 1e-12:
                best = (s, a, rho)
    return best[1], best[2]


def labelled(run):
    g = run.grammar
    lab = {s: i + 1 for i, s in enumerate(g.symbols)}
    spelt = [e for e in run.train if all(m in g.urs for m in e.morphemes)
             and all(x in lab for x in e.segments)]
    words = [(e.morphemes, tuple(lab[x] for x in e.segments)) for e in spelt]
    return g, spelt, words, (lambda f: tuple(g.symbols[a - 1] for a in f))


def loo_alternation_cases(run):
    g, spelt, words, seg = labelled(run)
    train = [(e.morphemes, tuple(e.segments)) for e in run.train]
    cases = []
    for i, (fs, ok) in rc.loo_forms(words, g.urs, g.rules, len(g.symbols)).items():
        fs, ok = [seg(f) for f in fs], {seg(f) for f in ok}
        ms, surface = spelt[i].morphemes, tuple(spelt[i].segments)
        if len(fs) < 2 or surface not in fs:
            continue
        j = train.index((ms, surface))
        n = pair_support(train[:j] + train[j + 1:], ms, fs)
        cases.append(([n[f] for f in fs], fs.index(surface), [f in ok for f in fs]))
    return cases


def heldout_flags(run):
    """Held-out key → (F(w) as strings, faithful flags, analogy supports)."""
    g, _, words, seg = labelled(run)
    held = {e.key: e.morphemes for e in run.held_out if all(m in g.urs for m in e.morphemes)}
    n = len(g.symbols)
    sets = {m: consistent_urs(words, g.urs, g.rules, m, n)
            for m in sorted({m for ms in held.values() for m in ms})}
    train = [(e.morphemes, tuple(e.segments)) for e in run.train]
    out = {}
    for key, ms in held.items():
        opts = [[(u, len(sets[m]) == 1 or any(rc._inside(u, s) for mm, s in words if m in mm))
                 for u in sets[m]] for m in ms]
        combos = list(islice(product(*opts), MAX_COMBINATIONS))
        forms = unpack(apply_rules(g.rules, pack([[a for u, _ in c for a in u]
                                                  for c in combos], n), n), n)
        flags = {}
        for f, c in zip(forms, combos):
            flags[f] = flags.get(f, False) or all(t for _, t in c)
        fs = [seg(f) for f in flags]
        s = analogy_support(train, ms, fs)
        out[key] = (["".join(f) for f in fs], list(flags.values()), [s[f] for f in fs])
    return out


def analyse(name, seed, run, edit) -> dict:
    seen = {e.key for e in run.held_out
            if all(any(m in t.morphemes for t in run.train) for m in e.morphemes)}
    choice = family_choice.combine(run, edit)
    a, rho = fit_alternation(loo_alternation_cases(run))
    flags = heldout_flags(run)
    words = {}
    for k, w in choice.per_word.items():
        if k not in seen:
            continue
        forms = w["rules_forms"]
        q = dict(zip(forms, w["rules_weights"]))
        row = {"gold": w["gold"], "predicted": w["predicted"], "family": w["family"],
               "forms": len(forms), "q_gold": q.get(w["gold"], 0.0),
               "p_edit": float(edit.get(k, {}).get("p_gold") or 0.0),
               "neg_logp": w["neg_logp"]}
        tie = w["family"] == "rules" and len(forms) > 1 and w["gold"] in forms
        row["kind"] = ("right" if w["predicted"] == w["gold"] else
                       "tie miss" if tie else f"{w['family']} miss")
        row["uniform"] = 1 / len(forms) if tie else float(w["predicted"] == w["gold"])
        if tie and k in flags:
            fs, fl, sup = flags[k]
            pi = base(fl, rho)
            qa = [(s + a * p) / (sum(sup) + a) for s, p in zip(sup, pi)]
            best = max(range(len(fs)), key=lambda i: (qa[i], -i))
            row["alternation"] = {"right": fs[best] == w["gold"],
                                  "q_gold": qa[fs.index(w["gold"])] if w["gold"] in fs else 0.0}
        words[k] = row
    return {"problem": name, "seed": seed, "alpha": a, "rho": rho, "words": words}


def problem_table(runs) -> list:
    out = []
    for p in sorted({r["problem"] for r in runs}):
        ws = [w for r in runs if r["problem"] == p for w in r["words"].values()]
        n = len(ws)
        kinds = {k: sum(w["kind"] == k for w in ws) for k in ("right", "tie miss",
                                                               "rules miss", "edit miss")}
        alt = [w for w in ws if "alternation" in w]
        row = {"problem": p, "words": n, **kinds,
               "exact": kinds["right"] / n, "uniform": sum(w["uniform"] for w in ws) / n,
               "oracle_ties": (kinds["right"] + kinds["tie miss"]) / n,
               "ties": len(alt), "ties_right_before": sum(w["kind"] == "right" for w in alt),
               "ties_right_alternation": sum(w["alternation"]["right"] for w in alt),
               "rho": [r["rho"] for r in runs if r["problem"] == p],
               "neg_logp": float(np.mean([w["neg_logp"] for w in ws])),
               "oracle_component": float(np.mean([-math.log(max(w["q_gold"], w["p_edit"],
                                                                   1e-300)) for w in ws]))}
        for e in EPSILONS:
            row[f"eps_{e}"] = float(np.mean([-math.log((1 - e) * w["q_gold"] + e * w["p_edit"])
                                             for w in ws]))
        out.append(row)
    return out


def markdown(table, a, rev) -> str:
    mean = (lambda k: np.mean([r[k] for r in table]))
    lines = [
        "# The rule family's misses on the textbook problems: ties, rules, and bounds", "",
        f"What was run: `python -m benchmarks.phonology.tie_limits --seeds "
        f"{' '.join(map(str, a.seeds))} --cache DIR` at {rev}. Held-out words whose "
        "morphemes all occur in a training word; edit phonology's p(true form) from "
        "`phonology_textbook.json`. Method: the script's docstring.", "",
        "## 1. Where the misses are", "",
        "| problem | words | right | tie misses | rules misses | edit misses | exact | "
        "uniform tie-break (expected) | oracle tie-break |", "|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['problem']} | {r['words']} | {r['right']} | {r['tie miss']} | "
                     f"{r['rules miss']} | {r['edit miss']} | {r['exact']:.1%} | "
                     f"{r['uniform']:.1%} | {r['oracle_ties']:.1%} |")
    lines.append(f"| **mean over problems** | | | | | | {mean('exact'):.1%} | "
                 f"{mean('uniform'):.1%} | {mean('oracle_ties'):.1%} |")
    lines += ["", "## 2. An alternation prior fitted by leave-one-out (not adopted)", "",
              "Undecided held-out words whose true form is among F(w): right with the "
              "library's ranking and with the alternation prior's; ρ̂ per seed.", "",
              "| problem | undecided words | right, library | right, alternation prior | ρ̂ |",
              "|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['problem']} | {r['ties']} | {r['ties_right_before']} | "
                     f"{r['ties_right_alternation']} | "
                     f"{' '.join(f'{x:.2f}' for x in r['rho'])} |")
    tot = [sum(r[k] for r in table) for k in ("ties", "ties_right_before",
                                              "ties_right_alternation")]
    lines.append(f"| **all** | {tot[0]} | {tot[1]} | {tot[2]} | |")
    lines += ["", "## 3. Mean −log p(true form): the mixture's ε and a per-word oracle", "",
              "| problem | as chosen | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) +
              " | oracle max(q, p_edit) |", "|---|---|" + "---|" * len(EPSILONS) + "---|"]
    for r in table:
        lines.append(f"| {r['problem']} | {r['neg_logp']:.3f} | " +
                     " | ".join(f"{r[f'eps_{e}']:.3f}" for e in EPSILONS) +
                     f" | {r['oracle_component']:.3f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--cache", required=True, help="directory of pickled rule runs")
    ap.add_argument("--out", default="phonology_tie_limits")
    ap.add_argument("--textbook", default=TEXTBOOK,
                    help="the edit phonology's per-word p(true form) (phonology/textbook.py)")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    with open(a.textbook, encoding="utf-8") as fh:
        textbook = json.load(fh)["problems"]
    runs = []
    for path in sorted(glob.glob(os.path.join(DATA, "*.tsv"))):
        name = os.path.splitext(os.path.basename(path))[0]
        em = {r["seed"]: r["trained"]["per_word"] for r in textbook[name]}
        for seed in a.seeds:
            runs.append(analyse(name, seed, rule_run(path, seed, a.cache), em[seed]))
            print(name, seed, file=sys.stderr, flush=True)
    table = problem_table(runs)
    rev = harness.git_revision()
    harness.write_json(a.out, {"revision": rev, "seeds": a.seeds, "table": table, "runs": runs})
    harness.write_markdown(a.out, markdown(table, a, rev))


if __name__ == "__main__":
    main()
