"""``import strgm`` is the front door: each public name resolves, lazily, to the object of
the module that defines it; ``strgm.load_model`` reads a model file by its format."""

import importlib
import json
import subprocess
import sys

import pytest

import strgm
from tests.robustness.harness import run_cli


@pytest.mark.parametrize("name", sorted(strgm._LAZY))
def test_public_names_are_their_modules_objects(name):
    assert getattr(strgm, name) is getattr(importlib.import_module(strgm._LAZY[name]), name)
    assert name in dir(strgm) and name in strgm.__all__


def test_unknown_names_and_a_quick_import():
    with pytest.raises(AttributeError, match="no attribute 'infer_everything'"):
        strgm.infer_everything  # noqa: B018  control: not every name resolves
    out = subprocess.run([sys.executable, "-c", "import sys, strgm; "
                          "print('pynini' in sys.modules, 'numpy' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]  # nothing heavy until a name is used


def test_load_model_reads_each_format(tmp_path):
    o = run_cli(["hmm", "train", "example:phonemes", "--iters", "2", "--states", "4",
                 "--model", "hdp", "--quiet", "--save", tmp_path / "h.json"])
    assert o.code == 0, o.stderr
    o = run_cli(["tsg", "train", "example:trees", "--iters", "1", "--quiet", "--save",
                 tmp_path / "t.json"])
    assert o.code == 0, o.stderr
    from strgm.grammars.tsg.model_file import TSGModel
    from strgm.hmm.model_file import HMMModel

    assert isinstance(strgm.load_model(tmp_path / "h.json"), HMMModel)
    assert isinstance(strgm.load_model(tmp_path / "t.json"), TSGModel)
    (tmp_path / "x.json").write_text(json.dumps({"format": "strgm-beliefs", "version": 1}))
    with pytest.raises(strgm.InputError, match="x.json") as e:
        strgm.load_model(tmp_path / "x.json")
    assert "load_model reads strgm-hmm-model, strgm-tsg-model" in str(e.value)
    (tmp_path / "y.json").write_text("{not json")
    with pytest.raises(strgm.InputError, match="y.json"):
        strgm.load_model(tmp_path / "y.json")


def _tree():
    import fst_factors.transducers as ff

    alphabet = strgm.Alphabet.from_words(["kæts", "dɔɡz"], boundary="+")
    g = strgm.FactorGraph(alphabet)
    g.add_variable("stem"); g.add_variable("suffix"); g.add_variable("UR")
    n = alphabet.num_segments
    g.add_unary("p1", "stem", ff.geometric_unigram_prior(n, mean_length=3))
    g.add_unary("p2", "suffix", ff.geometric_unigram_prior(n, mean_length=1))
    g.add_concat("concat", ["stem", "suffix"], "UR", boundary=True)
    g.add_variable("SR", observed="kæts")
    g.add_binary("phonology", "UR", "SR",
                 ff.edit_transducer(n, boundary_label=alphabet.boundary_label))
    return g


def test_pep_says_when_it_projects_nothing():
    import warnings

    from strgm.errors import NoProjectionWarning

    with pytest.warns(NoProjectionWarning, match="pep made no projection"):
        r = strgm.infer(_tree(), "pep")
    assert r.extra["updates"] == 0
    with warnings.catch_warnings():  # control: made to project, it does and says nothing
        warnings.simplefilter("error", NoProjectionWarning)
        r = strgm.infer(_tree(), "pep", relay=False, max_iters=1)
    assert r.extra["updates"] > 0


def test_the_custom_factor_example_runs(tmp_path):
    """examples/custom_factor.py: a user-defined factor (reversal) under exact BP."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "custom_factor.py"
    out = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[('kɑts', 1.0)]"
    assert len(path.read_text(encoding="utf-8").splitlines()) < 40  # "under 40 lines"


def test_a_paradigms_underlying_forms_by_pep_in_five_lines_from_import_strgm():
    code = ("import strgm\n"
            "run = strgm.infer_paradigm(strgm.example('english-verbs'), 'pep')\n"
            "urs = run.underlying_forms(k=2)\n"
            "print(urs['PAST'][0][0], len(urs))\n")
    assert len(code.splitlines()) <= 5
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    form, n = out.stdout.split()
    assert form in ("d", "t", "ɪd", "əd") and int(n) == 15
