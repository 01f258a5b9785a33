"""The size guard (fst_factors.wfsa.guard): sound bounds, refusal before building.

* Soundness: on random small machines (ε on either tape, cycles) the predicted bound on
  states and arcs is never below what OpenFst actually builds, for composition and
  ε-removal, on both the crude and the refined (label counts, ε-path DP) routes. A
  deliberately too-small bound is caught by the same check.
* Refusal before building: with a budget the bound exceeds, ``pynini.compose`` is never
  called; a guard that checks after building is caught by the same test.

What infer() makes of the guard's errors and options: tests/inference/test_memory_limits.py.
"""

from __future__ import annotations

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

from fst_factors.errors import MessageTooLargeError
from fst_factors.wfsa import guard
from fst_factors.wfsa.core import from_arc_table


def random_fst(seed: int, n: int, deg: int, labels: int = 3, eps_in: float = 0.3,
               eps_out: float = 0.3) -> pynini.Fst:
    """A random log64 transducer; ε-paths have total weight < 1 (each state's ε-arcs sum
    to < 1), so ε-removal terminates."""
    rng = np.random.default_rng(seed)
    m = n * deg
    src = np.repeat(np.arange(n), deg)
    dst = rng.integers(0, n, m)
    il = np.where(rng.random(m) < eps_in, 0, rng.integers(1, labels + 1, m))
    ol = np.where(rng.random(m) < eps_out, 0, rng.integers(1, labels + 1, m))
    w = np.full(m, np.log(deg + 1) + 0.5)
    final = np.where(rng.random(n) < 0.3, 0.5, np.inf)
    final[-1] = 0.0
    return from_arc_table(n, 0, src, dst, il, ol, w, final)


def size(f: pynini.Fst) -> tuple[int, int]:
    return f.num_states(), guard.num_arcs(f)


def compose_violations(bound, cases) -> list:
    out = []
    for a, b in cases:
        qb, eb = bound(a, b)
        c = pynini.compose(pynini.arcsort(a.copy(), "olabel"), pynini.arcsort(b.copy(), "ilabel"),
                           connect=False)
        q, e = size(c)
        if q > qb or e > eb:
            out.append(((q, e), (qb, eb)))
    return out


def rmeps_violations(bound, fsts) -> list:
    out = []
    for f in fsts:
        qb, eb = bound(f)
        q, e = size(pynini.rmepsilon(f.copy(), connect=False))
        if q > qb or e > eb:
            out.append(((q, e), (qb, eb)))
    return out


machine = st.builds(random_fst, seed=st.integers(0, 10 ** 6), n=st.integers(1, 7),
                    deg=st.integers(0, 4), labels=st.integers(1, 3),
                    eps_in=st.sampled_from([0.0, 0.3, 0.7]),
                    eps_out=st.sampled_from([0.0, 0.3, 0.7]))


@pytest.fixture(params=["crude", "refined"])
def route(request, monkeypatch):
    """``refined``: the budget never fits the crude bound, so label counts / ε-path DP
    are used."""
    if request.param == "refined":
        monkeypatch.setattr(guard, "fits", lambda *a, **k: False)
    return request.param


@settings(max_examples=60, deadline=None)
@given(a=machine, b=machine)
def test_composition_bound_is_never_below_the_built_size(a, b):
    for fits_crude in (True, False):
        real = guard.fits
        guard.fits = (lambda *x, **k: True) if fits_crude else (lambda *x, **k: False)
        try:
            assert compose_violations(guard.compose_bound, [(a, b)]) == []
        finally:
            guard.fits = real


@settings(max_examples=60, deadline=None)
@given(f=machine)
def test_epsilon_removal_bound_is_never_below_the_built_size(f):
    for fits_crude in (True, False):
        real = guard.fits
        guard.fits = (lambda *x, **k: True) if fits_crude else (lambda *x, **k: False)
        try:
            assert rmeps_violations(guard.rmepsilon_bound, [f]) == []
        finally:
            guard.fits = real


FIXED = [random_fst(s, n, d, eps_in=e, eps_out=e) for s, (n, d, e) in
         enumerate([(3, 2, 0.0), (5, 3, 0.3), (6, 4, 0.7), (4, 3, 0.5), (7, 2, 0.3)])]


def test_a_too_small_bound_is_caught(route):
    """The checks above can fail: sums instead of products, or ε-removal assumed to
    keep the arc count, are below what OpenFst builds on these machines."""
    assert compose_violations(guard.compose_bound, [(a, b) for a in FIXED for b in FIXED]) == []
    assert rmeps_violations(guard.rmepsilon_bound, FIXED) == []
    too_small = lambda a, b: (a.num_states() + b.num_states(),  # noqa: E731
                              guard.num_arcs(a) + guard.num_arcs(b))
    assert compose_violations(too_small, [(a, b) for a in FIXED for b in FIXED])
    assert rmeps_violations(lambda f: (f.num_states(), guard.num_arcs(f) // 2), FIXED)


def test_refined_bound_is_tighter_but_sound():
    a, b = FIXED[2], FIXED[2]
    crude = guard.compose_bound(a, b)
    real = guard.fits
    guard.fits = lambda *x, **k: False
    try:
        refined = guard.compose_bound(a, b)
    finally:
        guard.fits = real
    assert refined[1] <= crude[1]


def _counting_compose(monkeypatch):
    calls = []
    real = pynini.compose

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(guard.pynini, "compose", counting)
    return calls


def check_after_building(a, b, connect=True, op="composition"):
    """A broken guard: builds first, checks afterwards."""
    out = pynini.compose(pynini.arcsort(a.copy(), "olabel"), pynini.arcsort(b.copy(), "ilabel"))
    guard.require(op, *size(out))
    return out


@pytest.mark.parametrize("variant", ["guard", "broken"])
def test_the_guard_refuses_before_building(monkeypatch, variant):
    a = random_fst(1, 60, 6, eps_in=0, eps_out=0)
    b = random_fst(2, 60, 6, eps_in=0, eps_out=0)
    calls = _counting_compose(monkeypatch)
    compose = guard.compose if variant == "guard" else check_after_building
    budget = guard.resident_memory() + 50_000  # far below the bound (3600 states ...)
    with guard.limits(max_memory=budget), pytest.raises(MessageTooLargeError):
        compose(a, b)
    built = len(calls)
    if variant == "guard":
        assert built == 0
    else:  # the same assertion would fail for a guard that checks afterwards
        assert built == 1
    with guard.limits(max_memory=guard.resident_memory() + (1 << 30)):
        guard.compose(a, b)
    assert len(calls) == built + 1


def test_default_budget_is_half_the_available_memory_above_current_use():
    lim = guard.make_limits()
    assert lim.max_memory >= guard.resident_memory()
    assert lim.max_memory <= guard.resident_memory() + guard.available_memory()
    assert not lim.explicit_memory


@pytest.mark.parametrize("variant", ["guard", "forgets admissions"])
def test_a_reused_memory_reading_counts_what_it_admitted(monkeypatch, variant):
    """Within FRESH_SECONDS the guard reuses its reading of the resident memory, plus
    every prediction admitted on it: an operation that fits only if the earlier ones
    allocated nothing gets a fresh reading. A guard that forgets its admissions lets it
    through on the old reading."""
    reads = []
    rss = [1_000_000]

    def read():
        reads.append(rss[0])
        return rss[0]

    monkeypatch.setattr(guard, "resident_memory", read)
    monkeypatch.setattr(guard, "FRESH_SECONDS", 3600.0)
    monkeypatch.setattr(guard._Reading, "at", -float("inf"))
    if variant == "forgets admissions":
        monkeypatch.setattr(guard._Reading, "admitted", 0.0)
        real = guard._admits

        def forgetful(need, max_memory):
            ok = real(need, max_memory)
            guard._Reading.admitted = 0.0
            return ok
        monkeypatch.setattr(guard, "_admits", forgetful)
    budget = 1_000_100
    assert guard._admits(60, budget) and len(reads) == 1
    assert guard._admits(30, budget) and len(reads) == 1   # 60 + 30 fit the old reading
    rss[0] = 1_000_080  # the two operations allocated 80 bytes
    ok = guard._admits(30, budget)
    if variant == "guard":  # 60 + 30 + 30 > 100: read afresh, and 80 + 30 > 100
        assert len(reads) == 2 and not ok
    else:
        assert len(reads) == 1 and ok
    monkeypatch.setattr(guard, "FRESH_SECONDS", 0.0)  # no reuse: every check reads
    guard._admits(1, budget)
    guard._admits(1, budget)
    assert len(reads) == (4 if variant == "guard" else 3)
