"""Backoff smoothing of the treebank PCFG's phrasal rules: unsmoothed, Collins and HDP,
with and without parent annotation, on the WSJ sample.

Train on wsj_0001-0159, evaluate on wsj_0160-0179 (the data in
/work/shared/data/treebank/wsj).  Collins's b is chosen on a development split carved
from the training files (fit 0001-0139, score 0140-0159, grid
:data:`strgm.grammars.smoothing.evaluate.B_GRID`), then the grammar is refitted on
0001-0159.  HDP: α sampled (Gamma(1, 1) priors), ``--iters`` sweeps, second half
averaged.  For each grammar:

* held-out phrasal rule log-likelihood per rule token (the gold trees' binarised rules
  over no word, :mod:`strgm.grammars.smoothing.evaluate`), over the tokens the grammar
  gives positive probability, with the zero-probability tokens counted apart, and over
  the tokens that every grammar of the same Markov order gives positive probability;
* parsing F1 (Viterbi and max-rule, sentences of at most ``--max-length`` words,
  :func:`strgm.grammars.bracket_score.score_corpus`), the parser of
  benchmarks/grammars/treebank_pcfg.py;
* rules, nonterminals, seconds to build and to parse.

    python -m benchmarks.grammars.smoothing [--markov 1] [--max-length 40] [--iters 200]
                                            [--append]

Writes benchmarks/results/grammar_smoothing.{json,md,png} with the commit hash;
``--append`` keeps the rows of the other Markov orders already in the JSON file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from benchmarks import harness
from benchmarks.grammars.treebank_pcfg import load, parse_all
from strgm.grammars.bracket_score import score_corpus
from strgm.grammars.ptb import tree_leaves
from strgm.grammars.smoothing import smoothed_pcfg
from strgm.grammars.smoothing.evaluate import collision_map, heldout_rule_probs, \
    loglik_summary, select_collins_b

NAME = "grammar_smoothing"


def fit(train, smoothing, h, parent, b, iters) -> tuple:
    """(grammar, info, seconds)."""
    t0 = time.perf_counter()
    g, info = smoothed_pcfg(train, smoothing, h, parent, collins_b=b, iters=iters)
    return g, info, time.perf_counter() - t0


def parse_scores(g, gold, sents) -> dict:
    out = {}
    for decode in ("viterbi", "maxrule"):
        t0 = time.perf_counter()
        parses = parse_all(g, sents, decode)
        secs = time.perf_counter() - t0
        s = score_corpus(gold, parses).summary()
        out[decode] = {"f1": s["f1"], "precision": s["precision"], "recall": s["recall"],
                       "exact_match": s["exact_match"], "no_parse": s["failed"],
                       "seconds": secs}
    return out


def run_order(h, train, dev_fit, dev, test, gold, sents, a) -> list:
    """All rows of one Markov order."""
    ren = collision_map(train)
    rows = []
    for parent in (False, True):
        b, scores = select_collins_b(dev_fit, dev, h, parent)
        print(f"markov {h} parent {parent}: b = {b} ({scores})", flush=True)
        for smoothing in ("none", "collins", "hdp"):
            g, info, secs = fit(train, smoothing, h, parent, b, a.iters)
            keys, n, p = heldout_rule_probs(g, test, ren, h, parent)
            row = {"markov": h, "parent": parent, "smoothing": smoothing,
                   "max_length": a.max_length, "sentences": len(sents),
                   "collins_b": b if smoothing == "collins" else None,
                   "dev_scores": {str(k): v for k, v in scores.items()}
                   if smoothing == "collins" else None,
                   "rules": info["rules"], "nonterminals": info["nonterminals"],
                   "unseen_rules": info.get("unseen_rules", 0), "alpha": info.get("alpha"),
                   "build_seconds": secs, "heldout": loglik_summary(n, p),
                   "_p": p, "_n": n}
            row.update(parse_scores(g, gold, sents) if not a.no_parse else {})
            print(json.dumps({k: v for k, v in row.items() if not k.startswith("_")}),
                  flush=True)
            rows.append(row)
    common = np.all([r["_p"] > 0 for r in rows], axis=0)
    for r in rows:
        r["heldout_common"] = loglik_summary(r.pop("_n"), r.pop("_p"), common)
    return rows


def markdown(rows, meta) -> str:
    head = ("| markov | parent | smoothing | rules | NTs | unseen rules | LL/token (own) | "
            "zero-prob tokens | LL/token (common) | sentences (≤ words) | F1 viterbi | "
            "F1 max-rule | build s | parse s (vit/mr) |\n" + "|---" * 14 + "|\n")
    body = ""
    for r in rows:
        v, m = r.get("viterbi", {}), r.get("maxrule", {})
        body += (f"| {r['markov']} | {'on' if r['parent'] else 'off'} | {r['smoothing']}"
                 f"{' (b=' + str(r['collins_b']) + ')' if r['collins_b'] else ''} | "
                 f"{r['rules']} | {r['nonterminals']} | {r['unseen_rules']} | "
                 f"{r['heldout']['loglik_per_token']:.4f} | "
                 f"{r['heldout']['zero_tokens']:.0f} | "
                 f"{r['heldout_common']['loglik_per_token']:.4f} | "
                 f"{r.get('sentences', meta['sentences'])} "
                 f"(≤ {r.get('max_length', meta['max_length'])}) | "
                 f"{100 * v.get('f1', float('nan')):.2f} | "
                 f"{100 * m.get('f1', float('nan')):.2f} | {r['build_seconds']:.1f} | "
                 f"{v.get('seconds', float('nan')):.0f}/{m.get('seconds', float('nan')):.0f} |\n")
    return (f"# Backoff smoothing of treebank PCFG rules (commit {meta['commit']})\n\n"
            f"Train wsj_0001-0159 ({meta['train_trees']} trees); held-out wsj_0160-0179: "
            f"rule log-likelihood over the phrasal rules of all {meta['test_trees']} "
            f"trees ({meta['tokens']:.0f} rule tokens), F1 over the held-out sentences of "
            "at most 40 words (260), or of at most 25 words where the table says so "
            "(parsing the parent-annotated Markov-order-2 grammars on all 260 would not "
            "have fitted the time available) (evalb COLLINS.prm conventions). Collins's b chosen on wsj_0140-0159 with 0001-0139 as training. "
            "HDP: α sampled, Gamma(1, 1) priors, "
            f"{meta['iters']} sweeps (second half averaged), seed 0. Unseen right-hand "
            "sides kept per context: 5. 'own': tokens the grammar gives probability > 0; "
            "'common': tokens every grammar of the same Markov order gives probability "
            "> 0.\n\n" + head + body +
            "\nCommands: " + "; ".join(f"`{r['command']}` (commit {r['commit']}, "
                                       f"{r['seconds']:.0f} s)" for r in meta["runs"])
            + ". Timings are wall-clock on a 2-core machine shared with another job.\n")


def plot(rows, name) -> str:
    plt = harness.pyplot()
    if plt is None:
        return "matplotlib not installed: no plot"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    names = [f"h{r['markov']} {'P' if r['parent'] else '-'} {r['smoothing']} "
             f"(≤{r.get('max_length', '?')} w)" for r in rows]
    x = np.arange(len(rows))
    for k, dec in enumerate(("viterbi", "maxrule")):
        ax1.bar(x + 0.4 * k, [100 * r.get(dec, {}).get("f1", np.nan) for r in rows], 0.4,
                label=dec)
    ax1.set_ylim(60, 80)
    ax1.set_ylabel("F1 (sentences up to the length in the label)")
    ax1.legend()
    ax2.plot(x + 0.2, [r["heldout_common"]["loglik_per_token"] for r in rows], "o")
    ax2.set_ylabel("held-out rule LL / token (common tokens)")
    ax2.set_ylim(min(r["heldout_common"]["loglik_per_token"] for r in rows) - 0.02,
                 max(r["heldout_common"]["loglik_per_token"] for r in rows) + 0.02)
    for ax in (ax1, ax2):
        ax.set_xticks(x + 0.2)
        ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    fig.tight_layout()
    return str(harness.save_figure(fig, name, dpi=110))


def _runs(prev: dict) -> list:
    """The runs recorded in an earlier JSON file (older files: one command)."""
    m = prev["meta"]
    return m.get("runs") or [{"markov": sorted({r["markov"] for r in prev["rows"]}),
                              "commit": m["commit"], "seconds": m["total_seconds"],
                              "command": m["command"]}]


def rewrite() -> int:
    """Markdown and plot again from the JSON file."""
    d = harness.read_json(NAME)
    d["meta"]["runs"] = _runs(d)
    plot(d["rows"], NAME)
    harness.write_markdown(NAME, markdown(d["rows"], d["meta"]))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markov", nargs="+", type=int, default=[1])
    ap.add_argument("--max-length", type=int, default=40)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--no-parse", action="store_true")
    ap.add_argument("--append", action="store_true",
                    help="keep the JSON file's rows of other Markov orders")
    ap.add_argument("--rewrite", action="store_true",
                    help="only rewrite the Markdown and plot from the JSON file")
    a = ap.parse_args(argv)
    if a.rewrite:
        return rewrite()
    t_all = time.perf_counter()
    commit = harness.git_revision()
    train, dev_fit, dev, test = load(1, 159), load(1, 139), load(140, 159), load(160, 179)
    gold = [t for t in load(160, 179, collapse=False)  # scored as evalb: X → X kept
            if len(tree_leaves(t)) <= a.max_length]
    sents = [tree_leaves(t) for t in gold]
    rows = [r for h in a.markov for r in run_order(h, train, dev_fit, dev, test, gold,
                                                   sents, a)]
    runs = [{"markov": a.markov, "commit": commit, "seconds": time.perf_counter() - t_all,
             "command": harness.command(__name__, argv)}]
    if a.append and harness.result_path(NAME, ".json").exists():
        prev = harness.read_json(NAME)
        for r in prev["rows"]:  # older files: the sentence set in the meta only
            r.setdefault("max_length", prev["meta"]["max_length"])
            r.setdefault("sentences", prev["meta"]["sentences"])
        rows = [r for r in prev["rows"] if r["markov"] not in a.markov] + rows
        rows.sort(key=lambda r: r["markov"])
        runs = [r for r in _runs(prev) if not set(r["markov"]) & set(a.markov)] + runs
    meta = {"commit": commit, "runs": runs, "train_trees": len(train), "test_trees": len(test),
            "sentences": len(sents), "max_length": a.max_length, "iters": a.iters,
            "tokens": rows[0]["heldout"]["tokens"],
            "command": harness.command(__name__, argv),
            "total_seconds": time.perf_counter() - t_all}
    meta["plot"] = plot(rows, NAME)
    harness.write_json(NAME, {"meta": meta, "rows": rows}, strict=True)
    harness.write_markdown(NAME, markdown(rows, meta))
    print(markdown(rows, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
