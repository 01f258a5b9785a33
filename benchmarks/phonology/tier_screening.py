"""The harmony tier's screening statistic: EM's auxiliary after one M-step (one shared
E-step) against the objective after one EM iteration (an E-step per candidate).

    python -m benchmarks.phonology.tier_screening [--seeds 5] [--problems ...]

Per (problem, seed), on the screening words of the training split (10% held out as in
``strgm train --holdout 0.1 --seed S``; held-out words never enter): the candidates'
maximised auxiliaries Q_c(θ_c) − ½λ‖θ_c‖² from the one E-step they share
(:func:`strgm.models.tier_choice.screen_candidates`), and then each candidate's
penalised log-likelihood ℓ(θ_c) − ½λ‖θ_c‖² from an E-step of its own (the statistic of
the screening before). Both choices, whether they agree, and the CPU of the shared
screening and of the extra E-steps the old statistic needs. Writes
benchmarks/results/tier_screening.{json,md}.
"""
import argparse
import json
import os
import time
import warnings

from benchmarks import harness
from strgm.datasets.examples import example_path
from strgm.datasets.paradigm import read_paradigm
from strgm.errors import ConvergenceWarning
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import e_step
from strgm.models.tier_choice import (screen_candidates, screening_words,
                                      transparent_candidates, with_transparent)
from strgm.workflows.paradigm import held_out_entries

OPTS = {"max_iters": 2}  # strgm train's default inference iterations per E-step
L2 = 1.0


def one(path: str, seed: int) -> dict:
    para = read_paradigm(path)
    held = held_out_entries(para, 0.1, seed)
    base = PhonologyEditModel.copy_biased(para.alphabet())
    cands = transparent_candidates(base.alphabet.segment_symbols)
    row = {"problem": os.path.basename(path), "seed": seed,
           "candidates": [list(c) for c in cands]}
    if len(cands) < 2:
        return dict(row, agree=True, skipped="one candidate")
    subset = screening_words(para, set(held), 30, seed)
    starts = [with_transparent(base, c) for c in cands]
    t0 = time.process_time()
    screened = screen_candidates(subset, starts, l2=L2, infer_opts=OPTS)[1]
    t1 = time.process_time()
    objective = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for m, (_, _, theta, _) in zip(starts, screened):
            ll = e_step(m.with_theta(theta), subset, "pruned", OPTS)[1]
            objective.append(ll - 0.5 * L2 * float(theta @ theta))
    t2 = time.process_time()
    q = [s[1] for s in screened]
    pick = lambda v: max(range(len(v)), key=lambda i: (v[i], -i))  # noqa: E731
    return dict(row, words=len(subset.observed), q=q, objective=objective,
                chosen_q=list(cands[pick(q)]), chosen_objective=list(cands[pick(objective)]),
                agree=pick(q) == pick(objective), cpu_shared=t1 - t0, cpu_extra=t2 - t1)


def write(rows: list) -> None:
    harness.write_json("tier_screening", rows)
    name = lambda c: " ".join(c) or "none"  # noqa: E731
    cells = []
    for r in rows:
        if "skipped" in r:
            cells.append([r["problem"], r["seed"], "–", r["skipped"], "", "yes", "", ""])
            continue
        cells.append([r["problem"], r["seed"], r["words"], name(r["chosen_q"]),
                      name(r["chosen_objective"]), "yes" if r["agree"] else "NO",
                      f"{r['cpu_shared']:.1f}", f"{r['cpu_extra']:.1f}"])
    n = sum(r["agree"] for r in rows)
    harness.write_markdown("tier_screening", harness.markdown(
        "Harmony-tier screening: shared E-step + auxiliary Q against an E-step per candidate",
        ["problem", "seed", "words", "chosen by Q", "chosen by ℓ", "agree", "CPU shared (s)",
         "CPU of the extra E-steps (s)"], cells,
        run=f"Command: `{harness.command(__name__)}` at {harness.git_revision()} "
            "(training words only; 10% held out per seed).",
        notes=[f"Agreement: {n} of {len(rows)} (problem, seed) pairs."]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--problems", nargs="*", default=None)
    a = ap.parse_args()
    paths = a.problems or [str(example_path("english-verbs"))] + \
        sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    rows = []
    for p in paths:
        for s in range(a.seeds):
            rows.append(one(p, s))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "candidates"},
                             ensure_ascii=False), flush=True)
            write(rows)


if __name__ == "__main__":
    main()
