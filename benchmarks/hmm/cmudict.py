"""Infinite HMMs on CMUdict pronunciations: held-out log-likelihood per symbol of the LT,
plain and sticky HDP-HMMs against smoothed bigram and trigram models, and sweep speed.

Train on a seeded sample of 5,000 CMUdict words (IPA, first pronunciation), evaluate on
1,000 others. Each HMM chain runs ``--iters`` sweeps with L states (the defaults of
``strgm hmm train``: burn-in half, at most 20 samples); its score is the posterior
predictive (average over the kept samples), per symbol, each word's end included. Every
``--every`` sweeps the held-out score of the current state is recorded, for the curve.
Sweep times are medians over all sweeps of the chain (CPU seconds, one process).

Each named model runs from each of ``--starts`` (``HMMSampler.init``). The ``auto`` row
is ``--model auto`` (the CLI's default): one chain of each model from each start on 90%
of the training words, the best by its score on the other 10% continued on all of them;
its CPU column adds the choice's seconds.

    python -m benchmarks.hmm.cmudict [--models lt hdp sticky] [--iters 200] [--L 50]
        [--starts symbols random] [--no-auto]

Writes benchmarks/results/hmm_cmudict.{json,md,png} with the commit hash.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
import warnings

from benchmarks import harness
from benchmarks.hmm.common import NGram, cmudict_ipa, write_results
from strgm.errors import TruncationWarning
from strgm.hmm import Categorical, HMMSampler, HMMSettings
from strgm.hmm.data import build_vocab, encode
from strgm.hmm.model import hmm_of_state
from strgm.hmm.selection import choose_model, start_from
from strgm.hmm.training import default_schedule, posterior_of, run_chain


def kernel_for(model, tr, V, L) -> HMMSampler:
    """The kernel ``strgm hmm train --model MODEL`` builds (κ starts at 1 for sticky)."""
    return HMMSampler(tr, HMMSettings(model=model, L=L, kappa=1.0 if model == "sticky"
                                      else 0.0), Categorical(V, 0.1))


def run_auto(train, test, L, iters, every, seed) -> dict:
    """``--model auto``: the choice on a 90/10 split of the training words, then the
    chosen chain continued on all of them (strgm.hmm.selection), as the CLI does."""
    vocab = build_vocab(train)
    tr, _ = encode(train, vocab)
    burn, thin = default_schedule(iters)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        choice = choose_model(lambda m: kernel_for(m, tr, len(vocab), L), iters, burn, thin,
                              seed)
    choose_cpu = time.process_time() - t0
    first = start_from(kernel_for(choice.model, tr, len(vocab), L), choice)
    r = run_model(choice.model, train, test, L, iters, every, seed, first=first)
    r.update(model=f"auto → {choice.model}, {choice.start} start", choice=choice.scores,
             choose_cpu=choose_cpu)
    return r


def run_model(model, train, test, L, iters, every, seed, first=None, start=None) -> dict:
    vocab = build_vocab(train)
    tr, _ = encode(train, vocab)
    te, unseen = encode(test, vocab)
    kernel = kernel_for(model, tr, len(vocab), L)
    state = kernel.init(seed, start=start) if first is None else first
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
    name = model if start is None else f"{model}, {start} start"
    return {"model": name, "seed": seed, "L": L, "iters": iters,
            "median_sweep_s": statistics.median(times),
            "cpu": sum(times),
            "heldout_per_symbol": float(post.log_likelihoods(te).sum() / te.num_tokens),
            "states_last": state.trace[-1]["states"], "alpha": state.alpha,
            "gamma": state.gamma, "kappa": state.kappa, "lam": state.lam,
            "unseen_test_tokens": unseen, "samples": len(post.samples), "curve": curve,
            "truncation_warning": bool(caught)}


def plot(res, name) -> bool:
    plt = harness.pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for r in (r for r in res["hmm"] if r.get("seed", 0) == res.get("seeds", [0])[0]):
        c = r["curve"]
        ax.plot([p["cpu"] for p in c], [p["heldout"] for p in c],
                label=f"{r['model']} (L={r['L']})")
    for name, v in res["baselines"].items():
        ax.axhline(v, ls="--", lw=1, color="grey")
        ax.text(0, v, f" {name}", va="bottom", fontsize=8)
    ax.set_xlabel("CPU seconds of sampling")
    ax.set_ylabel("held-out log-likelihood per symbol (nats)")
    ax.set_title("CMUdict: 5,000 training words, 1,000 held out")
    ax.legend()
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)
    return True


def _groups(res) -> dict:
    """{(row label, L): [that configuration's runs, one per chain seed]}."""
    out = {}
    for r in res["hmm"]:
        out.setdefault((r["model"].split(" → ")[0], r["L"]), []).append(r)
    return out


def _spread(rows, key, fmt) -> str:
    v = [r[key] for r in rows]
    if len(v) == 1:
        return format(v[0], fmt)
    return f"{format(statistics.median(v), fmt)} [{format(min(v), fmt)}, {format(max(v), fmt)}]"


def markdown(res) -> str:
    seeds = res.get("seeds", [res.get("seed", 0)])
    lines = [f"# Infinite HMMs on CMUdict pronunciations (commit {res['commit']})", "",
             f"Train {res['n_train']} words ({res['train_symbols']} symbols), held-out "
             f"{res['n_test']} words ({res['test_symbols']} symbols). Held-out "
             "log-likelihood per symbol in nats (each word's end included; higher is "
             "better). HMMs: posterior predictive over the kept samples; median [min, max] "
             f"over chain seeds {seeds}.", "",
             "| model | L | sweeps | held-out nats/symbol | states used (last) | α | γ "
             "| median sweep (CPU s) | CPU s in all |", "|---|---|---|---|---|---|---|---|---|"]
    for (label, L), rows in _groups(res).items():
        for r in rows:
            r["cpu_all"] = r.get("cpu", 0) + r.get("choose_cpu", 0)
        lines.append(f"| {label} | {L} | {rows[0]['iters']} | "
                     f"{_spread(rows, 'heldout_per_symbol', '.4f')} | "
                     f"{_spread(rows, 'states_last', '.0f')} | {_spread(rows, 'alpha', '.3g')} | "
                     f"{_spread(rows, 'gamma', '.3g')} | "
                     f"{_spread(rows, 'median_sweep_s', '.3f')} | "
                     f"{_spread(rows, 'cpu_all', '.0f')} |")
    for name, v in res["baselines"].items():
        lines.append(f"| {name} | – | – | {v:.4f} | – | – | – | – | – |")
    lines += ["", f"Command: `{res['command']}` ({res['seconds']:.0f} s in all)."]
    for (label, L), rows in _groups(res).items():
        if label != "auto":
            continue
        named = {k: v for k, v in _groups(res).items() if k[1] == L and k[0] != "auto"}
        med = {k[0]: statistics.median(r["heldout_per_symbol"] for r in v)
               for k, v in named.items()}
        best = max(med, key=med.get)
        mine = statistics.median(r["heldout_per_symbol"] for r in rows)
        lines.append(f"\nL = {L}: `--model auto` chose "
                     + "; ".join(f"seed {r['seed']}: {r['model'][7:]}" for r in rows)
                     + f". Its median held-out score minus the best named configuration's "
                     f"({best}, median {med[best]:.4f}): {mine - med[best]:+.4f} nats/symbol.")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["lt", "hdp", "sticky"])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--L", type=int, nargs="+", default=[50])
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="seed of the data sample")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="chain seeds")
    ap.add_argument("--n-train", type=int, default=5000)
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--no-auto", action="store_true", help="skip the --model auto row")
    ap.add_argument("--starts", nargs="+", default=["symbols", "random"],
                    choices=["symbols", "random", "prior"],
                    help="the named models' starts (HMMSampler.init)")
    a = ap.parse_args()
    t0 = time.time()
    train, test = cmudict_ipa(a.n_train, a.n_test, a.seed)
    base = {}
    for order, name in ((2, "bigram (abs. discounting)"), (3, "trigram (abs. discounting)")):
        ng = NGram(train, order)
        assert abs(ng.check_normalised(tuple(train[0][:order - 1])) - 1) < 1e-9
        base[name] = ng.per_symbol(test)
    hmm = []
    for L, st, m, seed in itertools.product(a.L, a.starts, a.models, a.seeds):
        hmm.append(run_model(m, train, test, L, a.iters, a.every, seed, start=st))
        print(f"{hmm[-1]['model']} seed {seed}: {hmm[-1]['heldout_per_symbol']:.4f}",
              flush=True)
    if not a.no_auto:
        for L, seed in itertools.product(a.L, a.seeds):
            hmm.append(run_auto(train, test, L, a.iters, a.every, seed))
            print(f"{hmm[-1]['model']} seed {seed}: {hmm[-1]['heldout_per_symbol']:.4f}",
                  flush=True)
    res = {"commit": harness.git_revision(), "command": harness.command(__name__),
           "n_train": len(train), "n_test": len(test), "seeds": a.seeds,
           "train_symbols": sum(map(len, train)), "test_symbols": sum(map(len, test)),
           "baselines": base, "hmm": hmm, "seconds": time.time() - t0}
    write_results("hmm_cmudict", res, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
