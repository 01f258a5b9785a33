"""The seed's study: does HDP smoothing of the head-driven lexicalised grammar beat
Collins's λ?  Held-out log-likelihood of its events and (``--parse``) parsing F1.

Splits of the WSJ sample (/work/shared/data/treebank/wsj):

* ``--split dev``: fit on wsj_0001-0139, score wsj_0140-0159.  Collins's b is chosen
  here, on the summed held-out log-likelihood of all events (grid ``--b-grid``);
* ``--split test``: fit on wsj_0001-0159, score wsj_0160-0179, with the b the dev run
  chose (read from benchmarks/results/lexicalized_smoothing_dev.json).

Estimators (:func:`strgm.grammars.lexicalized.model.fit_lexicalized`): none, collins
(every b of the grid on dev, the chosen one on test) and hdp (``--seeds``, ``--iters``
sweeps, second half sampled).  Log-likelihoods are per event and per family (head,
mod = modifier label and tag or STOP, word = a modifier's or the root's head word, top),
over the events that every smoothed estimator gives positive probability (the
unsmoothed estimate is a score, not a distribution: reported, not comparable).
``--parse`` also parses the sentences of at most ``--max-length`` words with
:func:`strgm.grammars.lexicalized.prune.parse_pruned` (pruned by the parent-annotated treebank
PCFG of the same training trees, with its default beam) and scores them with
:func:`strgm.grammars.bracket_score.score_corpus`.

    python -m benchmarks.grammars.lexicalized_smoothing --split dev [--seeds 0 1 2]
        [--iters 200]
    python -m benchmarks.grammars.lexicalized_smoothing --split test --parse
        [--max-length 25]

Writes benchmarks/results/lexicalized_smoothing_<split>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks import harness
from strgm.grammars.lexicalized.model import fit_lexicalized
from strgm.grammars.ptb import clean_tree, read_mrg

DATA = harness.TREEBANK
SPLITS = {"dev": ((1, 139), (140, 159)), "test": ((1, 159), (160, 179))}
FAMILIES = ("head", "mod", "word", "top")


def load(lo: int, hi: int, collapse: bool = True) -> list:
    """Cleaned trees of wsj_<lo>..wsj_<hi>."""
    out = []
    for f in sorted(DATA.glob("wsj_*.mrg")):
        if lo <= int(f.stem.split("_")[1]) <= hi:
            out.extend(t for t in (clean_tree(x, collapse) for x in read_mrg(f))
                       if t is not None)
    return out


def fits(train, args, bs) -> list:
    """(name, kind, seed, grammar, seconds) of every estimator."""
    out = []
    specs = [("none", "none", None, {})]
    specs += [(f"collins b={b:g}", "collins", None, {"collins_b": b}) for b in bs]
    specs += [(f"hdp seed {s}", "hdp", s, {"seed": s, "iters": args.iters})
              for s in args.seeds]
    for name, kind, seed, kw in specs:
        t0 = time.process_time()
        g = fit_lexicalized(train, kind, **kw)
        out.append((name, kind, seed, g, time.process_time() - t0))
        print(f"{name}: fitted in {out[-1][-1]:.1f} CPU s", flush=True)
    return out


def loglik_rows(models, heldout) -> list:
    """One row per estimator: per-family mean log-probability per event over the events
    every smoothed estimator gives positive probability, and the zero-probability
    count."""
    lps = [m[3].event_logprobs(heldout) for m in models]
    rows = []
    common = {f: np.all([np.isfinite(lp[f]) for lp, m in zip(lps, models)
                         if m[1] != "none"], axis=0) for f in FAMILIES}
    for (name, kind, seed, g, sec), lp in zip(models, lps):
        mask = common if kind != "none" else \
            {f: common[f] & np.isfinite(lp[f]) for f in FAMILIES}
        row = {"estimator": name, "kind": kind, "seed": seed, "fit_cpu_s": round(sec, 2),
               "info": {k: v for k, v in g.info.items() if k != "alpha"},
               "alpha": g.info.get("alpha")}
        total = 0.0
        for f in FAMILIES:
            v = lp[f][mask[f]]
            row[f] = float(v.mean())
            row[f + "_zero"] = int((~np.isfinite(lp[f])).sum())
            total += float(v.sum())
        row["events"] = int(sum(mask[f].sum() for f in FAMILIES))
        row["total"] = total / row["events"]
        rows.append(row)
    return rows


def pcfg_baseline(pcfg, sents) -> list:
    """The treebank PCFG's max-rule trees (None without a parse), the simple alternative."""
    from strgm.grammars.cfg import compile_grammar
    from strgm.grammars.corpus_parse import decode_sentences, parse_lines
    from strgm.grammars.ptb import parse_trees
    from strgm.grammars.unknown_words import grammar_known_words, map_sentence
    known, terms = grammar_known_words(pcfg), frozenset(pcfg.terminals)
    mapped = [map_sentence(w, known, terms) for w in sents]
    lines = parse_lines(pcfg, sents, decode_sentences(compile_grammar(pcfg),
                                                      pcfg.probabilities(), mapped,
                                                      "maxrule"))
    return [None if r is None else _untop(parse_trees(r[0])[0]) for r in lines]


def _untop(t):
    return t[1] if t[0] == "TOP" and len(t) == 2 else t


def parse_rows(models, train, gold, max_length: int) -> dict:
    """name -> F1 summary of the lexicalised parser (sentences ≤ max_length), with the
    thresholds it needed and its failures; and the two treebank PCFG baselines."""
    from strgm.grammars.bracket_score import score_corpus
    from strgm.grammars.lexicalized.prune import parse_pruned
    from strgm.grammars.ptb import tree_leaves
    from strgm.grammars.unknown_words import treebank_pcfg
    keep = [t for t in gold if len(tree_leaves(t)) <= max_length]
    sents = [list(tree_leaves(t)) for t in keep]
    out = {}
    for parent in (False, True):
        t0 = time.process_time()
        pcfg, _ = treebank_pcfg(train, parent=parent)
        trees = pcfg_baseline(pcfg, sents)
        name = "treebank PCFG" + (" + parent" if parent else "") + " (max-rule)"
        out[name] = {**score_corpus(keep, trees).summary(), "sentences": len(keep),
                     "failed": sum(t is None for t in trees),
                     "parse_cpu_s": round(time.process_time() - t0, 1)}
        print(f"{name}: F1 {100 * out[name]['f1']:.2f}", flush=True)
    prune_pcfg, _ = treebank_pcfg(train, parent=True)
    for name, _, _, g, _ in models:
        t0 = time.process_time()
        trees, used = [], []
        for w in sents:
            tree, _, th = parse_pruned(g, w, prune_pcfg)
            trees.append(tree)
            used.append(th)
        sec = time.process_time() - t0
        out[name] = {**score_corpus(keep, trees).summary(), "sentences": len(keep),
                     "failed": sum(t is None for t in trees),
                     "thresholds": {str(k): used.count(k) for k in sorted(
                         set(used), key=lambda x: -1 if x is None else -x)},
                     "parse_cpu_s": round(sec, 1),
                     "median_cpu_s_per_sentence": round(sec / max(len(keep), 1), 3)}
        print(f"{name}: F1 {100 * out[name]['f1']:.2f}, {out[name]['failed']} failed, "
              f"{sec:.0f} CPU s", flush=True)
    return out


def mean_sd(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.4f} ± {v.std(ddof=1):.4f}" if len(v) > 1 else f"{v.mean():.4f}"


def markdown(rows, parsed, meta) -> str:
    head = ("| estimator | head | mod | word | top | all events | zero-probability events |"
            " fit CPU s |")
    lines = [f"# Lexicalised grammar smoothing, {meta['split']} split", "",
             f"Command: `{meta['command']}` at {meta['commit']}.  Mean log-probability "
             f"per held-out event (nats), over the {rows[-1]['events']} events every "
             "smoothed estimator gives positive probability.  The unsmoothed row is a "
             "score, not a log-probability: it backs off without taking mass from seen "
             "outcomes (a context's scores sum to more than 1), so it is not comparable "
             "with the others.", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        z = sum(r[f + "_zero"] for f in FAMILIES)
        lines.append(f"| {r['estimator']} | {r['head']:.4f} | {r['mod']:.4f} | "
                     f"{r['word']:.4f} | {r['top']:.4f} | {r['total']:.4f} | {z} | "
                     f"{r['fit_cpu_s']} |")
    if parsed:
        lines += ["", f"Parsing the sentences of at most {meta['max_length']} words "
                  "(labelled bracket F1, strgm's evalb COLLINS.prm conventions; the "
                  "lexicalised parser pruned by the parent-annotated treebank PCFG, "
                  "beam as `parse_pruned`'s default):", "",
                  "| parser | F1 | precision | recall | no parse | CPU s |",
                  "|---|---|---|---|---|---|"]
        for name, r in parsed.items():
            lines.append(f"| {name} | {100 * r['f1']:.2f} | {100 * r['precision']:.2f} | "
                         f"{100 * r['recall']:.2f} | {r['failed']} of {r['sentences']} | "
                         f"{r['parse_cpu_s']} |")
    hdp = [r for r in rows if r["kind"] == "hdp"]
    if len(hdp) > 1:
        lines += ["", "HDP over seeds (mean ± sd): " + ", ".join(
            f"{f} {mean_sd([r[f] for r in hdp])}" for f in FAMILIES + ("total",))]
    if meta.get("chosen_b") is not None:
        lines += ["", f"Chosen Collins b: {meta['chosen_b']:g}."]
    return "\n".join(lines) + "\n"


def plot(rows, name: str) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for ax, f in zip(axes, ("head", "mod", "word")):
        ax.barh([r["estimator"] for r in rows], [r[f] for r in rows])
        ax.set_title(f"{f}: mean log p per event")
        lo = min(r[f] for r in rows)
        ax.set_xlim(lo * 1.05, max(r[f] for r in rows) * 0.95)
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=tuple(SPLITS), default="dev")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--b-grid", type=float, nargs="+", default=[0.5, 1, 2, 5, 10, 20])
    ap.add_argument("--parse", action="store_true")
    ap.add_argument("--max-length", type=int, default=25)
    a = ap.parse_args(argv)
    (tlo, thi), (hlo, hhi) = SPLITS[a.split]
    train, heldout = load(tlo, thi), load(hlo, hhi)
    chosen = None
    bs = a.b_grid
    if a.split == "test":
        chosen = harness.read_json("lexicalized_smoothing_dev")["chosen_b"]
        bs = [chosen]
    models = fits(train, a, bs)
    rows = loglik_rows(models, heldout)
    if a.split == "dev":
        coll = [r for r in rows if r["kind"] == "collins"]
        chosen = bs[int(np.argmax([r["total"] for r in coll]))]
    parsed = parse_rows(models, train, load(hlo, hhi, collapse=False), a.max_length) \
        if a.parse else None
    meta = {"split": a.split, "commit": harness.git_revision(), "chosen_b": chosen,
            "max_length": a.max_length, "command": harness.command(__name__, argv)}
    name = f"lexicalized_smoothing_{a.split}"
    harness.write_json(name, {**meta, "rows": rows, "parsed": parsed}, strict=True)
    harness.write_markdown(name, markdown(rows, parsed, meta))
    plot(rows, name)
    print(markdown(rows, parsed, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
