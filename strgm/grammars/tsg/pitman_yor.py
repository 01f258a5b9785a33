"""The Pitman–Yor TSG: G_c ~ PYP(d_c, α_c, P0(·|c)) for every label c, the customers (the
substitution sites of the derivations) seated at tables (Cohn, Blunsom & Goldwater 2010,
JMLR, "Inducing tree-substitution grammars"; Teh 2006 for the restaurant).

**Restaurant.** A site v with root label c eating elementary tree (ET) e is a customer of
c's restaurant; every table serves one ET. With n_e customers of e at K_e tables of sizes
m_t, n_c = Σ_e n_e and K_c = Σ_e K_e, a new customer of c

    eats e at existing table t of e      with weight m_t − d_c
    eats e at a new table                with weight (α_c + d_c K_c) P0(e | c)

over n_c + α_c, so summed over its seat the predictive is

    P(e | c, rest) = (n_e − d_c K_e + (α_c + d_c K_c) P0(e | c)) / (n_c + α_c).

**Joint with seating.** Multiplying the sequential weights of customers 1..n (any order:
the process is exchangeable) gives a labelled seating and its dishes the probability

    Π_{c: n_c > 0} [ Γ(1 + α_c)/Γ(n_c + α_c) · Π_{k=1}^{K_c−1} (α_c + k d_c)
                     · Π_{tables t of c} Γ(m_t − d_c)/Γ(1 − d_c) ] · Π_t P0(e_t)

(the PYP's EPPF, Pitman 1995 / Teh 2006 eq. (1), times P0 once per table). The first
customer opens a table with weight α_c/α_c = 1, hence Γ(1 + α_c), not Γ(α_c): written
with Γ(α_c) the product must run over k = 0..K_c−1. Summed over the seatings of e's
customers the factors Π_t Γ(m_t − d)/Γ(1 − d) give the generalised Stirling numbers
S_d(n_e, K_e); at d = 0 they are the unsigned Stirling numbers of the first kind, and
Σ_K S_0(n, K) (α P0)^K = Γ(n + α P0)/Γ(α P0) turns the joint into the DP's log joint of
:mod:`.fragments` exactly.

**Representation.** Labelled: ``tab[v]`` is the table of the customer at site v (−1
elsewhere), ``size[t]``, ``dish[t]``, ``of[e]`` (e's tables in opening order), ``nseat[e]``
= n_e, ``nc[c]`` = n_c and ``K[c]`` = K_c. Removing the customer at v is therefore
deterministic (it leaves its own table), and a move that re-seats customers needs no
draw to forget which table they sat at. A checkpoint stores one table id per site in
node order, renumbered by first appearance (:meth:`Restaurant.canonical`), so a
restaurant rebuilt from it is the same however it was reached.

**Hyperparameters given the seating.** The joint depends on α_c and d_c only through
(n_c, K_c, table sizes) and on s only through Π_t P0(e_t): one slice step
(:func:`.hyper.slice_step`) on x = log α_c (so α_c > 0 is kept, inside the PYP's
α_c > −d_c) with density lnΓ(1+α) − lnΓ(n_c+α) +
Σ_{k<K_c} log(α + k d) + a x − eˣ/b (Gamma(a, b) prior as in :mod:`.hyper`, Jacobian
included); one slice step on d_c ∈ (0, 1) with density Σ_{k<K_c} log(α + k d) +
Σ_t [lnΓ(m_t − d) − lnΓ(1 − d)] + Beta(a_d, b_d) prior; and s_L drawn exactly from
Beta(1 + Σ_e K_e f_{e,L}, 1 + Σ_e K_e i_{e,L}) (f, i: frontier / internal nodes of e
labelled L; Beta(1, 1) prior). Costs: a seat O(K_e), a predictive O(1), the joint and a
hyperparameter sweep O(number of tables + Σ_c K_c) per density evaluation.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.special import gammaln

from strgm.errors import InputError
from strgm.grammars.tsg.fragments import log_weight
from strgm.grammars.tsg.hyper import ETFeatures, slice_step

__all__ = ["Restaurant", "eppf_log", "slice_alpha", "slice_discount", "resample_py_hyper",
           "MAPView", "map_view", "DEFAULT_DISCOUNT_PRIOR"]

#: Beta(a, b) prior on every discount d_c (uniform)
DEFAULT_DISCOUNT_PRIOR = (1.0, 1.0)


def _log_new_tables(alpha: float, d: float, k: int) -> float:
    """Σ_{j=1}^{k−1} log(α + j d)."""
    return float(np.log(alpha + d * np.arange(1, k)).sum()) if k > 1 else 0.0


def eppf_log(alpha: float, d: float, sizes) -> float:
    """log of one restaurant's EPPF factor (module docstring) for table sizes ``sizes``:
    lnΓ(1+α) − lnΓ(n+α) + Σ_{k=1}^{K−1} log(α + k d) + Σ_t [lnΓ(m_t − d) − lnΓ(1 − d)];
    0 for an empty restaurant. O(K)."""
    m = np.asarray(sizes, dtype=float)
    if m.size == 0:
        return 0.0
    return float(gammaln(1.0 + alpha) - gammaln(m.sum() + alpha)
                 + _log_new_tables(alpha, d, m.size)
                 + (gammaln(m - d) - gammaln(1.0 - d)).sum())


class Restaurant:
    """The labelled seating of every label's restaurant over the ETs of ``counts`` (an
    :class:`~.fragments.ETCounts`, whose intern table gives each ET's label and log P0);
    ``alpha``, ``d`` per label; ``tables`` one table id per site in node order (None: no
    customer seated). A table serving two ETs is an InputError."""

    def __init__(self, counts, alpha, d, tables=None):
        self.counts = counts
        self.lab, self.lp0 = counts.frags.lab, counts.frags.lp0
        self.alpha = [float(a) for a in alpha]
        self.d = [float(x) for x in d]
        self.tab = [-1] * counts.table.n_nodes
        self.size: dict = {}
        self.dish: dict = {}
        self.of: dict = {}
        self.nseat: dict = {}
        self.nc = [0] * counts.table.n_labels
        self.K = [0] * counts.table.n_labels
        self.next = 0
        if tables is not None:
            self._load([int(t) for t in tables])

    def _load(self, tables) -> None:
        sites = [v for v, x in enumerate(self.counts.site) if x]
        if len(tables) != len(sites):
            raise InputError(f"{len(tables)} table ids for {len(sites)} sites")
        ids: dict = {}
        for v, t in zip(sites, tables):
            f = self.counts.below[v]
            k = ids.get(t)
            if k is not None and self.dish[k] != f:
                raise InputError(f"table {t} serves two different elementary trees")
            ids[t] = self.join(v, f, -1 if k is None else k)

    def join(self, v: int, f: int, t: int = -1) -> int:
        """Seat a customer of ET f at node v: at table t, at a fresh table (t = −1), or
        reopening the closed table t. Returns the table. O(1)."""
        c = self.lab[f]
        if t < 0 or t not in self.size:
            if t < 0:
                t, self.next = self.next, self.next + 1
            self.size[t], self.dish[t] = 1, f
            self.of.setdefault(f, []).append(t)
            self.K[c] += 1
        else:
            self.size[t] += 1
        self.nseat[f] = self.nseat.get(f, 0) + 1
        self.nc[c] += 1
        self.tab[v] = t
        return t

    def leave(self, v: int) -> tuple:
        """Remove the customer at node v: (its ET, its table, whether the table closed).
        O(K_e) when a table closes, else O(1)."""
        t = self.tab[v]
        self.tab[v] = -1
        f = self.dish[t]
        c = self.lab[f]
        self.nseat[f] -= 1
        self.nc[c] -= 1
        m = self.size[t] - 1
        if m:
            self.size[t] = m
            return f, t, False
        del self.size[t], self.dish[t]
        self.of[f].remove(t)
        self.K[c] -= 1
        return f, t, True

    def log_bridge(self, c: int, dkc: int = 0) -> float:
        """log(α_c + d_c (K_c + dkc)): the new-table weight without P0."""
        return math.log(self.alpha[c] + self.d[c] * (self.K[c] + dkc))

    def old_weight(self, f: int, dn: int = 0, dk: int = 0) -> float:
        """n_e + dn − d_c (K_e + dk): the total weight of e's existing tables."""
        return self.nseat.get(f, 0) + dn - self.d[self.lab[f]] * (len(self.of.get(f, ())) + dk)

    def log_pred(self, f: int, dn: int = 0, dk: int = 0, dkc: int = 0, dnc: int = 0) -> float:
        """log P(e | c, rest), the predictive of the module docstring, with n_e, K_e, K_c,
        n_c shifted by dn, dk, dkc, dnc (customers seated but not yet recorded). O(1)."""
        c = self.lab[f]
        return log_weight(self.old_weight(f, dn, dk), self.log_bridge(c, dkc) + self.lp0[f]) \
            - math.log(self.nc[c] + dnc + self.alpha[c])

    def log_pair(self, f: int, lj: float, ln: float) -> float:
        """log Σ_seat P(e, seat | rest) · P(next | seat) for a customer of ET f followed by
        one whose predictive is e^lj if f joins an existing table, e^ln if it opens one."""
        c = self.lab[f]
        a = self.log_bridge(c) + self.lp0[f] + ln
        old = self.old_weight(f)
        if old > 0:
            b = math.log(old) + lj
            a = max(a, b) + math.log1p(math.exp(-abs(a - b)))
        return a - math.log(self.nc[c] + self.alpha[c])

    def seat_probs(self, f: int, tilt: float = 0.0) -> tuple:
        """(e's tables, their probabilities, the new table's) for a customer known to eat
        e: ∝ m_t − d_c and (α_c + d_c K_c) P0(e) e^tilt. O(K_e)."""
        ts = list(self.of.get(f, ()))
        d = self.d[self.lab[f]]
        w = np.array([self.size[t] - d for t in ts] + [0.0])
        lnew = self.log_bridge(self.lab[f]) + self.lp0[f] + tilt
        top = max(lnew, math.log(w.sum()) if w.sum() > 0 else lnew)
        w = w * math.exp(-top)
        w[-1] = math.exp(lnew - top)
        return ts, w[:-1] / w.sum(), w[-1] / w.sum()

    def choose(self, f: int, u: float, tilt: float = 0.0) -> int:
        """The table (−1: a new one) of a customer known to eat ET f, by inverse CDF of
        :meth:`seat_probs` at the uniform ``u``. O(K_e)."""
        return self._choose(f, u, self.old_weight(f),
                            self.log_bridge(self.lab[f]) + self.lp0[f] + tilt)

    def _choose(self, f: int, u: float, old: float, lnew: float) -> int:
        """:meth:`choose` given e's old weight and the log new-table weight."""
        ts = self.of.get(f)
        if not ts or old <= 0:
            return -1
        r = lnew - math.log(old)
        pnew = 0.0 if r < -700 else 1.0 / (1.0 + math.exp(-r))
        if u < pnew:
            return -1
        x = (u - pnew) / (1.0 - pnew) * old
        d = self.d[self.lab[f]]
        for t in ts:
            x -= self.size[t] - d
            if x < 0:
                return t
        return ts[-1]

    def seat_seq(self, nodes, ets, rng) -> float:
        """Seat customers (node, ET) one after another, each table drawn from
        :meth:`seat_probs`; returns Σ_j log P(e_j | the customers before j)."""
        tot, lab, lp0, nc, alpha = 0.0, self.lab, self.lp0, self.nc, self.alpha
        for v, f in zip(nodes, ets):
            c = lab[f]
            old, lnew = self.old_weight(f), self.log_bridge(c) + lp0[f]
            tot += log_weight(old, lnew) - math.log(nc[c] + alpha[c])
            self.join(v, f, self._choose(f, rng.random(), old, lnew))
        return tot

    def unseat_seq(self, nodes) -> tuple:
        """Remove the customers at ``nodes`` last first: (Σ_j log P(e_j | the customers
        before j), the undo record for :meth:`reseat`)."""
        tot, undo = 0.0, []
        for v in reversed(nodes):
            f, t, _ = self.leave(v)
            tot += self.log_pred(f)
            undo.append((v, f, t))
        return tot, undo

    def reseat(self, undo) -> None:
        """Put customers removed by :meth:`unseat_seq` back at their own tables."""
        for v, f, t in reversed(undo):
            self.join(v, f, t)

    def map_weights(self) -> tuple:
        """(n_e − d_c K_e as a ``get``-able view, [α_c + d_c K_c]): the numerators of the
        MAP TSG's Table 1 rules c → sign(e) and c → c' at the current seating."""
        return _Eff(self), [math.exp(self.log_bridge(c)) for c in range(len(self.K))]

    def label_sizes(self) -> list:
        """Per label, the sizes of its tables (an int array)."""
        out: list = [[] for _ in self.K]
        for t in sorted(self.size):
            out[self.lab[self.dish[t]]].append(self.size[t])
        return [np.asarray(m, dtype=np.int64) for m in out]

    def log_joint(self) -> float:
        """log P(derivations, seating | α, d, s) of the module docstring. O(tables)."""
        terms = [eppf_log(a, d, m) for a, d, m in zip(self.alpha, self.d, self.label_sizes())]
        terms += [self.lp0[self.dish[t]] for t in sorted(self.size)]
        return float(np.sort(np.asarray(terms)).sum())

    def canonical(self) -> np.ndarray:
        """One table id per site in node order, renumbered by first appearance."""
        ids: dict = {}
        return np.array([ids.setdefault(self.tab[v], len(ids))
                         for v, x in enumerate(self.counts.site) if x], dtype=np.int64)


class _Eff:
    """``get(e, default)`` = n_e − d_c K_e for a seated ET, else ``default``."""

    __slots__ = ("r",)

    def __init__(self, r):
        self.r = r

    def get(self, f, default=0):
        return self.r.old_weight(f) if self.r.nseat.get(f, 0) > 0 else default


def _alpha_logp(m, d: float, prior):
    n, k = float(m.sum()), len(m)
    shape, scale = prior

    def logp(x):
        a = math.exp(x)
        v = shape * x - a / scale
        if k:
            v += gammaln(1.0 + a) - gammaln(n + a) + _log_new_tables(a, d, k)
        return float(v)
    return logp


def _d_logp(m, alpha: float, prior):
    sizes, mult = np.unique(m, return_counts=True)
    k = len(m)
    a, b = prior

    def logp(x):
        v = _log_new_tables(alpha, x, k) + float((mult * gammaln(sizes - x)).sum()) \
            - k * gammaln(1.0 - x)
        if a != 1:
            v += (a - 1.0) * math.log(x)
        if b != 1:
            v += (b - 1.0) * math.log1p(-x)
        return float(v)
    return logp


def slice_alpha(sizes, alpha: float, d: float, rng, prior) -> float:
    """One slice step of α_c given the table sizes of c and d_c (module docstring)."""
    m = np.asarray(sizes, dtype=float)
    return math.exp(slice_step(_alpha_logp(m, d, prior), math.log(alpha), rng, -30.0, 30.0))


def slice_discount(sizes, alpha: float, d: float, rng, prior=DEFAULT_DISCOUNT_PRIOR) -> float:
    """One slice step of d_c ∈ (0, 1) given the table sizes of c and α_c."""
    m = np.asarray(sizes, dtype=float)
    return slice_step(_d_logp(m, alpha, prior), d, rng, 0.0, 1.0, 1.0)


def resample_py_hyper(rest: Restaurant, s, rng, alpha_prior,
                      d_prior=DEFAULT_DISCOUNT_PRIOR) -> tuple:
    """New (α, d, s) given the derivations and seating of ``rest`` (built under ``s``):
    every s_L drawn from its Beta conditional, then per label one slice step of α_c and
    one of d_c (module docstring). O(Σ_e |e| + Σ_c K_c · slice evaluations)."""
    counts = rest.counts
    feat = ETFeatures(counts, s)
    ids, _ = counts.ets()
    k = np.array([len(rest.of[f]) for f in ids.tolist()], dtype=float)
    tiny = np.finfo(float).eps
    s_new = np.empty(feat.n_labels)
    for L in range(feat.n_labels):
        rows, f, i = feat.by_label[L]
        s_new[L] = rng.beta(1.0 + (k[rows] * f).sum(), 1.0 + (k[rows] * i).sum())
    s_new = np.clip(s_new, tiny, 1.0 - tiny)
    alpha, d = list(rest.alpha), list(rest.d)
    for c, m in enumerate(rest.label_sizes()):
        alpha[c] = slice_alpha(m, alpha[c], d[c], rng, alpha_prior)
        d[c] = slice_discount(m, alpha[c], d[c], rng, d_prior)
    return np.asarray(alpha), np.asarray(d), s_new


class MAPView:
    """A PY-TSG state read as the DP-TSG with the same predictive: ``counts(state)`` holds
    n_e − d_c K_e per ET and n_c − d_c K_c per label, and :func:`map_view`'s state has
    α'_c = α_c + d_c K_c, so that (n'_e + α'_c P0(e)) / (n'_c + α'_c) is the PY
    predictive of the module docstring. The Table 1 transform, the parser and the factor
    of a trained PY-TSG read this view (``kernel`` is the trained sampler): the MAP
    grammar and every ET's first use in a parsed sentence are exact; a repeat within the
    sentence adds 1 to n'_e and n'_c, the PY increment when the repeat joins the earlier
    one's table (opening a table would also raise K_e and K_c)."""

    with_ref = False

    def __init__(self, kernel):
        self.base = kernel
        self.table, self.kind = kernel.table, kernel.kind
        self.fingerprint, self.process = kernel.fingerprint, kernel.process

    def check(self, state) -> None:
        self.base.check(state)

    def counts(self, state, s=None):
        """The effective counts n − d K of ``state`` (a fresh ETCounts). O(N)."""
        counts = self.base.counts(state, s)
        rest = Restaurant(counts, state.alpha, state.discount, state.tables)
        d, lab = rest.d, counts.frags.lab
        for f, n in list(counts.cnt.items()):
            if n > 0:
                counts.cnt[f] = n - d[lab[f]] * len(rest.of[f])
        counts.ncat = [n - x * k for n, x, k in zip(counts.ncat, d, rest.K)]
        return counts


def map_view(kernel, state) -> tuple:
    """(MAPView of ``kernel``, ``state`` with α'_c = α_c + d_c K_c): the DP reading of a
    trained PY-TSG (:class:`MAPView`)."""
    rest = Restaurant(kernel.counts(state), state.alpha, state.discount, state.tables)
    alpha = np.asarray([math.exp(rest.log_bridge(c)) for c in range(len(rest.K))])
    return MAPView(kernel), dataclasses.replace(state, alpha=alpha, counts=None)
