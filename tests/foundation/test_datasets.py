import os

import pytest

from strgm.alphabet import Alphabet, segment
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


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_paradigm_tsv(str(tmp_path / "nope.tsv"))
    p = tmp_path / "latin1.tsv"
    p.write_bytes("R1\tk\xe6t\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_paradigm_tsv(str(p))


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
