"""Choose the phonology's defaults by cross-validation *inside the training words*.

    python -m benchmarks.phonology.cv_defaults [--splits 3] [--l2 0.1 0.3 1] [--sub 1 2]
                                               [--right-classes coarse] [--tag T]

For every shared textbook problem, the words the textbook benchmark holds out for seed 0
(``holdout_split(paradigm, 0.1, 0)``) are removed first and never looked at. On the rest,
``--splits`` inner splits each hold out 10% of the words (seeds 100, 101, …); for every
setting of the grid (L2 weight × maximum substitution distance × right-context classes ×
right window) the phonology is trained by EM on the inner training words (`strgm train`
defaults otherwise: pruned BP, 3 EM iterations) and scored on the inner held-out words
whose morphemes and segments all occur in inner training words. The chosen default is
the setting with the highest mean over problems of inner exact match (ties: the lower
mean −log p, each word's −log p capped at 30 nats). Writes
benchmarks/results/phonology_cv_defaults{tag}.{json,md}.
"""
import argparse
import itertools
import json
import os
import sys
import time
import warnings

import numpy as np

from benchmarks import harness
from strgm.datasets.paradigm import Paradigm, read_paradigm
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.phonology import holdout_split
from fst_factors.transducers.contextual_edit import ContextSpec
from strgm.workflows.training import train_paradigm

CAP = 30.0


def predictable(train: Paradigm, held: set) -> list:
    kept = [e for e in train.observed if e.key not in held]
    morphs = {m for e in kept for m in e.morphemes}
    segs = {s for e in kept for s in e.segments}
    return [k for k in sorted(held)
            if all(m in morphs for m in e_of(train, k).morphemes)
            and set(e_of(train, k).segments) <= segs]


def e_of(para: Paradigm, key: str):
    return next(e for e in para.entries if e.key == key)


def score_setting(train: Paradigm, splits: int, setting: dict) -> dict:
    exact, nll, n = 0.0, 0.0, 0
    for j in range(splits):
        held = set(holdout_split(train, 0.1, 100 + j))
        keys = predictable(train, held)
        if not keys:
            continue
        spec = ContextSpec(1, setting["right_window"], 1, True)
        classes = dict(PhonologyEditModel(train.alphabet()).classes,
                       right_context=setting["right_classes"],
                       max_sub_distance=setting["sub"],
                       tier_features=bool(setting.get("tier_features", False)))
        model = PhonologyEditModel(train.alphabet(), spec, classes).initial()
        run = train_paradigm(train, "pruned", sorted(held), model=model, em_iters=3,
                             l2=setting["l2"], infer_opts={"max_iters": 3})
        for k in keys:
            w = run.scores.per_word[k]
            exact += bool(w["exact"])
            nll += min(CAP, float(w["neg_logp"]))
            n += 1
    return {"n": n, "exact_match": exact / n if n else float("nan"),
            "mean_neg_logp": nll / n if n else float("nan")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--l2", type=float, nargs="+", default=[0.1, 0.3, 1.0])
    ap.add_argument("--sub", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--right-classes", nargs="+", default=["coarse"])
    ap.add_argument("--right-window", type=int, nargs="+", default=[1])
    ap.add_argument("--tier-features", type=int, nargs="+", default=[0], choices=[0, 1],
                    help="harmony templates over single vowel features off (0) / on (1)")
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--tag", default="")
    ap.add_argument("--merge", nargs="+", metavar="TAG",
                    help="join the runs tagged TAG... on the grid given by the options")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    paths = sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    if a.problems:
        paths = [p for p in paths if any(q in p for q in a.problems)]
    grid = [dict(l2=l2, sub=s, right_classes=rc, right_window=rw, tier_features=bool(tf))
            for l2, s, rc, rw, tf in itertools.product(a.l2, a.sub, a.right_classes,
                                                        a.right_window, a.tier_features)]
    if a.merge:
        return merge(a, grid)
    t0 = time.perf_counter()
    res = {}
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        para = read_paradigm(path)
        outer = set(holdout_split(para, 0.1, 0))
        train = Paradigm(tuple(e for e in para.entries if e.key not in outer), para.source)
        res[name] = []
        for setting in grid:
            t1 = time.perf_counter()
            sc = score_setting(train, a.splits, setting)
            res[name].append(dict(setting=setting, **sc,
                                  seconds=time.perf_counter() - t1))
            print(f"{name} {setting}: {sc} ({time.perf_counter() - t1:.0f}s)",
                  file=sys.stderr, flush=True)
        write(res, grid, a, time.perf_counter() - t0)


def merge(a, grid) -> None:
    """One table from runs split by problem: each problem's results for the settings of
    ``grid`` (a problem missing one of them is left out and said so)."""
    res, wall = {}, 0.0
    for tag in a.merge:
        saved = harness.read_json(f"phonology_cv_defaults{tag}")
        wall += saved["settings"]["wall_seconds"]
        for p, rows in saved["problems"].items():
            by = {json.dumps(dict({"tier_features": False}, **r["setting"]), sort_keys=True): r
                  for r in rows}
            want = [by.get(json.dumps(g, sort_keys=True)) for g in grid]
            if all(want):
                res[p] = want
            else:
                print(f"{p}: not every setting of the grid in {tag}; left out",
                      file=sys.stderr)
    write(dict(sorted(res.items())), grid, a, wall)


def write(res, grid, a, elapsed):
    means = []
    for i, s in enumerate(grid):
        rows = [r[i] for r in res.values() if len(r) > i]
        means.append((float(np.mean([r["exact_match"] for r in rows])),
                      float(np.mean([r["mean_neg_logp"] for r in rows])), s))
    best = max(range(len(grid)), key=lambda i: (means[i][0], -means[i][1]))
    harness.write_json(f"phonology_cv_defaults{a.tag}",
                       {"settings": {"splits": a.splits, "wall_seconds": elapsed},
                        "grid": grid, "chosen": grid[best], "problems": res})
    probs = list(res)
    head = "| setting | " + " | ".join(p.split("_", 1)[-1] for p in probs) + " | mean |"
    lines = [head, "|" + "---|" * (len(probs) + 2)]
    for i, s in enumerate(grid):
        cells = [f"{100 * res[p][i]['exact_match']:.0f}% / {res[p][i]['mean_neg_logp']:.2f}"
                 if len(res[p]) > i else "" for p in probs]
        label = (f"l2={s['l2']} sub≤{s['sub']} right={s['right_classes']}"
                 f"/{s['right_window']}" + (" tier features" if s["tier_features"] else ""))
        mark = " **(chosen)**" if i == best else ""
        lines.append(f"| {label}{mark} | " + " | ".join(cells)
                     + f" | {100 * means[i][0]:.1f}% / {means[i][1]:.2f} |")
    md = ("# Phonology defaults chosen by cross-validation inside the training words\n\n"
          "What was run: `" + harness.command(
              __name__, f"--splits {a.splits} --l2 {' '.join(map(str, a.l2))} --sub "
                        f"{' '.join(map(str, a.sub))} --tier-features "
                        f"{' '.join(map(str, a.tier_features))}")
          + "`" + ("" if a.merge else f" at {harness.git_revision()}")
          + (f" (runs {', '.join(a.merge)} merged)" if a.merge else "")
          + f" ({elapsed / 60:.1f} min of runs on a shared 2-core machine). Seed 0's held-out words of the textbook benchmark "
          "are removed first; each cell is the inner held-out exact match / mean −log p "
          f"(capped at {CAP:.0f} nats a word) over {a.splits} inner 10% splits of the "
          "remaining words.\n\n" + "\n".join(lines) + "\n")
    harness.write_markdown(f"phonology_cv_defaults{a.tag}", md)


if __name__ == "__main__":
    main()
