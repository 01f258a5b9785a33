"""Figure-4 analogue: fixed beliefs, sweep λ; number of features vs accuracy (PEP §7.1).

As in the paper, the messages μ_{F→V} are held fixed — those of pruned-20 BP (the
baseline) on a synthetic paradigm with gold URs — so every λ approximates the *same*
morpheme beliefs p̂_V = ⊙_F μ_{F→V}. Each p̂_V is projected with PEP-prox (proximal
gradient run to convergence) and PEP-grow at each λ. Reported per λ, averaged over
morpheme variables:

* features: nonzero θ entries (the size of ENCODE(θ));
* H(p̂, q): the cross-entropy of the approximation on the belief it approximates, in nats,
  computed exactly as −θ·E_p̂[f] + log Z_θ (the objective's data term; its minimum over
  all θ is H(p̂), reached when q = p̂);
* gold: −log q(gold UR), over the morphemes whose fixed belief gives the gold UR
  probability ≥ 1e-3 (a projection cannot recover a UR the messages rule out; the others
  are counted in ``gold_excluded``);
* seconds per projection (the paper reports a 0.72 correlation of features with run time).

``--beliefs product`` (default) uses the baseline's beliefs, the product of all of a
morpheme's messages. On our phonology model they are nearly point masses (each root is
seen in up to five words), so ``--beliefs single`` also projects the broader
p̂_V = μ_{prior→V} ⊙ μ_{F→V} for one concatenation factor F (one word's evidence): the
kind of p̂ PEP meets on its first visits.

    python -m benchmarks.ep.lambda_sweep [--words 100] [--seed 0] [--iters 300]
                                         [--beliefs product|single]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks import harness
from benchmarks.ep.common import build
from strgm.datasets.synthetic import synthetic_paradigm
from strgm.features import encode, p_moments, q_moments
from strgm.inference import infer
from strgm.inference.belief import Belief
from strgm.inference.bp import intersect_all
from strgm.projection import grow, proximal_projection

LAMBDAS = [0.0005, 0.002, 0.01, 0.05, 0.2]
GOLD_MIN = 1e-3


def cross_entropy(p, theta, log_z: float) -> float:
    """H(p̂, q_θ) = −E_p̂[log q_θ] = −θ·E_p̂[f] + log Z_θ (nats), exact."""
    ep = p_moments(p, theta.features).expectations
    return float(-(theta.values @ ep) + log_z)


def fixed_belief(bp, model, morpheme: str, kind: str) -> Belief:
    """The baseline's belief at a morpheme, or (``single``) prior ⊙ one word's message."""
    v = model.morpheme_vars[morpheme]
    if kind == "product":
        return bp.belief(v)
    msgs = bp.side.msgs[v]
    prior = [m for f, m in msgs.items() if model.graph.factors[f].kind == "unary"]
    word = [m for f, m in msgs.items() if model.graph.factors[f].kind != "unary"]
    return Belief(v, intersect_all(prior + word[:1], 10 ** 6, f"belief of {v!r}"),
                  model.graph.alphabet)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--beliefs", choices=["product", "single"], default="product")
    ap.add_argument("--replot", action="store_true", help="redraw the PNG from the JSON")
    a = ap.parse_args()
    name = "ep_lambda_sweep" + ("" if a.beliefs == "product" else "_single")
    if a.replot:
        return replot(name)
    d = synthetic_paradigm(a.words, seed=a.seed)
    model, _ = build(d.paradigm, d.alphabet, holdout=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bp = infer(model.graph, "pruned", kbest=20, max_iters=5)
    n = d.alphabet.size
    beliefs = {m: fixed_belief(bp, model, m, a.beliefs) for m in d.gold_urs}
    gold_ok = {m for m, b in beliefs.items() if b.logprob(d.gold_urs[m]) >= np.log(GOLD_MIN)}
    rows, points = [], []
    for lam in LAMBDAS:
        for proj in ("prox", "grow"):
            feats, xent, gold, secs = [], [], [], []
            for m, ur in d.gold_urs.items():
                p = beliefs[m].fst
                t0 = time.perf_counter()
                th = proximal_projection(p, n, lam=lam, eta=0.5, iters=a.iters) \
                    if proj == "prox" else grow(p, n, lam=lam)
                secs.append(time.perf_counter() - t0)
                feats.append(th.nnz)
                log_z = q_moments(th).log_z
                xent.append(cross_entropy(p, th, log_z))
                if m in gold_ok:
                    q = Belief(m, encode(th), d.alphabet, log_z=log_z)
                    gold.append(-q.logprob(ur))
                points.append({"lambda": lam, "projection": proj, "morpheme": m,
                               "features": th.nnz, "xent": xent[-1], "seconds": secs[-1],
                               "affix": not m.startswith("R")})
            rows.append({"lambda": lam, "projection": proj,
                         "median_features": float(np.median(feats)),
                         "mean_features": float(np.mean(feats)),
                         "mean_xent_to_belief": float(np.mean(xent)),
                         "mean_gold_xent": float(np.mean(gold)) if gold else None,
                         "gold_scored": len(gold), "gold_excluded": len(d.gold_urs) - len(gold),
                         "seconds_per_projection": float(np.median(secs)),
                         "seconds_per_projection_all": secs})
            print({k: v for k, v in rows[-1].items() if not k.endswith("_all")}, flush=True)
    entropy = float(np.mean([beliefs[m].entropy() for m in d.gold_urs]))
    corr = {proj: float(np.corrcoef([q["features"] for q in points if q["projection"] == proj],
                                    [q["seconds"] for q in points if q["projection"] == proj])[0, 1])
            for proj in ("prox", "grow")}
    md = ["# λ sweep on fixed beliefs (Figure-4 analogue)", "",
          f"Synthetic paradigm, {a.words} words, seed {a.seed}; the fixed beliefs p̂_V are those "
          f"of pruned-20 BP (5 iterations) at the {len(d.gold_urs)} morpheme variables "
          + ("(the product of all their messages). " if a.beliefs == "product" else
             "restricted to the prior and one word's message. ") +
          "Command: `" + harness.command(__name__, f"--words {a.words} --seed {a.seed} "
                                         f"--iters {a.iters} --beliefs {a.beliefs}")
          + f"` at {harness.git_revision()}.",
          "",
          f"* Mean entropy of the fixed beliefs H(p̂) = {entropy:.3f} nats: the floor of the "
          "H(p̂, q) column (q = p̂).",
          f"* gold: mean −log q(gold UR) over the {len(gold_ok)} morphemes whose fixed belief "
          f"gives the gold UR probability ≥ {GOLD_MIN:g}; for the other "
          f"{len(d.gold_urs) - len(gold_ok)} the baseline's messages already exclude it.",
          f"* Correlation of features with seconds per projection, over all (λ, morpheme) "
          f"points: prox {corr['prox']:.2f}, grow {corr['grow']:.2f}.", "",
          "| projection | λ | mean features | median features | mean H(p̂, q) | "
          "mean −log q(gold UR) | median s/projection |",
          "|---|---|---|---|---|---|---|"]
    md += [f"| {r['projection']} | {r['lambda']} | {r['mean_features']:.1f} | "
           f"{r['median_features']:.0f} | {r['mean_xent_to_belief']:.3f} | "
           f"{r['mean_gold_xent']:.3f} | {r['seconds_per_projection']:.3f} |" for r in rows]
    harness.write_json(name, {"args": vars(a), "belief_entropy": entropy,
                              "gold_scored": sorted(gold_ok), "feature_seconds_corr": corr,
                              "rows": rows, "points": points})
    harness.write_markdown(name, "\n".join(md) + "\n")
    print("\n".join(md))
    plot(name, rows, points)


def plot(name: str, rows: list, points: list) -> None:
    """Paper-style Figure 4: one point per (λ, morpheme), circles for the means per λ."""
    plt = harness.pyplot()
    if not plt:
        return
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    shade = {lam: 0.25 + 0.75 * i / (len(LAMBDAS) - 1) for i, lam in
             enumerate(sorted(LAMBDAS, reverse=True))}  # lighter = larger λ
    for ax, proj in zip(axes, ("prox", "grow")):
        for q in points:
            if q["projection"] == proj:
                ax.scatter(q["features"], q["xent"], s=8, alpha=shade[q["lambda"]],
                           color="tab:orange" if q["affix"] else "tab:blue")
        rr = [r for r in rows if r["projection"] == proj]
        ax.plot([r["mean_features"] for r in rr], [r["mean_xent_to_belief"] for r in rr],
                "ko-", ms=9, mfc="none", label="mean per λ")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("features in the belief (log scale)")
        ax.set_title(f"PEP-{proj}: orange affixes, blue stems; lighter = larger λ",
                     fontsize=8)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("H(p̂, q) [nats]")
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def replot(name: str) -> None:
    """Redraw ``results/<name>.png`` from its JSON."""
    data = harness.read_json(name)
    plot(name, data["rows"], data["points"])


if __name__ == "__main__":
    main()
