"""Textbook phonology problems: trained phonology (EM) vs no-training vs surface baseline.

    python -m benchmarks.phonology.textbook [--seeds 5] [--em-iters 1] [--problems ...]
                                            [--scheduler local:2]

10% of words held out per seed; per problem: held-out exact match and mean −log p of the
true surface. Writes benchmarks/results/phonology_textbook.{json,md}. ``--scheduler``
runs every (problem, seed) as one Dask task (:mod:`benchmarks.grid`) and writes the tables once at
the end; the numbers are those of the serial run.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from benchmarks import harness
from benchmarks.grid import add_scheduler_option, check_scheduler, run_grid
from strgm.datasets.paradigm import read_paradigm
from strgm.models.baselines import no_training, surface_baseline
from strgm.models.prediction import predict, score
from strgm.models.phonology import holdout_split
from strgm.models.tier_choice import choose_transparent
from strgm.models.rule_phonology import train_rule_phonology
from strgm.workflows.family_choice import combine
from strgm.workflows.training import train_paradigm

#: Inference iterations per E-step: ``strgm train``'s default (3 before the messages to
#: the words' forms were sent after the last iteration; saved runs record theirs).
MAX_ITERS = 2


def initial_model(para, right_window=1, right_classes="coarse", sub=None):
    """The default copy-biased phonology, or one with a wider/finer right context or
    another maximum substitution distance ``sub``."""
    from fst_factors.transducers.contextual_edit import ContextSpec
    from strgm.models.edit_model import PhonologyEditModel

    spec = ContextSpec(1, right_window, 1, True)
    m = PhonologyEditModel.copy_biased(para.alphabet(), spec, right_classes)
    if sub is not None:
        m = PhonologyEditModel(m.alphabet, spec, dict(m.classes, max_sub_distance=sub)
                               ).initial()
    return m


def run(path, seeds, em_iters, right_window=1, right_classes="coarse", sub=None, l2=1.0,
        transparent="auto", reuse=None):
    """Rows of (problem, seed) results. ``reuse``: rows of an earlier run with the same
    settings but no tier choice; a seed whose learned tier skips no vowel trains exactly
    that earlier model (EM is deterministic), so its row is reused, marked ``reused``."""
    para = read_paradigm(path)
    rows = []
    for seed in seeds:
        ho = set(holdout_split(para, 0.1, seed))
        start = initial_model(para, right_window, right_classes, sub)
        choice = []
        if transparent == "auto":
            sc = choose_transparent(para, ho, start, seed=seed, l2=l2,
                                    infer_opts={"max_iters": MAX_ITERS})
            start, choice = sc.model, sc.scores
            choice = [[list(c), o] for c, o in choice]
            old = [r for r in (reuse or []) if r["seed"] == seed]
            if not start.classes["transparent"] and old:
                rows.append(dict(old[0], transparent=[], reused=True, tier_choice=choice))
                print(f"{os.path.basename(path)} seed {seed}: the tier skips no vowel; the "
                      "earlier run's row reused", file=sys.stderr, flush=True)
                continue
        rows.append(dict(_run_seed(para, path, seed, ho, em_iters, l2, start,
                                   None if transparent == "auto" else transparent),
                         tier_choice=choice))
    return rows


def _run_seed(para, path, seed, ho, em_iters, l2, start, transparent):
    """One (problem, seed): the trained model from ``start`` and both baselines."""
    seen = {m for e in para.observed if e.key not in ho for m in e.morphemes}
    # a held-out word with a morpheme seen in no training word cannot be predicted by
    # any system (e.g. both forms of a two-form root held out): not scored, counted
    unpredictable = sorted(e.key for e in para.entries
                           if e.key in ho and not set(e.morphemes) <= seen)
    words = [e for e in para.entries if e.key in ho and e.key not in unpredictable]
    gold = {e.key: e.surface for e in words}
    t0 = time.perf_counter()
    r = train_paradigm(para, "pruned", sorted(ho), em_iters=em_iters, l2=l2,
                       infer_opts={"max_iters": MAX_ITERS}, transparent=transparent,
                       model=start).train
    alph = r.model.alphabet
    tr = score(predict(r.model.fst(), alph, r.result, r.graph_model, words), gold, alph)
    secs = time.perf_counter() - t0
    nt = score(no_training(para, ho, words), gold, alph)
    sb = score(surface_baseline(para, ho, words), gold, alph)
    print(f"{os.path.basename(path)} seed {seed}: trained {tr['exact_match']:.2f} "
          f"none {nt['exact_match']:.2f} surface {sb['exact_match']:.2f} ({secs:.0f}s)",
          file=sys.stderr, flush=True)
    urs = {lab: [[u, p] for u, p in r.result.belief(v).kbest(3)]
           for lab, v in r.graph_model.morpheme_vars.items()}
    chosen = combine(train_rule_phonology(para, sorted(ho)), tr["per_word"])
    return {"seed": seed, "unpredictable": unpredictable, "trained": tr,
            "no_training": nt, "surface": sb, "seconds": secs, "trace": r.trace,
            "transparent": list(r.model.classes.get("transparent", ())),
            "underlying_forms": urs,
            "chosen": {"exact_match": chosen.exact_match,
                       "mean_neg_logp": chosen.mean_neg_logp,
                       "rules": [x.text for x in chosen.rules.grammar.rules],
                       "per_word": chosen.per_word}}


NOTES = {
    "Roca_25_Zoque": "nasal place assimilation needs the *place* of the following segment; "
                     "the default right-context scheme (coarse) only sees major class "
                     "(3+ʤoʔnɡoja → nʤ… instead of ɲʤ…); the 3rd-person prefix is lost "
                     "before s (sʌk, predicted nzʌk); 24 words, 2 held out per seed",
    "Halle_85_Turkish": "31 words, 3 held out: one miss costs 33%. Seed 0 miss: rounding "
                        "harmony of a high suffix vowel after ø (køjyn → køjin); the vowel "
                        "tier (back, round) sees it but 28 training words give little evidence",
    "Odden_2.1_Hungarian": "held-out root R06 (lakaːʃ) appears in training only before "
                           "voiced/voiceless suffix consonants (ʒ/ʃ by assimilation), so its UR "
                           "/ʃ/ vs /ʒ/ is decided only by the held-out forms; kaːd+toːl "
                           "(regressive devoicing) missed",
    "Odden_2.2_Kikuria": "32 words, 3 held out: one miss costs 33%. Misses: the root vowel "
                         "lowers in the applicative (siika / seekera, suka / sokera), triggered "
                         "by the mid suffix vowel two or three segments to the right (s-ii-k+e…: the first i "
                         "is three away); the default one-segment right window with coarse "
                         "classes (V, not mid V) cannot see it, and all systems tie. A "
                         "two-segment window (--right-window 2, seed 0 only: 33%, "
                         "p(seekera) 0.08 vs 0.11) still misses the first i",
    "Odden_3.2_Polish": "44 words, 4 held out. Misses are words whose alternation is shown "
                        "only by the held-out form itself: trut / trudi (from [trut] alone "
                        "/d/ vs /t/ is undecidable under final devoicing), vuw / vowi (o→u "
                        "raising seen in no training word), and nos / nosi where the trained "
                        "model, having learned final devoicing, picks UR /noz/ (equally "
                        "consistent with [nos]) and predicts nozi, while copying is right",
    "Odden_1.12_English": "ə-epenthesis between sibilants (bʌz+z → bʌzəz) missed: an insertion "
                          "conditioned on both neighbours' sibilance, few training examples",
    "Odden_3.5_Catalan": "several interacting processes (final devoicing, spirantisation "
                         "d→ð, word-final cluster simplification alt→al vs kur, final-consonant "
                         "deletion); seed-0 misses over/under-apply deletion (al → alt, kur → ku) "
                         "and one root whose masculine and feminine are identical (əɡzaktə) "
                         "gets p ≈ 0 in all systems",
    "Odden_68_69_Russian": "40 words, 4 held out; misses are final-devoicing roots whose voicing "
                           "is shown only by the held-out form (soldat → soldada: /t/ vs /d/ "
                           "undecidable from [soldat])",
}


def write(res, a, elapsed):
    name = "phonology_textbook" + a.tag
    harness.write_json(name, {"settings": {"seeds": a.seeds, "em_iters": a.em_iters,
                                           "holdout": 0.1, "method": "pruned",
                                           "max_iters": getattr(a, "max_iters", MAX_ITERS),
                                           "right_window": getattr(a, "right_window", 1),
                                           "right_classes": getattr(a, "right_classes",
                                                                    "coarse"),
                                           "l2": a.l2, "sub": a.sub,
                                           "transparent": a.transparent,
                                           "reuse": getattr(a, "reuse", None),
                                           "wall_seconds": elapsed,
                                           "revision": getattr(a, "revision", None)},
                              "problems": res})
    # runs made before the family choice existed have no "chosen" system
    has_chosen = all("chosen" in r for rows in res.values() for r in rows)
    lines = ["| problem | held-out words/seed | "
             + ("chosen family (`strgm train` default) | " if has_chosen else "")
             + "trained EM | no training | surface baseline "
             "| trained best? | tier skips | note |",
             "|---|---|---|---|---|---|---|---|" + ("---|" if has_chosen else "")]
    means = {k: [] for k in (("chosen",) if has_chosen else ())
             + ("trained", "no_training", "surface")}
    for p, rows in res.items():
        cells, ems = [], {}
        for k in means:
            em = np.mean([r[k]["exact_match"] for r in rows])
            nl = np.mean([r[k]["mean_neg_logp"] for r in rows])
            means[k].append(em)
            ems[k] = em
            cells.append(f"{100 * em:.1f}% / {nl:.2f}")
        best = ems["trained"] > max(ems["no_training"], ems["surface"])
        tie = ems["trained"] >= max(ems["no_training"], ems["surface"])
        mark = "yes" if best else ("tie" if tie else "no")
        nho = rows[0]["trained"]["n"]
        skips = sorted({" ".join(r.get("transparent", [])) or "none" for r in rows})
        lines.append(f"| {p} | {nho} | " + " | ".join(cells) + f" | {mark} | "
                     + ", ".join(skips) + " | "
                     + (NOTES.get(p, "") if not best or ems["trained"] < 0.8 else "") + " |")
    lines.append("| **mean** | | " + " | ".join(f"{100 * np.mean(v):.1f}%"
                                               for v in means.values()) + " | | | |")
    if has_chosen:
        lines.append("\n\"chosen family\": per held-out word, the rule family unless its "
                     "cascade gets at least half of the training words sharing a morpheme "
                     "with it wrong, else the trained EM phonology "
                     "(strgm/workflows/family_choice.py). "
                     "\"trained best?\" compares the trained EM phonology alone.")
    reused = sum(bool(r.get("reused")) for rows in res.values() for r in rows)
    done = {p: len(r) for p, r in res.items()}
    args = (f"--seeds {a.seeds} --em-iters {a.em_iters} --l2 {a.l2}"
            + (f" --sub {a.sub}" if a.sub is not None else "")
            + (f" --right-classes {a.right_classes}" if a.right_classes != "coarse" else "")
            + (f" --right-window {a.right_window}" if a.right_window != 1 else "")
            + (" --transparent none" if a.transparent == "none" else ""))
    md = (f"# Textbook phonology: held-out exact match / mean −log p (nats)\n\n"
          f"What was run: `{harness.command(__name__, args)}`"
          + (f" at {a.revision}" if getattr(a, "revision", None) else "")
          + " (or a longer run cut at the budget and rebuilt with "
          f"`--from-json`, which keeps the seeds completed for every problem) — 10% of observed words held out per seed "
          f"(seeds {sorted(set(r['seed'] for rows in res.values() for r in rows))}), "
          f"pruned-BP E-step ({getattr(a, 'max_iters', MAX_ITERS)} BP iterations), {a.em_iters} EM iterations, L2 = {a.l2}, "
          f"context spec 1 left input, {a.right_window} right input "
          f"({a.right_classes} classes), 1 left output, vowel tier "
          + ("with transparent vowels learned (`strgm train` defaults)"
             if a.transparent == "auto" else "(every vowel sets it)")
          + (f", substitutions up to {a.sub} features" if a.sub is not None else "")
          + ". "
          f"Seeds completed per problem: {done}. Wall time {elapsed / 60:.1f} min on a "
          f"shared 2-core machine."
          + (f" {reused} of {sum(len(r) for r in res.values())} (problem, seed) rows are "
             f"those of the run `--reuse {a.reuse}`: there the learned tier skips no "
             "vowel, so the trained model is that run's (EM is deterministic; three rows "
             "re-run to check agreed to 1e-8), and its time is that run's."
             if reused else "")
          + "\n\n"
          "Cells: mean over seeds of held-out exact match / mean −log p(true form) (inf if "
          "some true form got probability 0, e.g. an unseen segment or morpheme). "
          "\"trained best?\": strictly higher exact match than both baselines. Notes explain "
          "problems below the 80% target or not won by the trained model (seed-0 misses "
          "inspected in the JSON `per_word`).\n\n"
          + "\n".join(lines) + "\n")
    harness.write_markdown(name, md)
    plt = harness.pyplot()
    if plt is None:
        return md
    probs = list(res)
    x = np.arange(len(probs))
    fig, ax = plt.subplots(figsize=(10, 4))
    for i, k in enumerate(means):
        ax.bar(x + (i - 1) * 0.27, [100 * v for v in means[k]], 0.27, label=k)
    ax.set_xticks(x)
    ax.set_xticklabels(probs, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("held-out exact match (%)")
    ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=100)
    return md


def _settings_of(saved: dict, a) -> None:
    """The model settings of a saved run onto ``a`` (runs saved before they were
    recorded keep the defaults, which were theirs)."""
    for k in ("l2", "sub", "transparent", "right_window", "right_classes", "reuse",
              "max_iters"):
        if k in saved["settings"]:
            setattr(a, k, saved["settings"][k])
    if "transparent" not in saved["settings"]:
        a.transparent = "none"  # before the tier was learned, every vowel set it


def _grid_run(item, opts) -> list:
    """One (problem, seed) of the grid, as the serial loop runs it."""
    f, seed = item
    em_iters, window, classes, sub, l2, transparent, old = opts
    return run(f, [seed], em_iters, window, classes, sub, l2, transparent,
               old.get(os.path.basename(f)[:-4]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="run seeds first-seed .. seeds-1 (split a long run across processes)")
    ap.add_argument("--merge", nargs="+", metavar="TAG",
                    help="merge the JSONs of runs tagged TAG... (in order) into --tag's table")
    ap.add_argument("--em-iters", type=int, default=1)  # strgm train's default
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--tag", default="")
    ap.add_argument("--right-window", type=int, default=1, choices=[0, 1, 2])
    ap.add_argument("--right-classes", default="coarse",
                    choices=["coarse", "major", "natural", "exact"])
    ap.add_argument("--sub", type=int, default=None,
                    help="maximum substitution distance (default: the model's)")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--transparent", default="auto", choices=["auto", "none"])
    ap.add_argument("--reuse", metavar="TAG",
                    help="reuse rows of the run tagged TAG (made before the tier was "
                         "learned, same settings) where the learned tier skips no vowel")
    ap.add_argument("--from-json", action="store_true",
                    help="only rebuild the markdown/PNG from the saved JSON")
    add_scheduler_option(ap)
    a = ap.parse_args()
    spec = check_scheduler(a.scheduler)
    warnings.simplefilter("ignore")
    if a.merge:
        merged, wall, revs = {}, 0.0, set()
        for tag in a.merge:
            saved = harness.read_json("phonology_textbook" + tag)
            revs.add(saved["settings"].get("revision"))
            wall += saved["settings"]["wall_seconds"]
            a.em_iters = saved["settings"]["em_iters"]
            _settings_of(saved, a)
            a.reuse = saved["settings"].get("reuse")
            for p, rows in saved["problems"].items():
                merged.setdefault(p, []).extend(rows)
        a.seeds = min(len(r) for r in merged.values())
        a.revision = ", ".join(sorted(r for r in revs if r)) or None
        print(write({p: r[:a.seeds] for p, r in merged.items()}, a, wall))
        return
    if a.from_json:
        saved = harness.read_json("phonology_textbook" + a.tag)
        a.revision = saved["settings"].get("revision")
        a.em_iters = saved["settings"]["em_iters"]
        _settings_of(saved, a)
        probs = saved["problems"]
        a.seeds = min(len(r) for r in probs.values())  # seeds completed for every problem
        probs = {p: r[:a.seeds] for p, r in probs.items()}
        print(write(probs, a, saved["settings"]["wall_seconds"]))
        return
    a.revision = harness.git_revision()
    files = sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    if a.problems:
        files = [f for f in files if any(p in f for p in a.problems)]
    res = {}
    t0 = time.perf_counter()
    old = {}
    if a.reuse is not None:
        saved = harness.read_json("phonology_textbook" + a.reuse)
        same = {k: saved["settings"].get(k, d) for k, d in
                (("l2", 1.0), ("sub", None), ("right_window", 1),
                 ("right_classes", "coarse"), ("em_iters", 3), ("max_iters", 3))}
        if same != {"l2": a.l2, "sub": a.sub, "right_window": a.right_window,
                    "right_classes": a.right_classes, "em_iters": a.em_iters,
                    "max_iters": MAX_ITERS}:
            sys.exit(f"--reuse {a.reuse}: made with other settings {same}")
        old = saved["problems"]
    if spec is not None:
        items = [(f, seed) for seed in range(a.first_seed, a.seeds) for f in files]
        opts = (a.em_iters, a.right_window, a.right_classes, a.sub, a.l2,
                "auto" if a.transparent == "auto" else (), old)
        for (f, _), rows in zip(items, run_grid(spec, _grid_run, items, opts,
                                                key="phonology-textbook")):
            res.setdefault(os.path.basename(f)[:-4], []).extend(rows)
        print(write(res, a, time.perf_counter() - t0))
        return
    # seed-major order, results written after every (problem, seed): a budget-limited run
    # still leaves a complete table for the seeds that finished
    for seed in range(a.first_seed, a.seeds):
        for f in files:
            res.setdefault(os.path.basename(f)[:-4], []).extend(
                run(f, [seed], a.em_iters, a.right_window, a.right_classes, a.sub, a.l2,
                    "auto" if a.transparent == "auto" else (),
                    old.get(os.path.basename(f)[:-4])))
            md = write(res, a, time.perf_counter() - t0)
    print(md)


if __name__ == "__main__":
    main()
