"""The two-sided quotient (fst_factors.wfsa.quotient) and the concatenation messages it gives.

Oracle: μ(m) = Σ_{p, a} B(p) A(a) W(p · m · a) summed over the explicitly listed strings
of the other parts, with W scored string by string (one composition each), for every m
up to length 3; strings with the boundary label get nothing. Random W are cyclic or
acyclic, the lists random. A quotient that drops the lists' weights, and one that keeps
the boundary label inside the part, fail the same comparison. That strgm's ConcatFactor
gives the same message whichever route (quotient or composition) computes it:
tests/core/test_concat_factor.py.
"""

from __future__ import annotations

import itertools

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import fst_factors.wfsa as W
from fst_factors.transducers.concat import part_message_by_quotient
from fst_factors.wfsa import quotient as Q

from tests.fst_factors.wfsa_oracles import enumerate_strings, random_acceptor

LABELS = 2  # part alphabet 1..2; label 3 is the boundary


def random_list(rng, n: int) -> dict:
    """n distinct strings over 1..LABELS (length 0-2) with random −log weights."""
    pool = list(enumerate_strings(LABELS, 2))
    pick = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return {pool[i]: round(float(rng.exponential()), 4) for i in pick}


def oracle(whole, lists: list, i: int, boundary) -> dict:
    """m -> log μ(m) for m over 1..LABELS up to length 3, by enumeration (W scored on all
    the words at once)."""
    b = () if boundary is None else (boundary,)
    ms = list(enumerate_strings(LABELS, 3))
    combos = list(itertools.product(*[lst.items() if lst is not None else [((), 0.0)]
                                      for lst in lists]))
    words, owner, ctx = [], [], []
    for k, m in enumerate(ms):
        for combo in combos:
            pieces = [m if j == i else s for j, (s, _) in enumerate(combo)]
            words.append(tuple(itertools.chain.from_iterable(
                (p if j == 0 else b + p) for j, p in enumerate(pieces))))
            owner.append(k)
            ctx.append(sum(w for j, (_, w) in enumerate(combo) if j != i))
    lw = np.asarray(W.score_strings(whole, words)) - np.asarray(ctx)
    out = {}
    for k, m in enumerate(ms):
        sel = lw[np.asarray(owner) == k]
        sel = sel[sel > -np.inf]
        out[m] = float(np.logaddexp.reduce(sel)) if len(sel) else -np.inf
    return out


def matches(msg, want: dict, tol: float = 1e-8) -> bool:
    got = W.score_strings(msg, list(want))
    return all((g == w == -np.inf) or abs(g - w) < tol for g, w in zip(got, want.values()))


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


def heavy_cycles(rng, n_states: int = 3, least: float = 5.0):
    """A random cyclic acceptor over 1..LABELS whose arcs weigh ≥ ``least`` nats: its
    strings longer than 4 carry < 1e-6 of its mass, so enumeration is a faithful oracle."""
    f = pynini.Fst(arc_type="log64")
    f.add_states(n_states)
    f.set_start(0)
    for q in range(n_states):
        for d in range(n_states):
            for a in range(1, LABELS + 1):
                if rng.random() < 0.5 or (q == d == 0 and a == 1):
                    f.add_arc(q, pynini.Arc(a, a, W.weight(round(least + rng.exponential(),
                                                                  4)), d))
        f.set_final(q, W.weight(round(rng.exponential(), 4)))
    assert not W.is_acyclic(f)
    return f


def cyclic_case(seed: int, k: int, boundary):
    rng = np.random.default_rng(seed)
    whole = random_acceptor(rng, 4, LABELS + (boundary is not None), acyclic=False,
                            density=0.45)
    contexts = [heavy_cycles(rng) for _ in range(k)]
    i = int(rng.integers(0, k))
    contexts[i] = None
    return whole, contexts, i


def enumerated(context, max_len: int = 4) -> dict:
    strings = list(enumerate_strings(LABELS, max_len))
    scores = W.score_strings(context, strings)
    return {s: -float(v) for s, v in zip(strings, scores) if v > -np.inf}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 3),
       boundary=st.sampled_from([None, LABELS + 1]))
def test_cyclic_contexts_take_the_product_route_and_match_enumeration(seed, k, boundary):
    """EP's case: the other parts' messages are cyclic. The message equals the sum over
    their strings (enumerated to length 4; the rest weighs < 1e-6 relative)."""
    whole, contexts, i = cyclic_case(seed, k, boundary)
    msg = part_message_by_quotient(contexts, i, whole, LABELS, boundary)
    assert msg is not None
    lists = [None if c is None else enumerated(c, 4) for c in contexts]
    assert matches(msg, oracle(whole, lists, i, boundary), tol=1e-4)


@pytest.mark.parametrize("broken", ["free ε-links", "no final weights after"])
def test_broken_product_routes_fail(monkeypatch, broken):
    """Broken variants: chaining the contexts without the pieces' final weights, and
    backward sums that ignore the contexts' final weights."""
    import fst_factors.wfsa.quotient_product as QP

    failures = 0
    for seed in range(8):
        whole, contexts, i = cyclic_case(seed, 3, LABELS + 1)
        want = oracle(whole, [None if c is None else enumerated(c, 3) for c in contexts],
                      i, LABELS + 1)
        with monkeypatch.context() as mp:
            if broken == "free ε-links":
                real = QP.chain

                def chained(tables, real=real):
                    t = real(tables)
                    return W.ArcTable(t.num_states, t.start, t.src, t.dst, t.ilabel,
                                      t.olabel, np.where(t.ilabel == 0, 0.0, t.weight),
                                      t.final)
                mp.setattr(QP, "chain", chained)
            else:
                real = QP.chain
                mp.setattr(QP, "chain", lambda tables, real=real: W.ArcTable(
                    *[getattr(real(tables), f) for f in ("num_states", "start", "src", "dst",
                                                         "ilabel", "olabel", "weight")],
                    np.where(np.isfinite(real(tables).final), 0.0, np.inf)))
            msg = part_message_by_quotient(contexts, i, whole, LABELS, LABELS + 1)
        failures += not matches(msg, want, tol=1e-4)
    assert failures >= 6


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


def test_the_size_guard_sends_a_product_that_would_not_fit_to_the_composition():
    from fst_factors.wfsa import guard

    rng = np.random.default_rng(4)
    whole = random_acceptor(rng, 4, LABELS, acyclic=False)
    ctx = W.sigma_star(LABELS, 2.0)
    assert part_message_by_quotient([None, ctx], 0, whole, LABELS) is not None
    with guard.limits(max_memory=1 << 20):  # far below this process's resident memory
        assert part_message_by_quotient([None, ctx], 0, whole, LABELS) is None


@pytest.mark.parametrize("seed", range(6))
def test_arc_bound_bounds_the_product(seed):
    import fst_factors.wfsa.pair_product as PP

    rng = np.random.default_rng(seed)
    c = W.arc_table(random_acceptor(rng, 4, LABELS, acyclic=False, density=0.5, eps=True))
    w = W.arc_table(random_acceptor(rng, 5, LABELS, acyclic=False, density=0.5))
    p = PP.pair_product(c, w, np.zeros(w.num_states, dtype=int), np.arange(w.num_states))
    assert 0 < len(p.src) <= PP.arc_bound(c, w)
    # every pair's arcs are the matching arcs of C and W (ε-arcs of C keep W's state)
    for k in range(p.num_states):
        want = sorted((int(cd), int(wd)) for ce, (cl, cd) in enumerate(zip(c.ilabel, c.dst))
                      if c.src[ce] == p.c[k]
                      for wl, wd in ([(0, p.w[k])] if cl == 0 else
                                     zip(w.ilabel[w.src == p.w[k]], w.dst[w.src == p.w[k]]))
                      if wl == cl)
        got = sorted((int(p.c[d]), int(p.w[d])) for d in p.dst[p.src == k])
        assert got == want
