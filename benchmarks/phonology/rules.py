"""The rule family (ordered rewrite rules learned under a description-length prior) on
the shared textbook problems, next to the trained edit phonology and both baselines.

    python -m benchmarks.phonology.rules [--seeds 5] [--problems ...] [--tag T]
                                         [--merge TAG ...] [--scheduler local:2]

For every problem and seed the held-out words are those of
benchmarks/phonology/textbook.py (``holdout_split(paradigm, 0.1, seed)``, words
with a morpheme seen in no training word left out), and the other systems' predictions
are read from its results (``phonology_textbook.json``: the trained EM phonology, no
training, surface baseline), so the columns compare the same words.

Systems:
* **rules**: :func:`strgm.models.rule_phonology.train_rule_phonology` on the training
  words; each held-out word is its URs rewritten by the cascade.
* **chosen**: the family chosen per held-out word from the training words alone
  (:mod:`strgm.workflows.family_choice`): the rules' form unless the cascade gets at
  least half of the training words sharing a morpheme with it wrong, the trained edit
  phonology's otherwise; −log p of the true form under the mixture defined there.
Writes benchmarks/results/phonology_rules{tag}.{json,md,png}. ``--scheduler`` runs the
(problem, seed) runs as Dask tasks (:mod:`benchmarks.grid`); the tables are the same, the
``seconds`` of each run are then measured on its worker.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

from benchmarks import harness
from benchmarks.grid import add_scheduler_option, check_scheduler, run_grid
from strgm.datasets.paradigm import read_paradigm
from strgm.models.phonology import holdout_split
from strgm.models.rule_phonology import train_rule_phonology
from strgm.progress import StepProgress
from strgm.workflows.family_choice import combine

SYSTEMS = ("chosen", "rules", "cascade", "trained", "no_training", "surface")


def run_seed(para, seed: int, em_row: dict) -> dict:
    ho = holdout_split(para, 0.1, seed)
    t0 = time.perf_counter()
    run = train_rule_phonology(para, ho)
    secs = time.perf_counter() - t0
    g = run.grammar
    choice = combine(run, em_row["trained"]["per_word"])
    words = {k: {"gold": w["gold"], "rules": w["rules"], "cascade": w["cascade"],
                 "trained": w["edit"],
                 "family": w["family"], "related_words": w["related_words"],
                 "rules_wrong_on": w["rules_wrong_on"], "chosen": w["predicted"],
                 "chosen_neg_logp": w["neg_logp"], "rules_forms": w["rules_forms"],
                 "rules_weights": w["rules_weights"]}
             for k, w in choice.per_word.items()}
    n = max(1, len(words))
    out = {"seed": seed, "seconds": secs, "rules": [r.text for r in g.rules],
           "train_exact": g.train_exact, "description_length": g.description_length,
           "per_word": words,
           "rules_exact": sum(w["rules"] == w["gold"] for w in words.values()) / n,
           "cascade_exact": sum(w["cascade"] == w["gold"] for w in words.values()) / n,
           "chosen_exact": choice.exact_match if words else float("nan"),
           "chosen_neg_logp": choice.mean_neg_logp}
    for k in ("trained", "no_training", "surface"):
        out[k + "_exact"] = em_row[k]["exact_match"]
        out[k + "_neg_logp"] = em_row[k]["mean_neg_logp"]
    print(f"seed {seed}: rules {out['rules_exact']:.2f} chosen {out['chosen_exact']:.2f} "
          f"trained {out['trained_exact']:.2f} train fit {g.train_exact:.2f} "
          f"({secs:.0f}s) {out['rules']}", file=sys.stderr, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--tag", default="")
    ap.add_argument("--merge", nargs="+", metavar="TAG")
    ap.add_argument("--textbook",
                    default=str(harness.result_path("phonology_textbook.json")))
    add_scheduler_option(ap)
    a = ap.parse_args()
    spec = check_scheduler(a.scheduler)
    warnings.simplefilter("ignore")
    if a.merge:
        res, wall = {}, 0.0
        for tag in a.merge:
            d = harness.read_json(f"phonology_rules{tag}")
            res.update(d["problems"])
            wall += d["settings"]["wall_seconds"]
        return write(dict(sorted(res.items())), a, wall)
    with open(a.textbook, encoding="utf-8") as fh:
        textbook = json.load(fh)["problems"]
    t0 = time.perf_counter()
    res = {}
    paths = [p for p in sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
             if not a.problems or any(q in os.path.basename(p) for q in a.problems)]
    if spec is not None:
        return write(_on_cluster(spec, paths, textbook, a.seeds), a, time.perf_counter() - t0)
    bar = StepProgress(len(paths) * a.seeds, "phonology_rules runs")  # ETA on a terminal
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        para = read_paradigm(path)
        rows = {r["seed"]: r for r in textbook[name]}
        print(name, file=sys.stderr, flush=True)
        res[name] = []
        for s in range(a.seeds):
            if s in rows:
                res[name].append(run_seed(para, s, rows[s]))
                write(res, a, time.perf_counter() - t0)  # a stopped run keeps its seeds
            bar.step(f"{name} seed {s}", show=False)
    bar.close()


def _grid_run(item) -> dict:
    path, seed, row = item
    return run_seed(read_paradigm(path), seed, row)


def _on_cluster(spec, paths, textbook, seeds) -> dict:
    """Every (problem, seed) run as one task; results in the serial loop's order."""
    items = []
    for path in paths:
        rows = {r["seed"]: r for r in textbook[os.path.splitext(os.path.basename(path))[0]]}
        items += [(path, s, rows[s]) for s in range(seeds) if s in rows]
    res: dict = {}
    for (path, _, _), out in zip(items, run_grid(spec, _grid_run, items,
                                                  key="phonology-rules")):
        res.setdefault(os.path.splitext(os.path.basename(path))[0], []).append(out)
    return res


def write(res, a, elapsed) -> None:
    name = "phonology_rules" + a.tag
    harness.write_json(name, {"settings": {"seeds": a.seeds, "wall_seconds": elapsed},
                              "problems": res})
    means = {k: [] for k in SYSTEMS}
    lines = ["| problem | seeds | " + " | ".join(SYSTEMS) + " | chosen ≥ baselines? | "
             "chosen −log p | trained / none / surface −log p | training fit of rules |",
             "|" + "---|" * (len(SYSTEMS) + 6)]
    for p, rows in res.items():
        em = {k: float(np.mean([r[k + "_exact"] for r in rows])) for k in SYSTEMS}
        for k in SYSTEMS:
            means[k].append(em[k])
        nl = {k: float(np.mean([r[k + "_neg_logp"] for r in rows]))
              for k in ("chosen", "trained", "no_training", "surface")}
        ok = em["chosen"] >= max(em["no_training"], em["surface"])
        lines.append(f"| {p} | {len(rows)} | " + " | ".join(f"{100 * em[k]:.1f}%" for k in SYSTEMS)
                     + f" | {'yes' if ok else 'no'} | {nl['chosen']:.2f} | "
                     f"{nl['trained']:.2f} / {nl['no_training']:.2f} / {nl['surface']:.2f} | "
                     f"{100 * np.mean([r['train_exact'] for r in rows]):.0f}% |")
    lines.append("| **mean** | | " + " | ".join(f"**{100 * np.mean(v):.1f}%**"
                                               for v in means.values()) + " | | | | |")
    lines += ["", undecided_table(res)]
    md = ("# Textbook phonology: the rule family and the per-word family choice\n\n"
          "What was run: `" + harness.command(
              __name__, f"--seeds {a.seeds}" + (f" --scheduler {a.scheduler}"
                                                if getattr(a, "scheduler", None) else ""))
          + "`" + ("" if a.merge else f" at {harness.git_revision()}")
          + (f" (runs {', '.join(a.merge)} merged)" if a.merge else "")
          + f" ({elapsed / 60:.1f} min on a shared 2-core machine). Held-out words and "
          "the trained / no training / surface columns are those of "
          "`phonology_textbook.json` (same seeds, same words). Cells: held-out exact match, "
          "mean over seeds. *rules*: the rule family alone — the cascade's form, or, "
          "among the forms the training words leave open, the one their proportions "
          "favour (strgm/models/rule_analogy.py); *cascade*: the cascade's own URs "
          "rewritten, without that choice; *chosen*: per held-out "
          "word, the rules unless they get at least half of the training words sharing "
          "a morpheme with it wrong, else the trained edit phonology (the choice sees "
          "training words only). −log p: under the mixture of "
          "strgm/workflows/family_choice.py.\n\n" + "\n".join(lines) + "\n")
    harness.write_markdown(name, md)
    plot(res, means, name)


def undecided_table(res) -> str:
    """Held-out words the training words leave undecided under the learned rules
    (strgm/models/rule_ambiguity.py): their share, and what a perfect and a uniform
    choice among the allowed forms would score (runs made before the forms were
    recorded are skipped)."""
    out = ["Under the learned rules (runs with recorded forms): *undecided*: held-out words "
           "whose training words allow several forms; *perfect tie-break*: exact match if "
           "every undecided word took its true form whenever it is allowed; *uniform "
           "tie-break*: the expected exact match of a uniform choice among the allowed "
           "forms; *rules*: the rule family's choice (proportions of the training words); "
           "*cascade*: the cascade's own URs.", "",
           "| problem | words | undecided | rules | cascade | uniform tie-break | "
           "perfect tie-break |", "|---|---|---|---|---|---|---|"]
    tot = []
    for p, rows in res.items():
        ws = [w for r in rows for w in r["per_word"].values() if w.get("rules_forms")]
        if not ws:
            continue
        und = np.mean([len(w["rules_forms"]) > 1 for w in ws])
        own = np.mean([w["rules"] == w["gold"] for w in ws])
        cas = np.mean([w.get("cascade", w["rules"]) == w["gold"] for w in ws])
        uni = np.mean([(w["gold"] in w["rules_forms"]) / len(w["rules_forms"]) for w in ws])
        best = np.mean([w["gold"] in w["rules_forms"] for w in ws])
        tot.append((und, own, cas, uni, best))
        out.append(f"| {p} | {len(ws)} | {100 * und:.1f}% | {100 * own:.1f}% | {100 * cas:.1f}% | "
                   f"{100 * uni:.1f}% | {100 * best:.1f}% |")
    if tot:
        m = np.mean(tot, axis=0)
        out.append("| **mean over problems** | | " + " | ".join(f"{100 * x:.1f}%" for x in m)
                   + " |")
    return "\n".join(out) + "\n"


def plot(res, means, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    probs = list(res)
    x = np.arange(len(probs))
    fig, ax = plt.subplots(figsize=(10, 4))
    for i, k in enumerate(SYSTEMS):
        ax.bar(x + (i - 2.5) * 0.14, [100 * np.mean([r[k + "_exact"] for r in res[p]])
                                      for p in probs], 0.14, label=k)
    ax.axhline(80, color="k", lw=0.8, ls="--")
    ax.set_xticks(x)
    ax.set_xticklabels([p.split("_", 1)[-1] for p in probs], rotation=20)
    ax.set_ylabel("held-out exact match (%)")
    ax.legend(ncol=6, fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


if __name__ == "__main__":
    main()
