"""Numbers with sense: finite but absurd values in a model file, an EM checkpoint, an
alphabet or a sample size are refused where they are used, with one line naming the file
or keyword; each test has a control that passes with a sensible value."""

from __future__ import annotations

import json

import numpy as np
import pynini
import pytest

from fst_factors.alphabet import Alphabet
from strgm.errors import InputError, MessageTooLargeError, OptionError
from strgm.models.edit_model import MAX_ABS_WEIGHT, MAX_SEGMENTS, PhonologyEditModel


def _model():
    return PhonologyEditModel.copy_biased(Alphabet(["d", "o", "r"]))


@pytest.mark.parametrize("bad", [1e300, -1e300, MAX_ABS_WEIGHT * 1.01, -2e3])
def test_model_weights_beyond_the_bound_are_refused(tmp_path, bad):
    d = _model().to_dict()
    path = tmp_path / "m.json"
    d["theta"][0][1] = bad
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError, match=r"m.json: .*beyond ±700"):
        PhonologyEditModel.load(str(path))
    d["theta"][0][1] = MAX_ABS_WEIGHT * 0.99  # control: large but within the bound
    path.write_text(json.dumps(d), encoding="utf-8")
    m = PhonologyEditModel.load(str(path))
    assert np.max(np.abs(m.theta)) == pytest.approx(MAX_ABS_WEIGHT * 0.99)


def test_checkpoint_weights_beyond_the_bound_are_refused(tmp_path):
    """θ = 1e300 in an EM checkpoint used to resume into empty underlying forms."""
    from strgm.models.em_checkpoint import Checkpoint, load_checkpoint
    from strgm.models.em_checkpoint import write_checkpoint as _write_checkpoint

    path = tmp_path / "ck.json"
    _write_checkpoint(str(path), Checkpoint(_model(), [], 0, None, {}))
    assert load_checkpoint(str(path)).iteration == 0  # control
    d = json.loads(path.read_text(encoding="utf-8"))
    d["model"]["theta"][0][1] = 1e300
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError, match=r"ck.json: .*beyond ±700"):
        load_checkpoint(str(path))


def test_alphabet_beyond_the_bound_is_refused(tmp_path):
    symbols = [chr(0x4E00 + i) for i in range(MAX_SEGMENTS + 1)]
    with pytest.raises(MessageTooLargeError, match=f"over {MAX_SEGMENTS + 1} segments"):
        PhonologyEditModel(Alphabet(symbols))
    d = _model().to_dict()
    d["alphabet"]["symbols"] = [chr(0x4E00 + i) for i in range(3000)]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(InputError, match=r"m.json: a phonology model over 3,000 segments"):
        PhonologyEditModel.load(str(path))
    PhonologyEditModel(Alphabet(symbols[:40]))  # control: a large inventory is fine


def test_sample_size_is_bounded():
    from fst_factors.wfsa.paths import MAX_SAMPLES, sample

    f = pynini.accep("ab", arc_type="log64")
    assert sample(f, 3) == [(97, 98)] * 3  # control
    for n in (MAX_SAMPLES + 1, 10**12, -1, 2.5):
        with pytest.raises(OptionError, match="option n"):
            sample(f, n)


def test_feature_names_follow_the_events():
    """The vectorised naming of indicator features gives every column the attribute
    values of the events it covers (a naming that drifted would still pass length
    checks); a name with one value shifted is caught."""
    from fst_factors.transducers.edit_features import feature_templates

    st = _model().structure
    keys = {name: k for name, _, k in feature_templates()}
    cols = st.features.tocsc()
    checked = 0
    for col, name in enumerate(st.feature_names):
        tk = keys.get(name[0])
        if not tk or not set(tk) <= {"x", "y", "L", "O", "T"}:
            continue
        rows = cols.indices[cols.indptr[col]:cols.indptr[col + 1]]
        got = {tuple(int(st.ev_attrs[k][r]) for k in tk) for r in rows}
        assert got == {tuple(name[1:])}, name
        shifted = tuple(name[1:-1]) + (name[-1] + 1,)
        assert got != {shifted}  # negative control: a drifted name is seen
        checked += 1
    assert checked > 20
