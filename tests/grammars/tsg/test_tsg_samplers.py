"""Both DP-TSG kernels sample the exact posterior over derivations of a toy treebank
(all 2^k indicator configurations enumerated, P ∝ exp(log joint)); broken MH variants fail
the same test (negative controls).

Threshold: with K = 64 configurations and m = 12000 sweeps, the expected total-variation
distance of an independent sample is ≈ ½ Σ_k sqrt(2 p_k / (π m)) ≤ ½ sqrt(2K / (π m)) ≈ 0.029;
the chains are mildly autocorrelated, so 0.06 is used; the broken variants land far above."""

import pytest

import strgm.grammars.tsg.blocked as blocked
from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG
from tests.grammars.tsg.tsg_oracles import TOY2, exact_posterior, run_chain, tv_distance

SWEEPS = 12000
TV_OK = 0.06


def _tv(kernel, init="minimal", seed=1):
    post = exact_posterior(kernel, kernel.alpha0, kernel.s0)
    samples, state = run_chain(kernel, SWEEPS, seed, init)
    return tv_distance(post, samples), state


@pytest.mark.parametrize("init", ["minimal", "maximal"])
def test_local_gibbs_matches_exact_posterior(init):
    tv, _ = _tv(LocalGibbsTSG(TOY2, alpha=0.3, s=0.4), init)
    assert tv < TV_OK


@pytest.mark.parametrize("init", ["minimal", "maximal"])
def test_blocked_mh_matches_exact_posterior(init):
    tv, st = _tv(BlockedMHTSG(TOY2, alpha=0.3, s=0.4), init)
    assert tv < TV_OK
    assert 0 < st.accepted < st.proposed  # the correction rejects some proposals here
    assert 0 < st.trace[-1]["acceptance"] <= 1


def test_blocked_without_mh_test_fails():
    tv, st = _tv(BlockedMHTSG(TOY2, alpha=0.3, s=0.4, correction=False))
    assert st.accepted == st.proposed
    assert tv > 2 * TV_OK


def test_blocked_without_proposal_terms_fails(monkeypatch):
    monkeypatch.setattr(blocked, "map_log_prob", lambda *a: 0.0)
    tv, _ = _tv(BlockedMHTSG(TOY2, alpha=0.3, s=0.4))
    assert tv > 2 * TV_OK


def test_resampled_hyperparameters_move_and_rows_are_complete():
    for K in (LocalGibbsTSG, BlockedMHTSG):
        k = K(TOY2, resample_hyper=True)
        _, st = run_chain(k, 20)
        assert len(st.trace) == 20 and st.trace[-1]["iteration"] == 20
        assert (st.alpha != 1.0).all() and (st.s != 0.5).all()
        assert st.trace[-1]["log_likelihood"] == pytest.approx(k.log_likelihood(st))
