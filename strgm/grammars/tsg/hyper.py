"""Slice sampling of the DP-TSG hyperparameters α_c and s_c (Cohn & Blunsom 2010 §4:
"hyperparameter inference for α_c and s_c ∀c ∈ N").

With the derivations fixed, the exact collapsed likelihood of the hyperparameters is the
log joint of :mod:`.fragments`,

    L(α, s) = Σ_c [ Σ_{e rooted c} (lnΓ(n_e + α_c P0(e)) − lnΓ(α_c P0(e)))
                    − (lnΓ(n_c + α_c) − lnΓ(α_c)) ],
    log P0(e) = B_e + Σ_L (f_{e,L} log s_L + i_{e,L} log(1 − s_L)),

with B_e the sum of the ET's log P_CFG, f_{e,L} / i_{e,L} its frontier / non-root internal
nodes labelled L. Priors: α_c ~ Gamma(shape a, scale b), s_c ~ Beta(1, 1). The default
a = 10⁻⁴, b = 10⁴ is the vague, nearly scale-invariant prior: density ∝ α^{a−1} ≈ 1/α
below 10⁴, nearly flat on log α, so the data alone set the scale of α_c; an exponential
(a = 1) is flat in α up to about b, hence ∝ α on log α, which pulls α_c up towards b when
the likelihood is flat there. On the development split (train wsj_0001-0139, MER-product
F1 on wsj_0140-0159, several seeds) the exponentials of scale 10⁴, 10² and 1 did not beat
the vague prior by more than the seeds' spread, though they moved the median α_c by up to
three orders of magnitude (benchmarks/results/tsg_alpha_prior_dev.md), so the prior that
assumes no scale is kept. Each α_c is updated by one univariate slice-sampling step (Neal
2003, stepping out and shrinkage) on x = log α_c, whose density is L + a·x − eˣ/b (the
+x is the Jacobian of α = eˣ); each s_c by one step on (0, 1) with density L (Beta(1,1)
is flat). An update touches only the ETs whose P0 or root involves
the label: one sweep over all labels costs O(Σ_e |e|) per density evaluation in total.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["ETFeatures", "resample_hyper", "slice_step", "DEFAULT_ALPHA_PRIOR"]

DEFAULT_ALPHA_PRIOR = (1e-4, 1e4)


def _terms(n, la):
    """lnΓ(n + a) − lnΓ(a) for a = exp(la), stable for tiny a."""
    a = np.exp(la)
    return gammaln(n + a) - gammaln(1.0 + a) + la


class ETFeatures:
    """The ETs with n_e > 0 of an :class:`~.fragments.ETCounts` as arrays: ``n``, ``lab``
    (root label), ``lp0`` (log P0 under the current s), and per label L the rows whose P0
    involves s_L with their frontier / internal counts (``by_label[L] = (rows, f, i)``)."""

    def __init__(self, counts, s):
        ids, self.n = counts.ets()
        fr = counts.frags
        self.lab = np.asarray(fr.lab, dtype=np.int64)[ids]
        self.lp0 = np.asarray(fr.lp0, dtype=float)[ids]
        self.ncat = np.asarray(counts.ncat, dtype=float)
        self.n_labels = len(self.ncat)
        rows, labs, fi = [], [], []
        for j, f in enumerate(ids.tolist()):
            _, front, inner = fr.nodes(f)
            for L in front:
                rows.append(j), labs.append(L), fi.append(0)
            for L in inner:
                rows.append(j), labs.append(L), fi.append(1)
        nl = self.n_labels
        key = np.asarray(rows, dtype=np.int64) * nl + np.asarray(labs, dtype=np.int64)
        fi = np.asarray(fi, dtype=np.int64)
        uk, inv = np.unique(key, return_inverse=True)
        fc = np.bincount(inv, weights=(fi == 0), minlength=len(uk))
        ic = np.bincount(inv, weights=(fi == 1), minlength=len(uk))
        ur, ul = uk // nl, uk % nl
        order = np.argsort(ul, kind="stable")
        bounds = np.searchsorted(ul[order], np.arange(nl + 1))
        self.by_label = [(ur[order[bounds[L]:bounds[L + 1]]], fc[order[bounds[L]:bounds[L + 1]]],
                          ic[order[bounds[L]:bounds[L + 1]]]) for L in range(nl)]
        self.rows_of_root = [np.flatnonzero(self.lab == L) for L in range(nl)]
        self.s = np.asarray(s, dtype=float).copy()


def slice_step(logp, x: float, rng, lo: float = -math.inf, hi: float = math.inf,
               width: float = 1.0, max_steps: int = 50) -> float:
    """One slice-sampling update of x under the unnormalised log density ``logp``
    restricted to (lo, hi) (Neal 2003 §4: stepping out, then shrinkage)."""
    y = logp(x) + math.log(rng.random())
    left = x - width * rng.random()
    right = left + width
    for _ in range(max_steps):
        if left <= lo or logp(left) <= y:
            break
        left -= width
    for _ in range(max_steps):
        if right >= hi or logp(right) <= y:
            break
        right += width
    left, right = max(left, lo), min(right, hi)
    while True:
        x1 = left + rng.random() * (right - left)
        if lo < x1 < hi and logp(x1) > y:
            return x1
        if x1 < x:
            left = x1
        else:
            right = x1
        if right - left < 1e-12 * max(1.0, abs(x)):
            return x


def _alpha_logp(feat: ETFeatures, c: int, prior):
    rows = feat.rows_of_root[c]
    n, lp0, nc = feat.n[rows], feat.lp0[rows], feat.ncat[c]
    shape, scale = prior

    def logp(x):
        a = math.exp(x)
        return float(_terms(n, x + lp0).sum() - gammaln(nc + a) + gammaln(a)
                     + shape * x - a / scale)
    return logp


def _s_logp(feat: ETFeatures, L: int, alpha):
    rows, f, i = feat.by_label[L]
    n, base = feat.n[rows], feat.lp0[rows] + np.log(alpha[feat.lab[rows]])
    s0 = feat.s[L]
    base = base - f * math.log(s0) - i * math.log1p(-s0)

    def logp(s):
        return float(_terms(n, base + f * math.log(s) + i * math.log1p(-s)).sum())
    return logp, rows, f, i


def resample_hyper(counts, alpha, s, rng, alpha_prior=DEFAULT_ALPHA_PRIOR,
                   what: str = "both"):
    """New (α, s): one slice step for every s_L (label order), then for every α_c, given
    the derivations in ``counts`` (built under ``s``). ``what`` is "both", "alpha" or
    "s"."""
    alpha = np.asarray(alpha, dtype=float).copy()
    feat = ETFeatures(counts, s)
    if what in ("both", "s"):
        for L in range(feat.n_labels):
            logp, rows, f, i = _s_logp(feat, L, alpha)
            old = feat.s[L]
            new = slice_step(logp, old, rng, 0.0, 1.0, 1.0)
            feat.lp0[rows] += f * (math.log(new) - math.log(old)) + \
                i * (math.log1p(-new) - math.log1p(-old))
            feat.s[L] = new
    if what in ("both", "alpha"):
        for c in range(feat.n_labels):
            alpha[c] = math.exp(slice_step(_alpha_logp(feat, c, alpha_prior),
                                           math.log(alpha[c]), rng, -30.0, 30.0, 1.0))
    return alpha, feat.s.copy()
