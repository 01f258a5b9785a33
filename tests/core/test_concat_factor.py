"""strgm's concatenation factor (strgm.factors.ConcatFactor) takes its part messages from
the two-sided quotient (fst_factors.wfsa.quotient, tested against enumeration in
tests/fst_factors/test_quotient.py) when it can: the message is the same function
whichever route (quotient or composition) computes it, and what the quotient cannot
decide (a divergent path sum, a product beyond the pair bound) goes through the
composition, which raises DivergenceError as before."""

from __future__ import annotations

import numpy as np
import pynini
import pytest

import fst_factors.wfsa as W
import strgm.factors as factors
from fst_factors.transducers.concat import part_message_by_quotient
from strgm.factors import ConcatFactor
from tests.fst_factors.test_quotient import LABELS, case
from tests.fst_factors.wfsa_oracles import enumerate_strings, random_acceptor


@pytest.mark.parametrize("cyclic", [False, True])
def test_the_factor_gives_the_same_message_by_either_route(monkeypatch, cyclic):
    whole, lists, i = case(7, 3, cyclic, LABELS + 1)
    f = ConcatFactor("c", parts=("m0", "m1", "m2"), whole="w", boundary_label=LABELS + 1)
    incoming = {f"m{j}": W.weighted_strings(lst) for j, lst in enumerate(lists)
                if lst is not None}
    incoming["w"] = whole
    parts = [incoming.get(f"m{j}") for j in range(3)]
    assert part_message_by_quotient(parts, i, whole, LABELS, LABELS + 1) is not None
    fast = f.message_to(f"m{i}", incoming, LABELS)
    monkeypatch.setattr(factors, "part_message_by_quotient", lambda *a, **k: None)
    slow = f.message_to(f"m{i}", incoming, LABELS)
    strings = list(enumerate_strings(LABELS, 4))
    assert np.allclose(W.score_strings(fast, strings), W.score_strings(slow, strings),
                       atol=1e-9)
    assert fast.properties(pynini.I_LABEL_SORTED | pynini.NO_EPSILONS, True) == \
        pynini.I_LABEL_SORTED | pynini.NO_EPSILONS


@pytest.mark.parametrize("k", [2, 3])
def test_product_route_equals_the_composition_route(monkeypatch, k):
    """The factor's message by the product route against OpenFst's composition and
    ε-removal, on contexts that are not small: cyclic machines of 5 states."""
    rng = np.random.default_rng(11 + k)
    whole = random_acceptor(rng, 5, LABELS + 1, acyclic=False, density=0.4)
    names = [f"m{j}" for j in range(k)]
    f = ConcatFactor("c", parts=tuple(names), whole="w", boundary_label=LABELS + 1)
    incoming = {n: random_acceptor(rng, 5, LABELS, acyclic=False, density=0.4)
                for n in names[1:]}
    incoming["w"] = whole
    assert part_message_by_quotient([None] + [incoming[n] for n in names[1:]], 0, whole,
                                    LABELS, LABELS + 1) is not None
    fast = f.message_to("m0", incoming, LABELS)
    monkeypatch.setattr(factors, "part_message_by_quotient", lambda *a, **kw: None)
    slow = f.message_to("m0", incoming, LABELS)
    strings = list(enumerate_strings(LABELS, 4))
    assert np.allclose(W.score_strings(fast, strings), W.score_strings(slow, strings),
                       atol=1e-9)


def test_divergent_or_oversized_products_go_through_composition(monkeypatch):
    """Path sums that diverge (a context of total mass ∞ read through a W that loops on
    it) and products beyond the pair bound return None: the composition route decides
    (and raises DivergenceError in the first case, as it did before the product route)."""
    import fst_factors.wfsa.pair_product as PP
    from strgm.errors import DivergenceError

    whole = W.sigma_star(LABELS, 0.0)
    loop = W.sigma_star(LABELS, 0.0)  # Σ* with weight 1 per letter: infinite mass
    assert part_message_by_quotient([None, loop], 0, whole, LABELS) is None
    f = ConcatFactor("c", parts=("a", "b"), whole="w")
    with pytest.raises(DivergenceError):
        f.message_to("a", {"b": loop, "w": whole}, LABELS)
    rng = np.random.default_rng(3)
    whole = random_acceptor(rng, 3, LABELS, acyclic=False)
    ok = W.sigma_star(LABELS, 2.0)
    assert part_message_by_quotient([None, ok], 0, whole, LABELS) is not None
    monkeypatch.setattr(PP, "MAX_PAIRS", 2)
    assert part_message_by_quotient([None, ok], 0, whole, LABELS) is None
