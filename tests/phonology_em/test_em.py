import json

import numpy as np

from strgm.datasets.paradigm import Paradigm
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.em import train_phonology
from fst_factors.contextual_edit import ContextSpec

# single-morpheme words, exact BP: log-evidence is the exact marginal log-likelihood
PAIRS = [(("A",), "ab"), (("B",), "ba"), (("C",), "aab"), (("D",), "b")]


def _model():
    from strgm.alphabet import Alphabet

    return PhonologyEditModel(Alphabet(["a", "b"]), ContextSpec(1, 1, 0, False),
                              {"context": "exact", "right_context": "exact",
                               "output_context": "exact", "max_sub_distance": None})


def test_em_objective_never_decreases(tmp_path):
    para = Paradigm.from_pairs(PAIRS)
    m0 = _model().initial(0.9)
    ck = tmp_path / "ck.json"
    r = train_phonology(para, method="bp", em_iters=4, l2=0.5, tol=0.0, model=m0,
                        checkpoint=str(ck))
    obj = [e["objective"] for e in r.trace]
    assert len(obj) == 5
    assert all(b >= a - 1e-7 for a, b in zip(obj, obj[1:])), obj
    assert obj[-1] > obj[0] + 0.1
    # resume from the checkpoint reproduces the continuation
    saved = json.loads(ck.read_text())
    assert saved["iteration"] == 4
    r2 = train_phonology(para, method="bp", em_iters=4, l2=0.5, tol=0.0, resume=str(ck))
    assert np.allclose(r2.model.theta, r.model.theta)


def test_save_load_roundtrip(tmp_path):
    m = _model().initial(0.9)
    m = m.with_theta(m.theta + np.random.default_rng(0).normal(0, 0.1, len(m.theta)))
    p = tmp_path / "m.json"
    m.save(str(p))
    m2 = PhonologyEditModel.load(str(p))
    assert np.allclose(m2.theta, m.theta)
