"""Arc tables remembered by from_arc_table(remember=True) (fst_factors.wfsa.known_tables): the
remembered table equals what reading the automaton gives, bit for bit; it is used only for
that very object; and a lookup without the state-count check is shown to serve a
machine modified in place (against the contract) its old table."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fst_factors.wfsa import core
from fst_factors.wfsa.known_tables import KNOWN, KnownTables


def arrays(rng, n, m):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    lab = rng.integers(1, 50, m)
    w = rng.choice([0.0, -2.5, 1e-300, 700.0, 3.0], m) + rng.normal(size=m)
    final = np.where(rng.random(n) < 0.4, rng.normal(size=n), np.inf)
    return src, dst, lab, w, final


def assert_same(a, b):
    assert (a.num_states, a.start) == (b.num_states, b.start)
    for x, y in zip((a.src, a.dst, a.ilabel, a.olabel, a.weight, a.final),
                    (b.src, b.dst, b.ilabel, b.olabel, b.weight, b.final)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)  # bit for bit, in OpenFst's arc order


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(0, 200))
def test_the_remembered_table_is_what_reading_the_machine_gives(seed, n, m):
    rng = np.random.default_rng(seed)
    src, dst, lab, w, final = arrays(rng, n, m)
    olab = rng.integers(0, 50, m)
    f = core.from_arc_table(n, int(rng.integers(n)), src, dst, lab, olab, w, final,
                            remember=True)
    hits = KNOWN.hits
    t = core.arc_table(f)
    assert KNOWN.hits == hits + 1  # served from memory, not read
    assert_same(t, core.arc_table_reference(f))
    assert core.num_arcs(f) == m == sum(f.num_arcs(s) for s in f.states())
    with pytest.raises(ValueError):  # read-only: no reader can change a later one's
        t.weight[:1] = 0.0


def test_only_that_object_is_served_and_a_changed_machine_is_read_again():
    rng = np.random.default_rng(0)
    src, dst, lab, w, final = arrays(rng, 6, 12)
    f = core.from_arc_table(6, 0, src, dst, lab, lab, w, final, remember=True)
    plain = core.from_arc_table(6, 0, src, dst, lab, lab, w, final)
    hits = KNOWN.hits
    core.arc_table(plain)
    core.arc_table(f.copy())  # an equal machine, another object
    assert KNOWN.hits == hits
    f.add_state()  # modified in place (against the contract): caught by its state count
    t = core.arc_table(f)
    assert KNOWN.hits == hits and t.num_states == 7
    assert_same(t, core.arc_table_reference(f))


def test_first_in_first_out():
    memo = KnownTables(capacity=2)
    rng = np.random.default_rng(1)
    fs = []
    for _ in range(3):
        src, dst, lab, w, final = arrays(rng, 4, 5)
        f = core.from_arc_table(4, 0, src, dst, lab, lab, w, final)
        memo.remember(f, core.arc_table(f))
        fs.append(f)
    assert memo.get(fs[0]) is None
    assert memo.get(fs[1]) is not None and memo.get(fs[2]) is not None


class _Unchecked(KnownTables):
    """Broken on purpose: trusts the entry without comparing the state count."""

    def get(self, fst):
        hit = self._entries.get(id(fst))
        return None if hit is None or hit[0] is not fst else hit[1]


@pytest.mark.parametrize("memo, stale", [(KnownTables(), False), (_Unchecked(), True)])
def test_control_an_unchecked_lookup_serves_a_modified_machines_old_table(memo, stale):
    rng = np.random.default_rng(2)
    src, dst, lab, w, final = arrays(rng, 5, 8)
    f = core.from_arc_table(5, 0, src, dst, lab, lab, w, final)
    memo.remember(f, core.arc_table_reference(f))
    f.add_state()
    t = memo.get(f)
    assert (t is not None and t.num_states != f.num_states()) == stale
