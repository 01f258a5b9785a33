"""Any pynini.Fst as a factor: pynini's own cdrewrite rules (byte labels, or a symbol
table in another order than the alphabet's) give the beliefs of the equivalent
strgm-built rules; labels that do not map are errors naming them."""

import math

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
import fst_factors.wfsa as W
from fst_factors.alphabet import Alphabet
from strgm.errors import GraphError, InputError, UnknownSymbolError
from strgm.graph import FactorGraph
from strgm.inference import infer

A = Alphabet(["a", "b", "d", "i", "p", "t"])
P_SYMBOLS = {"a": 0.1, "b": 0.3, "d": 0.05, "i": 0.1, "p": 0.2, "t": 0.1}
P_STOP = 0.15
#: a table listing the symbols in another order than A, with one A lacks
TABLE_SYMBOLS = ["<eps>", "t", "p", "ʒ", "i", "d", "b", "a"]


def table() -> pynini.SymbolTable:
    st = pynini.SymbolTable()
    for s in TABLE_SYMBOLS:
        st.add_symbol(s)
    return st


def strgm_factors():
    """Final devoicing d -> t / _ #, then b -> p / _ t, built by strgm; the unigram prior."""
    lab = A.label
    dev = ff.Rule(target=((lab("d"),),), replacement=(lab("t"),), at_end=True)
    asm = ff.Rule(target=((lab("b"),),), replacement=(lab("p"),), right=((lab("t"),),))
    prior = W.unigram_acceptor(np.log([P_SYMBOLS[s] for s in A.symbols]), math.log(P_STOP))
    return prior, ff.rule_cascade([dev], A.size), ff.rule_cascade([asm], A.size)


def pynini_factors():
    """The same in plain pynini: a tropical byte-labelled prior, a byte-labelled
    cdrewrite rule, and a cdrewrite rule compiled with (and carrying) a symbol table."""
    prior = pynini.concat(
        pynini.union(*[pynini.accep(s, weight=-math.log(p)) for s, p in P_SYMBOLS.items()])
        .closure(), pynini.accep("", weight=-math.log(P_STOP)))
    dev = pynini.cdrewrite(pynini.cross("d", "t"), "", "[EOS]",
                           pynini.union(*"abdipt").closure())
    st = table()

    def acc(s):
        return pynini.accep(s, token_type=st)

    asm = pynini.cdrewrite(pynini.cross(acc("b"), acc("p")), "", acc("t"),
                           pynini.union(*[acc(s) for s in "abdipt"]).closure())
    asm.set_input_symbols(st)
    asm.set_output_symbols(st)
    return prior, dev, asm


def graph(prior, dev, asm, observed="apt") -> FactorGraph:
    g = FactorGraph(A)
    g.add_variable("M")
    g.add_variable("I")
    g.add_variable("S", observed=observed)
    g.add_unary("prior", "M", prior)
    g.add_binary("devoice", "M", "I", dev)
    g.add_binary("assimilate", "I", "S", asm)
    return g


@pytest.mark.parametrize("observed", ["apt", "tipt"])
def test_pynini_rules_give_the_beliefs_of_the_strgm_built_rules(observed):
    ours = infer(graph(*strgm_factors(), observed=observed), "bp")
    theirs = infer(graph(*pynini_factors(), observed=observed), "bp")
    for v in ("M", "I"):
        want, got = ours.belief(v).kbest(10), theirs.belief(v).kbest(10)
        assert len(want) >= 2 and len({p for _, p in want}) >= 2  # not a flat belief
        assert [s for s, _ in got] == [s for s, _ in want]
        # the pynini prior's weights are float32 (tropical): agreement to ~1e-8
        assert [p for _, p in got] == pytest.approx([p for _, p in want], rel=1e-6)


def test_symbol_table_maps_by_name_not_by_number():
    """The table numbers b as 6 and p as 2; A numbers them 2 and 5."""
    st = table()
    f = pynini.cross(pynini.accep("b", token_type=st), pynini.accep("p", token_type=st))
    out = ff.to_alphabet(f, A, symbols=st)
    arcs = [(a.ilabel, a.olabel) for s in out.states() for a in out.arcs(s)]
    assert arcs == [(A.label("b"), A.label("p"))]
    assert out.arc_type() == "log64" and out.input_symbols() is None
    # without the table the numbers are taken as the alphabet's: b -> p reads d -> b
    bare = ff.to_alphabet(f, A)
    assert [(a.ilabel, a.olabel) for s in bare.states() for a in bare.arcs(s)] == [(6, 2)]


def test_unmapped_byte_labels_are_named():
    g = graph(*strgm_factors())
    rule = pynini.cdrewrite(pynini.cross("x", "t"), "", "", pynini.union(*"abdiptx").closure())
    with pytest.raises(InputError, match=r"factor 'x': label 120 'x' is not the code "
                                         r"point of a one-character alphabet symbol"):
        g.add_binary("x", "M", "I", rule)
    assert "x" not in g.factors


def test_unmapped_table_symbols_are_named():
    st = table()
    f = pynini.cross(pynini.accep("ʒ", token_type=st), pynini.accep("d", token_type=st))
    f.set_input_symbols(st)
    f.set_output_symbols(st)
    with pytest.raises(UnknownSymbolError, match="'ʒ'.*input symbol table of factor 'z'"):
        graph(*strgm_factors()).add_binary("z", "M", "I", f)
    stray = pynini.accep("a", token_type=st)
    stray.add_arc(stray.start(), pynini.Arc(42, 42, pynini.Weight.one("tropical"),
                                            stray.start()))
    with pytest.raises(InputError, match="input label 42 has no symbol in its symbol table"):
        ff.to_alphabet(stray, A, symbols=st)
    used_only = pynini.accep("a b", token_type=st)  # ʒ in the table but unused: fine
    used_only.set_input_symbols(st)
    used_only.set_output_symbols(st)
    assert ff.to_alphabet(used_only, A).num_states() == 3


def test_multi_character_segments_need_a_symbol_table():
    ipa = Alphabet(["a", "i", "t", "t͡ʃ"])
    with pytest.raises(InputError, match="multi-character symbols such as 't͡ʃ' cannot be "
                                         "byte/UTF-8 labels"):
        ff.to_alphabet(pynini.accep("at͡ʃi", token_type="utf8"), ipa)
    with pytest.raises(InputError, match="token_type='utf8'"):
        ff.to_alphabet(pynini.accep("aʃ"), Alphabet(["a", "ʃ"]))  # bytes of ʃ
    assert ff.to_alphabet(pynini.accep("aʃ", token_type="utf8"),
                          Alphabet(["a", "ʃ"])).num_states() == 3
    st = pynini.SymbolTable()
    for s in ["<eps>", "t͡ʃ", "a", "i"]:
        st.add_symbol(s)
    out = ff.to_alphabet(pynini.accep("a t͡ʃ i", token_type=st), ipa, symbols=st)
    assert W.kbest(out, 2)[0][0] == ipa.encode("at͡ʃi")


def test_ambiguous_labels_are_refused_and_resolved_by_the_caller():
    """94 printable symbols: 'A' (65) is both the code point of A and label 65 ('a')."""
    printable = Alphabet([chr(c) for c in range(33, 127)])
    f = pynini.accep("AB")
    with pytest.raises(InputError, match="labels='alphabet' or labels='text'"):
        ff.to_alphabet(f, printable)
    as_text = ff.to_alphabet(f, printable, labels="text")
    as_labels = ff.to_alphabet(f, printable, labels="alphabet")
    assert printable.join(W.kbest(as_text, 1)[0][0]) == "AB"
    assert printable.join(W.kbest(as_labels, 1)[0][0]) == "ab"


def test_forced_modes_and_bad_arguments():
    rule = pynini.cdrewrite(pynini.cross("d", "t"), "", "", pynini.union(*"adt").closure())
    with pytest.raises(InputError, match=r"labels 97 'a', 100 'd', 116 't' are outside "
                                         r"the alphabet \(labels 1..6\)"):
        ff.to_alphabet(rule, A, labels="alphabet")
    with pytest.raises(InputError, match="no symbol table"):
        ff.to_alphabet(rule, A, labels="symbols")
    with pytest.raises(InputError, match="labels must be one of"):
        ff.to_alphabet(rule, A, labels="bytes")
    with pytest.raises(GraphError, match="expected a pynini.Fst, got str"):
        graph(*strgm_factors()).add_binary("s", "M", "I", "d -> t")
    bare = pynini.accep("a", token_type=table())  # label 7: neither labels nor text
    with pytest.raises(InputError, match=r"label 7 is not .*nor alphabet labels 1..6, and the "
                                         "FST has no symbol table"):
        ff.to_alphabet(bare, A)


def test_fst_files_with_byte_labels_load(tmp_path):
    path = tmp_path / "devoice.fst"
    pynini.cdrewrite(pynini.cross("d", "t"), "", "[EOS]",
                     pynini.union(*"abdipt").closure()).write(str(path))
    g = FactorGraph(A)
    g.add_variable("M")
    g.add_variable("S", observed="bat")
    g.add_unary("prior", "M", strgm_factors()[0])
    g.add_fst_file("devoice", str(path), "M", "S")
    got = dict(infer(g, "bp").belief("M").kbest(5))
    assert got.keys() == {"bad", "bat"}
    assert got["bad"] / got["bat"] == pytest.approx(P_SYMBOLS["d"] / P_SYMBOLS["t"])
