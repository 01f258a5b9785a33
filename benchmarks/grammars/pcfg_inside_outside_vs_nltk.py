"""Inside–outside throughput vs NLTK's ``InsideChartParser``.

Grammar: the relative-frequency PCFG of the cleaned Penn Treebank sample trees of the
sentences used (so every sentence parses), from the data directory's ``treebank/wsj``.  Ours:
inside + outside + expected rule counts for every sentence (sentences batched by length).
NLTK: ``InsideChartParser(grammar).parse`` (exhaustive probabilistic chart parsing, no beam)
on the same grammar and sentences.  Sentences/second are medians over ``--repeats`` runs,
measured side by side in one process.

    python -m benchmarks.grammars.pcfg_inside_outside_vs_nltk single [--max-len 10]
        [--sentences 12] [--files 40]
Writes benchmarks/results/pcfg_inside_outside_vs_nltk.{json,md}.

Two modes:

* ``sweep`` (default): grammar-size sweep, side by side, see :func:`main_sweep`;
  writes ``pcfg_inside_outside_vs_nltk_sweep.{json,md,png}``.

      python -m benchmarks.grammars.pcfg_inside_outside_vs_nltk [sweep]
          [--trees 0 10 25 50 100 200 400 800] [--sentences 11] [--cap 10] [--repeats 3]

* ``single``: the original one-grammar measurement (arguments below).

      python -m benchmarks.grammars.pcfg_inside_outside_vs_nltk single --files 2 --max-len 7 ...

What each side computes (sweep mode)
-----------------------------------
NLTK ``InsideChartParser(grammar).parse(tokens)`` (beam 0 = exhaustive) runs an agenda
chart parser to completion, then reads *every* parse tree off the chart
(``Chart.parses``, bounded by ``nltk.parse.chart.MAX_PARSE_TREES`` nodes), gives each its
probability P(t) = Π θ_r and sorts them; its first tree is the Viterbi tree, and Σ_t P(t)
over the returned list is the inside probability P(w) (the list is complete unless a unary
cycle is cut by NLTK's cycle filter).  We time the full ``parse`` call (= the list of all
parses with probabilities).  strgm: per length batch one chart: inside (log P(w)),
outside, expected counts of every rule, *and* the Viterbi tree — a superset of what
NLTK returns except the explicit list of all trees, which is exponential in general.

Agreement is checked on every sentence NLTK finishes: |log Σ_t P_NLTK(t) − log Z_strgm|
and |log max_t P_NLTK(t) − Viterbi log P_strgm|.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# single-threaded on both sides (NLTK is pure Python): set before numpy is imported
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from benchmarks import harness  # noqa: E402
from strgm.grammars.ptb import clean_tree, read_treebank, relabel_collisions, tree_leaves, treebank_grammar  # noqa: E402
from strgm.grammars.cfg import compile_grammar  # noqa: E402
from strgm.grammars.chart import corpus_inside_outside  # noqa: E402

DATA = harness.TREEBANK


def _inputs_available() -> bool:
    """True when the treebank sample and nltk are both present (else says which is not)."""
    if not DATA.exists():
        print(f"treebank sample not found at {DATA}; nothing to do", file=sys.stderr)
        return False
    try:
        import nltk  # noqa: F401
    except ImportError:
        print("nltk is not installed (pip install nltk, or the 'bench' extra)", file=sys.stderr)
        return False
    return True


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] != ["single"]:
        return main_sweep(argv[1:] if argv[:1] == ["sweep"] else argv)
    argv = argv[1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=None, help="treebank files (default: all)")
    ap.add_argument("--max-len", type=int, default=8)
    ap.add_argument("--sentences", type=int, default=20, help="at most this many for NLTK")
    ap.add_argument("--nltk-budget", type=float, default=60.0,
                    help="seconds per repeat for NLTK; it parses sentences until exceeded")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-sentences", type=int, default=100, help="sentences for strgm")
    ap.add_argument("--out", default=str(harness.RESULTS))
    a = ap.parse_args(argv)
    if not _inputs_available():
        return 1
    import nltk
    from nltk.grammar import PCFG, Nonterminal, ProbabilisticProduction
    from nltk.parse.pchart import InsideChartParser
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
    out = Path(a.out).resolve()
    harness.write_json(out / "pcfg_inside_outside_vs_nltk", res)
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
          "Command: `" + harness.command(
              __name__, f"single --files {a.files} --max-len {a.max_len} --sentences "
                        f"{a.sentences} --repeats {a.repeats}") + f"` at {harness.git_revision()}"]
    harness.write_markdown(out / "pcfg_inside_outside_vs_nltk", "\n".join(md) + "\n")
    print(f"speed ratio {ratio:.1f}x")
    return 0


#: sweep mode measures process CPU time (user + system, all threads): the benchmark machine
#: is shared, and wall time under contention would penalise whichever side ran while
#: another job was busy.  numpy may use several BLAS threads; their CPU time is counted.
_clock = time.process_time


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _nltk_parse_capped(parser, tokens, cap):
    """(CPU seconds, parses or None, reason).  A SIGPROF timer (process CPU time) interrupts
    the pure-Python parser after ``cap`` CPU seconds."""
    import signal
    old = signal.signal(signal.SIGPROF, _alarm)
    t = _clock()
    try:
        signal.setitimer(signal.ITIMER_PROF, cap)
        try:
            parses = list(parser.parse(list(tokens)))
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        return _clock() - t, parses, "ok"
    except _Timeout:
        return _clock() - t, None, "timeout"
    except ValueError as e:  # NLTK's MAX_PARSE_TREES guard on an exponential forest
        if "Refusing to extract" in str(e):
            return _clock() - t, None, "tree-budget"
        raise
    finally:
        signal.signal(signal.SIGPROF, old)


def break_unary_cycles(trees):
    """Make the treebank grammar free of unary cycles (NLTK's InsideChartParser treats edges
    with different probabilities as different edges, so a unary cycle A ⇒⁺ A makes it
    generate ever new edges: it never terminates, even on 5-word sentences).  Self-unaries
    (X (X ...)) are collapsed; then, while the unary graph has a cycle, the least frequent
    unary rule A → B on a cycle is removed by splicing B's children into A in every tree.
    Returns (trees, list of removed unary rules)."""
    from collections import Counter

    def collapse(t, bad):
        if isinstance(t, str):
            return t
        kids = []
        for c in t[1:]:
            c = collapse(c, bad)
            kids.append(c)
        while len(kids) == 1 and not isinstance(kids[0], str) and (
                kids[0][0] == t[0] or (t[0], kids[0][0]) in bad):
            kids = list(kids[0][1:])
        return (t[0],) + tuple(kids)

    removed = []
    trees = [collapse(t, set()) for t in trees]
    while True:
        cnt: Counter = Counter()

        def scan(t):
            if isinstance(t, str):
                return
            if len(t) == 2 and not isinstance(t[1], str):
                cnt[(t[0], t[1][0])] += 1
            for c in t[1:]:
                scan(c)
        for t in trees:
            scan(t)
        adj: dict = {}
        for a, b in cnt:
            adj.setdefault(a, set()).add(b)

        def reaches(src, dst):
            seen, st = set(), [src]
            while st:
                x = st.pop()
                if x == dst:
                    return True
                for y in adj.get(x, ()):
                    if y not in seen:
                        seen.add(y)
                        st.append(y)
            return False
        oncyc = [e for e in cnt if reaches(e[1], e[0])]
        if not oncyc:
            return trees, removed
        e = min(oncyc, key=lambda e: (cnt[e], e))
        removed.append(e)
        trees = [collapse(t, {e}) for t in trees]


def _ours(cg, theta, sents):
    """Inside + outside + expected counts + Viterbi for every sentence (batched by length).
    Returns (seconds, logZ array, Viterbi log P array)."""
    from strgm.grammars.chart import batches_by_length, inside
    t = _clock()
    lz = np.full(len(sents), -np.inf)
    vit = np.full(len(sents), -np.inf)
    for idx in batches_by_length(sents):
        ch = inside(cg, [sents[i] for i in idx], theta)
        ch.expected_counts()
        vt = ch.viterbi()
        lz[idx] = ch.logZ
        vit[idx] = [v[1] if v is not None else -np.inf for v in vt]
    return _clock() - t, lz, vit


def _plot_sweep(rows, out):
    """sentences/second and speed ratio vs grammar size (PNG; skipped without matplotlib).
    Re-plot from the JSON: ``_plot_sweep(json.load(f)["rows"], out_dir)``."""
    plt = harness.pyplot()
    if plt is not None:
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        x = [r["rules"] for r in rows]
        xf = [r["rules"] for r in rows if r["ratio_finished"] is not None]
        ax[0].loglog(xf, [r["nltk_sent_per_s_finished"] for r in rows if r["ratio_finished"] is not None], "o-", label="NLTK (finished sentences)")
        ax[0].loglog(xf, [r["strgm_sent_per_s_finished"] for r in rows if r["ratio_finished"] is not None], "s-", label="strgm (same sentences)")
        ax[0].loglog(x, [r["strgm_sent_per_s_all"] for r in rows], "s--", label="strgm (all sentences)")
        ax[0].set_xlabel("grammar rules")
        ax[0].set_ylabel("sentences / second")
        ax[0].legend()
        ax[1].loglog(xf, [r["ratio_finished"] for r in rows if r["ratio_finished"] is not None], "o-", label="same sentences")
        ax[1].loglog(x, [r["ratio_all_lower_bound"] for r in rows], "^--", label="all (lower bound)")
        ax[1].axhline(100, color="gray", ls=":")
        ax[1].set_xlabel("grammar rules")
        ax[1].set_ylabel("speed ratio strgm / NLTK")
        ax[1].legend()
        from matplotlib.ticker import NullFormatter
        for x_ in ax:
            x_.xaxis.set_minor_formatter(NullFormatter())
        fig.tight_layout()
        harness.save_figure(fig, Path(out).resolve() / "pcfg_inside_outside_vs_nltk_sweep",
                            dpi=100)


def main_sweep(argv=None):
    """Grammar-size sweep.  Test sentences: one per length in [--min-len, --max-len] (up to
    --sentences), taken from the end of the treebank.  Grammar k: relative-frequency PCFG of
    the first k cleaned trees plus the test sentences' own trees (so every sentence parses;
    grammars are nested, hence NLTK's exhaustive chart only grows with k).

    NLTK: pass 1 parses each sentence under a per-sentence cap (--cap CPU seconds, SIGPROF);
    a sentence that hit the cap on a smaller grammar is not retried on a larger one
    (charted as ≥ cap).  The finished sentences are re-parsed --repeats − 1 more times
    (medians over --repeats runs).  strgm: --repeats runs on all sentences and on the
    finished subset.  Reported per grammar: sentences/second of both on the finished
    subset and the speed ratio there (exact), and the ratio on all sentences counting
    each capped NLTK sentence at the cap (a lower bound on the true ratio).
    """
    ap = argparse.ArgumentParser(description=main_sweep.__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, nargs="+", default=[0, 10, 25, 50, 100, 200, 400, 800],
                    help="training trees per grammar (grammar sizes)")
    ap.add_argument("--min-len", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=15)
    ap.add_argument("--sentences", type=int, default=11)
    ap.add_argument("--cap", type=float, default=10.0,
                    help="NLTK CPU seconds per sentence")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(harness.RESULTS))
    a = ap.parse_args(argv)
    if not _inputs_available():
        return 1
    import nltk
    from nltk.grammar import PCFG, Nonterminal, ProbabilisticProduction
    from nltk.parse.pchart import InsideChartParser
    trees = [clean_tree(t) for t in read_treebank(DATA)]
    trees = relabel_collisions([t for t in trees if t is not None])
    trees, removed = break_unary_cycles(trees)
    print(f"unary rules removed to break unary cycles: {removed}", flush=True)
    want = list(range(a.min_len, a.max_len + 1))
    test, used = [], set()
    for i in range(len(trees) - 1, -1, -1):  # from the end: disjoint from training trees
        n = len(tree_leaves(trees[i]))
        if n in want and n not in used and i >= max(a.trees):
            test.append(i)
            used.add(n)
        if len(test) >= min(a.sentences, len(want)):
            break
    test.sort(key=lambda i: len(tree_leaves(trees[i])))
    sents = [tree_leaves(trees[i]) for i in test]
    print(f"{len(sents)} test sentences, lengths {[len(s) for s in sents]}", flush=True)
    capped: set = set()
    rows = []
    load0 = list(os.getloadavg())
    for k in a.trees:
        g = treebank_grammar(trees[:k] + [trees[i] for i in test])
        theta = g.probabilities()
        nts = set(g.nonterminals)
        prods = [ProbabilisticProduction(Nonterminal(r.lhs),
                                         [Nonterminal(x) if x in nts else x for x in r.rhs],
                                         prob=float(p)) for r, p in zip(g.rules, theta)]
        parser = InsideChartParser(PCFG(Nonterminal(g.start), prods))
        status, t1, nl_inside, nl_vit = [], [], [], []
        for j, s_ in enumerate(sents):
            if j in capped:
                status.append("skipped (capped on a smaller grammar)")
                t1.append(a.cap)
                nl_inside.append(None)
                nl_vit.append(None)
                continue
            dt, parses, why = _nltk_parse_capped(parser, s_, a.cap)
            status.append(why)
            t1.append(dt if why == "ok" else a.cap)
            if why != "ok":
                capped.add(j)
                nl_inside.append(None)
                nl_vit.append(None)
            else:
                lp = np.array([np.log(t.prob()) for t in parses])
                nl_inside.append(float(np.logaddexp.reduce(lp)))
                nl_vit.append(float(np.log(parses[0].prob())))
        fin = [j for j, st in enumerate(status) if st == "ok"]
        nl_times = [[t1[j] for j in fin]]
        for _ in range(a.repeats - 1):
            nl_times.append([_nltk_parse_capped(parser, sents[j], 10 * a.cap)[0] for j in fin])
        nl_fin = statistics.median(sum(r) for r in nl_times) if fin else float("nan")
        # grammar preprocessing is excluded on both sides (NLTK: PCFG + parser objects
        # built above; strgm: compile_grammar, timed separately)
        our_all, our_fin, comp = [], [], []
        for _ in range(a.repeats):
            t = _clock()
            cg = compile_grammar(g)
            comp.append(_clock() - t)
            dt, lz, vit = _ours(cg, theta, sents)
            our_all.append(dt + 0.0)
            if fin:
                cg = compile_grammar(g)
                our_fin.append(_ours(cg, theta, [sents[j] for j in fin])[0])
        oa = statistics.median(our_all)
        of = statistics.median(our_fin) if fin else float("nan")
        d_in = [abs(nl_inside[j] - lz[j]) for j in fin]
        d_vit = [abs(nl_vit[j] - vit[j]) for j in fin]
        nl_all_lb = sum(statistics.median(r[i] for r in nl_times) for i in range(len(fin))) \
            + a.cap * (len(sents) - len(fin))
        row = {"train_trees": k, "rules": len(g.rules), "nonterminals": len(g.nonterminals),
               "nltk_status": status, "nltk_finished": len(fin),
               "nltk_finished_lengths": [len(sents[j]) for j in fin],
               "nltk_median_seconds_finished": nl_fin,
               "strgm_median_seconds_finished": of,
               "strgm_median_seconds_all": oa,
               "nltk_sent_per_s_finished": len(fin) / nl_fin if fin else None,
               "strgm_sent_per_s_finished": len(fin) / of if fin else None,
               "strgm_sent_per_s_all": len(sents) / oa,
               "ratio_finished": (nl_fin / of) if fin else None,
               "nltk_seconds_all_lower_bound": nl_all_lb,
               "ratio_all_lower_bound": nl_all_lb / oa,
               "max_abs_diff_log_inside": max(d_in) if d_in else None,
               "max_abs_diff_log_viterbi": max(d_vit) if d_vit else None,
               "strgm_compile_seconds_median": statistics.median(comp),
               "strgm_times_all": our_all, "strgm_times_finished": our_fin,
               "nltk_times_finished": [sum(r) for r in nl_times]}
        rows.append(row)
        rf = row["ratio_finished"]
        print(f"{k:5d} trees {len(g.rules):5d} rules: NLTK finished {len(fin)}/{len(sents)} "
              f"(lengths {row['nltk_finished_lengths']}); ratio on finished "
              f"{rf if rf is None else round(rf, 1)}x, all (lower bound) "
              f"{row['ratio_all_lower_bound']:.1f}x; strgm {row['strgm_sent_per_s_all']:.1f} "
              f"sent/s; max |Δ log inside| {row['max_abs_diff_log_inside']}, "
              f"|Δ log viterbi| {row['max_abs_diff_log_viterbi']}", flush=True)
    res = {"mode": "sweep", "sentence_lengths": [len(s) for s in sents], "cap_seconds": a.cap,
           "repeats": a.repeats, "rows": rows, "clock": "time.process_time (CPU seconds)",
           "loadavg_at_start": load0,
           "unary_rules_removed": [list(e) for e in removed], "nltk_version": nltk.__version__,
           "python": platform.python_version(), "numpy": np.__version__,
           "machine": platform.machine(), "loadavg_at_end": list(os.getloadavg()),
           "argv": vars(a)}
    out = Path(a.out).resolve()
    harness.write_json(out / "pcfg_inside_outside_vs_nltk_sweep", res)

    def f(x, d=1):
        return "–" if x is None else f"{x:.{d}f}"
    md = ["# Inside–outside vs NLTK InsideChartParser: grammar-size sweep", "",
          f"Test sentences: {len(sents)} WSJ sentences, one per length "
          f"{[len(s) for s in sents]}, from the end of the treebank sample. Grammar: "
          "relative-frequency PCFG of the first k cleaned trees plus the test trees; "
          "self-unaries collapsed and unary cycles broken by splicing out the rarest unary "
          f"rule on a cycle ({', '.join(a_ + '→' + b_ for a_, b_ in removed) or 'none'}): "
          "NLTK's InsideChartParser does not terminate on a grammar with a unary cycle "
          "(edges with different probabilities are distinct, so A→…→A yields ever new "
          "edges). "
          f"All times are process CPU seconds (the machine is shared; see the JSON's load "
          f"average). NLTK per-sentence cap {a.cap:g} CPU s (SIGPROF); a sentence capped on a smaller "
          "grammar is not retried on larger (nested) grammars. Medians of "
          f"{a.repeats} runs, side by side in one process.", "",
          "NLTK computes: `InsideChartParser.parse` = exhaustive agenda chart parse, then "
          "the list of *all* parse trees with P(t), sorted (first = Viterbi tree; Σ P(t) = "
          "inside probability). strgm computes per sentence: inside (log P(w)), outside, "
          "expected counts of every rule and the Viterbi tree (numpy single-threaded). Grammar preprocessing is "
          "excluded on both sides (NLTK: PCFG/parser construction; strgm: compile_grammar, "
          "≤ a few ms, in the JSON).", "",
          "| train trees | rules | NTs | NLTK finished | NLTK sent/s | strgm sent/s (same) | "
          "**ratio (same sentences)** | ratio all (≥, capped at cap) | strgm sent/s (all) | "
          "max Δlog P(w) | max Δlog Viterbi |", "|" + "---|" * 11]
    for r in rows:
        md.append(f"| {r['train_trees']} | {r['rules']} | {r['nonterminals']} | "
                  f"{r['nltk_finished']}/{len(sents)} (len {r['nltk_finished_lengths']}) | "
                  f"{f(r['nltk_sent_per_s_finished'], 3)} | {f(r['strgm_sent_per_s_finished'])} | "
                  f"**{f(r['ratio_finished'])}×** | ≥{r['ratio_all_lower_bound']:.0f}× | "
                  f"{r['strgm_sent_per_s_all']:.1f} | "
                  f"{'–' if r['max_abs_diff_log_inside'] is None else '%.1e' % r['max_abs_diff_log_inside']} | "
                  f"{'–' if r['max_abs_diff_log_viterbi'] is None else '%.1e' % r['max_abs_diff_log_viterbi']} |")
    md += ["", "Command: `" + harness.command(
        __name__, "sweep --trees " + " ".join(map(str, a.trees)) + f" --sentences "
                  f"{a.sentences} --cap {a.cap:g} --repeats {a.repeats}")
           + f"` at {harness.git_revision()}"]
    harness.write_markdown(out / "pcfg_inside_outside_vs_nltk_sweep", "\n".join(md) + "\n")
    _plot_sweep(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
