"""Infinite HMMs on CMUdict pronunciations: held-out log-likelihood per symbol of the LT,
plain and sticky HDP-HMMs against smoothed bigram and trigram models, and sweep speed.

Train on a seeded sample of 5,000 CMUdict words (IPA, first pronunciation), evaluate on
1,000 others. Each HMM chain runs ``--iters`` sweeps with L states (the defaults of
``strgm hmm train``: burn-in half, at most 20 samples); its score is the posterior
predictive (average over the kept samples), per symbol, each word's end included. Every
``--every`` sweeps the held-out score of the current state is recorded, for the curve.
Sweep times are medians over all sweeps of the chain (CPU seconds, one process).

    python benchmarks/hmm_cmudict.py [--models lt hdp sticky] [--iters 200] [--L 50]

Writes benchmarks/results/hmm_cmudict.{json,md,png} with the commit hash.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hmm_common import NGram, cmudict_ipa, commit, write_results  # noqa: E402

from strgm.errors import TruncationWarning  # noqa: E402
from strgm.hmm import Categorical, HMMSampler, HMMSettings  # noqa: E402
from strgm.hmm.data import build_vocab, encode  # noqa: E402
from strgm.hmm.model import hmm_of_state  # noqa: E402
from strgm.hmm.training import default_schedule, posterior_of, run_chain  # noqa: E402


def run_model(model, train, test, L, iters, every, seed) -> dict:
    vocab = build_vocab(train)
    tr, _ = encode(train, vocab)
    te, unseen = encode(test, vocab)
    kernel = HMMSampler(tr, HMMSettings(model=model, L=L), Categorical(len(vocab), 0.1))
    state = kernel.init(seed)
    burn, thin = default_schedule(iters)
    times, curve, clock = [], [], [time.process_time()]

    def on_sweep(st):
        times.append(time.process_time() - clock[0])
        if st.iteration % every == 0 or st.iteration == 1:
            h = hmm_of_state(st, kernel.settings, kernel.emissions)
            curve.append({"sweep": st.iteration, "cpu": sum(times),
                          "heldout": float(h.log_likelihoods(te).sum() / te.num_tokens),
                          "states": st.trace[-1]["states"]})
        clock[0] = time.process_time()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncationWarning)
        state = run_chain(kernel, state, iters, burn, thin, on_sweep=on_sweep)
    post = posterior_of(state, kernel, vocab)
    return {"model": model, "L": L, "iters": iters, "median_sweep_s": statistics.median(times),
            "heldout_per_symbol": float(post.log_likelihoods(te).sum() / te.num_tokens),
            "states_last": state.trace[-1]["states"], "alpha": state.alpha,
            "gamma": state.gamma, "kappa": state.kappa, "lam": state.lam,
            "unseen_test_tokens": unseen, "samples": len(post.samples), "curve": curve,
            "truncation_warning": bool(caught)}


def plot(res, path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for r in res["hmm"]:
        c = r["curve"]
        ax.plot([p["cpu"] for p in c], [p["heldout"] for p in c], label=f"{r['model']} (L={r['L']})")
    for name, v in res["baselines"].items():
        ax.axhline(v, ls="--", lw=1, color="grey")
        ax.text(0, v, f" {name}", va="bottom", fontsize=8)
    ax.set_xlabel("CPU seconds of sampling")
    ax.set_ylabel("held-out log-likelihood per symbol (nats)")
    ax.set_title("CMUdict: 5,000 training words, 1,000 held out")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def markdown(res) -> str:
    lines = [f"# Infinite HMMs on CMUdict pronunciations (commit {res['commit']})", "",
             f"Train {res['n_train']} words ({res['train_symbols']} symbols), held-out "
             f"{res['n_test']} words ({res['test_symbols']} symbols). Held-out "
             "log-likelihood per symbol in nats (each word's end included; higher is "
             "better). HMMs: posterior predictive over the kept samples.", "",
             "| model | L | sweeps | held-out nats/symbol | states used (last) | α | γ | κ | λ "
             "| median sweep (CPU s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["hmm"]:
        lines.append(f"| {r['model']} | {r['L']} | {r['iters']} | {r['heldout_per_symbol']:.4f} "
                     f"| {r['states_last']} | {r['alpha']:.3g} | {r['gamma']:.3g} | "
                     f"{r['kappa']:.3g} | {r['lam']:.3g} | {r['median_sweep_s']:.3f} |")
    for name, v in res["baselines"].items():
        lines.append(f"| {name} | – | – | {v:.4f} | – | – | – | – | – | – |")
    lines += ["", f"Command: `{res['command']}` ({res['seconds']:.0f} s in all)."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["lt", "hdp", "sticky"])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--L", type=int, nargs="+", default=[50])
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-train", type=int, default=5000)
    ap.add_argument("--n-test", type=int, default=1000)
    a = ap.parse_args()
    t0 = time.time()
    train, test = cmudict_ipa(a.n_train, a.n_test, a.seed)
    base = {}
    for order, name in ((2, "bigram (abs. discounting)"), (3, "trigram (abs. discounting)")):
        ng = NGram(train, order)
        assert abs(ng.check_normalised(tuple(train[0][:order - 1])) - 1) < 1e-9
        base[name] = ng.per_symbol(test)
    hmm = [run_model(m, train, test, L, a.iters, a.every, a.seed)
           for L in a.L for m in a.models]
    res = {"commit": commit(), "command": "python benchmarks/hmm_cmudict.py " + " ".join(sys.argv[1:]),
           "n_train": len(train), "n_test": len(test),
           "train_symbols": sum(map(len, train)), "test_symbols": sum(map(len, test)),
           "baselines": base, "hmm": hmm, "seconds": time.time() - t0}
    write_results("hmm_cmudict", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
