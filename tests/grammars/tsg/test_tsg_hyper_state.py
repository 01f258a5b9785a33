"""Hyperparameter slice sampling against the exact posterior on a grid (and a broken
variant without the Jacobian failing), checkpoints, byte-identical resume, bad input."""

import math

import numpy as np
import pytest
from scipy.special import gammaln

import strgm.grammars.tsg.hyper as hyper
from strgm.errors import InputError, StrgmError
from strgm.chains.driver import drive
from strgm.safe_io import strict_json
from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG, TSGState
from tests.grammars.tsg.tsg_oracles import TOY, TOY2

PRIOR = (2.0, 1.5)


def _alpha_chain(k, st, n):
    counts = k.counts(st)
    rng = np.random.default_rng(3)
    alpha = st.alpha.copy()
    out = []
    for _ in range(n):
        alpha, _ = hyper.resample_hyper(counts, alpha, st.s, rng, PRIOR, what="alpha")
        out.append(alpha[k.table.label_index["A"]])
    return np.array(out), counts


def _exact_cdf(counts, c, grid):
    """CDF of α_c | derivations on a grid of x = log α, from the collapsed likelihood."""
    fr = counts.frags
    ets = [(n, fr.lp0[f]) for f, n in counts.cnt.items() if n > 0 and fr.lab[f] == c]
    nc = counts.ncat[c]
    lp = []
    for x in grid:
        a = math.exp(x)
        v = sum(gammaln(n + a * math.exp(l)) - gammaln(a * math.exp(l)) for n, l in ets)
        lp.append(v - gammaln(nc + a) + gammaln(a) + PRIOR[0] * x - a / PRIOR[1])
    p = np.exp(np.array(lp) - max(lp))
    return np.cumsum(p) / p.sum()


def _ks(samples, counts, c):
    grid = np.linspace(-12, 8, 4001)
    cdf = _exact_cdf(counts, c, grid)
    emp = np.searchsorted(np.sort(np.log(samples)), grid, side="right") / len(samples)
    return float(np.abs(emp - cdf).max())


def test_alpha_slice_sampler_matches_grid_posterior():
    k = LocalGibbsTSG(TOY2)
    st = k.init(0, "minimal")
    samples, counts = _alpha_chain(k, st, 4000)
    assert _ks(samples, counts, k.table.label_index["A"]) < 0.05


def test_alpha_slice_sampler_without_jacobian_fails(monkeypatch):
    good = hyper._alpha_logp

    def broken(feat, c, prior):
        f = good(feat, c, prior)
        return lambda x: f(x) - x  # the density of α used as if it were that of log α
    monkeypatch.setattr(hyper, "_alpha_logp", broken)
    k = LocalGibbsTSG(TOY2)
    st = k.init(0, "minimal")
    samples, counts = _alpha_chain(k, st, 4000)
    assert _ks(samples, counts, k.table.label_index["A"]) > 0.1


@pytest.mark.parametrize("K", [LocalGibbsTSG, BlockedMHTSG])
def test_resume_is_byte_identical(tmp_path, K):
    k = K(TOY + TOY2, resample_hyper=True)
    a = drive(k.sample, k.init(5, "maximal"), 4, checkpoint=tmp_path / "a.json")
    drive(k.sample, k.init(5, "maximal"), 2, checkpoint=tmp_path / "b.json")
    mid = TSGState.load(tmp_path / "b.json", k)
    assert mid.iteration == 2 and len(mid.trace) == 2
    b = drive(k.sample, mid, 2, checkpoint=tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a.trace == b.trace and np.array_equal(a.site, b.site)
    same = lambda x, y: strict_json(x.to_dict()) == strict_json(y.to_dict())  # NaN-safe
    assert same(TSGState.load(tmp_path / "a.json", k), a)
    a.save(tmp_path / "a.npz")
    assert same(TSGState.load(tmp_path / "a.npz", k), a)


def test_damaged_or_foreign_checkpoints(tmp_path):
    k = BlockedMHTSG(TOY)
    st = k.sample(k.init(0))
    p = tmp_path / "c.json"
    st.save(p)
    text = p.read_text()
    p.write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match="c.json"):
        TSGState.load(p, k)
    st.save(p)
    for other in (BlockedMHTSG(TOY2), LocalGibbsTSG(TOY)):
        with pytest.raises(InputError, match="c.json.*does not fit"):
            TSGState.load(p, other)
    p.write_text(text.replace('"site": "1', '"site": "2'))
    with pytest.raises(InputError, match="site"):
        TSGState.load(p)


@pytest.mark.parametrize("trees, kw, match", [
    ([("S", ("A", "a"), ("B", "b"), ("C", "c"))], {}, "tree 0.*binarised"),
    ([("S", ("A", "a")), ("S", "a", ("B", "b"))], {}, "tree 1.*word"),
    ([], {}, "empty"),
    (TOY, {"alpha": 0}, "alpha"),
    (TOY, {"alpha": {"S": -1.0}}, "alpha"),
    (TOY, {"alpha": {"ZZ": 1.0}}, "unknown label"),
    (TOY, {"s": 1.0}, "option s"),
    (TOY, {"s": 0.0}, "option s"),
    ([("S{x}", ("A", "a"))], {}, "reserved"),
])
def test_bad_input_is_one_line_error(trees, kw, match):
    with pytest.raises(StrgmError, match=match) as e:
        LocalGibbsTSG(trees, **kw)
    assert "\n" not in str(e.value)


def test_unknown_init_name():
    with pytest.raises(StrgmError, match="init") as e:
        BlockedMHTSG(TOY).init(0, "random")
    assert "\n" not in str(e.value)
