"""Learn English suffixes from unsegmented words with a sparse Bayesian PCFG.

Builds a small cmudict corpus, the substring grammar, runs CVB with α = 1e-5 and the
collapsed MH sampler for a few sweeps, and prints segmentations and scores.

    python examples/pcfg_morphology.py
"""

import numpy as np

from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import inside
from strgm.grammars.estimators import cvb
from strgm.grammars.evaluation import segmentation_scores
from strgm.grammars.morphology import build_corpus, segmentation_of_tree, substring_grammar
from strgm.grammars.samplers import CollapsedMH, run


def segment(cg, words, theta):
    out = []
    for w in words:
        r = inside(cg, [w], theta).viterbi()[0]
        out.append(["".join(w)] if r is None else segmentation_of_tree(r[0]))
    return out


def main():
    words, gold = build_corpus(150, seed=1)
    g = substring_grammar(words)
    cg = compile_grammar(g)
    theta0 = np.ones(len(g.rules))  # start uniform over each word's parses
    print(f"{len(words)} words, {len(g.rules)} rules")
    res = cvb(g, words, alpha=1e-5, iters=5, theta0=theta0, progress=True)
    segs = segment(cg, words, res.theta)
    print("CVB:", segmentation_scores(segs, gold))
    k = CollapsedMH(g, words, alpha=1e-5, compiled=cg)
    mh = run(k, k.init(0, theta0=theta0), 10, burn_in=5, progress=True)
    print("MH: ", segmentation_scores(segment(cg, words, mh.theta_mean), gold),
          f"acceptance {mh.state.accepted / mh.state.proposed:.3f}")
    for w, s in list(zip(words, segs))[:12]:
        print(f"  {''.join(w):14s} -> {' + '.join(s)}")


if __name__ == "__main__":
    main()
