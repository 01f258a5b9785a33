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
over the events that every smoothed estimator gives positive probability; the
unsmoothed estimate's zero-probability events are counted apart and its mean is over
the others.  ``--parse`` also parses the
sentences of at most ``--max-length`` words with
:func:`strgm.grammars.lexicalized.parser.parse_pruned` (pruned by the treebank PCFG of
the same training trees) and scores them with
:func:`strgm.grammars.bracket_score.score_corpus`.

    python benchmarks/lexicalized_smoothing.py --split dev [--seeds 0 1 2] [--iters 200]
    python benchmarks/lexicalized_smoothing.py --split test --parse [--max-length 25]

Writes benchmarks/results/lexicalized_smoothing_<split>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np

from strgm.grammars.lexicalized.model import fit_lexicalized
from strgm.grammars.ptb import clean_tree, read_mrg
from strgm.safe_io import atomic_write_text, strict_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "treebank" / "wsj"
OUT = ROOT / "benchmarks" / "results"
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
    every smoothed estimator gives positive probability (the unsmoothed one: over those
    of them it gives positive probability), and the zero-probability count."""
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


def parse_rows(models, train, gold, max_length: int) -> dict:
    """name -> F1 summary of the lexicalised parser (sentences ≤ max_length)."""
    from strgm.grammars.bracket_score import score_corpus
    from strgm.grammars.lexicalized.parser import parse_pruned
    from strgm.grammars.ptb import tree_leaves
    from strgm.grammars.unknown_words import treebank_pcfg
    pcfg, _ = treebank_pcfg(train)
    keep = [t for t in gold if len(tree_leaves(t)) <= max_length]
    out = {}
    for name, _, _, g, _ in models:
        t0 = time.process_time()
        trees = []
        for t in keep:
            res = parse_pruned(g, list(tree_leaves(t)), pcfg)
            trees.append(res[0] if res is not None else None)
        sec = time.process_time() - t0
        s = score_corpus(keep, trees).summary()
        out[name] = {**s, "parse_cpu_s": round(sec, 1), "sentences": len(keep)}
        print(f"{name}: F1 {s['f1']:.2f} in {sec:.0f} CPU s", flush=True)
    return out


def mean_sd(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.4f} ± {v.std(ddof=1):.4f}" if len(v) > 1 else f"{v.mean():.4f}"


def markdown(rows, parsed, meta) -> str:
    head = ("| estimator | head | mod | word | top | all events | zero events (none) |"
            " fit CPU s |" + (" F1 |" if parsed else ""))
    lines = [f"# Lexicalised grammar smoothing, {meta['split']} split", "",
             f"Command: `{meta['command']}` at {meta['commit']}.  Mean log-probability "
             f"per held-out event (nats), over the {rows[-1]['events']} events every "
             "smoothed estimator gives positive probability; the unsmoothed row is over "
             f"the {rows[0]['events']} of them it does not give probability 0, so it is not "
             "comparable with the others (it loses infinitely on the rest).", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        z = sum(r[f + "_zero"] for f in FAMILIES)
        f1 = f" {parsed[r['estimator']]['f1']:.2f} |" if parsed else ""
        lines.append(f"| {r['estimator']} | {r['head']:.4f} | {r['mod']:.4f} | "
                     f"{r['word']:.4f} | {r['top']:.4f} | {r['total']:.4f} | {z} | "
                     f"{r['fit_cpu_s']} |{f1}")
    hdp = [r for r in rows if r["kind"] == "hdp"]
    if len(hdp) > 1:
        lines += ["", "HDP over seeds (mean ± sd): " + ", ".join(
            f"{f} {mean_sd([r[f] for r in hdp])}" for f in FAMILIES + ("total",))]
    if meta.get("chosen_b") is not None:
        lines += ["", f"Chosen Collins b: {meta['chosen_b']:g}."]
    return "\n".join(lines) + "\n"


def plot(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for ax, f in zip(axes, ("head", "mod", "word")):
        ax.barh([r["estimator"] for r in rows], [r[f] for r in rows])
        ax.set_title(f"{f}: mean log p per event")
        lo = min(r[f] for r in rows)
        ax.set_xlim(lo * 1.05, max(r[f] for r in rows) * 0.95)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
        chosen = json.loads((OUT / "lexicalized_smoothing_dev.json").read_text())["chosen_b"]
        bs = [chosen]
    models = fits(train, a, bs)
    rows = loglik_rows(models, heldout)
    if a.split == "dev":
        coll = [r for r in rows if r["kind"] == "collins"]
        chosen = bs[int(np.argmax([r["total"] for r in coll]))]
    parsed = parse_rows(models, train, load(hlo, hhi, collapse=False), a.max_length) \
        if a.parse else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    meta = {"split": a.split, "commit": commit, "chosen_b": chosen,
            "command": "python benchmarks/lexicalized_smoothing.py " + " ".join(
                argv if argv is not None else __import__("sys").argv[1:])}
    stem = OUT / f"lexicalized_smoothing_{a.split}"
    atomic_write_text(stem.with_suffix(".json"), strict_json(
        {**meta, "rows": rows, "parsed": parsed}, indent=1))
    atomic_write_text(stem.with_suffix(".md"), markdown(rows, parsed, meta))
    plot(rows, stem.with_suffix(".png"))
    print(markdown(rows, parsed, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
