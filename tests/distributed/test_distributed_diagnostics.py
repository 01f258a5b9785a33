"""Split-R̂ and ESS (strgm.distributed.diagnostics) against hand-computed values, with
negative controls; and the --scheduler option checks that need no cluster."""

import sys

import numpy as np
import pytest

from strgm.distributed.diagnostics import effective_sample_size, split_chains, split_rhat
from strgm.errors import InputError, MissingDependencyError, OptionError

# Two chains of 4 draws. Split: [1,2] [3,4] [2,3] [4,5] (m' = 4, n' = 2).
# Means 1.5 3.5 2.5 4.5, grand mean 3: B = 2 · (2.25+0.25+0.25+2.25)/3 = 10/3.
# Each half has s² = 0.5: W = 0.5.  var⁺ = (1/2)(0.5) + (10/3)/2 = 23/12.
# R̂ = √(var⁺/W) = √(23/6).
# Lag 1: V_1 = (1+1+1+1)/(4·1) = 1, ρ̂_1 = 1 − 1/(2 · 23/12) = 17/23.
# Pairs: P_0 = ρ̂_0 + ρ̂_1 = 40/23 > 0; τ = −1 + 2 · 40/23 = 57/23; ESS = 8/τ = 184/57.
HAND = [[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0]]


def test_split_chains_halves():
    np.testing.assert_array_equal(split_chains(HAND),
                                  [[1, 2], [2, 3], [3, 4], [4, 5]])
    # an odd draw in the middle is dropped: halves of equal length
    assert split_chains([[1, 2, 3, 4, 5]]).tolist() == [[1, 2], [4, 5]]


def test_rhat_hand_computed():
    assert split_rhat(HAND) == pytest.approx(np.sqrt(23 / 6), rel=1e-12)


def test_ess_hand_computed():
    assert effective_sample_size(HAND) == pytest.approx(184 / 57, rel=1e-12)


def _rhat_without_split(draws):
    """A broken variant: R̂ on the whole chains (drift within a chain goes unseen)."""
    x = np.asarray(draws, float)
    m, n = x.shape
    b = n * x.mean(axis=1).var(ddof=1)
    w = x.var(axis=1, ddof=1).mean()
    return np.sqrt(((n - 1) / n * w + b / n) / w)


def test_negative_control_broken_rhat_misses_the_hand_case():
    assert _rhat_without_split(HAND) != pytest.approx(np.sqrt(23 / 6), rel=1e-3)


def test_chains_from_different_distributions_give_large_rhat():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(4, 500))
    apart = same + np.arange(4)[:, None] * 3.0  # four chains, four means
    assert split_rhat(same) < 1.02
    assert split_rhat(apart) > 2.0
    # a drifting chain (non-stationary) is caught by splitting, not by the whole-chain R̂
    drift = np.vstack([np.linspace(0, 10, 500) + rng.normal(size=500) for _ in range(4)])
    assert split_rhat(drift) > 1.5 and _rhat_without_split(drift) < 1.05


def test_ess_iid_and_ar1():
    rng = np.random.default_rng(1)
    iid = rng.normal(size=(4, 2000))
    assert effective_sample_size(iid) == pytest.approx(8000, rel=0.15)
    rho, x = 0.9, np.zeros((4, 4000))
    x[:, 0] = rng.normal(size=4) / np.sqrt(1 - rho ** 2)
    for t in range(1, 4000):
        x[:, t] = rho * x[:, t - 1] + rng.normal(size=4)
    expected = 16000 * (1 - rho) / (1 + rho)  # integrated autocorrelation time (1+ρ)/(1−ρ)
    assert effective_sample_size(x) == pytest.approx(expected, rel=0.3)


def test_too_short_or_bad_draws():
    with pytest.raises(InputError, match="at least 4 draws"):
        split_rhat([[1.0, 2.0, 3.0]])
    with pytest.raises(InputError, match="finite"):
        effective_sample_size([[1.0, np.nan, 3.0, 4.0]])
    assert split_rhat([[2.0] * 6, [2.0] * 6]) == 1.0
    assert split_rhat([[2.0] * 6, [3.0] * 6]) == float("inf")


@pytest.mark.parametrize("value", ["local:0", "local:-1", "local:x", "", "not an address"])
def test_bad_scheduler_values_are_one_line_option_errors(value):
    pytest.importorskip("distributed")
    from strgm.distributed.cluster import parse_scheduler

    with pytest.raises(OptionError) as e:
        parse_scheduler(value)
    assert "--scheduler" in str(e.value) and "\n" not in str(e.value)


def test_missing_dask_names_the_extra(monkeypatch):
    from strgm.distributed.cluster import parse_scheduler

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(MissingDependencyError, match=r"pip install 'strgm\[distributed\]'"):
        parse_scheduler("local:2")
    assert parse_scheduler(None) is None  # no scheduler: nothing needed
