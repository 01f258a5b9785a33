"""The rule search's beam and width-2 contexts, measured side by side on paradigms of
our own making (:mod:`strgm.datasets.rule_problems`).

    python -m benchmarks.phonology.rule_search [--trials 16]

Per trial t (seeded by t): 11 stems drawn from the generator's invented pool, and
2 held-out words. *nasal prefix*: the held-out words are prefixed forms; beam 1
(greedy) vs beam 2. *raising*: 18 stems, the held-out words are bare forms (their
plurals are seen); window 1 vs window 2 (beam 2 for both). Reported per setting: mean
held-out exact match, mean description length, mean seconds, and on how many trials
the setting's DL is lower / equal / higher than the other's.
Writes benchmarks/results/phonology_rule_search.{json,md,png}.
"""
import argparse
import random
import sys
import time
import warnings

import numpy as np

from benchmarks import harness
from strgm.datasets.rule_problems import (NASAL_PREFIX_STEMS, RAISING_STEMS,
                                          nasal_prefixed_paradigm, raised_devoiced_paradigm)
from strgm.models.rule_phonology import train_rule_phonology

STUDIES = {"nasal prefix": ("beam", (1, 2)), "raising": ("window", (1, 2))}


def trial(study: str, t: int) -> dict:
    rng = random.Random(t)
    if study == "nasal prefix":
        stems = rng.sample(NASAL_PREFIX_STEMS, 11)
        para = nasal_prefixed_paradigm(stems)
        held = [f"3 R{i:02d}" for i in rng.sample(range(len(stems)), 2)]
    else:
        stems = rng.sample(RAISING_STEMS, 18)
        para = raised_devoiced_paradigm(stems)
        held = [f"R{i:02d}" for i in rng.sample(range(len(stems)), 2)]
    knob, values = STUDIES[study]
    row = {"trial": t, "stems": stems, "held_out": held}
    for v in values:
        t0 = time.perf_counter()
        run = train_rule_phonology(para, held, **{knob: v})
        row[f"{knob}={v}"] = {"exact": run.exact_match(), "seconds": time.perf_counter() - t0,
                              "dl": run.grammar.description_length,
                              "rules": [r.text for r in run.grammar.rules]}
    print(study, t, {k: (v["exact"], v["dl"]) for k, v in row.items() if "=" in k},
          file=sys.stderr, flush=True)
    return row


def summary(rows: list, study: str) -> list:
    knob, (a, b) = STUDIES[study]
    ka, kb = f"{knob}={a}", f"{knob}={b}"
    out = []
    for k, other in ((ka, kb), (kb, ka)):
        dl = np.array([r[k]["dl"] for r in rows]) - np.array([r[other]["dl"] for r in rows])
        out.append({"study": study, "setting": k,
                    "exact": float(np.mean([r[k]["exact"] for r in rows])),
                    "dl": float(np.mean([r[k]["dl"] for r in rows])),
                    "seconds": float(np.median([r[k]["seconds"] for r in rows])),
                    "dl_lower_equal_higher": [int((dl < 0).sum()), int((dl == 0).sum()),
                                              int((dl > 0).sum())]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=16)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    res = {s: [trial(s, t) for t in range(a.trials)] for s in STUDIES}
    table = [row for s in STUDIES for row in summary(res[s], s)]
    wall = time.perf_counter() - t0
    harness.write_json("phonology_rule_search",
                       {"settings": {"trials": a.trials, "wall_seconds": wall},
                        "summary": table, "trials": res})
    md = harness.markdown(
        "The rule search: beam and width-2 contexts on generated paradigms",
        ["study", "setting", "held-out exact match", "mean DL", "median s",
         "DL lower / equal / higher than the other setting"],
        [[r["study"], r["setting"], f"{100 * r['exact']:.1f}%", f"{r['dl']:.1f}",
          f"{r['seconds']:.1f}", " / ".join(map(str, r["dl_lower_equal_higher"]))]
         for r in table],
        run=harness.run_line(__name__, f"--trials {a.trials}")[:-1]
            + f" ({wall / 60:.1f} min on a 2-core machine). Paradigms of "
            "`strgm/datasets/rule_problems.py` (invented stems, 2 held-out words per "
            "trial); every other setting at its default.")
    harness.write_markdown("phonology_rule_search", md)
    plot(table)
    print(md)


def plot(table) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 3.2))
    labels = [f"{r['study']}\n{r['setting']}" for r in table]
    ax.bar(range(len(table)), [100 * r["exact"] for r in table],
           color=["#999", "#36c"] * (len(table) // 2))
    ax.set_xticks(range(len(table)), labels, fontsize=8)
    ax.set_ylabel("held-out exact match (%)")
    ax.set_ylim(0, 100)
    fig.tight_layout()
    harness.save_figure(fig, "phonology_rule_search", dpi=120)


if __name__ == "__main__":
    main()
