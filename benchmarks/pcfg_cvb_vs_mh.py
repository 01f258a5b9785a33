"""CVB vs collapsed MH run to convergence: wall time to MH's converged held-out perplexity.

Wang & Blunsom (2013, §4.1) report that the Hastings sampler of Johnson, Griffiths &
Goldwater (2007) needs about 1000 sweeps (20 min) to converge on Sesotho verbs, while
collapsed VB converges in fewer than 10 (1.5 min) to about the same test perplexity.
Here: the cmudict morphology corpus and substring grammar (strgm.grammars.morphology),
α = 1e-5, one seeded 10% held-out split shared by every run (so that all chains target
the same posterior), every run started uniform over parses (all rule weights 1).

MH: K ≥ 3 independent chains (seeds 0..K−1), advanced in turn by ``--check-every``
sweeps in one process.  After every sweep: ψ = log P(t | α) (the collapsed training
log-likelihood of the trees), E[θ | t, α] of the current trees (summed in blocks of 5
sweeps) and the held-out per-word perplexity ppl = exp(−Σ log P(w | θ̂) / #words) under
θ̂ = E[θ | t, α].  For m sweeps done per chain, θ̄(m) = mean of E[θ | t, α] over sweeps
m/2+1..m of all chains (the Rao–Blackwellised estimate of the posterior mean E[θ | w],
the quantity CVB's θ̄ approximates), and R̂(m) = max of the split-R̂ (Gelman et al.,
BDA3 §11.4; strgm.distributed.diagnostics) over the K chains' sweeps m/2+1..m of ψ and
of log ppl.

* Stopping: at every multiple n of ``--check-every`` from ``--min-sweeps`` on, stop when
  R̂(n) < 1.1, else at the cap ``--max-sweeps``; n = the last sweep.
* Target (MH's converged held-out perplexity) = perplexity under θ̄(n).  Also reported:
  the geometric mean of the single-sample ppl over sweeps n/2+1..n (a noisier estimator:
  one training word changing its analysis moves a held-out word's probability a lot).
* MH convergence sweep n_c = the first m on the grid 10, 20, .., n from which, at every
  grid point m' ≥ m, R̂(m') < 1.1 and the perplexity under θ̄(m') is within ±2% of the
  target (an R̂ criterion plus a plateau of the held-out perplexity).  MH's time = the
  sampling seconds (evaluation excluded) of one chain to sweep n_c, median over chains.
  Without R̂(n) < 1.1 MH did not converge within the cap: no time is given, and the
  report says so with R̂.
* Also reported, as a weaker criterion: the first grid sweep from which R̂ of log ppl
  alone < 1.1 and the θ̄ plateau hold (held-out perplexity only, ignoring ψ), its time,
  and CVB's time ratio against it.

CVB: seeds 0..K−1 (the seed orders the sentences), ``--cvb-iters`` sweeps, held-out
ppl under its θ̄ after every sweep (evaluation excluded from its time; its own training
−log P(w) per sweep included).  Time to target = seconds to the first sweep with ppl ≤
1.02·target (within +2% or better); CVB's plateau = exp(mean log ppl of its last 3
sweeps), reached at the first sweep from which ppl stays within ±2% of it; gap =
plateau/target − 1.  When CVB plateaus above 1.02·target it never reaches the target and
the report gives the plateau, the gap and the time to its own plateau instead.

``--words`` takes a comma-separated list of corpus sizes, run one after the other.
``--render JSON`` recomputes the summaries and markdown of a finished run.

    python benchmarks/pcfg_cvb_vs_mh.py [--words 200,500] [--chains 3] [--max-sweeps 600]
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
BLOCK = 5  # sweeps per stored sum of E[θ | t, α]
GRID = 10  # sweeps between retrospective convergence checks

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
    """One MH chain with its per-sweep record (module docstring) and the sums of
    E[θ | t, α] over blocks of :data:`BLOCK` sweeps."""

    def __init__(self, kernel, seed, theta0, cg, test):
        self.k, self.cg, self.test = kernel, cg, test
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
            if self.state.iteration % BLOCK == 0:
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

    def theta_sum(self, m):
        """Σ E[θ | t, α] over sweeps m/2+1..m (m a multiple of 2·BLOCK)."""
        return sum(self.sums[m // 2 // BLOCK:m // BLOCK])


def theta_bar(chains, m):
    """θ̄(m): mean of E[θ | t, α] over sweeps m/2+1..m of all ``chains``."""
    return sum(c.theta_sum(m) for c in chains) / (len(chains) * (m - m // 2))


def rhats(chains, lo, hi) -> dict:
    """split-R̂ of ψ = log P(t | α) and of log ppl over sweeps lo+1..hi of ``chains``."""
    lp = np.array([c.column("log_p_trees", lo, hi) for c in chains])
    pp = np.log(np.array([c.column("perplexity", lo, hi) for c in chains]))
    return {"log_p_trees": split_rhat(lp), "log_perplexity": split_rhat(pp)}


def run_mh(a, g, cg, train, test, alpha, log=sys.stdout):
    """K chains to R̂ < 1.1 or the cap (module docstring): (chains, checks, last sweep)."""
    theta0 = np.ones(len(g.rules))
    chains = [Chain(CollapsedMH(g, train, alpha=alpha, compiled=cg), s, theta0, cg, test)
              for s in range(a.chains)]
    checks, n = [], 0
    while n < a.max_sweeps:
        for c in chains:
            c.advance(a.check_every)
        n += a.check_every
        if n < a.min_sweeps:
            continue
        mix = rhats(chains, n // 2, n)
        checks.append({"sweep": n, "rhat": mix, "seconds": [c.seconds for c in chains]})
        print(f"  α={alpha} sweep {n}: R̂ log P(t) {mix['log_p_trees']:.3f}, R̂ log ppl "
              f"{mix['log_perplexity']:.3f}, ppl "
              f"{[round(c.rows[-1]['perplexity']) for c in chains]}, "
              f"{statistics.median(c.seconds for c in chains):.0f}s/chain", file=log,
              flush=True)
        if max(mix.values()) < RHAT_MAX:
            break
    return chains, checks, n


def convergence_grid(chains, n, cg, test, target) -> list:
    """R̂(m) and the perplexity under θ̄(m) for m = GRID, 2·GRID, .., n."""
    out = []
    for m in range(GRID, n + 1, GRID):
        r = max(rhats(chains, m // 2, m).values())
        p = heldout_perplexity(cg, test, theta_bar(chains, m))["per_word"]
        out.append({"sweep": m, "rhat": r, "perplexity_theta_bar": p,
                    "ok": r < RHAT_MAX and abs(p / target - 1) <= TOL})
    return out


def converged_sweep(grid):
    """n_c: the first grid point from which every later point is ``ok``."""
    first = None
    for row in grid:
        first = (first or row) if row["ok"] else None
    return None if first is None else first["sweep"]


def heldout_only_sweep(traces, grid, target):
    """The weaker, held-out-only criterion: the first grid sweep m from which, at every
    later grid point, split-R̂ of log ppl alone < 1.1 and the perplexity under θ̄(m) is
    within ±2% of the target; ``traces`` are the chains' per-sweep rows.  (sweep, median
    seconds of one chain) or (None, None)."""
    first = None
    for g in grid:
        m = g["sweep"]
        pp = np.log([[r["perplexity"] for r in rows[m // 2:m]] for rows in traces])
        ok = split_rhat(pp) < RHAT_MAX and abs(g["perplexity_theta_bar"] / target - 1) <= TOL
        first = (first or m) if ok else None
    if first is None:
        return None, None
    return first, statistics.median(rows[first - 1]["seconds"] for rows in traces)


def mh_summary(chains, checks, n, cg, test) -> dict:
    """Target perplexity, convergence sweep and time, R̂ and move statistics."""
    lo = n // 2
    target = heldout_perplexity(cg, test, theta_bar(chains, n))["per_word"]
    logs = np.concatenate([np.log(c.column("perplexity", lo, n)) for c in chains])
    mixed = bool(checks) and max(checks[-1]["rhat"].values()) < RHAT_MAX
    grid = convergence_grid(chains, n, cg, test, target)
    nc = converged_sweep(grid) if mixed else None
    per_chain = []
    for c in chains:
        prop = c.column("proposed").sum()
        per_chain.append({
            "seed": c.seed, "sweeps": n, "seconds": c.seconds,
            "seconds_to_converged_sweep": None if nc is None else c.rows[nc - 1]["seconds"],
            "perplexity_theta_bar": heldout_perplexity(cg, test, theta_bar([c], n))["per_word"],
            "perplexity_samples_geomean": float(np.exp(np.log(
                c.column("perplexity", lo, n)).mean())),
            "log_p_trees_second_half": float(c.column("log_p_trees", lo, n).mean()),
            "proposed_same_fraction": float(c.column("proposed_same").sum() / prop),
            "accepted_moved_per_sweep": float(c.column("accepted_moved").mean()),
            "acceptance_moved": _ratio(c.column("accepted_moved").sum(),
                                       prop - c.column("proposed_same").sum())})
    t = None if nc is None else statistics.median(
        c["seconds_to_converged_sweep"] for c in per_chain)
    ho = heldout_only_sweep([c.rows for c in chains], grid, target)
    return {"target_perplexity": target, "mixed": mixed, "sweeps_per_chain": n,
            "converged_sweep": nc, "seconds_to_converge_median": t,
            "heldout_only_sweep": ho[0], "heldout_only_seconds_median": ho[1],
            "rhat_at_end": checks[-1]["rhat"] if checks else None,
            "perplexity_samples_geomean": float(np.exp(logs.mean())),
            "grid": grid, "chains": per_chain}


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
    out = {"mh_target_perplexity": target, "mh_chains_converged": mh["mixed"],
           "mh_rhat_at_end": mh["rhat_at_end"], "mh_sweeps_per_chain": mh["sweeps_per_chain"],
           "mh_converged_sweep": mh["converged_sweep"],
           "mh_seconds_to_converge_median": t_mh,
           "mh_single_sample_perplexity_geomean": mh["perplexity_samples_geomean"],
           "mh_heldout_only_sweep": mh.get("heldout_only_sweep"),
           "mh_heldout_only_seconds_median": mh.get("heldout_only_seconds_median"),
           "cvb_reached_target_in": f"{len(hits)}/{len(cvbs)} seeds",
           "cvb_seconds_to_target_median": t_cvb,
           "cvb_plateau_perplexity_median": statistics.median(c["plateau_perplexity"]
                                                              for c in cvbs),
           "cvb_gap_median": statistics.median(c["gap"] for c in cvbs),
           "cvb_seconds_to_own_plateau_median": statistics.median(pl) if None not in pl
           else None}
    ratio = out["time_ratio_cvb_over_mh"] = (t_cvb / t_mh) if t_cvb and t_mh else None
    # None: undefined (MH did not converge, or CVB never reached the target)
    out["cvb_within_tenth_of_mh_time"] = None if ratio is None else ratio <= 0.1
    t_ho = out["mh_heldout_only_seconds_median"]
    out["time_ratio_cvb_over_mh_heldout_only"] = (t_cvb / t_ho) if t_cvb and t_ho else None
    return out


def _f(x, d=1):
    return "–" if x is None else f"{x:.{d}f}"


def markdown_size(a, res) -> list:
    """The markdown section of one corpus size."""
    meta, mh, cvbs, summ = res["meta"], res["mh"], res["cvb"], res["summary"]
    md = [f"## {meta['train_words']} training / {meta['heldout_words']} held-out word types "
          f"({meta['rules']} rules)", "",
          "| MH seed | sweeps | sampling s | s to n_c | ppl under own θ̄ | single-sample ppl "
          "(geo. mean, 2nd half) | mean log P(t) 2nd half | identical proposals | real "
          "moves/sweep | acceptance of real moves |", "|---|---|---|---|---|---|---|---|---|---|"]
    for c in mh["chains"]:
        md.append(f"| {c['seed']} | {c['sweeps']} | {c['seconds']:.0f} | "
                  f"{_f(c['seconds_to_converged_sweep'])} | {c['perplexity_theta_bar']:.0f} | "
                  f"{c['perplexity_samples_geomean']:.0f} | {c['log_p_trees_second_half']:.1f}"
                  f" | {c['proposed_same_fraction']:.4f} | {c['accepted_moved_per_sweep']:.2f}"
                  f" | {_f(c['acceptance_moved'], 3)} |")
    r = mh["rhat_at_end"] or {}
    md += ["", f"Split-R̂ over the chains' sweeps {mh['sweeps_per_chain'] // 2 + 1}.."
           f"{mh['sweeps_per_chain']}: log P(t|α) {_f(r.get('log_p_trees'), 3)}, log held-out "
           f"ppl {_f(r.get('log_perplexity'), 3)} → "
           f"{'converged' if mh['mixed'] else 'NOT converged within the cap'}; convergence "
           f"sweep n_c = {mh['converged_sweep']}; target (ppl under the pooled θ̄) = "
           f"{mh['target_perplexity']:.1f}. The weaker held-out-only criterion (R̂ of log ppl "
           f"alone, plus the θ̄ plateau) holds from sweep {mh.get('heldout_only_sweep')} "
           f"({_f(mh.get('heldout_only_seconds_median'))} s per chain).", "",
           "| CVB seed | ppl per sweep | plateau ppl | gap to MH target | sweep / s to ≤ +2% "
           "of target | sweep / s to own plateau |", "|---|---|---|---|---|---|"]
    for c in cvbs:
        h = c["hit"]
        hit = "not reached" if h is None else f"{h['sweep']} / {h['seconds']:.1f}"
        curve = " ".join(str(round(p)) for _, _, p in c["curve"])
        md.append(f"| {c['seed']} | {curve} | {c['plateau_perplexity']:.0f} | "
                  f"{100 * c['gap']:+.1f}% | {hit} | "
                  f"{c['plateau_sweep']} / {_f(c['plateau_seconds'])} |")
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else (
        {k: round(x, 3) for k, x in v.items()} if isinstance(v, dict) else v)
    return md + ["", "Summary:", ""] + [f"* {k}: {fmt(v)}" for k, v in summ.items()] + [""]


def markdown(a, results, command) -> str:
    md = ["# CVB vs collapsed MH run to convergence", "",
          f"cmudict morphology corpus and substring grammar, α = {a.alpha}; MH: {a.chains} "
          f"chains, R̂ checked every {a.check_every} sweeps from {a.min_sweeps}, cap "
          f"{a.max_sweeps}; CVB: {a.chains} seeds × {a.cvb_iters} sweeps. Definitions "
          "(target, n_c, times) in the benchmark's docstring. Times are one run's sampling "
          "seconds, evaluation excluded; medians over seeds.", ""]
    for res in results:
        md += markdown_size(a, res)
    md += [f"Command: `{command}`", "", "![perplexity vs time](pcfg_cvb_vs_mh.png)"]
    return "\n".join(md) + "\n"


def plot(path, panels, alpha) -> bool:
    """Held-out perplexity against seconds, one panel per corpus size: every MH chain's
    single-sample ppl, MH's θ̄(m) on the grid, every CVB seed, the target ±2% (log–log).
    False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False)
    for ax, (chains, res) in zip(axes[0], panels):
        target = res["mh"]["target_perplexity"]
        for c in chains:
            ax.plot(c.column("seconds"), c.column("perplexity"), lw=0.6, alpha=0.6,
                    label=f"MH chain {c.seed} (sample)")
        sec = np.median([[c.rows[g["sweep"] - 1]["seconds"] for c in chains]
                         for g in res["mh"]["grid"]], axis=1)
        ax.plot(sec, [g["perplexity_theta_bar"] for g in res["mh"]["grid"]], "k--", lw=1.2,
                label="MH θ̄(m), pooled")
        for c in res["cvb"]:
            ax.plot([s for _, s, _ in c["curve"]], [p for _, _, p in c["curve"]], "o-",
                    ms=3, label=f"CVB seed {c['seed']}")
        ax.axhline(target, color="k", lw=1, label=f"MH target {target:.0f}")
        ax.axhspan(target * (1 - TOL), target * (1 + TOL), color="k", alpha=0.12)
        ax.set(xscale="log", yscale="log", xlabel="seconds (one run; evaluation excluded)",
               ylabel="held-out per-word perplexity",
               title=f"{res['meta']['train_words']} training words, α = {alpha}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return True


def one_size(a, words_n):
    """MH to convergence, then CVB, on one corpus size: (chains, result dict)."""
    g, cg, train, test = setup(words_n)
    meta = {"words": words_n, "rules": len(g.rules), "train_words": len(train),
            "heldout_words": len(test)}
    print(f"{len(train)} training / {len(test)} held-out words, {len(g.rules)} rules",
          flush=True)
    t = time.perf_counter()
    chains, checks, n = run_mh(a, g, cg, train, test, a.alpha)
    mh = mh_summary(chains, checks, n, cg, test)
    meta["mh_wall_seconds"] = time.perf_counter() - t
    print(f"MH target {mh['target_perplexity']:.1f} converged={mh['mixed']} "
          f"n_c={mh['converged_sweep']} t={mh['seconds_to_converge_median']}", flush=True)
    cvbs = []
    for s in range(a.chains):
        cvbs.append(cvb_summary(run_cvb(a, g, cg, train, test, s), mh["target_perplexity"], s))
        print(f"CVB seed {s}: plateau {cvbs[-1]['plateau_perplexity']:.1f} hit "
              f"{cvbs[-1]['hit']}", flush=True)
    res = {"meta": meta, "summary": summarise(mh, cvbs), "mh": mh, "mh_checks": checks,
           "mh_traces": [{"seed": c.seed, "rows": c.rows} for c in chains], "cvb": cvbs}
    print(res["summary"], flush=True)
    return chains, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", default="200,500")
    ap.add_argument("--alpha", type=float, default=1e-5)
    ap.add_argument("--chains", type=int, default=3)
    ap.add_argument("--check-every", type=int, default=50)
    ap.add_argument("--min-sweeps", type=int, default=200)
    ap.add_argument("--max-sweeps", type=int, default=600)
    ap.add_argument("--cvb-iters", type=int, default=20)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--render", metavar="JSON",
                    help="recompute the summaries and rewrite the JSON and markdown of a "
                         "finished run (no sampling; the plot is kept)")
    a = ap.parse_args(argv)
    if a.render:
        return render(Path(a.render))
    if a.chains < 2 or a.check_every % GRID or a.check_every < GRID:
        ap.error(f"--chains must be ≥ 2 and --check-every a multiple of {GRID}")
    command = "python benchmarks/pcfg_cvb_vs_mh.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    panels = [one_size(a, int(w)) for w in a.words.split(",")]
    results = [r for _, r in panels]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "pcfg_cvb_vs_mh.json", {"argv": vars(a), "command": command,
                                                    "results": results})
    atomic_write_text(out / "pcfg_cvb_vs_mh.md", markdown(a, results, command))
    plot(out / "pcfg_cvb_vs_mh.png", panels, a.alpha)


def render(path: Path):
    """Summaries and markdown again from a finished run's JSON (``--render``)."""
    import json
    d = json.loads(path.read_text(encoding="utf-8"))
    for res in d["results"]:
        mh = res["mh"]
        ho = heldout_only_sweep([t["rows"] for t in res["mh_traces"]], mh["grid"],
                                mh["target_perplexity"])
        mh["heldout_only_sweep"], mh["heldout_only_seconds_median"] = ho
        res["summary"] = summarise(mh, res["cvb"])
    a = argparse.Namespace(**d["argv"])
    atomic_write_json(path, d)
    atomic_write_text(path.with_suffix(".md"), markdown(a, d["results"], d["command"]))


if __name__ == "__main__":
    main()
