"""The compiled depth and distance passes (fst_factors.wfsa.acyclic) against the vectorised
reference (bit for bit) and against path enumeration; a pass fed depths that are not
longest-path depths is shown to be wrong (the negative control)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fst_factors.wfsa import acyclic
from fst_factors.wfsa.core import (ArcTable, acyclic_distances, acyclic_distances_reference,
                             topological_levels, topological_levels_reference)


def random_table(seed: int, cyclic: bool) -> ArcTable:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    m = int(rng.integers(0, 3 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    if not cyclic:  # arcs from the lower to the higher of a random order of the states
        keep = src != dst
        lo, hi = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]
        perm = rng.permutation(n)
        src, dst = perm[lo], perm[hi]
    final = np.where(rng.random(n) < 0.5, rng.exponential(size=n), np.inf)
    ones = np.ones(len(src), dtype=np.int64)
    return ArcTable(n, int(rng.integers(0, n)), src.astype(np.int64), dst.astype(np.int64),
                    ones, ones, rng.exponential(size=len(src)), final)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_the_compiled_passes_equal_the_reference_bit_for_bit(seed, cyclic):
    t = random_table(seed, cyclic)
    got, want = topological_levels(t), topological_levels_reference(t)
    assert (got is None) == (want is None)
    if want is None:
        return
    assert np.array_equal(got, want)
    for reverse in (False, True):
        assert np.array_equal(acyclic_distances(t, reverse, got),
                              acyclic_distances_reference(t, reverse, want))


def path_sums(t: ArcTable) -> tuple:
    """(α, β) by enumerating every path of the acyclic table (probabilities)."""
    out = {q: [] for q in range(t.num_states)}
    for k in range(t.num_arcs):
        out[int(t.src[k])].append(k)
    alpha, beta = np.zeros(t.num_states), np.exp(-t.final)

    def walk(q, w):
        alpha[q] += np.exp(-w)
        for k in out[q]:
            walk(int(t.dst[k]), w + t.weight[k])
    walk(t.start, 0.0)
    for q in range(t.num_states):  # β by paths from q: the sum over every path out
        stack, total = [(q, 0.0)], 0.0
        while stack:
            r, w = stack.pop()
            total += np.exp(-(w + t.final[r]))
            stack.extend((int(t.dst[k]), w + t.weight[k]) for k in out[r])
        beta[q] = total
    return alpha, beta


@pytest.mark.parametrize("seed", range(12))
def test_the_distances_are_the_sums_over_paths(seed):
    t = random_table(seed, cyclic=False)
    alpha, beta = path_sums(t)
    with np.errstate(divide="ignore"):
        assert np.allclose(acyclic_distances(t), -np.log(alpha), rtol=1e-12, atol=1e-12)
        assert np.allclose(acyclic_distances(t, reverse=True), -np.log(beta), rtol=1e-12,
                           atol=1e-12)


def test_depths_that_are_not_longest_paths_give_wrong_sums():
    """0 → 1 → 2 and a shortcut 0 → 2, then 2 → 3 (listed before 1 → 2): breadth-first
    depths put 2 beside 1, so 2's arc is read before the arc 1 → 2 has reached it."""
    t = ArcTable(4, 0, np.array([0, 2, 0, 1]), np.array([1, 3, 2, 2]), np.ones(4, int),
                 np.ones(4, int), np.array([0.1, 0.4, 0.3, 0.2]),
                 np.array([np.inf, np.inf, np.inf, 0.0]))
    longest = topological_levels(t)
    assert list(longest) == [0, 1, 2, 3]
    alpha = path_sums(t)[0]
    assert np.allclose(acyclic_distances(t, levels=longest), -np.log(alpha))
    bfs = np.array([0, 1, 1, 2])
    wrong = acyclic.distances(4, 0, t.src, t.dst, t.weight, t.final, bfs, False)
    assert not np.isclose(wrong[3], -np.log(alpha[3]))


def test_a_cycle_anywhere_has_no_depths():
    for arcs in ([(0, 1), (1, 0)], [(0, 1), (2, 3), (3, 2)], [(1, 1)]):
        src, dst = (np.array(x) for x in zip(*arcs))
        t = ArcTable(4, 0, src, dst, src * 0 + 1, src * 0 + 1, src * 0.0,
                     np.zeros(4))
        assert topological_levels(t) is None and topological_levels_reference(t) is None
    empty = ArcTable(3, 0, *(np.zeros(0, int) for _ in range(4)), np.zeros(0),
                     np.zeros(3))
    assert list(topological_levels(empty)) == [0, 0, 0]
    assert list(itertools.islice(acyclic_distances(empty), 3)) == [0.0, np.inf, np.inf]


def test_warm_compiled_loads_the_shared_kernels_in_a_fresh_process():
    """Before the rule family is forked, the parent loads the kernels both processes
    use, so the child inherits them; in a fresh interpreter none is loaded before the
    call (the control) and each is after it."""
    import json
    import subprocess
    import sys

    code = ("import json, fst_factors.wfsa.acyclic as a, fst_factors.wfsa.serialised as s, "
            "fst_factors.wfsa.string_scores as w\n"
            "from fst_factors.wfsa.compiled import COMPILED\n"
            "from fst_factors.wfsa.measure import warm_compiled\n"
            "ks = [a.depths, a.distances, s._decode, w._walk]\n"
            "before = [len(k.signatures) for k in ks] if COMPILED else [0] * 4\n"
            "warm_compiled()\n"
            "after = [len(k.signatures) for k in ks] if COMPILED else [1] * 4\n"
            "print(json.dumps([before, after]))\n")
    before, after = json.loads(subprocess.run([sys.executable, "-c", code],
                                              capture_output=True, text=True,
                                              check=True).stdout)
    assert before == [0, 0, 0, 0]
    assert all(n > 0 for n in after)
