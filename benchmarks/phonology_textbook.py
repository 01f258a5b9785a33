"""Textbook phonology problems: trained phonology (EM) vs no-training vs surface baseline.

    python benchmarks/phonology_textbook.py [--seeds 5] [--em-iters 3] [--problems ...]

10% of words held out per seed; per problem: held-out exact match and mean −log p of the
true surface. Writes benchmarks/results/phonology_textbook.{json,md}.
"""
import argparse
import glob
import json
import os
import sys
import time
import warnings

import numpy as np

from strgm.datasets.paradigm import read_paradigm
from strgm.models.baselines import no_training, surface_baseline
from strgm.models.em import predict, score, train_phonology
from strgm.models.phonology import holdout_split

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "phonology")
OUT = os.path.join(os.path.dirname(__file__), "results")


def run(path, seeds, em_iters):
    para = read_paradigm(path)
    rows = []
    for seed in seeds:
        ho = set(holdout_split(para, 0.1, seed))
        words = [e for e in para.entries if e.key in ho]
        gold = {e.key: e.surface for e in words}
        t0 = time.perf_counter()
        r = train_phonology(para, em_iters=em_iters, heldout=ho, infer_opts={"max_iters": 3})
        alph = r.model.alphabet
        tr = score(predict(r.model.fst(), alph, r.result, r.graph_model, words), gold, alph)
        secs = time.perf_counter() - t0
        nt = score(no_training(para, ho, words), gold, alph)
        sb = score(surface_baseline(para, ho, words), gold, alph)
        rows.append({"seed": seed, "trained": tr, "no_training": nt, "surface": sb,
                     "seconds": secs, "trace": r.trace})
        print(f"{os.path.basename(path)} seed {seed}: trained {tr['exact_match']:.2f} "
              f"none {nt['exact_match']:.2f} surface {sb['exact_match']:.2f} ({secs:.0f}s)",
              file=sys.stderr, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--em-iters", type=int, default=3)
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    files = sorted(glob.glob(os.path.join(DATA, "*.tsv")))
    if a.problems:
        files = [f for f in files if any(p in f for p in a.problems)]
    res = {}
    for f in files:
        res[os.path.basename(f)[:-4]] = run(f, range(a.seeds), a.em_iters)
    os.makedirs(OUT, exist_ok=True)
    name = "phonology_textbook" + a.tag
    with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as fh:
        json.dump(res, fh, ensure_ascii=False, indent=1, default=float)
    lines = ["| problem | trained EM | no training | surface baseline |",
             "|---|---|---|---|"]
    means = {k: [] for k in ("trained", "no_training", "surface")}
    for p, rows in res.items():
        cells = []
        for k in means:
            em = np.mean([r[k]["exact_match"] for r in rows])
            nl = np.mean([r[k]["mean_neg_logp"] for r in rows])
            means[k].append(em)
            cells.append(f"{100 * em:.1f}% / {nl:.2f}")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | " + " | ".join(f"{100 * np.mean(v):.1f}%" for v in means.values())
                 + " |")
    md = (f"# Textbook phonology: held-out exact match / mean −log p (nats)\n\n"
          f"10% held out × {a.seeds} seeds, EM iterations {a.em_iters}, pruned BP E-step.\n\n"
          + "\n".join(lines) + "\n")
    with open(os.path.join(OUT, name + ".md"), "w", encoding="utf-8") as fh:
        fh.write(md)
    print(md)


if __name__ == "__main__":
    main()
