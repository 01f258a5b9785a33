"""How wide must the rule search be to find the lowest description length it can reach?

    python -m benchmarks.phonology.search_width --problems Catalan --seeds 0 1 2 3 4
                                                [--settings 2:20 4:20 6:20 6:10] [--cache DIR]

The rule search (strgm/models/rule_search.py:learn_rules) keeps a beam of grammars and
scores, per beam entry and rule step, the best ``exact_checks`` screened candidates
exactly. For each problem of ../shared/data/phonology named by ``--problems`` and each
seed, the training words of ``holdout_split(paradigm, 0.1, seed)`` and their UR
candidates (the rule family's own, ``RuleRun.candidates``; ``--cache``: the pickled
runs of benchmarks/phonology/rule_calibration.py are reused) are searched once per
``beam:exact_checks`` setting. Reported: the description length reached, training
words right, the rules, and the search's CPU seconds. Only training words are used: a
lower DL is a better optimum of the same objective, not a held-out score. The default
is 20 exact checks and the beam of :func:`strgm.models.rule_search.default_beam`: 4 up
to 25 training words (Zoque), 2 up to 200 (Catalan's 101).

Writes benchmarks/results/NAME.{json,md} (``--out``, default phonology_search_width).
"""
import argparse
import glob
import os
import statistics
import sys
import time
import warnings

from benchmarks import harness
from benchmarks.phonology.rule_calibration import rule_run
from strgm.models.rule_search import learn_rules


def one(job) -> dict:
    path, seed, beam, checks, cache = job
    warnings.simplefilter("ignore")
    run = rule_run(path, seed, cache)
    g = run.grammar
    lab = {x: i + 1 for i, x in enumerate(g.symbols)}
    words = [(e.morphemes, tuple(lab[x] for x in e.segments)) for e in run.train]
    t = time.process_time()
    out = learn_rules(g.symbols, words, run.candidates, beam=beam, exact_checks=checks)
    cpu = time.process_time() - t
    row = {"problem": os.path.splitext(os.path.basename(path))[0], "seed": seed,
           "beam": beam, "exact_checks": checks, "dl": out.description_length,
           "train_right": out.train_correct, "train_words": len(words),
           "rules": [r.text for r in out.rules], "cpu_seconds": cpu}
    print(row["problem"], seed, f"{beam}:{checks}", row["dl"], f"{cpu:.1f} s",
          file=sys.stderr, flush=True)
    return row


def key(r) -> str:
    return f"{r['beam']}:{r['exact_checks']}"


def report(rows, settings) -> str:
    keys = [f"{b}:{c}" for b, c in settings]
    cell = {(r["problem"], r["seed"], key(r)): r for r in rows}
    table = []
    for p, s in sorted({(r["problem"], r["seed"]) for r in rows}):
        table.append([p, s] + [f"{cell[p, s, k]['dl']:g} ({cell[p, s, k]['train_right']}/"
                               f"{cell[p, s, k]['train_words']}), "
                               f"{cell[p, s, k]['cpu_seconds']:.0f} s" for k in keys])
    med = ["**median CPU s**", ""] + [
        f"{statistics.median(r['cpu_seconds'] for r in rows if key(r) == k):.0f}" for k in keys]
    lower = ["**seeds with a lower DL than the first setting**", ""] + [
        str(sum(r["dl"] < cell[r["problem"], r["seed"], keys[0]]["dl"]
                for r in rows if key(r) == k)) for k in keys]
    return harness.markdown(
        "Rule search width: description length reached on the training words",
        ["problem", "seed"] + [f"beam:checks {k}" for k in keys], table + [med, lower],
        run=harness.run_line(__name__),
        intro=["Cells: DL (training words right), search CPU seconds. Method: the "
               "script's docstring."])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=["Catalan"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--settings", nargs="+", default=["2:20", "4:20", "6:20", "6:10"],
                    help="beam:exact_checks pairs, the default's first")
    ap.add_argument("--cache", help="pickled rule runs (benchmarks/phonology/rule_calibration.py)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="phonology_search_width")
    a = ap.parse_args()
    settings = [tuple(int(x) for x in s.split(":")) for s in a.settings]
    paths = [p for p in sorted(glob.glob(str(harness.PHONOLOGY / "*.tsv")))
             if any(q in os.path.basename(p) for q in a.problems)]
    jobs = [(p, s, b, c, a.cache) for p in paths for s in a.seeds for b, c in settings]
    rows = harness.map_jobs(one, jobs, a.jobs)
    harness.publish(a.out, rows, report(rows, settings), settings=a.settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
