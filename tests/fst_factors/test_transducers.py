import math

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
import fst_factors.wfsa as W
from fst_factors.alphabet import Alphabet
from fst_factors.errors import InputError, UnknownSymbolError


def edit_prob_dp(u, s, n, p_copy=0.99, boundary=None):
    """Independent oracle: p(s | u) of the uniform edit transducer by the edit recursion
    (a boundary input symbol is always deleted, with the consuming mass 1 - P_I)."""
    copy, sub, dele, ins = ff.EditParams(p_copy).probabilities(n)
    F = np.zeros((len(u) + 1, len(s) + 1))
    F[0, 0] = 1.0
    for i in range(len(u) + 1):
        for j in range(len(s) + 1):
            if j + 1 <= len(s):
                F[i, j + 1] += F[i, j] * ins
            if i < len(u) and u[i] == boundary:
                F[i + 1, j] += F[i, j] * (1 - n * ins)
                continue
            if i < len(u):
                F[i + 1, j] += F[i, j] * dele
                if j < len(s):
                    F[i + 1, j + 1] += F[i, j] * (copy if u[i] == s[j] else sub)
    return F[len(u), len(s)] * (1 - n * ins)


@pytest.mark.parametrize("u", [(), (1,), (1, 2), (2, 2, 1)])
def test_edit_transducer_is_normalised_per_input(u):
    t = ff.edit_transducer(3)
    out = pynini.project(W.compose(W.string_acceptor(u), t), "output")
    assert W.log_partition(out) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("u,s", [((1, 2), (1, 2)), ((1, 2), (2,)), ((), (3, 3)), ((1,), ())])
def test_edit_transducer_matches_edit_recursion(u, s):
    t = ff.edit_transducer(3)
    got = W.string_logweight(pynini.project(W.compose(W.string_acceptor(u), t), "output"), s)
    assert got == pytest.approx(math.log(edit_prob_dp(u, s, 3)), abs=1e-9)


def test_boundary_is_deleted_with_consuming_mass():
    t = ff.edit_transducer(2, boundary_label=3)
    out = pynini.project(W.compose(W.string_acceptor((1, 3, 2)), t), "output")
    assert W.log_partition(out) == pytest.approx(0.0, abs=1e-9)
    for s in [(1, 2), (2,), (1, 1, 2)]:
        assert W.string_logweight(out, s) == pytest.approx(
            math.log(edit_prob_dp((1, 3, 2), s, 2, boundary=3)), abs=1e-9)


def test_prior_is_a_distribution_with_geometric_length():
    p = ff.geometric_unigram_prior(3, mean_length=2.0, unigram=[2, 1, 1])
    assert W.log_partition(p) == pytest.approx(0.0, abs=1e-9)
    p_stop = 1 / 3
    assert W.string_logweight(p, (1,)) == pytest.approx(
        math.log(p_stop * (1 - p_stop) * 0.5), abs=1e-12)
    with pytest.raises(InputError):
        ff.geometric_unigram_prior(3, mean_length=-1)


def test_concat_messages_match_enumeration():
    m1 = W.weighted_strings({(1,): 0.0, (1, 2): 1.0})
    m2 = W.weighted_strings({(2,): 0.5, (): 2.0})
    whole = ff.concat_acceptors([m1, m2], boundary_label=3)
    dist = {s: math.exp(lw) for s, lw in W.kbest(whole, 10)}
    want = {(1, 3, 2): math.exp(-0.5), (1, 3): math.exp(-2.0),
            (1, 2, 3, 2): math.exp(-1.5), (1, 2, 3): math.exp(-3.0)}
    assert dist.keys() == want.keys()
    for s in want:
        assert dist[s] == pytest.approx(want[s])
    # message to part 0 given μ_W and μ_2: μ(m) = Σ_x μ_W(m · b · x) μ_2(x)
    mu_w = W.weighted_strings({(1, 3, 2): 0.0, (2, 3): 1.0, (1, 3, 1): 0.3})
    t0 = ff.concat_context_transducer([None, m2], 0, 3, boundary_label=3)
    msg = pynini.project(W.compose(t0, mu_w), "input")
    got = {s: math.exp(lw) for s, lw in W.kbest(msg, 10)}
    assert got.keys() == {(1,), (2,)}
    assert got[(1,)] == pytest.approx(math.exp(-0.5))
    assert got[(2,)] == pytest.approx(math.exp(-1.0 - 2.0))


def test_rule_cascade_final_devoicing_and_assimilation():
    a = Alphabet(["a", "b", "d", "p", "t"])
    lab = a.label
    devoice = ff.Rule(target=((lab("d"),), ), replacement=(lab("t"),), at_end=True,
                      name="final devoicing")
    t = ff.rule_cascade([devoice], a.size)

    def apply(word):
        out = pynini.project(W.compose(W.string_acceptor(a.encode(word)), t), "output")
        return [a.join(s) for s, _ in W.kbest(out, 3)]
    assert apply("bad") == ["bat"]
    assert apply("dab") == ["dab"]
    assert apply("dad") == ["dat"]


def test_load_fst_file_remaps_symbols_and_checks_them(tmp_path):
    st = pynini.SymbolTable()
    for i, s in enumerate(["<eps>", "x", "b", "a"]):
        st.add_symbol(s, i)
    f = pynini.Fst()  # tropical: converted to log64
    f.add_states(2)
    f.set_start(0)
    f.set_final(1)
    f.add_arc(0, pynini.Arc(3, 2, pynini.Weight("tropical", 0.5), 1))  # a -> b
    f.set_input_symbols(st)
    f.set_output_symbols(st)
    path = str(tmp_path / "rule.fst")
    f.write(path)
    alph = Alphabet(["a", "b", "x"])
    g = ff.load_fst_factor(path, alph)
    assert g.arc_type() == "log64"
    arc = next(iter(g.arcs(0)))
    assert (arc.ilabel, arc.olabel) == (alph.label("a"), alph.label("b"))
    assert float(arc.weight.to_string()) == pytest.approx(0.5)
    with pytest.raises(UnknownSymbolError, match="'a'"):  # unused table symbols are fine
        ff.load_fst_factor(path, Alphabet(["b", "x"]))
    with pytest.raises(InputError, match="missing.fst.*not found"):
        ff.load_fst_factor(str(tmp_path / "missing.fst"), alph)
    bare = pynini.Fst()
    bare.add_states(2)
    bare.set_start(0)
    bare.set_final(1)
    bare.add_arc(0, pynini.Arc(9, 9, pynini.Weight.one("tropical"), 1))
    bare.write(str(tmp_path / "bare.fst"))
    with pytest.raises(InputError, match="label 9"):
        ff.load_fst_factor(str(tmp_path / "bare.fst"), alph)


def _header_end(blob: bytes) -> int:
    """Offset of the int64 state count in an OpenFst binary header."""
    import struct

    pos = 4
    for _ in range(2):
        (n,) = struct.unpack_from("<i", blob, pos)
        pos += 4 + n
    return pos + 4 + 4 + 8 + 8  # version, flags, properties, start


def test_load_fst_refuses_huge_headers_and_bad_arc_types_cleanly(tmp_path):
    """A header claiming 10^15 states is an InputError (OpenFst would abort with
    std::bad_alloc); a damaged arc type is named."""
    import struct

    alph = Alphabet(["a", "b"])
    good = tmp_path / "good.fst"
    ff.edit_transducer(2).write(str(good))
    blob = good.read_bytes()
    at = _header_end(blob)
    huge = tmp_path / "huge.fst"
    huge.write_bytes(blob[:at] + struct.pack("<q", 10 ** 15) + blob[at + 8:])
    with pytest.raises(InputError, match="huge.fst.*10{15}|huge.fst.*1000000000000000"):
        ff.load_fst_factor(str(huge), alph)
    odd = tmp_path / "odd.fst"
    # same length arc-type name, different type: "log64" -> "lxg64"
    odd.write_bytes(blob.replace(b"log64", b"lxg64", 1))
    with pytest.raises(InputError, match="odd.fst.*arc type 'lxg64'"):
        ff.load_fst_factor(str(odd), alph)
    assert ff.load_fst_factor(str(good), alph).num_states() == 1
