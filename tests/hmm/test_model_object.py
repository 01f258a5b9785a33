"""``load_model`` of an HMM model file gives an :class:`HMMModel`: the posterior and the
training summary under their names, a short repr, and (deprecated) tuple unpacking."""

import dataclasses
import warnings

import numpy as np
import pytest

from strgm.hmm.data import UNK
from strgm.hmm.emissions import Categorical
from strgm.hmm.model import HMM, HMMPosterior
from strgm.hmm.model_file import HMMModel, load_model, save_model
from strgm.hmm.settings import HMMSettings

VOCAB = tuple("abcdefghijklmnopqrstuvwxyzæøåðþ") + (UNK,)
L = 12


def _posterior(samples: int = 20) -> HMMPosterior:
    rng = np.random.default_rng(0)
    em = Categorical(len(VOCAB), 0.1)
    hmms = tuple(HMM(rng.dirichlet(np.ones(L)), rng.dirichlet(np.ones(L), size=L),
                     rng.uniform(0.2, 0.6, L),
                     {"theta": rng.dirichlet(np.ones(len(VOCAB)), size=L)}, em)
                 for _ in range(samples))
    return HMMPosterior(hmms, VOCAB, HMMSettings(L=L))


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "m.json"
    save_model(path, _posterior(), {"iterations": 300, "burn_in": 100, "thin": 10})
    return path


def test_load_model_gives_a_named_object(model_file):
    m = load_model(model_file)
    assert isinstance(m, HMMModel) and not isinstance(m, tuple)
    assert isinstance(m.posterior, HMMPosterior) and len(m.posterior.samples) == 20
    assert m.training == {"iterations": 300, "burn_in": 100, "thin": 10}
    assert m.vocab == VOCAB
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.training = {}


def test_repr_is_short_and_says_what_it_is(model_file):
    m = load_model(model_file)
    text = repr(m)
    assert text == "HMMModel(states=12, symbols=32, samples=20, iterations=300)"
    # control: the tuple load_model used to give prints every sample's arrays
    long_form = repr([(h.p0, h.P, h.params) for h in m.posterior.samples])
    assert len(long_form) > 10_000 and len(text) <= 200


def test_unpacking_still_works_but_is_deprecated(model_file):
    with pytest.warns(DeprecationWarning, match=r"\.posterior and \.training"):
        posterior, training = load_model(model_file)
    assert isinstance(posterior, HMMPosterior) and training["iterations"] == 300


def test_attribute_use_warns_nothing(model_file):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_model(model_file)
        assert m.posterior.vocab == VOCAB
