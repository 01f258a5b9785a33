import os

import pytest

from fst_factors.alphabet import Alphabet, segment
from strgm.datasets.cmudict_paradigm import arpabet_to_ipa, english_paradigm
from strgm.datasets.paradigm import (Paradigm, read_paradigm, read_paradigm_csv,
                                     read_paradigm_tsv)
from strgm.errors import InputError

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data",
                      "phonology")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_tsv_reader_comments_unknown_and_words(tmp_path):
    path = write(tmp_path, "p.tsv", "# comment\nR1\tkæt\nR1 PL\tkæts\n\nR1 GEN\t?\nR2 PL\n")
    p = read_paradigm_tsv(path)
    assert [e.key for e in p.entries] == ["R1", "R1 PL", "R1 GEN", "R2 PL"]
    assert p.entries[2].surface is None and p.entries[3].surface is None
    assert p.morphemes == ["R1", "PL", "GEN", "R2"]
    assert p.entries[1].line == 3


@pytest.mark.parametrize("text,match", [
    ("R1\tkæt\textra\n", r"p.tsv:1: .*3 tab-separated fields"),
    ("\tkæt\n", r"p.tsv:1: no morpheme labels"),
    ("R1\t\n", r"p.tsv:1: empty surface form"),
    ("R1\tkæt\nR1\tkat\n", r"p.tsv:2: word 'R1' listed twice \(first at line 1\)"),
    ("R1 R1\tkæt\n", r"p.tsv:1: a morpheme appears twice"),
    ("R1\tk\x07t\n", r"p.tsv:1: .*control character"),
    ("# only a comment\n\n", r"p.tsv: no words found"),
    ("", r"p.tsv: no words found"),
])
def test_tsv_reader_errors_name_file_and_line(tmp_path, text, match):
    path = write(tmp_path, "p.tsv", text)
    with pytest.raises(InputError, match=match):
        read_paradigm_tsv(path)


def test_tsv_reader_unknown_symbol_with_given_alphabet(tmp_path):
    path = write(tmp_path, "p.tsv", "R1\tkæt\nR2\tkʷæt\n")
    with pytest.raises(InputError, match=r"p.tsv:2: unknown symbol 'kʷ'"):
        read_paradigm_tsv(path, alphabet=Alphabet(["k", "æ", "t"]))


@pytest.mark.parametrize("reader,name", [(read_paradigm_tsv, "p.tsv"),
                                         (read_paradigm_csv, "p.csv")])
def test_missing_directory_and_non_utf8_files(tmp_path, reader, name):
    with pytest.raises(InputError, match=r"nope\.\w+: paradigm file not found"):
        reader(str(tmp_path / ("nope" + name[1:])))
    (tmp_path / "d").mkdir()
    with pytest.raises(InputError, match=r"d: paradigm file is a directory"):
        reader(str(tmp_path / "d"))
    p = tmp_path / name
    body = "R1\tro\nR1 PL\tk\xe6t\n" if name.endswith("tsv") else "R,R PL\nro,k\xe6t\n"
    p.write_bytes(body.encode("latin-1"))
    with pytest.raises(InputError, match=rf"{name}:2: paradigm file is not UTF-8 .*0xe6"):
        reader(str(p))


@pytest.mark.parametrize("name,body", [("b.tsv", "R1\tro\nR1 PAST\trod\n"),
                                       ("b.csv", "R,R PAST\nro,rod\n")])
def test_a_leading_byte_order_mark_is_accepted(tmp_path, name, body):
    plain, bom = tmp_path / ("plain" + name), tmp_path / name
    plain.write_text(body, encoding="utf-8")
    bom.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    a, b = read_paradigm(str(plain)), read_paradigm(str(bom))
    assert [(e.key, e.surface) for e in a.entries] == [(e.key, e.surface) for e in b.entries]
    assert a.entries[0].key in ("R1", "R01")


@pytest.mark.parametrize("text,match", [
    ("R1\tro\n\ufeffR1 PAST\trod\n", r"p.tsv:2: morpheme label .* byte-order mark U\+FEFF"),
    ("R1\tro\nR1 PAST\tro\ufeffd\n", r"p.tsv:2: surface form .* byte-order mark U\+FEFF"),
])
def test_a_byte_order_mark_inside_the_file_is_named_not_called_control(tmp_path, text,
                                                                        match):
    path = write(tmp_path, "p.tsv", text)
    with pytest.raises(InputError, match=match) as e:
        read_paradigm_tsv(path)
    assert "control" not in str(e.value)


@pytest.mark.parametrize("name,text,match", [
    ("q.tsv", "R1\t?\nR1 PL\n", r"q.tsv: none of the 2 words has a surface form"),
    ("q.csv", "R,R PL\n?,?\n", r"q.csv: none of the 2 words has a surface form"),
    ("e.csv", "", r"e.csv: no rows found"),
    ("h.csv", "R,R PL\n", r"h.csv: no words found"),
    ("n.csv", "R,R PL\nro,r\x00d\n", r"n.csv:2: .*control character U\+0000"),
    ("u.csv", 'R,R PL\nro,"rod\n', r"u.csv:2: malformed CSV"),
])
def test_files_without_observed_words_or_malformed_are_refused(tmp_path, name, text, match):
    path = write(tmp_path, name, text)
    with pytest.raises(InputError, match=match):
        read_paradigm(path)


def test_wide_csv_reader(tmp_path):
    path = write(tmp_path, "w.csv", "root,R,R PL,GEN R\ncat,kæt,kæts,\ndog,dɔɡ,?,ɪdɔɡ\n")
    p = read_paradigm(path)
    keys = {e.key: e.surface for e in p.entries}
    assert keys == {"cat": "kæt", "cat PL": "kæts", "dog": "dɔɡ", "dog PL": None,
                    "GEN dog": "ɪdɔɡ"}
    path2 = write(tmp_path, "w2.csv", "R,R PL\nkæt,kæts\n")
    assert [e.key for e in read_paradigm_csv(path2).entries] == ["R01", "R01 PL"]
    bad = write(tmp_path, "bad.csv", "R,PL\nkæt,s\n")
    with pytest.raises(InputError, match=r"bad.csv:1: .*template 'PL'"):
        read_paradigm_csv(bad)
    ragged = write(tmp_path, "r.csv", "R,R PL\nkæt\n")
    with pytest.raises(InputError, match=r"r.csv:2: expected 2 cells"):
        read_paradigm_csv(ragged)


def test_with_hidden_returns_new_paradigm():
    p = Paradigm.from_pairs([(("R1",), "ka"), (("R1", "PL"), "kas")])
    q = p.with_hidden(["R1 PL"])
    assert p.entries[1].surface == "kas" and q.entries[1].surface is None
    with pytest.raises(InputError):
        p.with_hidden(["R9"])


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
def test_all_shared_problems_read():
    files = sorted(f for f in os.listdir(SHARED) if f.endswith(".tsv"))
    assert len(files) == 8
    for f in files:
        p = read_paradigm_tsv(os.path.join(SHARED, f))
        assert len(p) > 20 and p.alphabet().size > 10


def test_arpabet_mapping_keeps_diphthongs_one_segment():
    ipa = arpabet_to_ipa(["CH", "AY1", "L", "D", "AH0"])
    assert ipa == ("t͡ʃ", "a͡ɪ", "l", "d", "ə")
    assert segment("".join(ipa)) == ipa


def test_english_paradigm_is_regular_and_reproducible():
    p = english_paradigm(12, seed=3)
    assert p == english_paradigm(12, seed=3)
    assert len(p) == 48
    forms = {e.key: segment(e.surface) for e in p.entries}
    for e in p.entries:
        if len(e.morphemes) == 1:
            bare = forms[e.key]
            past = forms[e.key + " PAST"]
            prog = forms[e.key + " PROG"]
            assert past[: len(bare)] == bare and past[len(bare):] in (("d",), ("t",),
                                                                    ("ɪ", "d"), ("ə", "d"))
            assert prog == bare + ("ɪ", "ŋ")


def test_entries_carry_their_segments_once(tmp_path):
    """Each surface is segmented when the paradigm is read; the alphabet and the model
    are built from those segments (the same as segmenting again)."""
    f = tmp_path / "p.tsv"
    f.write_text("R1\tt͡ʃaːd\nR1 PL\tt͡ʃaːdz\nR2 PL\t?\n", encoding="utf-8")
    para = read_paradigm(str(f))
    assert [e.segments for e in para.entries] == [("t͡ʃ", "aː", "d"), ("t͡ʃ", "aː", "d", "z"),
                                                  None]
    assert para.alphabet() == Alphabet.from_words(e.surface for e in para.observed)
    hidden = para.with_hidden(["R1 PL"])
    assert hidden.entries[0] is para.entries[0] and hidden.entries[1].segments is None
    assert Paradigm.from_pairs([(("R",), "ab")]).entries[0].segments == ("a", "b")
