"""CVB vs collapsed MH run to convergence: wall time to MH's converged held-out perplexity.

Wang & Blunsom (2013, §4.1) report that the Hastings sampler of Johnson, Griffiths &
Goldwater (2007) needs about 1000 sweeps (20 min) to converge on Sesotho verbs, while
collapsed VB converges in fewer than 10 (1.5 min) to about the same test perplexity.
Here: the cmudict morphology corpus and substring grammar (strgm.grammars.morphology),
α = 1e-5, one seeded 10% held-out split shared by every run (so that all chains target
the same posterior), every run started uniform over parses (all rule weights 1).

MH: K ≥ 3 independent chains (seeds 0..K−1), advanced in turn by ``--check-every``
sweeps in one process.  After every sweep: ψ = log P(t | α) (the collapsed training
log-likelihood of the trees) and the held-out per-word perplexity ppl = exp(−Σ log
P(w | θ̂) / #words) under θ̂ = E[θ | t, α] of the current trees.  With n sweeps done per
chain (n a multiple of ``--check-every``, n ≥ ``--min-sweeps``) the draws of the second
half, sweeps n/2+1..n, are judged:

* mixing: split-R̂ (Gelman et al., BDA3 §11.4; strgm.distributed.diagnostics) over the
  K chains of ψ < 1.1 **and** of log ppl < 1.1.  The chains stop at the first such n,
  or at the cap ``--max-sweeps``;
* plateau of one chain at n: the split-R̂ of that chain alone (its draws n/2+1..3n/4
  against 3n/4+1..n) of ψ < 1.1 and of log ppl < 1.1.  A chain's plateau sweep is the
  first check from which the plateau holds at every later check.

MH's converged held-out perplexity (the target) = exp(mean of log ppl over sweeps
n/2+1..n of all chains), n the last sweep.  When the chains mix this is the posterior
expectation; when they do not (R̂ ≥ 1.1 at the cap) it is the average of the chains'
plateaus and the report says so, with the per-chain values.  MH's time = sampling seconds
(evaluation excluded) of one chain to the mixing sweep, median over chains; without
mixing, to its plateau sweep.  Also reported: perplexity under the Rao–Blackwellised
θ̄ = mean of E[θ | t, α] over the second half, per chain and pooled, and the per-sweep
move statistics (identical proposals apart from accepted real moves).

CVB: seeds 0..K−1 (the seed orders the sentences), ``--cvb-iters`` sweeps, held-out
ppl under its θ̄ after every sweep (evaluation excluded from its time; its own training
−log P(w) per sweep included).  Time to target = seconds to the first sweep with ppl ≤
1.02·target (within +2% or better); CVB's plateau = exp(mean log ppl of its last 3
sweeps), reached at the first sweep from which ppl stays within ±2% of it; gap =
plateau/target − 1.  When CVB plateaus above 1.02·target it never reaches the target and
the report gives the plateau, the gap and the time to its own plateau instead.

    python benchmarks/pcfg_cvb_vs_mh.py [--words 200] [--chains 3] [--max-sweeps 1500]
Writes benchmarks/results/pcfg_cvb_vs_mh.{json,md,png}.
"""

from __future__ import annotations

import argparse
import io
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.estimators import cvb
from strgm.grammars.evaluation import heldout_perplexity
from strgm.grammars.morphology import build_corpus, substring_grammar, train_test_split
from strgm.grammars.samplers import CollapsedMH, collapsed_log_prob, mh_sweep_stats
from strgm.safe_io import atomic_write_bytes, atomic_write_json, atomic_write_text

OUT = Path(__file__).resolve().parent / "results"
RHAT_MAX = 1.1
TOL = 0.02

try:  # the shared diagnostics when the distributed layer is installed with strgm
    from strgm.distributed.diagnostics import split_rhat
except ImportError:  # pragma: no cover - same formula (module docstring), no ESS
    def split_rhat(draws) -> float:
        x = np.atleast_2d(np.asarray(draws, dtype=float))
        h = x.shape[1] // 2
        psi = np.concatenate([x[:, :h], x[:, x.shape[1] - h:]])
        m, n = psi.shape
        w = float(psi.var(axis=1, ddof=1).mean())
        var_plus = (n - 1) / n * w + n * psi.mean(axis=1).var(ddof=1) / n
        if w == 0.0:
            return 1.0 if var_plus == 0.0 else math.inf
        return math.sqrt(var_plus / w)


def setup(words_n: int, split_seed: int = 0):
    """(grammar, compiled grammar, training words, held-out words) of the shared split."""
    words, _ = build_corpus(words_n, seed=0)
    tr, te = train_test_split(words, 0.1, seed=split_seed)
    g = substring_grammar(words, seed=0)
    return g, compile_grammar(g), [words[i] for i in tr], [words[i] for i in te]


class Chain:
    """One MH chain with its per-sweep record (module docstring) and block sums of
    E[θ | t, α] (one per ``block`` sweeps) for the Rao–Blackwellised θ̄."""

    def __init__(self, kernel, seed, theta0, cg, test, block):
        self.k, self.cg, self.test, self.block = kernel, cg, test, block
        self.seed = seed
        t = time.perf_counter()
        self.state = kernel.init(seed, theta0=theta0)
        self.seconds = time.perf_counter() - t
        self.rows: list = []
        self.sums: list = []

    def advance(self, sweeps: int):
        k, acc = self.k, np.zeros(self.k.nR)
        for _ in range(sweeps):
            t = time.perf_counter()
            self.state = k.sample(self.state)
            self.seconds += time.perf_counter() - t
            mean = k.posterior_mean(self.state)
            acc += mean
            if self.state.iteration % self.block == 0:
                self.sums.append(acc)
                acc = np.zeros(k.nR)
            st = mh_sweep_stats(self.state)
            self.rows.append({
                "sweep": self.state.iteration, "seconds": self.seconds,
                "log_p_trees": collapsed_log_prob(self.state.counts, self.state.alpha,
                                                  k.lhs, k.n_lhs),
                "perplexity": heldout_perplexity(self.cg, self.test, mean)["per_word"],
                "proposed": st["proposed"], "proposed_same": st["proposed_same"],
                "accepted_moved": st["accepted_moved"]})

    def column(self, key, lo=0, hi=None):
        return np.array([r[key] for r in self.rows[lo:hi]], dtype=float)

    def theta_bar(self, n):
        """θ̄ over sweeps n/2+1..n (whole blocks; n/2 is a multiple of the block)."""
        first = (n // 2) // self.block
        return sum(self.sums[first:n // self.block]) / (n - first * self.block)


def rhats(chains, lo, hi) -> dict:
    """split-R̂ of ψ = log P(t | α) and of log ppl over sweeps lo+1..hi of ``chains``."""
    lp = np.array([c.column("log_p_trees", lo, hi) for c in chains])
    pp = np.log(np.array([c.column("perplexity", lo, hi) for c in chains]))
    return {"log_p_trees": split_rhat(lp), "log_perplexity": split_rhat(pp)}


def run_mh(a, g, cg, train, test, alpha, log=sys.stdout):
    """K chains to mixing or the cap (module docstring): (chains, checks, last sweep)."""
    theta0 = np.ones(len(g.rules))
    chains = [Chain(CollapsedMH(g, train, alpha=alpha, compiled=cg), s, theta0, cg, test,
                    a.check_every // 2) for s in range(a.chains)]
    checks, n = [], 0
    while n < a.max_sweeps:
        for c in chains:
            c.advance(a.check_every)
        n += a.check_every
        if n < a.min_sweeps:
            continue
        mix = rhats(chains, n // 2, n)
        plateau = [max(rhats([c], n // 2, n).values()) < RHAT_MAX for c in chains]
        checks.append({"sweep": n, "rhat": mix, "plateau": plateau,
                       "seconds": [c.seconds for c in chains]})
        print(f"  α={alpha} sweep {n}: R̂ log P(t) {mix['log_p_trees']:.3f}, R̂ log ppl "
              f"{mix['log_perplexity']:.3f}, plateau {plateau}, ppl "
              f"{[round(c.rows[-1]['perplexity']) for c in chains]}, "
              f"{statistics.median(c.seconds for c in chains):.0f}s/chain", file=log,
              flush=True)
        if max(mix.values()) < RHAT_MAX:
            break
    return chains, checks, n


def plateau_sweep(checks, j):
    """First check sweep from which chain j's plateau holds at every later check."""
    first = None
    for ch in checks:
        if ch["plateau"][j]:
            first = ch if first is None else first
        else:
            first = None
    return first


def mh_summary(chains, checks, n, cg, test) -> dict:
    """The target perplexity, times, R̂ and move statistics of a finished MH run."""
    lo = n // 2
    logs = np.concatenate([np.log(c.column("perplexity", lo, n)) for c in chains])
    mixed = bool(checks) and max(checks[-1]["rhat"].values()) < RHAT_MAX
    per_chain = []
    for j, c in enumerate(chains):
        ps = plateau_sweep(checks, j)
        tb = c.theta_bar(n)
        prop = c.column("proposed").sum()
        per_chain.append({
            "seed": c.seed, "sweeps": n, "seconds": c.seconds,
            "perplexity_second_half": float(np.exp(np.log(c.column("perplexity", lo, n))
                                                   .mean())),
            "perplexity_theta_bar": heldout_perplexity(cg, test, tb)["per_word"],
            "log_p_trees_second_half": float(c.column("log_p_trees", lo, n).mean()),
            "plateau_sweep": None if ps is None else ps["sweep"],
            "plateau_seconds": None if ps is None else ps["seconds"][j],
            "proposed_same_fraction": float(c.column("proposed_same").sum() / prop),
            "accepted_moved_per_sweep": float(c.column("accepted_moved").mean()),
            "acceptance_moved": _ratio(c.column("accepted_moved").sum(),
                                       prop - c.column("proposed_same").sum())})
    if mixed:
        t = statistics.median(c.seconds for c in chains)
    else:
        pl = [p["plateau_seconds"] for p in per_chain]
        t = statistics.median(pl) if all(x is not None for x in pl) else None
    pooled = sum(c.theta_bar(n) for c in chains) / len(chains)
    return {"target_perplexity": float(np.exp(logs.mean())), "mixed": mixed,
            "sweeps_per_chain": n, "seconds_to_converge_median": t,
            "rhat_at_end": checks[-1]["rhat"] if checks else None,
            "perplexity_pooled_theta_bar": heldout_perplexity(cg, test, pooled)["per_word"],
            "chains": per_chain}


def _ratio(a, b):
    return float(a / b) if b else None


def run_cvb(a, g, cg, train, test, seed):
    """One CVB run: its curve (sweep, seconds excluding held-out evaluation, ppl)."""
    curve, excl = [], [0.0]
    t0 = time.perf_counter()

    def cb(it, mean, row):
        t = time.perf_counter()
        seconds = t - t0 - excl[0]
        ppl = heldout_perplexity(cg, test, mean)["per_word"]
        excl[0] += time.perf_counter() - t
        curve.append((it, seconds, ppl))
    cvb(g, train, alpha=a.alpha, iters=a.cvb_iters, seed=seed,
        theta0=np.ones(len(g.rules)), callback=cb)
    return curve


def cvb_summary(curve, target, seed) -> dict:
    """Time to the target, plateau, gap (module docstring) of one CVB curve."""
    plateau = float(np.exp(np.mean([math.log(p) for _, _, p in curve[-3:]])))
    hit = next((r for r in curve if r[2] <= (1 + TOL) * target), None)
    stay = None
    for r in curve:
        if abs(r[2] / plateau - 1) <= TOL:
            stay = r if stay is None else stay
        else:
            stay = None
    return {"seed": seed, "curve": curve, "plateau_perplexity": plateau,
            "gap": plateau / target - 1,
            "hit": None if hit is None else {"sweep": hit[0], "seconds": hit[1],
                                             "perplexity": hit[2]},
            "plateau_sweep": None if stay is None else stay[0],
            "plateau_seconds": None if stay is None else stay[1]}


def summarise(mh, cvbs) -> dict:
    """The headline numbers: MH's target and time, CVB's time to it (median over seeds)."""
    target, t_mh = mh["target_perplexity"], mh["seconds_to_converge_median"]
    hits = [c["hit"]["seconds"] for c in cvbs if c["hit"]]
    t_cvb = statistics.median(hits) if len(hits) * 2 > len(cvbs) else None
    pl = [c["plateau_seconds"] for c in cvbs]
    plateau_t = statistics.median(pl) if None not in pl else None
    out = {"mh_target_perplexity": target, "mh_chains_mixed": mh["mixed"],
           "mh_rhat_at_end": mh["rhat_at_end"], "mh_sweeps_per_chain": mh["sweeps_per_chain"],
           "mh_seconds_to_converge_median": t_mh,
           "cvb_reached_target_in": f"{len(hits)}/{len(cvbs)} seeds",
           "cvb_seconds_to_target_median": t_cvb,
           "cvb_plateau_perplexity_median": statistics.median(c["plateau_perplexity"]
                                                              for c in cvbs),
           "cvb_gap_median": statistics.median(c["gap"] for c in cvbs),
           "cvb_seconds_to_own_plateau_median": plateau_t}
    out["time_ratio_cvb_over_mh"] = (t_cvb / t_mh) if t_cvb and t_mh else None
    out["cvb_within_tenth_of_mh_time"] = (out["time_ratio_cvb_over_mh"] is not None
                                          and out["time_ratio_cvb_over_mh"] <= 0.1)
    return out


def markdown(a, meta, mh, cvbs, summ) -> str:
    f = lambda x, d=1: "–" if x is None else f"{x:.{d}f}"
    md = ["# CVB vs collapsed MH run to convergence", "",
          f"cmudict morphology corpus, {meta['train_words']} training / "
          f"{meta['heldout_words']} held-out word types, {meta['rules']} rules, α = "
          f"{a.alpha}; MH: {a.chains} chains, R̂ checked every {a.check_every} sweeps from "
          f"{a.min_sweeps}, cap {a.max_sweeps}; CVB: {a.chains} seeds × {a.cvb_iters} sweeps. "
          "Definitions in the benchmark's docstring.", "",
          "## MH chains", "",
          "| seed | sweeps | sampling s | ppl (2nd half, geo. mean) | ppl under θ̄ | "
          "plateau sweep | plateau s | identical proposals | real moves/sweep | "
          "acceptance of real moves |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in mh["chains"]:
        md.append(f"| {c['seed']} | {c['sweeps']} | {c['seconds']:.0f} | "
                  f"{c['perplexity_second_half']:.0f} | {c['perplexity_theta_bar']:.0f} | "
                  f"{c['plateau_sweep'] or 'none'} | {f(c['plateau_seconds'], 0)} | "
                  f"{c['proposed_same_fraction']:.4f} | {c['accepted_moved_per_sweep']:.2f}"
                  f" | {f(c['acceptance_moved'], 3)} |")
    r = mh["rhat_at_end"] or {}
    md += ["", f"Split-R̂ over the chains' second halves at sweep {mh['sweeps_per_chain']}: "
           f"log P(t|α) {f(r.get('log_p_trees'), 3)}, log held-out ppl "
           f"{f(r.get('log_perplexity'), 3)} → chains "
           f"{'mixed' if mh['mixed'] else 'did NOT mix'} (threshold {RHAT_MAX}). "
           f"Target = {mh['target_perplexity']:.0f} (pooled θ̄: "
           f"{mh['perplexity_pooled_theta_bar']:.0f}).", "", "## CVB", "",
           "| seed | ppl per sweep | plateau ppl | gap to MH target | sweeps/s to ≤ +2% of "
           "target | sweeps/s to own plateau |", "|---|---|---|---|---|---|"]
    for c in cvbs:
        h = c["hit"]
        hit = "not reached" if h is None else f"{h['sweep']} / {h['seconds']:.1f}"
        curve = " ".join(str(round(p)) for _, _, p in c["curve"])
        md.append(f"| {c['seed']} | {curve} | {c['plateau_perplexity']:.0f} | "
                  f"{100 * c['gap']:+.1f}% | {hit} | "
                  f"{c['plateau_sweep']} / {f(c['plateau_seconds'])} |")
    md += ["", "## Summary", ""] + [f"* {k}: {v}" for k, v in summ.items()]
    md += ["", f"Command: `{meta['command']}`", "", "![perplexity vs time](pcfg_cvb_vs_mh.png)"]
    return "\n".join(md) + "\n"


def plot(path, mh_chains, cvbs, target, alpha) -> bool:
    """Held-out perplexity against seconds: every MH chain, every CVB seed, the target
    with its ±2% band (log–log).  False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for c in mh_chains:
        ax.plot(c.column("seconds"), c.column("perplexity"), lw=0.7, alpha=0.8,
                label=f"MH chain {c.seed}")
    for c in cvbs:
        ax.plot([s for _, s, _ in c["curve"]], [p for _, _, p in c["curve"]], "o-", ms=3,
                label=f"CVB seed {c['seed']}")
    ax.axhline(target, color="k", lw=1, label=f"MH target {target:.0f}")
    ax.axhspan(target * (1 - TOL), target * (1 + TOL), color="k", alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds (one run; evaluation excluded)")
    ax.set_ylabel("held-out per-word perplexity")
    ax.set_title(f"CVB vs collapsed MH, α = {alpha}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200)
    ap.add_argument("--alpha", type=float, default=1e-5)
    ap.add_argument("--chains", type=int, default=3)
    ap.add_argument("--check-every", type=int, default=50)
    ap.add_argument("--min-sweeps", type=int, default=200)
    ap.add_argument("--max-sweeps", type=int, default=1500)
    ap.add_argument("--cvb-iters", type=int, default=20)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    if a.chains < 2 or a.check_every < 2 or a.check_every % 2:
        ap.error("--chains must be ≥ 2 and --check-every even and ≥ 2")
    g, cg, train, test = setup(a.words)
    meta = {"rules": len(g.rules), "train_words": len(train), "heldout_words": len(test),
            "command": "python benchmarks/pcfg_cvb_vs_mh.py " + " ".join(
                sys.argv[1:] if argv is None else argv)}
    print(f"{len(train)} training / {len(test)} held-out words, {len(g.rules)} rules",
          flush=True)
    t = time.perf_counter()
    chains, checks, n = run_mh(a, g, cg, train, test, a.alpha)
    mh = mh_summary(chains, checks, n, cg, test)
    meta["mh_wall_seconds"] = time.perf_counter() - t
    print(f"MH target {mh['target_perplexity']:.1f} mixed={mh['mixed']}", flush=True)
    cvbs = []
    for s in range(a.chains):
        cvbs.append(cvb_summary(run_cvb(a, g, cg, train, test, s), mh["target_perplexity"], s))
        print(f"CVB seed {s}: plateau {cvbs[-1]['plateau_perplexity']:.1f} hit "
              f"{cvbs[-1]['hit']}", flush=True)
    summ = summarise(mh, cvbs)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    traces = [{"seed": c.seed, "rows": c.rows} for c in chains]
    atomic_write_json(out / "pcfg_cvb_vs_mh.json", {
        "argv": vars(a), "meta": meta, "summary": summ, "mh": mh, "mh_checks": checks,
        "mh_traces": traces, "cvb": cvbs})
    atomic_write_text(out / "pcfg_cvb_vs_mh.md", markdown(a, meta, mh, cvbs, summ))
    plot(out / "pcfg_cvb_vs_mh.png", chains, cvbs, mh["target_perplexity"], a.alpha)
    print(summ)


if __name__ == "__main__":
    main()
