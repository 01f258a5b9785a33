"""The Pitman–Yor TSG (strgm.grammars.tsg.pitman_yor) against exact answers, each check
also run on a deliberately broken variant that it must reject:

* the restaurant: every labelled seating of ≤ 5 customers, its sequential probability
  (predictive × seat) equal to the EPPF; their sum equal to the generalised-Stirling
  marginal, and at d = 0 to the DP's Pólya urn and to fragments.py's log joint;
* both samplers on a toy treebank (64 derivations): the visited derivations' frequencies
  against the exact posterior with the seatings summed out (total variation; threshold as
  in tests/grammars/tsg/test_tsg_samplers.py: ≈ 0.03 expected for 12000 independent
  draws, 0.06 allowed for autocorrelation);
* the slice samplers of d_c and α_c and the Beta draw of s against quadrature (KS);
* checkpoints, the model file's DP reading and the CLI.
"""

import itertools
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import strgm.grammars.tsg.pitman_yor as py
from strgm.errors import InputError
from strgm.chains.driver import drive
from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG, TSGState
from strgm.grammars.tsg.fragments import ETCounts
from strgm.grammars.tsg.model_file import TSGModel, load_model, save_model
from tests.robustness.harness import assert_clean_error, run_cli

TOY2 = [("S", ("A", "a"), ("S", ("A", "a"), ("B", "b"))),
        ("S", ("A", "a"), ("B", "b"))]
SWEEPS, TV_OK = 12000, 0.06


# ---------------------------------------------------------------- oracles

def stirling(n: int, d: float) -> np.ndarray:
    """S_d(m, k), m, k ≤ n: Σ over partitions of m labelled customers into k tables of
    Π_t (1 − d)(2 − d)…(m_t − 1 − d)."""
    S = np.zeros((n + 1, n + 1))
    S[0, 0] = 1.0
    for m in range(n):
        for k in range(1, m + 2):
            S[m + 1, k] = S[m, k - 1] + (m - k * d) * S[m, k]
    return S


def log_marginal(ets_by_label: dict, alpha, d) -> float:
    """log P(dishes) with the seatings summed out: per label, Γ(1+α)/Γ(n+α) ·
    Σ_K Π_{k<K}(α + k d) · [x^K] Π_e Σ_j S_d(n_e, j) P0(e)^j x^j."""
    tot = 0.0
    for c, ets in ets_by_label.items():
        poly = np.array([1.0])
        for n, p0 in ets:
            S = stirling(n, d[c])
            poly = np.convolve(poly, [S[n, k] * p0 ** k for k in range(n + 1)])
        w = [np.prod(alpha[c] + d[c] * np.arange(1, k)) if k else 0.0 for k in range(len(poly))]
        nc = sum(n for n, _ in ets)
        tot += math.log(np.dot(poly, w)) + gammaln(1 + alpha[c]) - gammaln(nc + alpha[c])
    return tot


def _by_label(counts) -> dict:
    fr, out = counts.frags, {}
    for f, n in sorted(counts.cnt.items()):
        if n > 0:
            out.setdefault(fr.lab[f], []).append((n, math.exp(fr.lp0[f])))
    return out


def _configs(table):
    for bits in itertools.product((0, 1), repeat=len(table.inner)):
        site = table.is_root.astype(np.uint8)
        site[table.inner] = bits
        yield site


def exact_posterior(kernel) -> dict:
    """{indicator bytes: P(derivations | trees)} with the seatings summed out."""
    t, s = kernel.table, kernel.s0
    keys, lj = [], []
    for site in _configs(t):
        c = ETCounts(t, site, np.log(s), np.log1p(-s))
        keys.append(site.tobytes())
        lj.append(log_marginal(_by_label(c), kernel.alpha0, kernel.d0))
    p = np.exp(np.array(lj) - max(lj))
    return dict(zip(keys, p / p.sum()))


def tv(post: dict, samples) -> float:
    emp: dict = {}
    for k in samples:
        emp[k] = emp.get(k, 0) + 1
    return 0.5 * sum(abs(post.get(k, 0.0) - emp.get(k, 0) / len(samples))
                     for k in set(post) | set(emp))


def seatings(dishes):
    """Every labelled seating of customers eating ``dishes`` (tables serve one dish): the
    table index of each customer, tables numbered by first appearance."""
    def go(j, tabs, menu):
        if j == len(dishes):
            yield list(tabs)
            return
        for t, dish in enumerate(menu):
            if dish == dishes[j]:
                yield from go(j + 1, tabs + [t], menu)
        yield from go(j + 1, tabs + [len(menu)], menu + [dishes[j]])
    yield from go(0, [], [])


# ---------------------------------------------------------------- the restaurant

LAB, P0 = [0, 0, 1], [0.3, 0.2, 0.5]  # three ETs: two rooted at label 0, one at label 1


def _restaurant(n, alpha, d):
    counts = SimpleNamespace(table=SimpleNamespace(n_nodes=n, n_labels=2),
                             frags=SimpleNamespace(lab=LAB, lp0=[math.log(p) for p in P0]),
                             site=bytearray([1] * n))
    return py.Restaurant(counts, [alpha, alpha], [d, d])


def _walk(dishes, seating, alpha, d):
    """(Σ_j log[P(e_j | before) P(seat_j | e_j, before)], the EPPF joint, log_joint)."""
    r = _restaurant(len(dishes), alpha, d)
    tid, seq = {}, 0.0
    for j, (f, t) in enumerate(zip(dishes, seating)):
        ts, probs, pnew = r.seat_probs(f)
        seq += r.log_pred(f) + math.log(pnew if t not in tid else probs[ts.index(tid[t])])
        tid[t] = r.join(j, f, tid.get(t, -1))
    sizes = [[seating.count(t) for t in sorted(set(seating)) if LAB[dishes[seating.index(t)]] == c]
             for c in (0, 1)]
    eppf = sum(py.eppf_log(alpha, d, m) for m in sizes) + sum(
        math.log(P0[dishes[seating.index(t)]]) for t in set(seating))
    return seq, eppf, r.log_joint()


DISHES = [[0, 0, 0, 0, 0], [0, 1, 0, 2, 0], [2, 0, 2, 1, 0]]


def _eppf_gap(alpha, d, dishes) -> float:
    gap, total = 0.0, 0.0
    for st in seatings(dishes):
        seq, eppf, joint = _walk(dishes, st, alpha, d)
        gap = max(gap, abs(seq - eppf), abs(joint - eppf))
        total += math.exp(seq)
    by = {}
    for f in sorted(set(dishes)):
        by.setdefault(LAB[f], []).append((dishes.count(f), P0[f]))
    marg = log_marginal(by, [alpha, alpha], [d, d])
    return max(gap, abs(math.log(total) - marg))


@pytest.mark.parametrize("alpha,d", [(0.5, 0.0), (0.5, 0.4), (2.0, 0.8)])
@pytest.mark.parametrize("dishes", DISHES)
def test_sequential_seating_reproduces_the_eppf_and_its_sum_the_marginal(alpha, d, dishes):
    assert _eppf_gap(alpha, d, dishes) < 1e-10
    if d == 0.0:  # the DP's Pólya urn: Π_j (n_e + α P0(e)) / (n_c + α)
        urn, n = 0.0, {}
        for f in dishes:
            nc = sum(v for g, v in n.items() if LAB[g] == LAB[f])
            urn += math.log((n.get(f, 0) + alpha * P0[f]) / (nc + alpha))
            n[f] = n.get(f, 0) + 1
        total = sum(math.exp(_walk(dishes, st, alpha, d)[0]) for st in seatings(dishes))
        assert math.log(total) == pytest.approx(urn, abs=1e-12)


@pytest.mark.parametrize("broken", ["no d K_c in the new-table weight",
                                    "no -d on existing tables"])
def test_broken_seating_weights_fail_the_eppf_check(monkeypatch, broken):
    if broken.startswith("no d K_c"):
        monkeypatch.setattr(py.Restaurant, "log_bridge",
                            lambda self, c, dkc=0: math.log(self.alpha[c]))
    else:
        monkeypatch.setattr(py.Restaurant, "old_weight",
                            lambda self, f, dn=0, dk=0: self.nseat.get(f, 0) + dn)
    assert _eppf_gap(0.5, 0.4, DISHES[1]) > 1e-3


def test_choose_is_the_inverse_cdf_of_seat_probs():
    r = _restaurant(9, 0.7, 0.6)
    for v, (f, t) in enumerate([(0, -1), (0, 0), (0, 0), (0, -1), (1, -1), (0, -1),
                                (1, 4), (2, -1), (0, 3)]):
        r.join(v, f, t)
    u = (np.arange(20000) + 0.5) / 20000
    for f, tilt in [(0, 0.0), (0, 1.3), (1, -0.5), (2, 0.0)]:
        ts, probs, pnew = r.seat_probs(f, tilt)
        got = [r.choose(f, x, tilt) for x in u]
        assert np.allclose([got.count(t) / len(u) for t in ts + [-1]],
                           list(probs) + [pnew], atol=1e-4)


def test_summing_the_library_joint_over_seatings_gives_the_marginal_and_the_dp_joint():
    k = LocalGibbsTSG(TOY2, alpha=0.8, s=0.4, process="py", discount=0.0)
    t, s = k.table, k.s0
    for site in list(_configs(t))[::9]:
        c = ETCounts(t, site, np.log(s), np.log1p(-s))
        by = _by_label(c)
        assert log_marginal(by, k.alpha0, k.d0) == pytest.approx(c.log_joint(k.alpha0))
        d = np.full(t.n_labels, 0.45)
        sites = np.flatnonzero(site)
        total = -np.inf
        for st in seatings([c.below[v] for v in sites]):
            rj = py.Restaurant(c, k.alpha0, d, st).log_joint()
            total = np.logaddexp(total, rj)
        assert total == pytest.approx(log_marginal(by, k.alpha0, d), abs=1e-10)


# ---------------------------------------------------------------- the samplers

def _chain_tv(K, sweeps, init="minimal", **kw):
    k = K(TOY2, alpha=0.5, s=0.4, process="py", discount=0.6, **kw)
    post = exact_posterior(k)
    st, out = k.init(1, init), []
    for _ in range(sweeps):
        st = k.sample(st)
        out.append(st.site.tobytes())
    return tv(post, out), st


@pytest.mark.parametrize("K", [LocalGibbsTSG, BlockedMHTSG])
@pytest.mark.parametrize("init", ["minimal", "maximal"])
def test_py_samplers_match_the_exact_posterior(K, init):
    got, st = _chain_tv(K, SWEEPS, init)
    assert got < TV_OK
    if K is BlockedMHTSG:
        assert 0 < st.accepted < st.proposed


def test_the_py_posterior_differs_from_the_dp_one():
    """So that the sampler checks above could tell a DP sampler from a PY one."""
    k = LocalGibbsTSG(TOY2, alpha=0.5, s=0.4, process="py", discount=0.6)
    dp = LocalGibbsTSG(TOY2, alpha=0.5, s=0.4, process="py", discount=0.0)
    a, b = exact_posterior(k), exact_posterior(dp)
    assert 0.5 * sum(abs(a[x] - b[x]) for x in a) > 0.1


@pytest.mark.parametrize("K", [LocalGibbsTSG, BlockedMHTSG])
@pytest.mark.parametrize("broken", ["bridge", "existing"])
def test_broken_predictives_fail_the_sampler_check(monkeypatch, K, broken):
    if broken == "bridge":  # new table ∝ α_c P0, without d_c K_c
        monkeypatch.setattr(py.Restaurant, "log_bridge",
                            lambda self, c, dkc=0: math.log(self.alpha[c]))
    else:  # existing tables of e weigh n_e, without −d_c K_e
        monkeypatch.setattr(py.Restaurant, "old_weight",
                            lambda self, f, dn=0, dk=0: self.nseat.get(f, 0) + dn)
    got, _ = _chain_tv(K, SWEEPS // 2)
    assert got > 2 * TV_OK


# ---------------------------------------------------------------- hyperparameters

SIZES = np.array([6, 3, 1, 1, 2, 1])


def _ks(samples, grid, logp) -> float:
    lp = np.array([logp(x) for x in grid])
    p = np.exp(lp - lp.max())
    cdf = np.cumsum(p) / p.sum()
    emp = np.searchsorted(np.sort(samples), grid, side="right") / len(samples)
    return float(np.abs(emp - cdf).max())


def _d_chain(prior, n=4000):
    rng, d, out = np.random.default_rng(0), 0.5, []
    for _ in range(n):
        d = py.slice_discount(SIZES, 1.0, d, rng, prior)
        out.append(d)
    return np.array(out)


def _d_exact(prior):
    a, b = prior
    return lambda x: (np.log(1.0 + x * np.arange(1, len(SIZES))).sum()
                      + (gammaln(SIZES - x) - gammaln(1 - x)).sum()
                      + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x))


@pytest.mark.parametrize("prior", [(1.0, 1.0), (2.0, 3.0)])
def test_discount_slice_sampler_matches_quadrature(prior):
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    assert _ks(_d_chain(prior), grid, _d_exact(prior)) < 0.05


def test_discount_slice_sampler_with_one_table_too_many_fails(monkeypatch):
    def broken(m, alpha, prior):  # Π_{k=1}^{K} (α + k d) instead of Π_{k=1}^{K−1}
        return lambda x: py._log_new_tables(alpha, x, len(m) + 1) + \
            float((gammaln(m - x) - gammaln(1 - x)).sum())
    monkeypatch.setattr(py, "_d_logp", broken)
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    assert _ks(_d_chain((1.0, 1.0)), grid, _d_exact((1.0, 1.0))) > 0.1


def _alpha_ks():
    prior, d, n = (2.0, 1.5), 0.3, float(SIZES.sum())
    rng, a, out = np.random.default_rng(1), 1.0, []
    for _ in range(4000):
        a = py.slice_alpha(SIZES, a, d, rng, prior)
        out.append(math.log(a))

    def exact(x):  # density of x = log α: prior α^(shape−1) e^(−α/scale) times α
        al = math.exp(x)
        return (gammaln(1 + al) - gammaln(n + al) + np.log(al + d * np.arange(1, 6)).sum()
                + prior[0] * x - al / prior[1])
    return _ks(np.array(out), np.linspace(-10, 6, 8001), exact)


def test_alpha_slice_sampler_matches_quadrature_and_fails_without_jacobian(monkeypatch):
    assert _alpha_ks() < 0.05
    good = py._alpha_logp
    monkeypatch.setattr(py, "_alpha_logp",
                        lambda m, d, prior: (lambda x, f=good(m, d, prior): f(x) - x))
    assert _alpha_ks() > 0.1


def test_s_is_drawn_from_its_table_weighted_beta():
    k = BlockedMHTSG(TOY2 * 3, process="py", discount=0.5)
    st = k.init(0, "minimal")
    rest = k.restaurant(st)
    A = k.table.label_index["A"]
    rng = np.random.default_rng(2)
    draws = [py.resample_py_hyper(rest, st.s, rng, (1.0, 1.0))[2][A] for _ in range(3000)]
    # A is a frontier node of every S -> A S and S -> A B table (minimal derivations)
    f = sum(len(rest.of[e]) for e in rest.of if k.table.labels[rest.lab[e]] == "S")
    assert stats.kstest(draws, stats.beta(1 + f, 1).cdf).pvalue > 0.01
    n = sum(rest.nseat[e] for e in rest.of if k.table.labels[rest.lab[e]] == "S")
    assert n > f and stats.kstest(draws, stats.beta(1 + n, 1).cdf).pvalue < 1e-6


# ---------------------------------------------------------------- state, model, CLI

@pytest.mark.parametrize("K", [LocalGibbsTSG, BlockedMHTSG])
def test_py_resume_is_byte_identical_and_dp_files_are_unchanged(tmp_path, K):
    k = K(TOY2 * 2, resample_hyper=True, process="py")
    drive(k.sample, k.init(5, "maximal"), 4, checkpoint=tmp_path / "a.json")
    drive(k.sample, k.init(5, "maximal"), 2, checkpoint=tmp_path / "b.json")
    mid = TSGState.load(tmp_path / "b.json", k)
    drive(k.sample, mid, 2, checkpoint=tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    a = TSGState.load(tmp_path / "a.json", k)
    assert a.trace[-1]["log_likelihood"] == pytest.approx(k.log_likelihood(a))
    d = json.loads((tmp_path / "a.json").read_text())
    assert d["process"] == "py" and len(d["discount"]) == k.table.n_labels
    assert len(d["tables"]) == d["site"].count("1")
    dp = K(TOY2).init(0).to_dict()
    assert not {"process", "discount", "tables"} & set(dp)
    with pytest.raises(InputError, match="PY-TSG"):
        TSGState.load(tmp_path / "a.json", K(TOY2 * 2))


def test_damaged_py_checkpoints_are_refused():
    k = BlockedMHTSG(TOY2, process="py")
    d = k.init(0).to_dict()
    bad = dict(d, discount=[1.0] * len(d["discount"]))
    with pytest.raises(InputError, match="discount"):
        TSGState.from_dict(bad)
    bad = dict(d, tables=[0] * len(d["tables"]))  # one table serving every ET
    with pytest.raises(InputError, match="serves two"):
        k.log_likelihood(TSGState.from_dict(bad))
    bad = dict(d, tables=d["tables"][:-1])
    with pytest.raises(InputError, match="customers"):
        k.check(TSGState.from_dict(bad))


def test_the_model_files_dp_reading_has_the_py_predictive(tmp_path):
    k = BlockedMHTSG(TOY2 * 2, resample_hyper=True, process="py")
    st = drive(k.sample, k.init(3), 5)
    save_model(tmp_path / "m.json", TSGModel(k, st, {}))
    m = load_model(tmp_path / "m.json")
    rest = m.sampler.restaurant(m.trained)
    view = m.kernel.counts(m.state)
    assert rest.counts.frags.lab == view.frags.lab  # same intern order, same ids
    for f, n in rest.nseat.items():
        c = rest.lab[f]
        a = m.state.alpha[c]
        dp = (view.cnt.get(f, 0) + a * math.exp(view.frags.lp0[f])) / (view.ncat[c] + a)
        assert math.log(dp) == pytest.approx(rest.log_pred(f), rel=1e-12)
    assert json.loads((tmp_path / "m.json").read_text())["state"]["alpha"] == \
        st.alpha.tolist()


MRG = """( (S (NP-SBJ (DT The) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .)) )
( (S (NP-SBJ (NNP Rex)) (VP (VBD barked) (PP (IN at) (NP (DT the) (NN cat)))) (. .)) )
( (S (NP-SBJ (DT the) (NN cat)) (VP (VBD sat)) (. .)) )
"""


def test_cli_trains_shows_and_parses_a_py_tsg(tmp_path):
    (tmp_path / "a.mrg").write_text(MRG)
    (tmp_path / "s.txt").write_text("The dog barked .\nthe cat sat loudly .\n")
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "m.json",
                 "--iters", "3", "--process", "py", "--discount", "0.3",
                 "--trace-json", tmp_path / "t.json"])
    assert o.code == 0, o.stderr
    assert "PY-TSG" in o.stderr and "mean discount" in o.stderr and "discounts d_c" in o.stderr
    state = json.loads((tmp_path / "m.json").read_text())["state"]
    assert state["process"] == "py" and all(0 < x < 1 for x in state["discount"])
    assert "mean_discount" in json.loads((tmp_path / "t.json").read_text())["trace"][-1]
    assert run_cli(["tsg", "show", tmp_path / "m.json"]).code == 0
    for decode in ("mer", "mpd"):
        p = run_cli(["tsg", "parse", tmp_path / "m.json", tmp_path / "s.txt", "--quiet",
                     "--decode", decode])
        assert p.code == 0 and p.stdout.startswith("(TOP (S (NP (DT The) (NN dog))"), p.stderr
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "x.json",
                 "--process", "py", "--chains", "2"])
    assert_clean_error(o, "--process")
