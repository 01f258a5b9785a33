"""PEP against pruned BP, side by side: CPU time, accuracy and cost growth (PEP §7, Fig. 3).

Methods (engine defaults unless stated; each run stops by the engine's own convergence
test, at most ``--max-iters`` iterations):

* ``pruned20``: pruned BP, k = 20 (Cotterell, Peng & Eisner 2015);
* ``pep``: PEP-prox with the engine's schedule (:mod:`strgm.inference.ep_settings`);
* ``pep_rr``: the same with round-robin passes (``block=False``, the default before block
  passes);
* ``pep_ku5``: PEP with K = 5 passes on the unigram-only first iteration (``K_unigram``);
* ``pep_ref``: PEP with the fused block off (``fused=False``: its reference steps; p̂ and
  q moments still compiled);
* ``pep_paper``: PEP-prox with the paper's λ = 0.01, η = 0.05, K = 20 for 3 iterations;
* ``pep_ml2``, ``pep_ml3``: PEP-prox with multi-level activation (2 or 3 trie levels a
  step may activate, :func:`strgm.projection.prox.prox_step`); ``pep_ml2_k10``: two
  levels with K = 10 passes on the early iterations;
* ``ep2``, ``ep3``: gradient EP on the complete bigram / trigram family (the paper's
  "EP-2", "EP-3").

Data: the synthetic paradigm (gold URs) and CMUdict regular verbs (4 words per root), 10%
of the words hidden; the phonology is the untrained copy-biased edit transducer or, with
``--phonology trained``, the one EM learns from the training words (2 EM iterations,
cached in ``results/pep_speed_trained/``). Timings are medians over ``--reps`` runs of
process CPU time; accuracy is from the first run (the methods are deterministic). Before
timing, every method runs once untimed on 50 words of the same data, so that compiling
the kernels (once per source revision, :mod:`fst_factors.wfsa.compiled`) is not timed.

    python -m benchmarks.pep.speed run --dataset english --words 100 200 500 --reps 3
    python -m benchmarks.pep.speed run --dataset synthetic --words 500 --phonology trained
    python -m benchmarks.pep.speed report     # results/pep_speed.{json,md,png}
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

from benchmarks import harness
from benchmarks.ep.common import FLOOR, gold_xent
from strgm.errors import StrgmError
from strgm.inference import infer
from strgm.progress import StepProgress
from strgm.models.phonology import build_phonology_model, holdout_split, score_holdout

RUNS = "pep_speed_runs"
TRAINED = str(harness.result_path("pep_speed_trained"))
METHODS = {
    "pruned20": ("pruned", {"kbest": 20}),
    "pep": ("pep", {}),
    "pep_paper": ("pep", {"lam": 0.01, "eta": 0.05, "K_early": 20, "early_iters": 3}),
    "pep_rr": ("pep", {"block": False}),
    "pep_ku5": ("pep", {"K_unigram": 5}),
    "pep_ref": ("pep", {"fused": False}),
    "ep2": ("ep", {"order": 2}),
    "ep3": ("ep", {"order": 3}),
}
#: The rows' order in the report: the methods above, with those of removed options
#: (multi-level activation, ``activation_levels``) after PEP's, as they were measured.
ORDER = ["pruned20", "pep", "pep_paper", "pep_ml2", "pep_ml3", "pep_ml2_k10",
         *[m for m in METHODS if m not in ("pruned20", "pep", "pep_paper")]]


def paradigm_of(ds: str, words: int, seed: int = 0):
    """(paradigm, alphabet, gold URs or None)."""
    if ds == "synthetic":
        from strgm.datasets.synthetic import synthetic_paradigm

        d = synthetic_paradigm(words, seed=seed)
        return d.paradigm, d.alphabet, d.gold_urs
    from strgm.datasets.cmudict_paradigm import english_paradigm

    para = english_paradigm(max(1, words // 4), seed=seed)
    return para, para.alphabet(), None


def trained_phonology(ds, words, para, alphabet, hidden):
    """EM's transducer from the training words (cached as an OpenFst file)."""
    import pynini

    from strgm.models.em import train_phonology

    path = os.path.join(TRAINED, f"{ds}_{words}.fst")
    if os.path.exists(path):
        return pynini.Fst.read(path)
    os.makedirs(TRAINED, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        res = train_phonology(para, alphabet=alphabet, em_iters=2, heldout=set(hidden))
    print(f"trained {ds} {words} in {time.process_time() - t0:.0f} CPU s", flush=True)
    fst = res.model.fst()
    fst.write(path)
    return fst


def setup(ds: str, words: int, phonology: str, seed: int = 0):
    para, alphabet, gold = paradigm_of(ds, words, seed)
    hidden = holdout_split(para, 0.1, seed)
    fst = trained_phonology(ds, words, para, alphabet, hidden) \
        if phonology == "trained" else None
    model = build_phonology_model(para, alphabet=alphabet, hidden=hidden, phonology=fst)
    heldout = {e.key: e.surface for e in para.entries if e.key in set(hidden)}
    return model, gold, heldout


def one(model, name: str, max_iters: int, gold, heldout, score: bool) -> dict:
    method, opts = METHODS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        r = infer(model.graph, method, max_iters=max_iters, **opts)
        cpu = time.process_time() - c0
    out = {"cpu_seconds": cpu, "iterations": r.iterations, "converged": r.converged,
           "last_change": r.deltas[-1], "max_message_states": r.extra["max_message_states"]}
    if score and gold:
        out["gold_xent"] = gold_xent(r, model, gold)[0]
    if score and heldout:
        beliefs = {model.word_vars[k]: r.belief(model.word_vars[k]) for k in heldout}
        h = score_holdout(beliefs, model, heldout)
        out["heldout_exact"] = h.exact_match
        out["heldout_neglogp"] = min(h.mean_neg_logp, -np.log(FLOOR))
    return out


def run(a) -> None:
    bar = StepProgress(len(a.words) * len(a.methods), "pep_speed runs")  # ETA on a tty
    code = revision()  # the code this process loaded (later commits do not change it)
    warm_up(a)
    for words in a.words:
        model, gold, heldout = setup(a.dataset, words, a.phonology)
        for name in a.methods:
            meta = dict(dataset=a.dataset, phonology=a.phonology, words=words, method=name,
                        reps=a.reps, code=code)
            try:
                runs = [one(model, name, a.max_iters, gold, heldout, score=(i == 0))
                        for i in range(a.reps)]
            except StrgmError as e:  # e.g. the memory guard refused a message: recorded
                rec = dict(meta, error=f"{type(e).__name__}: {e}"[:300])
            else:
                rec = dict(runs[0], **meta,
                           cpu_seconds=float(np.median([r["cpu_seconds"] for r in runs])),
                           cpu_seconds_all=[r["cpu_seconds"] for r in runs])
            print(json.dumps(rec), flush=True)
            harness.write_json(f"{RUNS}/{a.dataset}_{a.phonology}_{words}_{name}", rec)
            bar.step(f"{words} words, {name}", show=False)
    bar.close()


def warm_up(a) -> None:
    """Each method once, untimed, on 50 words: the kernels compile here (module
    docstring)."""
    model, gold, heldout = setup(a.dataset, 50, a.phonology)
    for name in a.methods:
        try:
            one(model, name, 2, gold, heldout, score=False)
        except StrgmError:
            pass


def revision() -> str:
    """The checked-out commit (``+dirty`` with uncommitted library changes)."""
    return harness.git_revision(dirty="+dirty")


def slope(rows: list) -> float | None:
    """Least-squares slope of log CPU against log words (None below two sizes)."""
    pts = sorted((r["words"], r["cpu_seconds"]) for r in rows)
    if len({w for w, _ in pts}) < 2:
        return None
    w, c = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(w, c, 1)[0])


def report() -> None:
    rows = [json.loads(f.read_text(encoding="utf-8"))
            for f in sorted((harness.RESULTS / RUNS).glob("*.json"))]
    lines = ["# PEP vs pruned BP, side by side", "",
             f"Generated by `{harness.command(__name__, 'report')}` from "
             "`results/pep_speed_runs/`. "
             "CPU seconds: median of `reps` runs of one process (other jobs may have shared "
             "the 2-core machine); accuracy from the first run. `× pruned` is the CPU "
             "ratio to pruned-20 on the same data, given only against a pruned-20 row of "
             "the same `code` revision: rows of different revisions were run in different "
             "sessions, possibly on machines of different speed, and compare only within "
             "one revision (so do the cost-growth slopes, one per method and revision). "
             "Accuracy: mean −log b(gold UR) of the morphemes (synthetic) and mean −log p "
             "of the 10% held-out surface forms.", ""]
    for ds, ph in sorted({(r["dataset"], r["phonology"]) for r in rows}):
        sel = [r for r in rows if r["dataset"] == ds and r["phonology"] == ph]
        base = {r["words"]: r for r in sel if r["method"] == "pruned20"}
        lines += [f"## {ds}, {ph} phonology", "",
                  "| words | method | code | CPU s | all runs | × pruned | iterations | "
                  "converged | gold −log b | held-out exact | held-out −log p |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sorted(sel, key=lambda r: (r["words"], ORDER.index(r["method"]))):
            if "error" in r:
                lines.append(f"| {r['words']} | {r['method']} | {r.get('code', '')} | failed: "
                             f"{r['error'][:160]} | | | | | | | |")
                continue
            b = base.get(r["words"])
            ratio = f"{r['cpu_seconds'] / b['cpu_seconds']:.2f}" \
                if b and "error" not in b and b.get("code") == r.get("code") else ""
            runs = ", ".join(f"{c:.1f}" for c in r["cpu_seconds_all"])
            lines.append(
                f"| {r['words']} | {r['method']} | {r.get('code', '')} | {r['cpu_seconds']:.1f} | "
                f"{runs} | {ratio} | "
                f"{r['iterations']} | {r['converged']} | {_f(r.get('gold_xent'))} | "
                f"{_f(r.get('heldout_exact'))} | {_f(r.get('heldout_neglogp'))} |")
        ok = [r for r in sel if "error" not in r]
        groups = sorted({(r["method"], r.get("code", "")) for r in ok},
                        key=lambda g: (ORDER.index(g[0]), g[1]))
        lines += ["", "Cost growth (least-squares slope of log CPU on log words, per method "
                  "and revision): " + ", ".join(
                      f"{m} ({c}) {s:.2f}" for m, c in groups
                      if (s := slope([r for r in ok if r["method"] == m
                                      and r.get("code", "") == c])) is not None), ""]
    harness.write_json("pep_speed", rows)
    harness.write_markdown("pep_speed", "\n".join(lines))
    print("\n".join(lines))
    plot(rows)


def _commits_behind(code: str) -> int:
    """How many commits the revision ``code`` has in its history (older: fewer; 0 if git
    does not know it), to order the table's revisions in time."""
    import subprocess

    out = subprocess.run(["git", "rev-list", "--count", code.split("+")[0] or "HEAD"],
                         cwd=harness.ROOT, capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else 0


def _f(v) -> str:
    return "" if v is None else f"{v:.3g}"


def plot(rows: list) -> None:
    """CPU seconds against words (log–log), one panel per data set and phonology."""
    plt = harness.pyplot()
    if plt is None:
        return
    sets = sorted({(r["dataset"], r["phonology"]) for r in rows if "error" not in r})
    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 4), squeeze=False)
    for ax, (ds, ph) in zip(axes[0], sets):
        sel = [r for r in rows if r["dataset"] == ds and r["phonology"] == ph
               and "error" not in r]
        codes = sorted({r.get("code", "") for r in sel}, key=_commits_behind)
        for i, m in enumerate(ORDER):  # one line per method and revision (see the table)
            for code in codes:
                pts = sorted((r["words"], r["cpu_seconds"]) for r in sel
                             if r["method"] == m and r.get("code", "") == code)
                if pts:
                    ax.plot(*zip(*pts), marker="o", color=f"C{i}",
                            ls="-" if code == codes[-1] else ":", label=f"{m} ({code})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("words")
        ax.set_ylabel("CPU seconds (median)")
        ax.set_title(f"{ds}, {ph} phonology (missing points: see the table; "
                     "dotted: older revisions)", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    harness.save_figure(fig, "pep_speed", dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dataset", choices=["synthetic", "english"], default="synthetic")
    r.add_argument("--words", type=int, nargs="+", default=[100])
    r.add_argument("--methods", nargs="+", default=["pruned20", "pep"], choices=list(METHODS))
    r.add_argument("--phonology", choices=["untrained", "trained"], default="untrained")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--max-iters", type=int, default=10)
    sub.add_parser("report")
    a = p.parse_args()
    run(a) if a.cmd == "run" else report()


if __name__ == "__main__":
    main()
