"""EM with the E-step split over blocks of words (strgm.models.em_blocks): blocks group
words by root, one block reproduces the unsplit EM, several blocks agree with it on a
small paradigm, the counts of every block are added (a dropped block is seen), and bad
settings are one-line errors; a checkpoint records the blocks."""

import functools
import json

import numpy as np
import pytest

from strgm.datasets.paradigm import Paradigm, ParadigmEntry
from strgm.errors import InputError, OptionError
from strgm.models import em_blocks
from strgm.models.em import e_step, train_phonology
from strgm.models.em_blocks import block_e_step, word_blocks
from strgm.models.edit_model import PhonologyEditModel
from strgm.inference.block_task import nbytes

ROWS = [(("R1",), "kat"), (("R1", "PL"), "katz"), (("R1", "GEN"), "katin"),
        (("R2",), "map"), (("R2", "PL"), "maps"), (("R2", "GEN"), "mapin"),
        (("R3",), "dog"), (("R3", "PL"), "dogz"), (("R4", "PL"), "lubz"),
        (("R4", "GEN"), "lubin")]
PARADIGM = Paradigm(tuple(ParadigmEntry(m, s) for m, s in ROWS), "<test>")
OPTS = {"max_iters": 3}


def test_word_blocks_group_by_root_and_cover_every_word_once():
    blocks = word_blocks(PARADIGM, 2)
    keys = [k for b in blocks for k in b]
    assert sorted(keys) == sorted(e.key for e in PARADIGM.observed)
    root = {e.key: e.morphemes[0] for e in PARADIGM.observed}
    for b in blocks:  # a root's words are never split
        for other in blocks:
            if other is not b:
                assert not {root[k] for k in b} & {root[k] for k in other}
    assert len(word_blocks(PARADIGM, 10)) == 4  # one per root at most, empty ones dropped
    with pytest.raises(OptionError, match="blocks"):
        word_blocks(PARADIGM, 0)


def _model():
    return PhonologyEditModel(PARADIGM.alphabet().with_boundary("+")).initial()


@functools.lru_cache(maxsize=None)
def _e_step(blocks=None):
    """The initial model's E-step, unsplit (None) or over ``blocks`` blocks: computed once,
    as several tests compare with it (read only)."""
    if blocks is None:
        return e_step(_model(), PARADIGM, "pruned", OPTS)
    with block_e_step(blocks):
        return e_step(_model(), PARADIGM, "pruned", OPTS)


@pytest.mark.filterwarnings("ignore::strgm.errors.ObjectiveDecreaseWarning")
def test_one_block_reproduces_the_unsplit_em():
    """The same E-step up to the order in which messages are stored (which can break a
    tie between equally likely k-best strings otherwise) and of additions (words are
    taken root by root); the M-step's L-BFGS tolerance then bounds how far θ may
    differ."""
    c0, ll0, _, _ = _e_step()
    c1, ll1, _, _ = _e_step(1)
    np.testing.assert_allclose(c1, c0, rtol=1e-8, atol=1e-10)
    assert ll1 == pytest.approx(ll0, rel=1e-7)
    ref = train_phonology(PARADIGM, em_iters=1, infer_opts=OPTS, model=_model())
    with block_e_step(1):
        one = train_phonology(PARADIGM, em_iters=1, infer_opts=OPTS, model=_model())
    np.testing.assert_allclose(one.model.theta, ref.model.theta, atol=1e-4)
    assert [e["objective"] for e in one.trace] == \
        pytest.approx([e["objective"] for e in ref.trace], rel=1e-5)


def test_split_e_step_agrees_with_the_unsplit_one():
    c0, ll0, r0, _ = _e_step()
    c1, ll1, r1, pm = _e_step(3)
    assert ll1 == pytest.approx(ll0, rel=1e-4)  # another schedule, nearly the same point
    np.testing.assert_allclose(c1, c0, rtol=1e-4, atol=1e-4)
    for v in pm.morpheme_vars.values():
        assert r1.belief(v).kbest(1)[0][0] == r0.belief(v).kbest(1)[0][0]


def test_negative_control_a_block_whose_counts_are_dropped_is_seen(monkeypatch):
    model = _model()
    good, ll, _, _ = _e_step(3)
    real = em_blocks.SerialPool.map

    def lossy(self, fn, items, *shared, key="strgm", workers=None):
        out = real(self, fn, items, *shared, key=key, workers=workers)
        return out[:-1] if key == "strgm-counts" else out

    monkeypatch.setattr(em_blocks.SerialPool, "map", lossy)
    with block_e_step(3):
        bad, ll_bad, _, _ = e_step(model, PARADIGM, "pruned", OPTS)
    assert not np.allclose(bad, good) and ll_bad != pytest.approx(ll)


def test_bad_settings_are_one_line_option_errors():
    with block_e_step(2):
        with pytest.raises(OptionError, match="method") as e:
            train_phonology(PARADIGM, em_iters=1, method="pep", model=_model())
        assert "\n" not in str(e.value)
        with pytest.raises(OptionError, match="max_seconds"):
            train_phonology(PARADIGM, em_iters=1, infer_opts={"max_seconds": 5},
                            model=_model())
    with pytest.raises(OptionError, match="blocks"):
        with block_e_step(0):
            pass


@pytest.mark.filterwarnings("ignore::strgm.errors.ObjectiveDecreaseWarning")
def test_checkpoints_record_the_blocks(tmp_path):
    ck = tmp_path / "ck.json"
    with block_e_step(2):
        train_phonology(PARADIGM, em_iters=0, infer_opts=OPTS, model=_model(),
                        checkpoint=str(ck))
    assert json.loads(ck.read_text())["settings"]["blocks"] == 2
    with pytest.raises(InputError, match="blocks"):  # resumed without them
        train_phonology(PARADIGM, em_iters=1, infer_opts=OPTS, resume=str(ck))
    with block_e_step(3), pytest.raises(InputError, match="blocks"):
        train_phonology(PARADIGM, em_iters=1, infer_opts=OPTS, resume=str(ck))
    with block_e_step(2):
        run = train_phonology(PARADIGM, em_iters=1, infer_opts=OPTS, resume=str(ck))
    assert len(run.trace) == 2


class _ClusterLikePool(em_blocks.SerialPool):
    """Serial, but says it is distributed: the split E-step then sends recipes."""

    distributed = True


def test_on_a_cluster_theta_travels_instead_of_the_phonology_machine(monkeypatch):
    seen = []

    def spy(*args, **kwargs):
        res = em_blocks_block_jacobi(*args, **kwargs)
        seen.append((len(kwargs.get("recipes", ())), res.extra["bytes_scattered"]))
        return res

    em_blocks_block_jacobi = em_blocks.block_jacobi
    monkeypatch.setattr(em_blocks, "block_jacobi", spy)
    model = _model()
    with block_e_step(2):
        c0, ll0, _, _ = e_step(model, PARADIGM, "pruned", OPTS)
    with block_e_step(2, _ClusterLikePool()):
        c1, ll1, _, _ = e_step(model, PARADIGM, "pruned", OPTS)
    np.testing.assert_array_equal(c1, c0)
    assert ll1 == ll0
    (n0, sent), (n1, made) = seen
    assert n0 == 0 and n1 == sum(1 for e in PARADIGM.observed)  # one per phonology factor
    t_theta = len(model.fst().write_to_string())
    # θ and the description replace T_θ's bytes (the priors and the constant
    # messages of the observed words are scattered as before)
    assert made == sent - t_theta + nbytes(em_blocks._model_arrays(model))
    assert made < sent - 0.9 * t_theta
