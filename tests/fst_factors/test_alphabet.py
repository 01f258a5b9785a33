import pytest

from fst_factors.alphabet import Alphabet, segment
from fst_factors.errors import InputError, UnknownSymbolError


@pytest.mark.parametrize("text,expected", [
    ("tʃʰaːt͡ʃ", ("t", "ʃʰ", "aː", "t͡ʃ")),
    ("kʷẽ", ("kʷ", "ẽ")),  # combining tilde (decomposed input) joins its base
    ("ɡræbɪŋ", ("ɡ", "r", "æ", "b", "ɪ", "ŋ")),
    ("t s a", ("t", "s", "a")),  # pre-segmented
    ("ts a", ("ts", "a")),
    ("", ()),
    ("pʼa", ("pʼ", "a")),  # ejective modifier letter
])
def test_segment(text, expected):
    assert segment(text) == expected


def test_nfc_normalisation_makes_precomposed_and_decomposed_equal():
    assert segment("e\u0303") == segment("\u1ebd")


def test_encode_decode_roundtrip_and_unknown_symbol():
    a = Alphabet.from_words(["kæts", "dɔɡz"], boundary="+")
    labels = a.encode("kæts")
    assert a.join(labels) == "kæts"
    assert a.boundary_label == a.size and a.symbol(a.size) == "+"
    with pytest.raises(UnknownSymbolError) as e:
        a.encode("kʷæt", where="word 3")
    assert "kʷ" in str(e.value) and "word 3" in str(e.value)


def test_spaced_join_for_multiletter_segments():
    a = Alphabet(["ts", "a"])
    assert a.join(a.encode("ts a")) == "ts a"


def test_invalid_alphabets():
    with pytest.raises(InputError):
        Alphabet(["a", "a"])
    with pytest.raises(InputError):
        Alphabet(["a"], boundary="a")
    with pytest.raises(InputError):
        Alphabet(["a b"])


def test_symbol_table_and_json_roundtrip():
    a = Alphabet(["a", "b"], boundary="#")
    st = a.symbol_table()
    assert st.find("a") == 1 and st.find("#") == 3 and st.find("<eps>") == 0
    assert Alphabet.from_dict(a.to_dict()) == a


@pytest.mark.parametrize("ch,phrase", [
    ("\ufeff", "a byte-order mark U+FEFF"),
    ("\x07", "the control character U+0007"),
    ("\u200d", "the invisible format character U+200D"),
    ("\u2028", "the line/paragraph separator U+2028"),
])
def test_describe_char_names_the_character(ch, phrase):
    from fst_factors.alphabet import describe_char

    text = describe_char(ch)
    assert text.startswith(phrase)
    assert ("control" in text) == (ch == "\x07")
