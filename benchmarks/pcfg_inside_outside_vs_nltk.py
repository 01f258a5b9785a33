"""Inside–outside throughput vs NLTK's ``InsideChartParser`` (issue 5 acceptance).

Grammar: the relative-frequency PCFG of the cleaned Penn Treebank sample trees of the
sentences used (so every sentence parses), from ``../shared/data/treebank/wsj``.  Ours:
inside + outside + expected rule counts for every sentence (sentences batched by length).
NLTK: ``InsideChartParser(grammar).parse`` (exhaustive probabilistic chart parsing, no beam)
on the same grammar and sentences.  Sentences/second are medians over ``--repeats`` runs,
measured side by side in one process.

    python benchmarks/pcfg_inside_outside_vs_nltk.py [--max-len 10] [--sentences 12] [--files 40]
Writes benchmarks/results/pcfg_inside_outside_vs_nltk.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data" / "treebank" / "wsj"
OUT = ROOT / "benchmarks" / "results"

from strgm.datasets.ptb import clean_tree, read_treebank, relabel_collisions, tree_leaves, treebank_grammar  # noqa: E402
from strgm.grammars.cfg import compile_grammar  # noqa: E402
from strgm.grammars.chart import corpus_inside_outside  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=None, help="treebank files (default: all)")
    ap.add_argument("--max-len", type=int, default=8)
    ap.add_argument("--sentences", type=int, default=20, help="at most this many for NLTK")
    ap.add_argument("--nltk-budget", type=float, default=60.0,
                    help="seconds per repeat for NLTK; it parses sentences until exceeded")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-sentences", type=int, default=100, help="sentences for strgm")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    if not DATA.exists():
        print(f"treebank sample not found at {DATA}; nothing to do", file=sys.stderr)
        return 1
    try:
        import nltk
        from nltk.grammar import PCFG, Nonterminal, ProbabilisticProduction
        from nltk.parse.pchart import InsideChartParser
    except ImportError:
        print("nltk is not installed (pip install nltk, or the 'bench' extra)", file=sys.stderr)
        return 1
    alltrees = [clean_tree(t) for t in read_treebank(DATA)]
    alltrees = relabel_collisions([t for t in alltrees if t is not None])
    nfirst = len([t for t in read_treebank(DATA, limit=a.files) if clean_tree(t) is not None]) \
        if a.files else len(alltrees)
    short = [t for t in alltrees if len(tree_leaves(t)) <= a.max_len][: a.max_sentences]
    # grammar: the trees of the first --files files plus those of the test sentences
    g = treebank_grammar(alltrees[:nfirst] + short)
    sents = [tree_leaves(t) for t in short]
    theta = g.probabilities()
    nts = set(g.nonterminals)
    prods = [ProbabilisticProduction(Nonterminal(r.lhs),
                                     [Nonterminal(x) if x in nts else x for x in r.rhs], prob=float(p))
             for r, p in zip(g.rules, theta)]
    ng = PCFG(Nonterminal(g.start), prods)
    parser = InsideChartParser(ng)
    # how many sentences NLTK parses within its budget (fixed before the timed repeats)
    t0, n_ok = time.perf_counter(), 0
    for s_ in sents[: a.sentences]:
        next(iter(parser.parse(list(s_))))
        n_ok += 1
        if time.perf_counter() - t0 > a.nltk_budget:
            break
    sub = sents[:max(1, n_ok)]
    print(f"{len(sents)} sentences (length <= {a.max_len}), {len(g.rules)} rules, "
          f"{len(g.nonterminals)} nonterminals; NLTK on {len(sub)} sentences", flush=True)

    def ours(ss):
        cg = compile_grammar(g)  # compilation included in the timing
        t = time.perf_counter()
        res = corpus_inside_outside(cg, ss, theta)
        dt = time.perf_counter() - t
        assert not res.unparsable
        return dt

    def theirs(ss):
        t = time.perf_counter()
        for s in ss:
            next(iter(parser.parse(list(s))))
        return time.perf_counter() - t

    rows = {"ours_all": [], "ours_sub": [], "nltk_sub": []}
    for rep in range(a.repeats):
        rows["ours_all"].append(ours(sents))
        rows["ours_sub"].append(ours(sub))
        rows["nltk_sub"].append(theirs(sub))
        print(f"repeat {rep}: ours {len(sents) / rows['ours_all'][-1]:.1f} sent/s (all), "
              f"{len(sub) / rows['ours_sub'][-1]:.1f} sent/s (subset); "
              f"NLTK {len(sub) / rows['nltk_sub'][-1]:.3f} sent/s", flush=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    sps = {"ours_all": len(sents) / med["ours_all"], "ours_sub": len(sub) / med["ours_sub"],
           "nltk_sub": len(sub) / med["nltk_sub"]}
    ratio = sps["ours_sub"] / sps["nltk_sub"]
    res = {"sentences": len(sents), "nltk_sentences": len(sub), "max_len": a.max_len,
           "rules": len(g.rules), "nonterminals": len(g.nonterminals), "times": rows,
           "median_seconds": med, "sentences_per_second": sps, "speedup_same_sentences": ratio,
           "nltk_version": nltk.__version__, "python": platform.python_version(),
           "argv": vars(a)}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pcfg_inside_outside_vs_nltk.json").write_text(json.dumps(res, indent=1))
    md = ["# Inside–outside vs NLTK InsideChartParser", "",
          f"Treebank PCFG of the cleaned trees of the first {a.files or 'all'} WSJ sample files "
          f"plus the test sentences' trees: "
          f"{len(g.rules)} rules, {len(g.nonterminals)} nonterminals; the {len(sents)} "
          f"sentences of length ≤ {a.max_len}; NLTK parses the first {len(sub)} of them "
          f"(as many as fit its time budget). Median of {a.repeats} runs, side by side in one process. Ours = "
          "inside + outside + expected counts (compilation included); NLTK = "
          "InsideChartParser.parse (first/best parse, exhaustive chart).", "",
          "| system | sentences | median seconds | sentences/second |", "|---|---|---|---|",
          f"| strgm inside–outside | {len(sub)} | {med['ours_sub']:.4f} | {sps['ours_sub']:.1f} |",
          f"| NLTK InsideChartParser | {len(sub)} | {med['nltk_sub']:.3f} | {sps['nltk_sub']:.3f} |",
          f"| strgm inside–outside (all) | {len(sents)} | {med['ours_all']:.4f} | {sps['ours_all']:.1f} |",
          "", f"**Speed ratio on the same sentences: {ratio:.0f}×** (target ≥ 100×).", "",
          f"Command: `python benchmarks/pcfg_inside_outside_vs_nltk.py --files {a.files} "
          f"--max-len {a.max_len} --sentences {a.sentences} --repeats {a.repeats}`"]
    (out / "pcfg_inside_outside_vs_nltk.md").write_text("\n".join(md) + "\n")
    print(f"speed ratio {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
