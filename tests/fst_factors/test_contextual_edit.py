import itertools

import numpy as np
import pytest

from fst_factors.transducers.contextual_edit import ContextSpec, build_structure, compile_fst
from fst_factors.wfsa import compose, log_partition, string_acceptor
from tests.fst_factors.contextual_edit_oracles import exact_logz, random_theta, tiny_info

SPECS = [ContextSpec(), ContextSpec(0, 0, 0, False), ContextSpec(1, 0, 1, True),
         ContextSpec(0, 1, 0, False), ContextSpec(1, 2, 1, True), ContextSpec(0, 2, 0, False)]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("boundary", [False, True])
def test_locally_normalised(spec, boundary):
    """For every input string, Σ_y p(y|x) = 1 (total weight of x ∘ T)."""
    st = build_structure(tiny_info(2, boundary), spec)
    fst = compile_fst(st, random_theta(st, 1, 1.5))
    alphabet = [1, 2, 3] if boundary else [1, 2]
    for L in range(4):
        for x in itertools.product(alphabet, repeat=L):
            z = exact_logz(compose(string_acceptor(x), fst))
            assert abs(z) < 1e-8, (x, z)


def test_normalised_after_pruning():
    st = build_structure(tiny_info(2), ContextSpec())
    fst = compile_fst(st, random_theta(st, 2, 3.0), prune=0.05)
    for x in [(), (1,), (2, 1, 2)]:
        assert abs(exact_logz(compose(string_acceptor(x), fst))) < 1e-8


def test_right_window_two_sees_two_segments_ahead():
    """With a right window of 2 the edit of x_i can depend on x_{i+2}: a large weight on
    the pair features "delete 1 when the segment after next is 2" (over a copy-biased
    base) deletes the first 1 of 1·1·2 but not of 1·1·1. A window-1 structure has no
    such features."""
    st = build_structure(tiny_info(2), ContextSpec(0, 2, 0, False))
    nk1 = int(round(np.sqrt(st.dims[3])))  # K = k1·nk1 + k2; class of '2' is 1
    th = np.zeros(st.num_features)
    for j, name in enumerate(st.feature_names):
        if name in (("cont",), ("copy",)):
            th[j] = 8.0
        elif name[0] == "del_xR2" and name[1] == 1 and name[2] % nk1 == 1:
            th[j] = 16.0
    fst = compile_fst(st, th)

    def p(x, y):
        return np.exp(log_partition(compose(compose(string_acceptor(x), fst),
                                            string_acceptor(y))))

    assert p((1, 1, 2), (1, 2)) > 0.9  # the first 1 sees the 2 two segments ahead
    assert p((1, 1, 1), (1, 1, 1)) > 0.9 and p((1, 1, 1), (1, 1)) < 0.01
    assert p((1, 2), (1, 2)) > 0.9  # the 2 right after the 1 is not the trigger
    w1 = build_structure(tiny_info(2), ContextSpec(0, 1, 0, False))
    assert not any(n[0].endswith("2") for n in w1.feature_names)


def _per_arc_fst(st, theta, ids=False, drop_last_final=False):
    """The reference: the WFST of compile_fst added arc by arc through pynini."""
    import pynini

    from fst_factors.wfsa.core import new_fst, weight

    w, fin = st.arc_weights(st.log_probs(theta))
    f = new_fst()
    f.add_states(st.num_states + (1 if ids else 0))
    f.set_start(st.start)
    for a in np.flatnonzero(np.isfinite(w)).tolist():
        il = a + 1 if ids else int(st.ilabel[a])
        f.add_arc(int(st.src[a]), pynini.Arc(il, int(st.olabel[a]), weight(w[a]),
                                             int(st.dst[a])))
    finals = np.flatnonzero(np.isfinite(fin)).tolist()
    if drop_last_final:
        finals = finals[:-1]
    for s in finals:
        if ids:
            f.add_arc(s, pynini.Arc(st.num_arcs + 1 + s, 0, weight(fin[s]), st.num_states))
        else:
            f.set_final(s, weight(fin[s]))
    if ids:
        f.set_final(st.num_states, weight(0.0))
    return pynini.arcsort(f, sort_type="olabel" if ids else "ilabel")


def _arcs(fst):
    from fst_factors.wfsa.core import arc_table

    t = arc_table(fst)
    return (t.num_states, t.start, t.src.tolist(), t.dst.tolist(), t.ilabel.tolist(),
            t.olabel.tolist(), np.round(t.weight, 12).tolist(),
            np.round(np.where(np.isfinite(t.final), t.final, 1e300), 12).tolist())


@pytest.mark.parametrize("ids", [False, True])
def test_array_built_fst_equals_per_arc_reference(ids):
    """compile_fst builds from arrays; the same arcs, order and finals as adding them one
    by one; a reference missing one final fails."""
    st = build_structure(tiny_info(), ContextSpec(1, 1, 1, True))
    theta = random_theta(st, 3, 1.0)
    got = _arcs(compile_fst(st, theta, ids=ids))
    assert got == _arcs(_per_arc_fst(st, theta, ids))
    assert got != _arcs(_per_arc_fst(st, theta, ids, drop_last_final=True))
