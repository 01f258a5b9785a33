"""The compiled trie walk that scores strings (fst_factors.wfsa.string_scores) against the
composition route it replaces and against a dense matrix oracle, on random machines with
cycles, parallel arcs and arcs out of label order; with a broken walk (best path instead
of the sum over paths) shown to fail."""

import itertools
import math

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import fst_factors.wfsa.string_scores as S
from fst_factors.wfsa import measure as W
from fst_factors.wfsa.core import arc_table, new_fst, weight
from tests.fst_factors.wfsa_oracles import dense_string_logweight


def labelled_machine(rng, n, labels, transducer=False, density=0.35):
    """A random ε-free log64 machine (cycles and parallel arcs allowed), its arcs added
    in random label order; normalisable because every arc weighs at least 1.6 nats."""
    f = new_fst()
    f.add_states(n)
    f.set_start(int(rng.integers(n)))
    for q in range(n):
        arcs = [(a, d) for d in range(n) for a in range(1, labels + 1)
                for _ in range(2) if rng.random() < density]
        for i in rng.permutation(len(arcs)):
            a, d = arcs[i]
            o = int(rng.integers(1, labels + 1)) if transducer else a
            f.add_arc(q, pynini.Arc(a, o, weight(round(1.6 + rng.exponential(), 4)), d))
        if rng.random() < 0.5:
            f.set_final(q, weight(round(rng.normal(), 4)))
    return f


def all_strings(labels, longest):
    return [s for k in range(longest + 1)
            for s in itertools.product(range(1, labels + 1), repeat=k)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 3), st.booleans())
def test_walk_equals_the_composition_and_the_dense_oracle(seed, n, labels, transducer):
    rng = np.random.default_rng(seed)
    f = labelled_machine(rng, n, labels, transducer)
    strings = all_strings(labels, 3)
    strings = [strings[i] for i in rng.permutation(len(strings))] + strings[:3]  # repeats
    arcs = S.labelled_arcs(arc_table(f))
    assert arcs is not None
    got = S.scores_by_walk(arcs, strings)
    ref = W.score_strings_by_composition(f, strings)
    assert np.array_equal(np.isfinite(got), np.isfinite(ref))
    np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=0,
                               atol=1e-10)
    for s, g in zip(strings[:12], got):
        want = dense_string_logweight(f, labels, s, tape="output")
        assert g == -math.inf if want == -math.inf else g == pytest.approx(want, abs=1e-9)
    np.testing.assert_array_equal(W.score_strings(f, strings), got)  # the default route


def plain(fn):
    """The Python function under a compiled kernel (itself without numba)."""
    return getattr(fn, "py_func", fn)


def test_a_string_with_two_paths_gets_their_sum_and_a_best_path_walk_fails(monkeypatch):
    """Negative control: a walk that keeps the best path (max) instead of the log-sum
    gives log 0.3 instead of log 0.5 for the string 'a' read by two parallel arcs."""
    f = new_fst()
    f.add_states(2)
    f.set_start(0)
    f.set_final(1, weight(0.0))
    f.add_arc(0, pynini.Arc(1, 1, weight(-math.log(0.3)), 1))
    f.add_arc(0, pynini.Arc(1, 1, weight(-math.log(0.2)), 1))
    arcs = S.labelled_arcs(arc_table(f))
    args = (arcs.indptr, arcs.label, arcs.dst, arcs.weight, arcs.final, arcs.start,
            np.array([[1]]), np.array([1]))
    assert S.scores_by_walk(arcs, [(1,)])[0] == pytest.approx(math.log(0.5), abs=1e-12)
    monkeypatch.setattr(S, "_step", plain(S._step))  # the Python loops, which read
    monkeypatch.setattr(S, "_grown", plain(S._grown))  # the module's names
    assert plain(S._walk)(*args)[0] == pytest.approx(math.log(0.5), abs=1e-12)
    monkeypatch.setattr(S, "_log_add", max)
    assert plain(S._walk)(*args)[0] == pytest.approx(math.log(0.3), abs=1e-12)


def test_output_epsilon_takes_the_composition_route():
    f = new_fst()
    f.add_states(2)
    f.set_start(0)
    f.set_final(1, weight(0.0))
    f.add_arc(0, pynini.Arc(1, 0, weight(0.5), 1))
    assert S.labelled_arcs(arc_table(f)) is None
    assert W.score_strings(f, [(), (1,)]).tolist() == [-0.5, -math.inf]


def test_empty_machine_and_no_strings():
    assert W.score_strings(new_fst(), [(1,)]).tolist() == [-math.inf]
    f = labelled_machine(np.random.default_rng(0), 3, 2)
    assert S.scores_by_walk(S.labelled_arcs(arc_table(f)), []).shape == (0,)
