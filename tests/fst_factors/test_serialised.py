"""The compiled reader of OpenFst's serialisation (fst_factors.wfsa.serialised) against the
arcs each machine was built from, and against the numpy route it replaces."""

import struct

import numpy as np
import pynini
import pytest
from hypothesis import given, settings, strategies as st

import fst_factors.wfsa.serialised as S
from fst_factors.wfsa import core


def built(rng, n, max_out, transducer):
    """A random log64 machine and the arcs it was built from, in state order."""
    f = core.new_fst()
    for _ in range(n):
        f.add_state()
    f.set_start(int(rng.integers(n)))
    arcs, final = [], np.full(n, np.inf)
    for s in range(n):
        for _ in range(int(rng.integers(0, max_out + 1))):
            i = int(rng.choice([0, 1, 7, 2**31 - 1, int(rng.integers(1, 300))]))
            o = int(rng.integers(0, 300)) if transducer else i
            w = float(rng.choice([0.0, -3.25, 1e-300, 745.0, rng.normal() * 50]))
            d = int(rng.integers(n))
            f.add_arc(s, pynini.Arc(i, o, core.weight(w), d))
            arcs.append((s, d, i, o, w))
        if rng.random() < 0.5:
            final[s] = float(rng.normal() * 10)
            f.set_final(s, core.weight(final[s]))
    return f, arcs, final


def assert_table(t, arcs, final, start):
    want = np.array(arcs, dtype=float).reshape(-1, 5)
    assert t.start == start
    np.testing.assert_array_equal(t.src, want[:, 0])
    np.testing.assert_array_equal(t.dst, want[:, 1])
    np.testing.assert_array_equal(t.ilabel, want[:, 2])
    np.testing.assert_array_equal(t.olabel, want[:, 3])
    np.testing.assert_array_equal(t.weight, want[:, 4])  # bit for bit
    np.testing.assert_array_equal(t.final, final)
    assert t.src.dtype == t.ilabel.dtype == np.int64 and t.weight.dtype == np.float64


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(0, 6), st.booleans())
def test_compiled_reader_returns_the_arcs_the_machine_was_built_from(seed, n, max_out,
                                                                      transducer):
    f, arcs, final = built(np.random.default_rng(seed), n, max_out, transducer)
    assert S.read_arcs(f.write_to_string(), n) is not None  # the compiled walk ran
    assert_table(core.arc_table(f), arcs, final, f.start())
    assert_table(core.arc_table_reference(f), arcs, final, f.start())


def test_a_body_of_the_wrong_length_is_declined_not_misread():
    f, arcs, final = built(np.random.default_rng(3), 12, 4, True)
    blob = f.write_to_string()
    n = f.num_states()
    assert S.read_arcs(blob[:-1], n) is None  # truncated
    assert S.read_arcs(blob + b"\0" * 20, n) is None  # an extra arc's worth of bytes
    assert S.read_arcs(blob, n + 1) is None  # a state more than the body holds
    # one state's arc count raised by one: the records no longer end the string
    body = S._body_offset(blob)
    (c,) = struct.unpack_from("<q", blob, body + 8)
    bad = blob[: body + 8] + struct.pack("<q", c + 1) + blob[body + 16:]
    assert S.read_arcs(bad, n) is None


def test_a_misplaced_body_is_caught_by_the_length_check(monkeypatch):
    """Broken variant: a reader that starts one arc record late is refused by the length
    check, which the correct offset passes."""
    f, arcs, final = built(np.random.default_rng(5), 10, 3, False)
    blob = f.write_to_string()
    good = S._body_offset
    monkeypatch.setattr(S, "_body_offset", lambda b: good(b) + 20)
    assert S.read_arcs(blob, f.num_states()) is None
    # the walk itself, not only the header parse, refuses it
    assert S._count_arcs(S._words(blob, good(blob) + 20), f.num_states()) == -1
    assert S._count_arcs(S._words(blob, good(blob)), f.num_states()) == len(arcs)
    assert S._words(blob, good(blob) + 1) is None  # not a whole number of words


def test_symbol_tables_take_the_numpy_route():
    f, arcs, final = built(np.random.default_rng(7), 6, 3, False)
    syms = pynini.SymbolTable()
    syms.add_symbol("<eps>")
    for i in range(1, 400):
        syms.add_symbol(f"s{i}")
    f.set_input_symbols(syms)
    assert S._body_offset(f.write_to_string()) is None
    assert_table(core.arc_table(f), arcs, final, f.start())


def test_empty_and_arcless_machines():
    assert core.arc_table(core.new_fst()).num_states == 0
    f = core.new_fst()
    f.add_state()
    f.set_start(0)
    f.set_final(0, core.weight(0.5))
    t = core.arc_table(f)
    assert t.num_arcs == 0 and t.final.tolist() == [0.5]


@pytest.mark.parametrize("n", [1, 200])
def test_reference_and_compiled_agree_on_a_composition(n):
    a = pynini.accep("ab" * n, arc_type="log64")
    b = pynini.closure(pynini.union("a", "b"), 0).optimize()
    c = pynini.compose(a, pynini.arcmap(b, map_type="to_log64")) if b.arc_type() != "log64" \
        else pynini.compose(a, b)
    t, r = core.arc_table(c), core.arc_table_reference(c)
    for x, y in zip((t.src, t.dst, t.ilabel, t.olabel, t.weight, t.final),
                    (r.src, r.dst, r.ilabel, r.olabel, r.weight, r.final)):
        np.testing.assert_array_equal(x, y)
