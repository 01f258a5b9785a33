"""Shared helpers for the EP/PEP benchmarks: methods, datasets, metrics, output.

Methods (PEP §7 / Figure 3): pruned-20 BP (Cotterell et al. 2015 baseline), EP with 1-,
2-, 3-gram features (``ep1``–``ep3``: one gradient step per visit, η = 0.05, as in the
paper's Figure 3), PEP-prox (the engine's defaults: λ = 0.03, η = 0.1 since commit
2ea58fa; the paper's λ = 0.01, η = 0.05 before, which is what older records in
``results/ep_figure3_runs/`` used) and PEP-grow; and EP with the
closed-form projection (``ep1_closed``–``ep3_closed``; the EP rows before the eighth
session were these).
Accuracy: mean −log b_M(gold UR) over morpheme variables (nats; a probability below
1e-12, e.g. a gold UR outside a pruned domain, is floored there and counted as "missed");
held-out words: exact match and mean −log p of the true surface.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from benchmarks import harness
from strgm.inference import infer
from strgm.models.phonology import build_phonology_model, holdout_split, score_holdout

FLOOR = 1e-12

METHODS = {
    "pruned20": ("pruned", {"kbest": 20}),
    "ep1": ("ep", {"order": 1, "projection": "gradient"}),
    "ep2": ("ep", {"order": 2, "projection": "gradient"}),
    "ep3": ("ep", {"order": 3, "projection": "gradient"}),
    "pep_prox": ("pep", {"projection": "prox"}),
    "pep_grow": ("pep", {"projection": "grow"}),
    "ep1_closed": ("ep", {"order": 1, "projection": "closed"}),
    "ep2_closed": ("ep", {"order": 2, "projection": "closed"}),
    "ep3_closed": ("ep", {"order": 3, "projection": "closed"}),
}


def gold_xent(result, model, gold_urs) -> tuple[float, int]:
    vals, missed = [], 0
    for m, ur in gold_urs.items():
        lp = result.belief(model.morpheme_vars[m]).logprob(ur)
        if lp < np.log(FLOOR):
            missed += 1
            lp = np.log(FLOOR)
        vals.append(-lp)
    return float(np.mean(vals)), missed


def progress_lines(name, every=60.0):
    """A ``progress`` callback for :func:`strgm.inference.infer` that prints the engine's
    position (iteration, sweep, factor) to stderr at most every ``every`` wall seconds,
    with the CPU seconds so far: long runs (trigram EP on English) show where they are."""
    c0, last = time.process_time(), [time.perf_counter()]

    def show(msg):
        now = time.perf_counter()
        if now - last[0] >= every:
            last[0] = now
            print(f"  {name}: {msg} ({time.process_time() - c0:.0f} CPU s)",
                  file=sys.stderr, flush=True)
    return show


def run_method(name, model, gold_urs=None, gold_words=None, max_iters=5, score=True,
               progress=False):
    """One timed run of ``name``; with ``score`` the accuracy metrics are added (not timed:
    held-out surface beliefs of pruned BP on 500 English words take minutes to build);
    with ``progress`` the engine's position is printed now and then (:func:`progress_lines`)."""
    method, opts = METHODS[name]
    if progress:
        opts = dict(opts, progress=progress_lines(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        r = infer(model.graph, method, max_iters=max_iters, **opts)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"method": name, "seconds": secs, "cpu_seconds": cpu, "iterations": r.iterations,
           "converged": r.converged}
    if not score:
        return out
    if gold_urs:
        out["gold_xent"], out["gold_missed"] = gold_xent(r, model, gold_urs)
    if gold_words:
        beliefs = {model.word_vars[k]: r.belief(model.word_vars[k]) for k in gold_words}
        h = score_holdout(beliefs, model, gold_words)
        out["heldout_exact"] = h.exact_match
        out["heldout_neglogp"] = min(h.mean_neg_logp, -np.log(FLOOR))
    if "mean_features_per_belief" in r.extra:
        out["features_per_belief"] = r.extra["mean_features_per_belief"]
        out["skipped_updates"] = r.extra.get("skipped_updates", 0)
    return out


def build(paradigm, alphabet=None, holdout=0.1, seed=0):
    hidden = holdout_split(paradigm, holdout, seed) if holdout else []
    gold_words = {e.key: e.surface for e in paradigm.entries if e.key in set(hidden)}
    model = build_phonology_model(paradigm, alphabet=alphabet, hidden=hidden)
    return model, gold_words


def median_runs(name, model, reps, on_rep=None, **kw):
    """Medians over ``reps`` runs; ``on_rep(partial)`` sees the record after each run
    (so a long run that is stopped still leaves its completed repetitions).

    Accuracy is scored on the first run only: every method here is deterministic (no
    random choices), so later runs would give the same beliefs; they are timed only."""
    runs = []
    for i in range(reps):
        runs.append(run_method(name, model, score=(i == 0), **kw))
        out = dict(runs[0])
        out["seconds"] = float(np.median([r["seconds"] for r in runs]))
        out["seconds_all"] = [r["seconds"] for r in runs]
        out["cpu_seconds"] = float(np.median([r["cpu_seconds"] for r in runs]))
        out["cpu_seconds_all"] = [r["cpu_seconds"] for r in runs]
        out["reps_done"] = len(runs)
        if on_rep is not None:
            on_rep(out)
    return out


def size_plot(name: str, xs, series, threshold: tuple, xlabel: str, ylabel: str,
              title: str, logx: bool = False) -> None:
    """results/NAME.png: one line per (label, ys, marker) of ``series`` over ``xs``
    (log-scaled y), a dotted vertical line at the library's ``threshold`` = (x, label)."""
    plt = harness.pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for label, ys, marker in series:
        ax.plot(xs, ys, marker=marker, label=label)
    ax.axvline(threshold[0], color="grey", ls=":", label=threshold[1])
    if logx:
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def size_sweep(doc: str, sizes, one_size, report) -> None:
    """The command line of a per-size timing script: ``--reps``, then ``one_size(k,
    reps)`` for every k of ``sizes`` with BLAS on one thread (as during EP and PEP),
    each row printed, and ``report(rows, reps)``."""
    import argparse

    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for k in sizes:
            rows.append(one_size(k, a.reps))
            print(rows[-1], flush=True)
    report(rows, a.reps)
