"""The two-sided quotient (strgm.wfsa.quotient) and the concatenation messages it gives.

Oracle: μ(m) = Σ_{p, a} B(p) A(a) W(p · m · a) summed over the explicitly listed strings
of the other parts, with W scored string by string (one composition each), for every m
up to length 3; strings with the boundary label get nothing. Random W are cyclic or
acyclic, the lists random. A quotient that drops the lists' weights, and one that keeps
the boundary label inside the part, fail the same comparison. The factor's message is
the same function whichever route (quotient or composition) computes it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import strgm.factors as factors
import strgm.wfsa as W
from strgm.factors import ConcatFactor
from strgm.transducers.concat import part_message_by_quotient
from strgm.wfsa import quotient as Q

from foundation_oracles import enumerate_strings, random_acceptor

LABELS = 2  # part alphabet 1..2; label 3 is the boundary


def random_list(rng, n: int) -> dict:
    """n distinct strings over 1..LABELS (length 0-2) with random −log weights."""
    pool = list(enumerate_strings(LABELS, 2))
    pick = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return {pool[i]: round(float(rng.exponential()), 4) for i in pick}


def oracle(whole, lists: list, i: int, boundary) -> dict:
    """m -> log μ(m) for m over 1..LABELS up to length 3, by enumeration."""
    b = () if boundary is None else (boundary,)
    out = {}
    for m in enumerate_strings(LABELS, 3):
        total = 0.0
        for combo in itertools.product(*[lst.items() if lst is not None else [((), 0.0)]
                                         for lst in lists]):
            pieces = [m if j == i else s for j, (s, _) in enumerate(combo)]
            word = tuple(itertools.chain.from_iterable(
                (p if j == 0 else b + p) for j, p in enumerate(pieces)))
            lw = W.string_logweight(whole, word)
            if lw > -np.inf:
                total += math.exp(lw - sum(w for j, (_, w) in enumerate(combo) if j != i))
        out[m] = math.log(total) if total > 0 else -np.inf
    return out


def matches(msg, want: dict) -> bool:
    got = W.score_strings(msg, list(want))
    return all((g == w == -np.inf) or abs(g - w) < 1e-8 for g, w in zip(got, want.values()))


def case(seed: int, k: int, cyclic: bool, boundary):
    rng = np.random.default_rng(seed)
    whole = random_acceptor(rng, 4 if cyclic else 9, LABELS + (boundary is not None),
                            acyclic=not cyclic, density=0.45)
    lists = [random_list(rng, int(rng.integers(1, 4))) for _ in range(k)]
    i = int(rng.integers(0, k))
    lists[i] = None
    return whole, lists, i


def quotient_message(whole, lists, i, boundary):
    parts = [None if lst is None else W.weighted_strings(lst) for lst in lists]
    return part_message_by_quotient(parts, i, whole, LABELS, boundary)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 3), cyclic=st.booleans(),
       boundary=st.sampled_from([None, LABELS + 1]))
def test_quotient_messages_match_enumeration(seed, k, cyclic, boundary):
    whole, lists, i = case(seed, k, cyclic, boundary)
    msg = quotient_message(whole, lists, i, boundary)
    assert msg is not None
    assert matches(msg, oracle(whole, lists, i, boundary))
    if boundary is not None:  # the part never contains the boundary
        assert W.score_strings(msg, [(boundary,), (1, boundary)]).max() == -np.inf


@pytest.mark.parametrize("broken", ["drops list weights", "keeps the boundary"])
def test_broken_quotients_fail_the_oracle(monkeypatch, broken):
    failures = 0
    for seed in range(12):
        whole, lists, i = case(seed, 3, seed % 2 == 0, LABELS + 1)
        want = oracle(whole, lists, i, LABELS + 1)
        if broken == "drops list weights":
            with monkeypatch.context() as mp:
                real = Q._add
                mp.setattr(Q, "_add", lambda a, b, w: real(a, b, 0.0))
                msg = quotient_message(whole, lists, i, LABELS + 1)
            failures += not matches(msg, want)
        else:
            parts = [None if lst is None else W.weighted_strings(lst) for lst in lists]
            msg = part_message_by_quotient(parts, i, whole, LABELS + 1, LABELS + 1)
            want[(LABELS + 1,)] = -np.inf
            failures += not matches(msg, want)
    assert failures >= 6


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


def test_cyclic_or_large_lists_go_through_composition():
    rng = np.random.default_rng(3)
    whole = random_acceptor(rng, 3, LABELS, acyclic=False)
    loop = W.sigma_star(LABELS, 2.0)
    assert part_message_by_quotient([None, loop], 0, whole, LABELS) is None
    many = W.weighted_strings({s: 0.0 for s in enumerate_strings(LABELS, 11)})
    assert part_message_by_quotient([None, many], 0, whole, LABELS) is None


def test_long_lists_do_not_underflow():
    """Strings of weight ~1,000 nats (e^-1000 underflows float64) keep their ratios."""
    word = (1, 2) * 10
    heavy = {word: 500.0, word[:-2]: 480.0}
    whole = W.weighted_strings({word + (1,) + word: 10.0, word[:-2] + (2,) + word: 12.0})
    msg = part_message_by_quotient([W.weighted_strings(heavy), None,
                                    W.weighted_strings(heavy)], 1, whole, LABELS)
    got = W.score_strings(msg, [(1,), (2,)])
    assert got[0] == pytest.approx(-10.0 - 1000.0, abs=1e-9)
    assert got[1] == pytest.approx(-12.0 - 980.0, abs=1e-9)
