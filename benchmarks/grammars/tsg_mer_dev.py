"""MER (sum and product) against the most probable derivation, on the development split:
does the sum objective, which scores a unary chain once, now match or beat MPD?

Train a blocked-sampler DP-TSG on wsj_0001-wsj_0139 (cleaned, X -> X collapsed; words
seen once become signatures; right-binarised with Markov order 1, as ``strgm tsg train``
does) for ``--seconds`` CPU seconds from a minimal initialisation, one chain per seed;
decode the sentences of at most ``--max-length`` words of wsj_0140-wsj_0159 by MER sum,
MER product (from the same MH draws) and MPD; score with evalb's COLLINS.prm
conventions (gold trees keep X -> X, as evalb does). The test files wsj_0160-0179 are
not read.

    python -m benchmarks.grammars.tsg_mer_dev [--seeds 0 1 2] [--seconds 120] [--samples 100]

Writes benchmarks/results/tsg_mer_dev.{json,md} with the commit hash.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks import harness
from benchmarks.grammars.treebank_pcfg import DATA, load
from strgm.grammars.bracket_score import score_corpus
from strgm.grammars.ptb import tree_leaves

DECODES = ("mer-sum", "mer-product", "mpd")


def train_model(seed: int, seconds: float, alpha_prior=None, markov: int | None = 1):
    """A blocked-sampler DP-TSG trained on wsj_0001-0139 (binarised with horizontal
    Markov order ``markov``) for ``seconds`` CPU seconds from a minimal initialisation,
    hyperparameters resampled under the Gamma ``alpha_prior`` on every α_c (None: the
    library default), as a :class:`TSGModel`."""
    from strgm.grammars.tsg import BlockedMHTSG
    from strgm.grammars.tsg.hyper import DEFAULT_ALPHA_PRIOR
    from strgm.grammars.tsg.model_file import TSGModel, prepare_trees

    trees, prep = prepare_trees(load(1, 139), 1, markov)
    k = BlockedMHTSG(trees, resample_hyper=True,
                     alpha_prior=DEFAULT_ALPHA_PRIOR if alpha_prior is None else alpha_prior)
    t0 = time.process_time()
    st = k.init(seed, "minimal")
    while time.process_time() - t0 < seconds:
        st = k.sample(st)
    return TSGModel(k, st, prep)


def decode_dev(m, seed: int, samples: int, max_length: int, decodes=DECODES) -> list:
    """Decode the development sentences of at most ``max_length`` words with model ``m``
    by each of ``decodes`` (MER ones from the same ``samples`` MH draws) and score them:
    one row per decode."""
    import numpy as np

    from strgm.grammars.mer_decode import mer_tree
    from strgm.grammars.tsg.parse import TSGParser

    parser = TSGParser(m.kernel, m.state, samples=samples)
    gold = [t for t in load(140, 159, collapse=False) if len(tree_leaves(t)) <= max_length]
    rng = np.random.default_rng(seed)
    out = {d: [] for d in decodes}
    mer = [d for d in decodes if d != "mpd"]
    for g in gold:
        words = tree_leaves(g)
        mapped = m.map_words(words)
        draws = [t for t, _ in parser.chain(parser.draws(mapped, rng), rng)] if mer else []
        for d in decodes:
            if d == "mpd":
                tree = parser.parse(mapped, "mpd")
            else:
                tree = mer_tree(draws, d.split("-")[1]) if draws else None
            out[d].append(None if tree is None else m.restore(tree, words))
    rows = []
    for d in decodes:
        s = score_corpus(gold, out[d]).summary()
        rows.append({"seed": seed, "decode": d, "f1": s["f1"], "precision": s["precision"],
                     "recall": s["recall"], "exact": s["exact_match"],
                     "no_parse": out[d].count(None), "sentences": len(gold),
                     "sweeps": m.state.iteration})
    return rows


def one_seed(job) -> list:
    """Train one chain, decode the development sentences three ways, score them."""
    seed, seconds, samples, max_length = job
    return decode_dev(train_model(seed, seconds), seed, samples, max_length)


def chain_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every TSG development run shares: chain seeds, CPU seconds per chain,
    posterior samples, the longest dev sentence parsed."""
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--max-length", type=int, default=25)


def treebank_missing() -> bool:
    """Whether the treebank sample is absent (then the run has nothing to do; said)."""
    if DATA.is_dir():
        return False
    print(f"treebank sample not found at {DATA}; nothing to do", file=sys.stderr)
    return True


def write_results(name: str, res: dict, text: str) -> None:
    """benchmarks/results/<name>.{json,md}, written atomically; the markdown printed."""
    harness.write_json(name, res, strict=True)
    harness.write_markdown(name, text)
    print(text)


def report(res) -> str:
    a = res["settings"]
    lines = [f"# MER sum and product against MPD, development split (commit {res['commit']})",
             "", "What was run: `" + harness.command(
                 __name__, f"--seeds {' '.join(map(str, a['seeds']))} --seconds "
                           f"{a['seconds']:g} --samples {a['samples']} --max-length "
                           f"{a['max_length']}") + "`. Train wsj_0001-0139 "
             "(blocked sampler, minimal init, one chain per seed), decode wsj_0140-0159 "
             f"sentences of at most {a['max_length']} words; evalb COLLINS.prm conventions. "
             "F1 in %, mean ± sd over seeds, then each seed.", "",
             "| decode | F1 mean ± sd | P | R | per seed |", "|---|---|---|---|---|"]
    for d in DECODES:
        rs = [r for r in res["rows"] if r["decode"] == d]
        f1 = [100 * r["f1"] for r in rs]
        sd = statistics.stdev(f1) if len(f1) > 1 else 0.0
        lines.append(f"| {d} | {statistics.mean(f1):.2f} ± {sd:.2f} | "
                     f"{100 * statistics.mean(r['precision'] for r in rs):.2f} | "
                     f"{100 * statistics.mean(r['recall'] for r in rs):.2f} | "
                     f"{', '.join(f'{x:.2f}' for x in f1)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chain_arguments(ap)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if treebank_missing():
        return 0
    jobs = [(s, a.seconds, a.samples, a.max_length) for s in a.seeds]
    rows = [r for rs in harness.map_jobs(one_seed, jobs, a.jobs) for r in rs]
    res = {"commit": harness.git_revision(), "settings": vars(a), "rows": rows}
    write_results("tsg_mer_dev", res, report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
