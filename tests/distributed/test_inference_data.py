"""Sampler chains as ArviZ InferenceData (extra strgm[arviz]), and the default diagnostics
against ArviZ's own: the rank-normalised R̂ is ArviZ's to rounding, the bulk and tail ESS
agree within the difference of the two autocorrelation estimators."""

import json
import sys
import warnings

import numpy as np
import pytest

from strgm.distributed.diagnostics import ess_bulk, ess_tail, rank_rhat, split_rhat
from strgm.distributed.inference_data import INSTALL, chain_arrays, to_inference_data
from strgm.errors import InputError, MissingDependencyError
from tests.robustness.harness import run_cli

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

WORDS = ["k a t", "k a t a", "t a k", "a t a k", "k a k", "t a t a", "a k a"] * 3


def _rows(x, **extra):
    return [{"chain": c, "seed": 7 + c, "iteration": i, "loglik": float(v), "note": "x",
             **extra} for c, chain in enumerate(x) for i, v in enumerate(chain)]


def test_columns_by_chain_and_sweep():
    x = np.arange(12.0).reshape(3, 4)
    arrays = chain_arrays(_rows(x, alpha=1.5))
    assert set(arrays) == {"loglik", "alpha"}  # chain, seed, iteration and text left out
    np.testing.assert_array_equal(arrays["loglik"], x)
    one = chain_arrays([{"loglik": 1.0}, {"loglik": 2.0}])  # no chain column: one chain
    assert one["loglik"].shape == (1, 2)
    with pytest.raises(InputError, match="different lengths"):
        chain_arrays(_rows(x)[:-1])
    with pytest.raises(InputError, match=r"\['note'\] are not numbers"):
        chain_arrays(_rows(x), keys=["note"])


def test_inference_data_groups_and_burn_in():
    x = np.random.default_rng(0).standard_normal((4, 50))
    idata = to_inference_data(_rows(x), burn_in=10)
    assert isinstance(idata, az.InferenceData)
    post = idata.posterior["loglik"]
    assert post.dims == ("chain", "draw") and post.shape == (4, 40)
    np.testing.assert_array_equal(post.values, x[:, 10:])
    np.testing.assert_array_equal(idata.warmup_posterior["loglik"].values, x[:, :10])
    assert "warmup_posterior" not in to_inference_data(_rows(x)).groups()
    with pytest.raises(InputError, match="leaves none"):
        to_inference_data(_rows(x), burn_in=50)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_our_rank_rhat_is_arviz_rhat(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 200)) * [[1], [1], [1], [1.5 + seed]] + [[0], [0], [0.2], [0]]
    idata = to_inference_data(_rows(x))
    want = float(az.rhat(idata, var_names=["loglik"])["loglik"])  # method="rank"
    assert rank_rhat(x) == pytest.approx(want, rel=1e-10)
    # control: the classic split-R̂ is another number (ArviZ's method="split")
    assert split_rhat(x) == pytest.approx(
        float(az.rhat(idata, method="split")["loglik"]), rel=1e-10)
    assert abs(split_rhat(x) - want) > 1e-4


def test_bulk_and_tail_ess_agree_with_arviz():
    rng = np.random.default_rng(3)
    a, e = np.zeros((4, 2000)), rng.standard_normal((4, 2000))
    for t in range(1, 2000):
        a[:, t] = 0.7 * a[:, t - 1] + e[:, t]
    idata = to_inference_data(_rows(a))
    bulk = float(az.ess(idata, method="bulk")["loglik"])
    tail = float(az.ess(idata, method="tail")["loglik"])
    assert ess_bulk(a) == pytest.approx(bulk, rel=0.05)
    assert ess_tail(a) == pytest.approx(tail, rel=0.10)


def test_the_chains_hmm_train_writes(tmp_path):
    (tmp_path / "s.txt").write_text("\n".join(WORDS) + "\n")
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--iters", "8", "--burn-in", "3", "--states", "4", "--chains", "2",
                 "--json", tmp_path / "t.json", "--quiet"])
    assert o.code == 0, o.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    idata = to_inference_data(doc["trace"], burn_in=doc["training"]["burn_in"])
    assert idata.posterior["loglik"].shape == (2, 5)
    kept = idata.posterior["loglik"].values
    assert doc["training"]["diagnostics"]["rank_rhat"] == pytest.approx(rank_rhat(kept))


def test_without_arviz_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(MissingDependencyError) as e:
        to_inference_data([{"loglik": 1.0}, {"loglik": 2.0}])
    assert str(e.value) == INSTALL and "pip install 'strgm[arviz]'" in INSTALL
