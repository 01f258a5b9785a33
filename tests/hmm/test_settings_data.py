"""Settings and data readers of strgm.hmm: every bad value is a one-line error naming it."""

import numpy as np
import pytest

from strgm.errors import InputError, OptionError
from strgm.hmm import HMMSettings
from strgm.hmm.data import UNK, Sequences, build_vocab, encode, read_symbol_file, \
    read_vector_file


@pytest.mark.parametrize("kw,name", [({"L": 1}, "L"), ({"alpha": -1.0}, "alpha"),
                                     ({"gamma": 0.0}, "gamma"), ({"kappa": -2.0}, "kappa"),
                                     ({"eta": float("nan")}, "eta"), ({"model": "x"}, "model"),
                                     ({"b_alpha": 0.0}, "b_alpha")])
def test_bad_settings(kw, name):
    with pytest.raises(OptionError) as e:
        HMMSettings(**kw)
    assert name in str(e.value) and "\n" not in str(e.value)


def test_lt_with_zero_scale_needs_fixed_hypers():
    with pytest.raises(InputError, match="lam"):
        HMMSettings(model="lt", lam=0.0)
    HMMSettings(model="lt", lam=0.0, sample_hypers=False)


def test_settings_round_trip_and_unknown_key():
    s = HMMSettings(model="sticky", L=7, kappa=2.0)
    assert HMMSettings.from_dict(s.to_dict()) == s
    with pytest.raises(InputError, match="unknown HMM setting 'zzz'"):
        HMMSettings.from_dict({**s.to_dict(), "zzz": 1})


def test_symbol_file_ipa_and_tokens(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("t͡ʃaːt\nAH0 B\n")
    assert read_symbol_file(p) == [("t͡ʃ", "aː", "t"), ("AH0", "B")]


def test_unseen_tokens_are_unk_and_counted():
    vocab = build_vocab([("a", "b")])
    assert vocab == ("a", "b", UNK)
    seqs, unseen = encode([("a", "c", "d")], vocab)
    assert unseen == 2 and seqs.x.tolist() == [0, 2, 2]
    with pytest.raises(InputError, match="reserved"):
        build_vocab([(UNK,)])


def test_vector_file_errors(tmp_path):
    p = tmp_path / "v.txt"
    p.write_text("1 2\n3 4 5\n")
    with pytest.raises(InputError, match="v.txt:2"):
        read_vector_file(p)
    p.write_text("1 x\n")
    with pytest.raises(InputError, match="v.txt:1"):
        read_vector_file(p)
    p.write_text("\n\n")
    with pytest.raises(InputError, match="no sequences"):
        read_vector_file(p)


def test_sequences_batches_cover_every_token():
    s = Sequences.from_list([np.array([1, 2]), np.array([3]), np.array([4, 5])])
    seen = np.concatenate([pos.ravel() for _, _, pos in s.batches()])
    assert sorted(seen) == list(range(5))
    src, dst = s.transitions()
    assert list(zip(src, dst)) == [(0, 1), (3, 4)]
    with pytest.raises(InputError, match="sequence 2 is empty"):
        Sequences.from_list([np.array([1]), np.array([], dtype=int)])
