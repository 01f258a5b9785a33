"""The Pitman–Yor TSG against the DP-TSG on the development split, same CPU budget.

Train a blocked-sampler TSG on wsj_0001-wsj_0139 (cleaned, X -> X collapsed; words seen
once become signatures; right-binarised with Markov order 1, as ``strgm tsg train``
does) for ``--seconds`` CPU seconds from a minimal initialisation with α, s (and for PY
the discounts d_c, starting at ``--discount``) resampled every sweep, one chain per
(process, seed); decode the sentences of at most ``--max-length`` words of
wsj_0140-wsj_0159 by MER (product objective, the ``strgm tsg parse`` default) over
``--samples`` MH-corrected draws; score with evalb's COLLINS.prm conventions (gold trees
keep X -> X). The test files wsj_0160-0179 are not read. A PY model is parsed through
its DP reading (:func:`strgm.grammars.tsg.pitman_yor.map_view`), as ``strgm tsg parse``
does.

    python -m benchmarks.grammars.tsg_pitman_yor_dev [--seeds 0 1 2] [--seconds 120]
        [--samples 100]

Writes benchmarks/results/tsg_pitman_yor_dev.{json,md,png} with the commit hash.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks import harness
from benchmarks.grammars.treebank_pcfg import load
from benchmarks.grammars.tsg_mer_dev import chain_arguments, treebank_missing
from strgm.grammars.bracket_score import score_corpus
from strgm.grammars.ptb import tree_leaves

NAME = "tsg_pitman_yor_dev"
TOP_LABELS = 12


def train(process: str, seed: int, seconds: float, discount: float):
    """(TSGModel, CPU seconds used): a blocked-sampler chain on wsj_0001-0139 run until
    ``seconds`` CPU seconds have passed (the sweep under way is finished)."""
    from strgm.grammars.tsg import BlockedMHTSG
    from strgm.grammars.tsg.model_file import TSGModel, prepare_trees

    trees, prep = prepare_trees(load(1, 139), 1, 1)
    k = BlockedMHTSG(trees, resample_hyper=True, process=process, discount=discount)
    t0 = time.process_time()
    st = k.init(seed, "minimal")
    while time.process_time() - t0 < seconds:
        st = k.sample(st)
    return TSGModel(k, st, prep), time.process_time() - t0


def decode(m, seed: int, samples: int, max_length: int) -> dict:
    """MER-product F1 etc. of model ``m`` on the development sentences."""
    import numpy as np

    from strgm.grammars.mer_decode import mer_tree
    from strgm.grammars.tsg.parse import TSGParser

    parser = TSGParser(m.kernel, m.state, samples=samples)
    gold = [t for t in load(140, 159, collapse=False) if len(tree_leaves(t)) <= max_length]
    rng = np.random.default_rng(seed)
    out = []
    for g in gold:
        words = tree_leaves(g)
        draws = [t for t, _ in parser.chain(parser.draws(m.map_words(words), rng), rng)]
        tree = mer_tree(draws, "product") if draws else None
        out.append(None if tree is None else m.restore(tree, words))
    s = score_corpus(gold, out).summary()
    return {"f1": s["f1"], "precision": s["precision"], "recall": s["recall"],
            "exact": s["exact_match"], "no_parse": out.count(None), "sentences": len(gold),
            "parse_acceptance": parser.acceptance}


def one_run(job) -> dict:
    """Train one chain, decode the development sentences, describe the chain."""
    import numpy as np

    process, seed, seconds, samples, max_length, discount = job
    m, used = train(process, seed, seconds, discount)
    st, t = m.trained, m.sampler.table
    sites = np.bincount(t.lab[np.asarray(st.site, dtype=bool)], minlength=t.n_labels)
    tail = st.trace[-10:]
    row = {"process": process, "seed": seed, "sweeps": st.iteration, "cpu_seconds": used,
           "log_likelihood": st.trace[-1]["log_likelihood"],
           "ets": st.trace[-1]["ets"], "train_acceptance": statistics.mean(
               r["acceptance"] for r in tail),
           "labels": list(t.labels), "sites": sites.tolist(),
           "alpha": np.asarray(st.alpha).tolist(),
           "discount": None if st.discount is None else np.asarray(st.discount).tolist()}
    row.update(decode(m, seed, samples, max_length))
    return row


def _msd(xs) -> tuple:
    xs = list(xs)
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def top_labels(rows, k: int = TOP_LABELS) -> list:
    """The ``k`` labels with most sites in the PY chains (summed over seeds)."""
    py = [r for r in rows if r["process"] == "py"] or rows
    tot = [sum(r["sites"][c] for r in py) for c in range(len(py[0]["labels"]))]
    order = sorted(range(len(tot)), key=lambda c: -tot[c])[:k]
    return [py[0]["labels"][c] for c in order]


def weighted_discount(r) -> float:
    """The discounts' mean weighted by each label's number of sites."""
    return sum(d * n for d, n in zip(r["discount"], r["sites"])) / sum(r["sites"])


def report(res) -> str:
    a, rows = res["settings"], res["rows"]
    cmd = harness.command(__name__, f"--seeds {' '.join(map(str, a['seeds']))} "
                                    f"--seconds {a['seconds']:g} --samples {a['samples']} "
                                    f"--max-length {a['max_length']} --discount "
                                    f"{a['discount']:g} --jobs {a['jobs']}")
    lines = [f"# Pitman–Yor TSG against DP-TSG, development split (commit {res['commit']})",
             "", f"What was run: `{cmd}`. Train wsj_0001-0139 (blocked sampler, minimal "
             f"init, α, s and d resampled every sweep, {a['seconds']:g} CPU s per chain, "
             "one chain per seed), decode the wsj_0140-0159 sentences of at most "
             f"{a['max_length']} words by MER (product) over {a['samples']} MH-corrected "
             "draws; evalb COLLINS.prm conventions. F1 in %, mean ± sd over seeds, then "
             "each seed.", "",
             "| process | F1 mean ± sd | P | R | per seed | sweeps | training MH acc. | "
             "parsing MH acc. | ETs |", "|---|---|---|---|---|---|---|---|---|"]
    for p in ("dp", "py"):
        rs = [r for r in rows if r["process"] == p]
        if not rs:
            continue
        f1 = [100 * r["f1"] for r in rs]
        m, sd = _msd(f1)
        lines.append(
            f"| {p.upper()} | {m:.2f} ± {sd:.2f} | "
            f"{100 * statistics.mean(r['precision'] for r in rs):.2f} | "
            f"{100 * statistics.mean(r['recall'] for r in rs):.2f} | "
            f"{', '.join(f'{x:.2f}' for x in f1)} | {', '.join(str(r['sweeps']) for r in rs)} | "
            f"{statistics.mean(r['train_acceptance'] for r in rs):.4f} | "
            f"{statistics.mean(r['parse_acceptance'] for r in rs):.4f} | "
            f"{round(statistics.mean(r['ets'] for r in rs))} |")
    py = [r for r in rows if r["process"] == "py"]
    if py:
        m, sd = _msd(weighted_discount(r) for r in py)
        lines += ["", f"Learned discounts (PY, last state): site-weighted mean d = {m:.3f} ± "
                  f"{sd:.3f} over seeds. The {TOP_LABELS} labels with most sites, d_c and "
                  "α_c mean ± sd over seeds (DP's α_c beside):", "",
                  "| label | sites | d_c (PY) | α_c (PY) | α_c (DP) |", "|---|---|---|---|---|"]
        for lab in top_labels(rows):
            c = py[0]["labels"].index(lab)
            d, dsd = _msd(r["discount"][c] for r in py)
            al, alsd = _msd(r["alpha"][c] for r in py)
            dp = [r["alpha"][c] for r in rows if r["process"] == "dp"]
            dp_alpha = f"{statistics.mean(dp):.3g}" if dp else "–"
            lines.append(f"| {lab} | {round(statistics.mean(r['sites'][c] for r in py))} | "
                         f"{d:.3f} ± {dsd:.3f} | {al:.3g} ± {alsd:.2g} | {dp_alpha} |")
    lines += ["", verdict(rows), "", f"![F1 per seed and learned discounts]({NAME}.png)"]
    return "\n".join(lines) + "\n"


def verdict(rows) -> str:
    """One sentence: PY's mean F1 minus DP's against the larger seed sd, and the sweeps."""
    f1 = {p: [100 * r["f1"] for r in rows if r["process"] == p] for p in ("dp", "py")}
    if not f1["dp"] or not f1["py"]:
        return ""
    diff = statistics.mean(f1["py"]) - statistics.mean(f1["dp"])
    spread = max(_msd(f1["dp"])[1], _msd(f1["py"])[1])
    sweeps = {p: statistics.mean(r["sweeps"] for r in rows if r["process"] == p)
              for p in ("dp", "py")}
    word = "within" if abs(diff) <= spread else "beyond"
    return (f"PY − DP: {diff:+.2f} F1 points, {word} the larger seed sd ({spread:.2f}); "
            f"in the same CPU time PY ran {sweeps['py']:.0f} sweeps on average against "
            f"DP's {sweeps['dp']:.0f} (a PY sweep also re-seats every tree's customers).")


def plot(res, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    rows = res["rows"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [1, 2]})
    for i, p in enumerate(("dp", "py")):
        f1 = [100 * r["f1"] for r in rows if r["process"] == p]
        ax.plot([i] * len(f1), f1, "o", alpha=0.7)
        if f1:
            ax.hlines(statistics.mean(f1), i - 0.2, i + 0.2, colors="k")
    ax.set_xticks([0, 1], ["DP", "PY"])
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylabel("dev F1 (MER product), %")
    ax.set_title(f"{res['settings']['seconds']:g} CPU s per chain")
    py = [r for r in rows if r["process"] == "py"]
    if py:
        labs = top_labels(rows)
        idx = [py[0]["labels"].index(x) for x in labs]
        means = [statistics.mean(r["discount"][c] for r in py) for c in idx]
        sds = [_msd(r["discount"][c] for r in py)[1] for c in idx]
        bx.bar(range(len(labs)), means, yerr=sds, color="tab:orange")
        bx.set_xticks(range(len(labs)), labs, rotation=60, fontsize=8)
        bx.set_ylim(0, 1)
        bx.set_ylabel("learned discount d_c")
        bx.set_title("PY discounts, labels with most sites")
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chain_arguments(ap)
    ap.add_argument("--discount", type=float, default=0.5)
    ap.add_argument("--processes", nargs="+", default=["dp", "py"], choices=("dp", "py"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--from-json", action="store_true",
                    help="rewrite the .md and .png from the existing .json (no runs)")
    a = ap.parse_args()
    if a.from_json:
        res = harness.read_json(NAME)
        harness.write_markdown(NAME, report(res))
        plot(res, NAME)
        print(report(res))
        return 0
    if treebank_missing():
        return 0
    jobs = [(p, s, a.seconds, a.samples, a.max_length, a.discount)
            for s in a.seeds for p in a.processes]
    rows = harness.map_jobs(one_run, jobs, a.jobs)
    res = {"commit": harness.git_revision(), "settings": vars(a), "rows": rows}
    harness.write_json(NAME, res, strict=True)
    text = report(res)
    harness.write_markdown(NAME, text)
    plot(res, NAME)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
