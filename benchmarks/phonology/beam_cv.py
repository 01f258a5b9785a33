"""Choose the rule search's beam by cross-validation *inside the training words*.

    python -m benchmarks.phonology.beam_cv [--beams 2 4] [--seeds 0 1 2 3 4]
                                           [--splits 3] [--jobs 2] [--out NAME]

For every shared textbook problem (../shared/data/phonology) and outer seed s, the words
the textbook benchmark holds out (``holdout_split(paradigm, 0.1, s)``) are removed
first and never looked at. On the rest, ``--splits`` inner splits each hold out 10% of
the words (``holdout_split`` of the outer training words, seeds 100, 101, …); the rule
family (``train_rule_phonology``: its UR candidates and rule search, on the inner
training words only) is learned once per beam of ``--beams``, and scored on the inner
held-out words it predicts (those whose morphemes all occur in inner training words):
exact match, the description length reached, and the search's CPU seconds. The same
splits and candidates serve every beam, so the beams are compared word for word.

A wider beam is worth its CPU if the mean over problems of inner exact match does not
drop and more problems gain than lose. Writes
benchmarks/results/NAME.{json,md} (default phonology_beam_cv).
"""
import argparse
import glob
import os
import statistics
import sys
import time
import warnings
from multiprocessing import Pool

from benchmarks import harness
from strgm.datasets.paradigm import read_paradigm
from strgm.models.em import split
from strgm.models.phonology import holdout_split
from strgm.models.rule_phonology import train_rule_phonology


def one(job) -> list:
    """Every beam on one (problem, outer seed, inner split)."""
    path, seed, j, beams = job
    warnings.simplefilter("ignore")
    para = read_paradigm(path)
    outer = set(holdout_split(para, 0.1, seed))
    inner = set(holdout_split(split(para, outer), 0.1, 100 + j))
    rows = []
    for beam in beams:
        t = time.process_time()
        run = train_rule_phonology(para, sorted(outer | inner), beam=beam)
        cpu = time.process_time() - t
        pred = run.predictions()
        words = [e for e in run.held_out if e.key in inner and pred[e.key] is not None]
        right = sum(pred[e.key] == "".join(e.segments) for e in words)
        rows.append({"problem": os.path.splitext(os.path.basename(path))[0],
                     "seed": seed, "split": j, "beam": beam, "right": right,
                     "words": len(words), "dl": run.grammar.description_length,
                     "train_words": run.grammar.train_words, "cpu_seconds": cpu})
        print(rows[-1]["problem"], seed, j, beam, f"{right}/{len(words)}",
              f"{cpu:.1f} s", file=sys.stderr, flush=True)
    return rows


def report(rows, beams) -> str:
    table, means = [], {b: [] for b in beams}
    gains = {b: [0, 0] for b in beams[1:]}
    for p in sorted({r["problem"] for r in rows}):
        mine = [r for r in rows if r["problem"] == p]
        cells = []
        for b in beams:
            rb = [r for r in mine if r["beam"] == b]
            right, words = sum(r["right"] for r in rb), sum(r["words"] for r in rb)
            acc = right / words if words else float("nan")
            means[b].append(acc)
            cells.append(f"{acc:.3f} ({right}/{words}), "
                         f"{statistics.median(r['cpu_seconds'] for r in rb):.1f} s")
        for b in beams[1:]:
            d = means[b][-1] - means[beams[0]][-1]
            gains[b][0] += d > 0
            gains[b][1] += d < 0
        table.append([p, str(mine[0]["train_words"])] + cells)
    table.append(["**mean over problems**", ""] + [
        f"{statistics.mean(means[b]):.3f}" for b in beams])
    table.append(["**problems gained / lost against beam %d**" % beams[0], ""] + [""] + [
        f"{gains[b][0]} / {gains[b][1]}" for b in beams[1:]])
    return harness.markdown(
        "Rule search beam: exact match on inner held-out words (cross-validation inside "
        "the training words)",
        ["problem", "inner training words"] + [f"beam {b}" for b in beams], table,
        run=harness.run_line(__name__),
        intro=["Cells: inner held-out exact match pooled over seeds and splits (words "
               "right / predicted), median CPU seconds of `train_rule_phonology`. "
               "Method: the script's docstring."])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beams", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--problems", nargs="*", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="phonology_beam_cv")
    a = ap.parse_args()
    paths = [p for p in sorted(glob.glob(str(harness.PHONOLOGY / "*.tsv")))
             if not a.problems or any(q in os.path.basename(p) for q in a.problems)]
    jobs = [(p, s, j, a.beams) for p in paths for s in a.seeds for j in range(a.splits)]
    with Pool(a.jobs) as pool:
        rows = [r for part in pool.map(one, jobs, chunksize=1) for r in part]
    harness.write_json(a.out, {"revision": harness.git_revision(), "beams": a.beams,
                               "rows": rows})
    text = report(rows, a.beams)
    harness.write_markdown(a.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
