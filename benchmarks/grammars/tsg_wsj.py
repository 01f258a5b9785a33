"""DP-TSG on the WSJ sample: training likelihood against time for the blocked and local
samplers from minimal and maximal initialisation, and held-out F1 (MER, MPD) beside the
treebank PCFG (Viterbi, max-rule), all at the same commit.

Train on wsj_0001-wsj_0159 (cleaned; words seen once become signatures; right-binarised
with horizontal Markovisation 1, as ``strgm tsg train`` does), test on the sentences of
at most ``--max-length`` words of wsj_0160-wsj_0179, scored with evalb's COLLINS.prm
conventions.  Each chain runs with hyperparameter resampling for ``--seconds`` of CPU
time (at most ``--max-iters`` sweeps), ``--jobs`` chains at a time, one per process, so
each has a core.  Models are kept in benchmarks/results/tsg_wsj_models/ (git-ignored).

    python -m benchmarks.grammars.tsg_wsj [--seconds 480] [--samples 100] [--jobs 2]

Writes benchmarks/results/tsg_wsj.{json,md,png} with the commit hash.
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool

from benchmarks import harness
from benchmarks.grammars.treebank_pcfg import DATA, load, parse_all
from strgm.grammars.bracket_score import score_corpus
from strgm.grammars.ptb import tree_leaves
from strgm.grammars.unknown_words import treebank_pcfg

MODELS = harness.result_path("tsg_wsj_models")
RUNS = [("blocked", "minimal"), ("blocked", "maximal"), ("local", "minimal"),
        ("local", "maximal")]


def train_chain(job) -> dict:
    """One chain for ``seconds`` CPU seconds: its trace with CPU time, saved as a model
    unless the job's optional sixth element is False."""
    sampler, init, seconds, max_iters, seed = job[:5]
    from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG
    from strgm.grammars.tsg.model_file import TSGModel, prepare_trees, save_model

    trees, prep = prepare_trees(load(1, 159), 1, 1)
    cls = BlockedMHTSG if sampler == "blocked" else LocalGibbsTSG
    k = cls(trees, resample_hyper=True)
    t0 = time.process_time()
    st = k.init(seed, init)
    rows = [{"iteration": 0, "cpu": 0.0, "log_likelihood": k.log_likelihood(st)}]
    while time.process_time() - t0 < seconds and st.iteration < max_iters:
        st = k.sample(st)
        rows.append({**st.trace[-1], "cpu": time.process_time() - t0})
    if len(job) < 6 or job[5]:
        save_model(MODELS / f"{sampler}_{init}.json", TSGModel(k, st, prep))
    return {"sampler": sampler, "init": init, "seed": seed, "trace": rows,
            "sweeps": st.iteration, "cpu": rows[-1]["cpu"],
            "sec_per_sweep": rows[-1]["cpu"] / max(1, st.iteration)}


def parse_model(job) -> list:
    """Held-out F1 of one saved model: MER (sum and product of the rules' marginals, from
    the same MH draws) and, with ``mpd``, the most probable derivation."""
    name, with_mpd, samples, max_length, limit = job
    import numpy as np

    from strgm.grammars.mer_decode import mer_tree
    from strgm.grammars.tsg.model_file import load_model
    from strgm.grammars.tsg.parse import TSGParser

    gold = [t for t in load(160, 179, collapse=False) if len(tree_leaves(t)) <= max_length][:limit]
    m = load_model(MODELS / f"{name}.json")
    parser = TSGParser(m.kernel, m.state, samples=samples)
    rng = np.random.default_rng(0)
    decodes = ["mer", "mer-product"] + (["mpd"] if with_mpd else [])
    out = {d: [] for d in decodes}
    secs = {d: [] for d in decodes}
    for g in gold:
        words, mapped = tree_leaves(g), m.map_words(tree_leaves(g))
        t0 = time.process_time()
        chain = [t for t, _ in parser.chain(parser.draws(mapped, rng), rng)]
        t_draw = time.process_time() - t0
        for d in decodes:
            t0 = time.process_time()
            if d == "mpd":
                tree = parser.parse(mapped, "mpd")
            else:
                tree = mer_tree(chain, "product" if d == "mer-product" else "sum") \
                    if chain else None
            secs[d].append((len(words), time.process_time() - t0 + (0 if d == "mpd"
                                                                     else t_draw)))
            out[d].append(None if tree is None else m.restore(tree, words))
    rows = []
    for d in decodes:
        s = score_corpus(gold, out[d]).summary()
        rows.append({"model": name, "decode": d, "f1": s["f1"], "precision": s["precision"],
                     "recall": s["recall"], "exact": s["exact_match"],
                     "no_parse": out[d].count(None), "sentences": len(gold),
                     "sec_per_sentence": sum(t for _, t in secs[d]) / len(gold),
                     "longest": max(secs[d]), "acceptance": parser.acceptance})
    return rows


def pcfg_rows(max_length, limit) -> list:
    gold = [t for t in load(160, 179, collapse=False) if len(tree_leaves(t)) <= max_length][:limit]
    g, _ = treebank_pcfg(load(1, 159), horizontal=1)
    rows = []
    for decode in ("viterbi", "maxrule"):
        t0 = time.process_time()
        out = parse_all(g, [tree_leaves(t) for t in gold], decode)
        s = score_corpus(gold, out).summary()
        rows.append({"model": "treebank PCFG", "decode": decode, "f1": s["f1"],
                     "precision": s["precision"], "recall": s["recall"],
                     "exact": s["exact_match"], "no_parse": out.count(None),
                     "sentences": len(gold),
                     "sec_per_sentence": (time.process_time() - t0) / len(gold)})
    return rows


def time_to_reach(trace, target) -> float | None:
    """CPU seconds at which a trace first reaches log-likelihood ``target``."""
    return next((r["cpu"] for r in trace if r["log_likelihood"] >= target), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=480.0)
    ap.add_argument("--max-iters", type=int, default=100000)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--max-length", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="first N test sentences only")
    ap.add_argument("--reuse", action="store_true",
                    help="parse with the saved models and keep the chains of the last run")
    a = ap.parse_args()
    if not DATA.is_dir():
        print(f"treebank sample not found at {DATA}; nothing to do", file=sys.stderr)
        return 0
    MODELS.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with Pool(a.jobs) as pool:
        if a.reuse:
            last = harness.read_json("tsg_wsj")
            chains, a.seconds = last["chains"], last["settings"]["seconds"]
        else:
            chains = pool.map(train_chain, [(s, i, a.seconds, a.max_iters, a.seed)
                                            for s, i in RUNS], chunksize=1)
        jobs = [(f"{s}_{i}", i == "minimal", a.samples, a.max_length, a.limit)
                for s, i in RUNS]
        parses = [r for rows in pool.map(parse_model, jobs, chunksize=1) for r in rows]
    parses += pcfg_rows(a.max_length, a.limit)
    res = {"commit": harness.git_revision(), "settings": vars(a), "chains": chains,
           "parses": parses, "speed_ratio": speed_ratio(chains),
           "wall_seconds": time.time() - t0}
    harness.write_json("tsg_wsj", res, strict=True)
    harness.write_markdown("tsg_wsj", report(res))
    plot(chains, "tsg_wsj")
    print(report(res))
    return 0


def speed_ratio(chains) -> list:
    """Per init: CPU time of the blocked chain to reach the local chain's final
    log-likelihood, over the local chain's CPU time (the target is ≤ 1/3)."""
    out = []
    for init in ("minimal", "maximal"):
        b = next(c for c in chains if c["sampler"] == "blocked" and c["init"] == init)
        loc = next(c for c in chains if c["sampler"] == "local" and c["init"] == init)
        target = loc["trace"][-1]["log_likelihood"]
        tb = time_to_reach(b["trace"], target)
        out.append({"init": init, "local_final": target, "local_cpu": loc["cpu"],
                    "blocked_cpu_to_reach": tb,
                    "ratio": None if tb is None else tb / loc["cpu"]})
    return out


def report(res) -> str:
    lines = [f"# DP-TSG on the WSJ sample (commit {res['commit']})", "",
             "Train wsj_0001-0159, test wsj_0160-0179 sentences of at most "
             f"{res['settings']['max_length']} words; evalb COLLINS.prm conventions. "
             f"Chains: {res['settings']['seconds']:.0f} CPU s each, α and s resampled.", "",
             "| model | decode | F1 | P | R | exact | no parse | CPU s/sentence |",
             "|---|---|---|---|---|---|---|---|"]
    for p in res["parses"]:
        lines.append(f"| {p['model']} | {p['decode']} | {100 * p['f1']:.2f} | "
                     f"{100 * p['precision']:.2f} | {100 * p['recall']:.2f} | "
                     f"{100 * p['exact']:.1f} | {p['no_parse']} | "
                     f"{p['sec_per_sentence']:.3f} |")
    lines += ["", "| sampler | init | sweeps | CPU s/sweep | final log-likelihood |",
              "|---|---|---|---|---|"]
    for c in res["chains"]:
        lines.append(f"| {c['sampler']} | {c['init']} | {c['sweeps']} | "
                     f"{c['sec_per_sweep']:.2f} | {c['trace'][-1]['log_likelihood']:.0f} |")
    lines += ["", "Blocked sampler's CPU time to reach the local sampler's final "
              "log-likelihood, as a fraction of the local sampler's time (target ≤ 1/3):", ""]
    for r in res["speed_ratio"]:
        got = "never" if r["ratio"] is None else f"{r['ratio']:.3f}"
        lines.append(f"* {r['init']} init: {got} (local: {r['local_final']:.0f} after "
                     f"{r['local_cpu']:.0f} CPU s)")
    lines += ["", "Decoders: `mer` maximises the sum of the anchored CFG rules' Monte-Carlo "
              "marginals over the MH-corrected draws (Cohn & Blunsom 2010), `mer-product` "
              "their product from the same draws, `mpd` is the most probable derivation. "
              "CPU s/sentence of the MER rows includes the draws.",
              "", "Command: `" + harness.command(
                  __name__, f"--seconds {res['settings']['seconds']:g} --samples "
                            f"{res['settings']['samples']}"
                            f"{' --reuse' if res['settings'].get('reuse') else ''}") + "` "
              f"({res['wall_seconds']:.0f} s wall in all"
              f"{'; chains from the previous run' if res['settings'].get('reuse') else ''})."]
    return "\n".join(lines) + "\n"


def plot(chains, name) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for c in chains:
        ax.plot([r["cpu"] for r in c["trace"]], [r["log_likelihood"] for r in c["trace"]],
                ("-" if c["sampler"] == "blocked" else "--"),
                label=f"{c['sampler']}, {c['init']} init")
    ax.set_xlabel("CPU seconds")
    ax.set_ylabel("training log P(derivations | α, s)")
    ax.set_title("DP-TSG samplers on WSJ 0001-0159")
    ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
