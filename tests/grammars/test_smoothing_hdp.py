"""Oracles for the HDP table sampler and the concentration update.

* One restaurant, n customers of one dish: the stationary law of the number of tables
  is Antoniak's p(m | α, n) = Γ(α)/Γ(α+n) s(n, m) α^m (Stirling numbers of the first
  kind by recurrence here); the sampler with a wrong α fails the same check.
* Two restaurants under one parent, two dishes: the stationary joint law of all table
  counts is the exact table-count representation of the Chinese restaurant franchise,
  Π_u α_u^{m_u} Γ(α_u)/Γ(α_u + n_u) Π_o s(n_uo, m_uo) × Π_o H(o)^{m_top,o}, enumerated
  here; the sampler with a wrong top α fails.
* The α update (w ~ Beta(α, n), α ~ Gamma(a + Σm, b − Σ log w)): its samples follow the
  posterior ∝ Gamma(α; a, b) Π_u α^{m_u} Γ(α)/Γ(α+n_u), computed by quadrature; the
  Escobar–West draw w ~ Beta(α + 1, n) without its mixture step fails.
"""

import itertools
import math
from collections import Counter

import numpy as np
from scipy import integrate, special

from strgm.grammars.smoothing.backoff import Context
from strgm.grammars.smoothing.hdp import Seating, run_hdp, sample_alpha
from strgm.grammars.smoothing.hierarchy import build_hierarchy


def stirling1(n: int) -> np.ndarray:
    """Unsigned Stirling numbers of the first kind s(k, m), k, m ≤ n: s(k+1, m) =
    k s(k, m) + s(k, m−1)."""
    s = np.zeros((n + 1, n + 1))
    s[0, 0] = 1.0
    for k in range(n):
        for m in range(1, k + 2):
            s[k + 1, m] = k * s[k, m] + s[k, m - 1]
    return s


def antoniak(alpha: float, n: int) -> np.ndarray:
    s = stirling1(n)[n]
    m = np.arange(n + 1)
    logp = special.gammaln(alpha) - special.gammaln(alpha + n) + m * math.log(alpha)
    p = s * np.exp(logp)
    assert abs(p.sum() - 1) < 1e-9
    return p


def tv(p: dict, q: dict) -> float:
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def one_restaurant(n: int, alpha: float):
    ctx = Context("node", "X", None, None, "X")
    h = build_hierarchy({("X", ("A",)): n}, {"X": ctx}, 1, {"X", "A"})
    return Seating(h, alpha)


def table_histogram(n, alpha_true, alpha_run, sweeps=20000, seed=3):
    s = one_restaurant(n, alpha_run)
    rng = np.random.default_rng(seed)
    s.sweep(int(rng.integers(2**31)), init=True)
    hist: Counter = Counter()
    for _ in range(sweeps):
        s.sweep(int(rng.integers(2**31)))
        hist[int(s.ntables[0])] += 1
    emp = {m: c / sweeps for m, c in hist.items()}
    exact = {m: p for m, p in enumerate(antoniak(alpha_true, n)) if p > 0}
    return tv(emp, exact)


def test_tables_follow_antoniak():
    assert table_histogram(8, 1.5, 1.5) < 0.03
    assert table_histogram(5, 0.4, 0.4) < 0.03


def test_a_wrong_alpha_in_the_seating_fails_the_antoniak_check():
    assert table_histogram(8, 1.5, 4.5) > 0.15


def two_restaurants(alpha_leaf, alpha_top):
    ctxs = {"X|<A>": Context("mid", "X", None, ("A",), "X"),
            "X|<B>": Context("mid", "X", None, ("B",), "X")}
    counts = {("X|<A>", ("A", "a")): 3, ("X|<A>", ("A", "b")): 1,
              ("X|<B>", ("B", "a")): 1, ("X|<B>", ("B", "b")): 2}
    h = build_hierarchy(counts, ctxs, 1, set())
    s = Seating(h)
    s.alpha[h.levels.index("full-mid")] = alpha_leaf
    s.alpha[h.levels.index("mid-h0")] = alpha_top
    return h, s


def exact_franchise(h, alpha_leaf, alpha_top) -> dict:
    """The exact joint law of the table counts of every cell of ``h`` (two levels)."""
    st = stirling1(10)
    leaves = [c for c in range(len(h.cell_node)) if h.leaf_count[c] > 0]
    tops = [c for c in range(len(h.cell_node)) if h.cell_parent[c] < 0]
    v = float(h.top_size[h.cell_node[tops[0]]])
    law = {}
    for ms in itertools.product(*[range(1, int(h.leaf_count[c]) + 1) for c in leaves]):
        n_top = {t: sum(m for c, m in zip(leaves, ms) if h.cell_parent[c] == t) for t in tops}
        for mt in itertools.product(*[range(1, n_top[t] + 1) for t in tops]):
            w = 1.0
            for u in set(h.cell_node[leaves]):
                cs = [i for i, c in enumerate(leaves) if h.cell_node[c] == u]
                n = sum(h.leaf_count[leaves[i]] for i in cs)
                m = sum(ms[i] for i in cs)
                w *= alpha_leaf ** m * math.exp(special.gammaln(alpha_leaf)
                                                - special.gammaln(alpha_leaf + n))
                w *= np.prod([st[int(h.leaf_count[leaves[i]]), ms[i]] for i in cs])
            n = sum(n_top.values())
            w *= alpha_top ** sum(mt) * math.exp(special.gammaln(alpha_top)
                                                 - special.gammaln(alpha_top + n))
            w *= np.prod([st[n_top[t], m] for t, m in zip(tops, mt)]) * v ** -sum(mt)
            law[ms + mt] = w
    z = sum(law.values())
    return {k: x / z for k, x in law.items()}, leaves + tops


def franchise_tv(alpha_leaf, alpha_top, alpha_top_run, sweeps=8000, seed=5) -> float:
    h, s = two_restaurants(alpha_leaf, alpha_top_run)
    exact, cells = exact_franchise(h, alpha_leaf, alpha_top)
    rng = np.random.default_rng(seed)
    s.sweep(int(rng.integers(2**31)), init=True)
    hist: Counter = Counter()
    for _ in range(sweeps):
        s.sweep(int(rng.integers(2**31)))
        hist[tuple(int(s.ntab[c]) for c in cells)] += 1
    return tv({k: c / sweeps for k, c in hist.items()}, exact)


def test_franchise_tables_follow_the_exact_joint_law():
    assert franchise_tv(1.2, 0.7, 0.7) < 0.05


def test_a_wrong_top_alpha_fails_the_franchise_check():
    assert franchise_tv(1.2, 0.7, 6.0) > 0.15


def alpha_posterior(n, m, prior=(1.0, 1.0)):
    a, b = prior

    def dens(x):
        if x <= 0:
            return 0.0
        lp = (a - 1) * math.log(x) - b * x + sum(
            mi * math.log(x) + special.gammaln(x) - special.gammaln(x + ni)
            for ni, mi in zip(n, m))
        return math.exp(lp)
    z = integrate.quad(dens, 0, np.inf, limit=200)[0]
    mean = integrate.quad(lambda x: x * dens(x), 0, np.inf, limit=200)[0] / z
    return dens, z, mean


def alpha_chain(update, n, m, steps=20000, seed=11):
    rng = np.random.default_rng(seed)
    alpha, out = 1.0, np.empty(steps)
    for i in range(steps):
        alpha = update(alpha, n, m, rng)
        out[i] = alpha
    return out[1000:]


def _exact(alpha, n, m, rng):
    return sample_alpha(alpha, n, m, rng)


def _broken(alpha, n, m, rng):
    """Escobar–West's w ~ Beta(α + 1, n) without the mixture over shape a + m − 1."""
    w = rng.beta(alpha + 1, n)
    return rng.gamma(1.0 + m.sum(), 1.0 / (1.0 - np.log(w).sum()))


def alpha_errors(update):
    n, m = np.array([10.0, 4.0]), np.array([3.0, 2.0])
    dens, z, mean = alpha_posterior(n, m)
    xs = alpha_chain(update, n, m)
    qs = [0, 0.5, 1, 1.5, 2, 3, 5, np.inf]
    exact = [integrate.quad(dens, lo, hi, limit=200)[0] / z for lo, hi in zip(qs, qs[1:])]
    emp = [np.mean((xs >= lo) & (xs < hi)) for lo, hi in zip(qs, qs[1:])]
    return abs(xs.mean() - mean) / mean, 0.5 * sum(abs(a - b) for a, b in zip(exact, emp))


def test_alpha_update_matches_the_quadrature_posterior():
    rel, dist = alpha_errors(_exact)
    assert rel < 0.03 and dist < 0.03


def test_a_broken_alpha_update_fails_the_quadrature_check():
    rel, dist = alpha_errors(_broken)
    assert rel > 0.1 or dist > 0.1


def test_run_hdp_is_deterministic_in_the_seed():
    h, _ = two_restaurants(1.0, 1.0)
    a, ta = run_hdp(h, iters=20, seed=4)
    b, tb = run_hdp(h, iters=20, seed=4)
    assert np.array_equal(a, b) and ta == tb

