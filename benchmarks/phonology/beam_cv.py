"""Choose the rule search's beam, or its other settings, by cross-validation *inside the
training words*.

    python -m benchmarks.phonology.beam_cv [--beams 2 4 | --settings S ...]
                                           [--seeds 0 1 2 3 4] [--splits 3] [--jobs 2]
                                           [--out NAME]

For every shared textbook problem (../shared/data/phonology) and outer seed s, the words
the textbook benchmark holds out (``holdout_split(paradigm, 0.1, s)``) are removed
first and never looked at. On the rest, ``--splits`` inner splits each hold out 10% of
the words (``holdout_split`` of the outer training words, seeds 100, 101, …; from
100 + ``--split-offset`` for a replicate on other splits); the rule
family (``train_rule_phonology``: its UR candidates and rule search, on the inner
training words only) is learned once per beam of ``--beams`` (or per setting of
``--settings``: keyword arguments of ``train_rule_phonology`` such as
``word_cost=6,ur_cost=1``; the first is the reference), and scored on the inner
held-out words it predicts (those whose morphemes all occur in inner training words):
exact match, the description length reached, and the CPU seconds. The same splits and
candidates serve every setting, so the settings are compared word for word.

A setting that costs more CPU than the reference is worth it if the mean over problems
of inner exact match rises and more problems gain than lose. Writes
benchmarks/results/NAME.{json,md} (default phonology_beam_cv).
"""
import argparse
import glob
import os
import statistics
import sys
import time
import warnings

from benchmarks import harness
from strgm.datasets.paradigm import read_paradigm
from strgm.models.em import split
from strgm.models.phonology import holdout_split
from strgm.models.rule_phonology import train_rule_phonology


def parse_setting(text: str) -> dict:
    """``beam=4,word_cost=6`` -> {"beam": 4, "word_cost": 6.0}."""
    out = {}
    for part in text.split(","):
        k, v = part.split("=")
        out[k] = int(v) if k in ("beam", "max_rules", "window") else float(v)
    return out


def one(job) -> list:
    """Every setting on one (problem, outer seed, inner split)."""
    path, seed, j, settings = job
    warnings.simplefilter("ignore")
    para = read_paradigm(path)
    outer = set(holdout_split(para, 0.1, seed))
    inner = set(holdout_split(split(para, outer), 0.1, 100 + j))
    rows = []
    for setting in settings:
        t = time.process_time()
        run = train_rule_phonology(para, sorted(outer | inner), **parse_setting(setting))
        cpu = time.process_time() - t
        pred = run.predictions()
        words = [e for e in run.held_out if e.key in inner and pred[e.key] is not None]
        right = sum(pred[e.key] == "".join(e.segments) for e in words)
        rows.append({"problem": os.path.splitext(os.path.basename(path))[0],
                     "seed": seed, "split": j, "setting": setting, "right": right,
                     "words": len(words), "dl": run.grammar.description_length,
                     "train_words": run.grammar.train_words, "cpu_seconds": cpu})
        print(rows[-1]["problem"], seed, j, setting, f"{right}/{len(words)}",
              f"{cpu:.1f} s", file=sys.stderr, flush=True)
    return rows


def report(rows, settings) -> str:
    for r in rows:  # runs recorded before --settings: their beam
        r.setdefault("setting", f"beam={r.get('beam')}")
    table, means = [], {b: [] for b in settings}
    gains = {b: [0, 0] for b in settings[1:]}
    for p in sorted({r["problem"] for r in rows}):
        mine = [r for r in rows if r["problem"] == p]
        cells = []
        for b in settings:
            rb = [r for r in mine if r["setting"] == b]
            right, words = sum(r["right"] for r in rb), sum(r["words"] for r in rb)
            acc = right / words if words else float("nan")
            means[b].append(acc)
            cells.append(f"{acc:.3f} ({right}/{words}), "
                         f"{statistics.median(r['cpu_seconds'] for r in rb):.1f} s")
        for b in settings[1:]:
            d = means[b][-1] - means[settings[0]][-1]
            gains[b][0] += d > 0
            gains[b][1] += d < 0
        table.append([p, str(mine[0]["train_words"])] + cells)
    table.append(["**mean over problems**", ""] + [
        f"{statistics.mean(means[b]):.3f}" for b in settings])
    table.append([f"**problems gained / lost against {settings[0]}**", ""] + [""] + [
        f"{gains[b][0]} / {gains[b][1]}" for b in settings[1:]])
    return harness.markdown(
        "Rule search settings: exact match on inner held-out words (cross-validation "
        "inside the training words)",
        ["problem", "inner training words"] + list(settings), table,
        run=harness.run_line(__name__),
        intro=["Cells: inner held-out exact match pooled over seeds and splits (words "
               "right / predicted), median CPU seconds of `train_rule_phonology`. "
               "Method: the script's docstring."])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beams", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--settings", nargs="+",
                    help="train_rule_phonology keywords per setting, e.g. word_cost=6")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--split-offset", type=int, default=0,
                    help="inner splits K.. (a replicate on other splits)")
    ap.add_argument("--problems", nargs="*", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="phonology_beam_cv")
    a = ap.parse_args()
    paths = [p for p in sorted(glob.glob(str(harness.PHONOLOGY / "*.tsv")))
             if not a.problems or any(q in os.path.basename(p) for q in a.problems)]
    settings = a.settings or [f"beam={b}" for b in a.beams]
    for s in settings:
        parse_setting(s)  # a malformed setting fails before the work starts
    jobs = [(p, s, j, settings) for p in paths for s in a.seeds
            for j in range(a.split_offset, a.split_offset + a.splits)]
    rows = [r for part in harness.map_jobs(one, jobs, a.jobs) for r in part]
    harness.publish(a.out, rows, report(rows, settings), settings=settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
