"""CVB vs collapsed MH run to convergence: wall time to MH's converged held-out perplexity.

Wang & Blunsom (2013, §4.1) report that the Hastings sampler of Johnson, Griffiths &
Goldwater (2007) needs about 1000 sweeps (20 min) to converge on Sesotho verbs, while
collapsed VB converges in fewer than 10 (1.5 min) to about the same test perplexity.
Here: the cmudict morphology corpus and substring grammar (strgm.grammars.morphology),
α = ``--alpha`` (default 1e-5), one seeded 10% held-out split shared by every run (so
that all chains target the same posterior), every run started uniform over parses (all
rule weights 1).

MH: K ≥ 3 independent chains (seeds 0..K−1), advanced in turn by ``--check-every``
sweeps in one process.  After every sweep: ψ = log P(t | α) (the collapsed training
log-likelihood of the trees), E[θ | t, α] of the current trees (summed in blocks of 5
sweeps) and the held-out per-word perplexity ppl = exp(−Σ log P(w | θ̂) / #words) under
θ̂ = E[θ | t, α].  For m sweeps done per chain, θ̄(m) = mean of E[θ | t, α] over sweeps
m/2+1..m of all chains (the Rao–Blackwellised estimate of the posterior mean E[θ | w],
the quantity CVB's θ̄ approximates), and R̂(m) = max of the rank-normalised split-R̂
(Vehtari et al. 2021: split-R̂ of the pooled draws' normal scores and of their folded
ones; strgm.distributed.diagnostics.rank_rhat) over the K chains' sweeps m/2+1..m of ψ
and of log ppl.  The plain split-R̂ (Gelman et al., BDA3 §11.4) of both is reported
beside it.  (The earlier results, benchmarks/results/pcfg_cvb_vs_mh.{json,md,png}, used
the plain split-R̂ in every rule below and took the move statistics over all sweeps.)

An R̂ near 1 says the chains agree, not that they move: chains frozen in the same state
agree too.  So every chain also reports its moves over sweeps n/2+1..n: the fraction of
proposals identical to the current tree, the real moves (accepted proposals that differ
from the current tree) per sweep, the fraction of accepted proposals that are real moves,
and the acceptance rate of the proposals that differ.

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

Mixing probe (``--probe-alphas A ...``, before the comparison; ``--probe-only`` stops
there): on the training split alone (no held-out word is read), for each α and corpus
size, K chains of ``--probe-sweeps`` sweeps from the uniform start; per α the real moves
per sweep (median over chains, and per training word), the other move statistics above
and R̂ of ψ over the second half, so that a setting where the chains move can be chosen
before the held-out perplexity is looked at.

``--words`` takes a comma-separated list of corpus sizes, run one after the other.
``--out STEM`` writes STEM.{json,md,png} (default benchmarks/results/pcfg_cvb_vs_mh).
``--render JSON`` recomputes the summaries and markdown of a finished run.

    python -m benchmarks.grammars.pcfg_cvb_vs_mh [--words 200,500] [--chains 3]
        [--max-sweeps 600]
        [--alpha 1e-5] [--probe-alphas 1e-5 1e-2 ...] [--probe-only] [--out STEM]

The comparison at a setting where MH mixes (α = 0.02, chosen by the probe; at least 600
sweeps per chain so that θ̄ averages 300 of them):

    python -m benchmarks.grammars.pcfg_cvb_vs_mh --words 200 --alpha 0.02 --probe-alphas 1e-5 1e-3
        3e-3 1e-2 0.015 0.02 0.025 0.03 0.1 1 --min-sweeps 600 --max-sweeps 1200
        --out benchmarks/results/pcfg_cvb_vs_mh_mixing
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import harness
from strgm.distributed.diagnostics import rank_rhat, split_rhat
from strgm.grammars.cfg import compile_grammar
from strgm.grammars.estimators import cvb
from strgm.grammars.evaluation import heldout_perplexity
from strgm.grammars.morphology import build_corpus, substring_grammar, train_test_split
from strgm.grammars.samplers import CollapsedMH, collapsed_log_prob, mh_sweep_stats
RHAT_MAX = 1.1
TOL = 0.02
BLOCK = 5  # sweeps per stored sum of E[θ | t, α]
GRID = 10  # sweeps between retrospective convergence checks



def setup(words_n: int, split_seed: int = 0):
    """(grammar, compiled grammar, training words, held-out words) of the shared split."""
    words, _ = build_corpus(words_n, seed=0)
    tr, te = train_test_split(words, 0.1, seed=split_seed)
    g = substring_grammar(words, seed=0)
    return g, compile_grammar(g), [words[i] for i in tr], [words[i] for i in te]


class Chain:
    """One MH chain with its per-sweep record (module docstring) and the sums of
    E[θ | t, α] over blocks of :data:`BLOCK` sweeps; ``test`` None (the mixing probe):
    no held-out perplexity."""

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
                "perplexity": None if self.test is None else
                heldout_perplexity(self.cg, self.test, mean)["per_word"],
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
    """Rank-normalised split-R̂ of ψ = log P(t | α) and of log ppl over sweeps lo+1..hi
    of ``chains``, and the plain split-R̂ of each (keys ending "_split")."""
    lp = np.array([c.column("log_p_trees", lo, hi) for c in chains])
    pp = np.log(np.array([c.column("perplexity", lo, hi) for c in chains]))
    return {"log_p_trees": rank_rhat(lp), "log_perplexity": rank_rhat(pp),
            "log_p_trees_split": split_rhat(lp), "log_perplexity_split": split_rhat(pp)}


def rhat_max(mix) -> float:
    """The R̂ of the stopping rule: the larger rank-normalised one of :func:`rhats`."""
    return max(mix["log_p_trees"], mix["log_perplexity"])


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
        print(f"  α={alpha} sweep {n}: rank-R̂ log P(t) {mix['log_p_trees']:.3f}, log ppl "
              f"{mix['log_perplexity']:.3f}, ppl "
              f"{[round(c.rows[-1]['perplexity']) for c in chains]}, "
              f"{statistics.median(c.seconds for c in chains):.0f}s/chain", file=log,
              flush=True)
        if rhat_max(mix) < RHAT_MAX:
            break
    return chains, checks, n


def convergence_grid(chains, n, cg, test, target) -> list:
    """R̂(m) and the perplexity under θ̄(m) for m = GRID, 2·GRID, .., n."""
    out = []
    for m in range(GRID, n + 1, GRID):
        r = rhat_max(rhats(chains, m // 2, m))
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
    later grid point, rank-normalised split-R̂ of log ppl alone < 1.1 and the perplexity under θ̄(m) is
    within ±2% of the target; ``traces`` are the chains' per-sweep rows.  (sweep, median
    seconds of one chain) or (None, None)."""
    first = None
    for g in grid:
        m = g["sweep"]
        pp = np.log([[r["perplexity"] for r in rows[m // 2:m]] for rows in traces])
        ok = rank_rhat(pp) < RHAT_MAX and abs(g["perplexity_theta_bar"] / target - 1) <= TOL
        first = (first or m) if ok else None
    if first is None:
        return None, None
    return first, statistics.median(rows[first - 1]["seconds"] for rows in traces)


def mh_summary(chains, checks, n, cg, test) -> dict:
    """Target perplexity, convergence sweep and time, R̂ and move statistics."""
    lo = n // 2
    target = heldout_perplexity(cg, test, theta_bar(chains, n))["per_word"]
    logs = np.concatenate([np.log(c.column("perplexity", lo, n)) for c in chains])
    mixed = bool(checks) and rhat_max(checks[-1]["rhat"]) < RHAT_MAX
    grid = convergence_grid(chains, n, cg, test, target)
    nc = converged_sweep(grid) if mixed else None
    per_chain = []
    for c in chains:
        per_chain.append({
            "seed": c.seed, "sweeps": n, "seconds": c.seconds,
            "seconds_to_converged_sweep": None if nc is None else c.rows[nc - 1]["seconds"],
            "perplexity_theta_bar": heldout_perplexity(cg, test, theta_bar([c], n))["per_word"],
            "perplexity_samples_geomean": float(np.exp(np.log(
                c.column("perplexity", lo, n)).mean())),
            "log_p_trees_second_half": float(c.column("log_p_trees", lo, n).mean()),
            **move_stats(c, lo, n)})
    t = None if nc is None else statistics.median(
        c["seconds_to_converged_sweep"] for c in per_chain)
    ho = heldout_only_sweep([c.rows for c in chains], grid, target)
    return {"target_perplexity": target, "mixed": mixed, "sweeps_per_chain": n,
            "converged_sweep": nc, "seconds_to_converge_median": t,
            "heldout_only_sweep": ho[0], "heldout_only_seconds_median": ho[1],
            "rhat_at_end": checks[-1]["rhat"] if checks else None,
            "perplexity_samples_geomean": float(np.exp(logs.mean())),
            "grid": grid, "chains": per_chain}


def move_stats(c, lo, hi) -> dict:
    """Chain ``c``'s MH moves over sweeps lo+1..hi: the fraction of proposals identical to
    the current tree, real moves (accepted proposals ≠ the current tree) per sweep, the
    fraction of accepted proposals that are real moves, and the acceptance rate of the
    proposals that differ."""
    prop = c.column("proposed", lo, hi).sum()
    same = c.column("proposed_same", lo, hi).sum()
    moved = c.column("accepted_moved", lo, hi)
    return {"proposed_same_fraction": float(same / prop),
            "accepted_moved_per_sweep": float(moved.mean()),
            "accepted_moved_fraction": _ratio(moved.sum(), same + moved.sum()),
            "acceptance_moved": _ratio(moved.sum(), prop - same)}


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
          "moves/sweep | real moves / accepted | acceptance of real moves |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in mh["chains"]:
        md.append(f"| {c['seed']} | {c['sweeps']} | {c['seconds']:.0f} | "
                  f"{_f(c['seconds_to_converged_sweep'])} | {c['perplexity_theta_bar']:.0f} | "
                  f"{c['perplexity_samples_geomean']:.0f} | {c['log_p_trees_second_half']:.1f}"
                  f" | {c['proposed_same_fraction']:.4f} | {c['accepted_moved_per_sweep']:.2f}"
                  f" | {_f(c.get('accepted_moved_fraction'), 3)}"
                  f" | {_f(c['acceptance_moved'], 3)} |")
    r = mh["rhat_at_end"] or {}
    md += ["", f"Move statistics over sweeps {mh['sweeps_per_chain'] // 2 + 1}.."
           f"{mh['sweeps_per_chain']}. Rank-normalised split-R̂ (plain split-R̂ in brackets) "
           f"over the same sweeps: log P(t|α) {_f(r.get('log_p_trees'), 3)} "
           f"({_f(r.get('log_p_trees_split'), 3)}), log held-out ppl "
           f"{_f(r.get('log_perplexity'), 3)} ({_f(r.get('log_perplexity_split'), 3)}) → "
           f"{'converged' if mh['mixed'] else 'NOT converged within the cap'}; convergence "
           f"sweep n_c = {mh['converged_sweep']}; target (ppl under the pooled θ̄) = "
           f"{mh['target_perplexity']:.1f}. The weaker held-out-only criterion (rank-R̂ of "
           f"log ppl alone, plus the θ̄ plateau) holds from sweep "
           f"{mh.get('heldout_only_sweep')} "
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


def markdown_probe(a, rows) -> list:
    """The markdown section of the mixing probe."""
    md = ["## Mixing probe (training split only)", "",
          f"{a.chains} MH chains per setting, {a.probe_sweeps} sweeps each from the uniform "
          f"start; move statistics and R̂ of log P(t|α) over sweeps "
          f"{a.probe_sweeps // 2 + 1}..{a.probe_sweeps}, medians over chains (real moves "
          "per sweep: each chain's, then per training word).", "",
          "| training words | α | real moves/sweep (per chain) | per word | identical "
          "proposals | real moves / accepted | acceptance of real moves | rank-R̂ (split-R̂) "
          "log P(t) | s/sweep |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['train_words']} | {r['alpha']:g} | {r['accepted_moved_per_sweep']:.2f}"
                  f" ({', '.join(f'{x:.1f}' for x in r['moves_per_chain'])}) | "
                  f"{r['moves_per_word']:.3f} | {r['proposed_same_fraction']:.3f} | "
                  f"{_f(r['accepted_moved_fraction'], 3)} | {_f(r['acceptance_moved'], 3)} | "
                  f"{r['rank_rhat']:.3f} ({r['split_rhat']:.3f}) | "
                  f"{r['seconds_per_sweep']:.3f} |")
    return md + [""]


def markdown(a, results, command, probe=None, image="pcfg_cvb_vs_mh.png") -> str:
    md = ["# CVB vs collapsed MH run to convergence", ""]
    if results:
        md += [f"cmudict morphology corpus and substring grammar, α = {a.alpha}; MH: "
               f"{a.chains} chains, rank-normalised split-R̂ checked every {a.check_every} "
               f"sweeps from {a.min_sweeps}, cap {a.max_sweeps}; CVB: {a.chains} seeds × "
               f"{a.cvb_iters} sweeps. Definitions (target, n_c, times) in the benchmark's "
               "docstring. Times are one run's sampling seconds, evaluation excluded; "
               "medians over seeds.", ""]
    if probe:
        md += markdown_probe(a, probe)
    for res in results:
        md += markdown_size(a, res)
    md += [f"Command: `{command}`", ""]
    if results:
        md += [f"![perplexity vs time]({image})"]
    return "\n".join(md) + "\n"


def plot(path, panels, alpha) -> bool:
    """Held-out perplexity against seconds, one panel per corpus size: every MH chain's
    single-sample ppl, MH's θ̄(m) on the grid, every CVB seed, the target ±2% (log–log).
    False when matplotlib is missing."""
    plt = harness.pyplot()
    if plt is None:
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
    harness.save_figure(fig, path, dpi=110)
    return True


def probe(a, words_n, alphas, log=sys.stdout) -> list:
    """The mixing probe on the training split of one corpus size: for each α, ``a.chains``
    chains of ``a.probe_sweeps`` sweeps from the uniform start, no held-out evaluation;
    per α the median over chains of :func:`move_stats` over the second half, the real
    moves per training word and the R̂ of ψ = log P(t | α) over that half."""
    g, cg, train, _ = setup(words_n)
    theta0, n = np.ones(len(g.rules)), a.probe_sweeps
    rows = []
    for alpha in alphas:
        kernel = CollapsedMH(g, train, alpha=alpha, compiled=cg)
        chains = [Chain(kernel, s, theta0, cg, None) for s in range(a.chains)]
        for c in chains:
            c.advance(n)
        stats = [move_stats(c, n // 2, n) for c in chains]
        lp = np.array([c.column("log_p_trees", n // 2, n) for c in chains])
        row = {"words": words_n, "train_words": len(train), "alpha": alpha, "sweeps": n,
               "moves_per_chain": [x["accepted_moved_per_sweep"] for x in stats],
               "rank_rhat": rank_rhat(lp), "split_rhat": split_rhat(lp),
               "seconds_per_sweep": statistics.median(c.seconds / n for c in chains)}
        for k in stats[0]:
            vals = [x[k] for x in stats if x[k] is not None]
            row[k] = statistics.median(vals) if vals else None
        row["moves_per_word"] = row["accepted_moved_per_sweep"] / len(train)
        rows.append(row)
        print(f"probe {len(train)} words α={alpha}: {row['accepted_moved_per_sweep']:.2f} "
              f"real moves/sweep, identical {row['proposed_same_fraction']:.3f}, rank-R̂ "
              f"{row['rank_rhat']:.3f}", file=log, flush=True)
    return rows


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
    ap.add_argument("--probe-alphas", type=float, nargs="*", default=[],
                    help="first run the mixing probe at these α on each corpus size")
    ap.add_argument("--probe-sweeps", type=int, default=100)
    ap.add_argument("--probe-only", action="store_true",
                    help="run the mixing probe only (no perplexity comparison)")
    ap.add_argument("--out", default=str(harness.result_path("pcfg_cvb_vs_mh")),
                    help="output stem: writes STEM.json, STEM.md and STEM.png")
    ap.add_argument("--render", metavar="JSON",
                    help="recompute the summaries and rewrite the JSON and markdown of a "
                         "finished run (no sampling; the plot is kept)")
    a = ap.parse_args(argv)
    if a.render:
        return render(Path(a.render))
    if a.chains < 2 or a.check_every % GRID or a.check_every < GRID:
        ap.error(f"--chains must be ≥ 2 and --check-every a multiple of {GRID}")
    if a.probe_only and not a.probe_alphas:
        ap.error("--probe-only needs --probe-alphas")
    if a.probe_alphas and a.probe_sweeps < 8:
        ap.error("--probe-sweeps must be ≥ 8 (R̂ needs 4 draws per chain in the 2nd half)")
    command = harness.command(__name__, argv)
    sizes = [int(w) for w in a.words.split(",")]
    probes = [r for w in sizes for r in probe(a, w, a.probe_alphas)]
    panels = [] if a.probe_only else [one_size(a, w) for w in sizes]
    results = [r for _, r in panels]
    out = Path(a.out).resolve()  # a stem: it may hold dots
    harness.write_json(out, {"argv": vars(a), "command": command, "probe": probes,
                             "results": results}, strict=True)
    harness.write_markdown(out, markdown(a, results, command, probes, out.name + ".png"))
    if panels:
        plot(out, panels, a.alpha)


def render(path: Path):
    """Summaries and markdown again from a finished run's JSON (``--render``)."""
    path = path.resolve()
    d = harness.read_json(path)
    for res in d["results"]:
        mh = res["mh"]
        ho = heldout_only_sweep([t["rows"] for t in res["mh_traces"]], mh["grid"],
                                mh["target_perplexity"])
        mh["heldout_only_sweep"], mh["heldout_only_seconds_median"] = ho
        res["summary"] = summarise(mh, res["cvb"])
    a = argparse.Namespace(**d["argv"])
    harness.write_json(path, d, strict=True)
    harness.write_markdown(path.with_suffix(".md"), markdown(a, d["results"], d["command"],
                                                             d.get("probe"),
                                                             path.stem + ".png"))


if __name__ == "__main__":
    main()
