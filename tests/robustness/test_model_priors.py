"""Model files are data, never paths to follow (:func:`strgm.models.ur_prior.recorded_prior_file`).

A phonology model records its UR prior (``strgm train --save``); ``strgm infer --model``
reads that prior only as a plain file name in the model's own directory, only when its
SHA-256 is the recorded one, and errors about it never quote the file's content. Each
refusal has a control: the same record pointing at a good file beside the model loads;
and the content check is shown to see content — the same secret file given by the user
as ``--prior pcfg:FILE`` is quoted (the user's own file), never when a model names it.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from fst_factors.alphabet import Alphabet
from strgm.errors import InputError
from strgm.hmm.emissions import Categorical
from strgm.hmm.model import HMM, HMMPosterior
from strgm.hmm.model_file import save_model
from strgm.hmm.settings import HMMSettings
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.grammar_prior import load_pcfg_prior
from strgm.models.ur_prior import load_hmm_prior, prior_from_record, recorded_prior
from tests.robustness.harness import assert_clean_error, run_cli

WORDS = "R1\tpata\nR1 PL\tpatas\nR2\tkiti\nR2 PL\tkitis\n"
GRAMMAR = "Word --> C V\nWord --> C V Word\nC --> p\nC --> t\nC --> k\nC --> s\n" \
    "V --> a\nV --> i\n"
SECRET = "SECRET-LINE of a file the user never gave\n"


def paradigm(tmp_path, text: str, name: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _model(d, record) -> str:
    """A phonology model in ``d`` whose settings record ``record`` as its UR prior."""
    d.mkdir(exist_ok=True)
    path = d / "m.json"
    PhonologyEditModel.copy_biased(Alphabet(list("pktsai"))).save(str(path),
                                                                 {"ur_prior": record})
    return str(path)


def _pcfg(file=None, data=GRAMMAR.encode(), path=None, **extra) -> dict:
    rec = {"kind": "pcfg", "path": path, "sha256": _sha(data), "estimator": "vb",
           "alpha": 1.0, "empty": 0.05, "theta": {}}
    if file is not None:
        rec["file"] = file
    rec.update(extra)
    return rec


def _infer(tmp_path, model, *extra):
    p = paradigm(tmp_path, WORDS, "w.tsv")
    return run_cli(["infer", p, "--model", model, "--method", "pep", "--quiet", *extra],
                   watch=tmp_path)


@pytest.fixture
def secret(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text(SECRET, encoding="utf-8")
    return f


# ------------------------------------------------------------------ grammar prior
def test_a_recorded_grammar_beside_the_model_loads(tmp_path):
    model = _model(tmp_path / "models", _pcfg("g.lt"))
    (tmp_path / "models" / "g.lt").write_text(GRAMMAR, encoding="utf-8")
    prior = prior_from_record(recorded_prior(model), model)
    assert prior.sha256 == _sha(GRAMMAR.encode()) and prior.grammar.terminals


@pytest.mark.parametrize("name, says", [
    ("ABS", "only a file beside the model"), ("../secret.txt", "only a file beside"),
    ("sub/g.lt", "only a file beside"), ("..", "only a file beside")])
def test_a_grammar_named_outside_the_model_directory_is_refused(tmp_path, secret, name, says):
    name = str(secret) if name == "ABS" else name
    model = _model(tmp_path / "models", _pcfg(name, data=secret.read_bytes()))
    (tmp_path / "models" / "sub").mkdir()
    (tmp_path / "models" / "sub" / "g.lt").write_text(GRAMMAR, encoding="utf-8")
    line = assert_clean_error(_infer(tmp_path, model), model, says)
    assert "SECRET" not in line


def test_an_old_record_is_read_by_its_name_beside_the_model_only(tmp_path, secret):
    old = _pcfg(None, data=secret.read_bytes(), path=str(secret))  # saved before 'file'
    model = _model(tmp_path / "models", old)
    line = assert_clean_error(_infer(tmp_path, model), model, "secret.txt", "missing")
    assert "SECRET" not in line
    # control: the same old record with the grammar beside the model loads
    good = _pcfg(None, path=str(tmp_path / "elsewhere" / "g.lt"))
    model = _model(tmp_path / "m2", good)
    (tmp_path / "m2" / "g.lt").write_text(GRAMMAR, encoding="utf-8")
    assert prior_from_record(recorded_prior(model), model).grammar.terminals


def test_a_link_leading_outside_the_model_directory_is_refused(tmp_path, secret):
    model = _model(tmp_path / "models", _pcfg("g.lt", data=secret.read_bytes()))
    os.symlink(secret, tmp_path / "models" / "g.lt")
    line = assert_clean_error(_infer(tmp_path, model), model, "link leading outside")
    assert "SECRET" not in line


def test_a_changed_grammar_or_one_without_checksum_is_refused(tmp_path):
    model = _model(tmp_path / "models", _pcfg("g.lt"))
    (tmp_path / "models" / "g.lt").write_text(GRAMMAR + "C --> t\n", encoding="utf-8")
    assert_clean_error(_infer(tmp_path, model), model, "SHA-256")
    rec = _pcfg("g.lt")
    del rec["sha256"]
    model = _model(tmp_path / "m2", rec)
    (tmp_path / "m2" / "g.lt").write_text(GRAMMAR, encoding="utf-8")
    assert_clean_error(_infer(tmp_path, model), model, "no file and checksum")


@pytest.mark.parametrize("content", [SECRET.encode(), b"\xff\xfe not utf-8\n"])
def test_a_recorded_file_that_is_no_grammar_is_refused_without_its_content(tmp_path, secret,
                                                                           content):
    model = _model(tmp_path / "models", _pcfg("g.lt", data=content))
    (tmp_path / "models" / "g.lt").write_bytes(content)
    o = _infer(tmp_path, model)
    line = assert_clean_error(o, model, "g.lt", "not a grammar")
    assert "SECRET" not in o.stderr and "not utf-8" not in line
    # control: the check sees content — the user's own --prior file is quoted
    o = run_cli(["infer", paradigm(tmp_path, WORDS, "w.tsv"), "--prior", f"pcfg:{secret}",
                 "--method", "pep", "--quiet"], watch=tmp_path)
    assert "SECRET" in assert_clean_error(o, str(secret))


def test_a_non_utf8_grammar_given_as_prior_is_a_clean_error(tmp_path):
    bad = tmp_path / "bad.lt"
    bad.write_bytes(b"Word --> C\nC --> \xff\n")
    o = run_cli(["infer", paradigm(tmp_path, WORDS, "w.tsv"), "--prior", f"pcfg:{bad}",
                 "--method", "pep", "--quiet"], watch=tmp_path)
    assert_clean_error(o, f"{bad}:2", "UTF-8")


# ------------------------------------------------------------------ HMM prior
def _hmm_file(path, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    vocab = tuple("pktsai") + ("<unk>",)

    def hmm():
        return HMM(rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3), size=3),
                   rng.uniform(0.2, 0.6, 3), {"theta": rng.dirichlet(np.ones(7), size=3)},
                   Categorical(7, 0.1))
    save_model(path, HMMPosterior((hmm(), hmm()), vocab, HMMSettings(L=3, model_length=True)),
               {"iterations": 0})
    return path.read_bytes()


def test_a_recorded_hmm_is_read_beside_the_model_only(tmp_path, secret):
    d = tmp_path / "models"
    d.mkdir()
    _hmm_file(d / "hmm.json")
    rec = load_hmm_prior(d / "hmm.json").record()
    assert rec["file"] == "hmm.json"
    model = _model(d, rec)
    assert prior_from_record(recorded_prior(model), model).sha256 == rec["sha256"]  # control
    for name, says in ((str(d / "hmm.json"), "only a file beside"),
                       ("../hmm.json", "only a file beside")):
        model = _model(tmp_path / "m2", dict(rec, file=name))
        with pytest.raises(InputError, match=says):
            prior_from_record(recorded_prior(model), model)
    # a file beside the model with the recorded checksum that is no HMM: not quoted
    model = _model(tmp_path / "m3", dict(rec, sha256=_sha(secret.read_bytes())))
    (tmp_path / "m3" / "hmm.json").write_bytes(secret.read_bytes())
    line = assert_clean_error(_infer(tmp_path, model), model, "not a usable HMM model")
    assert "SECRET" not in line


def test_a_model_saved_away_from_its_prior_says_where_to_put_it(tmp_path):
    prior_file = tmp_path / "priors" / "g.lt"
    prior_file.parent.mkdir()
    prior_file.write_text(GRAMMAR, encoding="utf-8")
    rec = load_pcfg_prior(str(prior_file)).record()
    model = _model(tmp_path / "models", json.loads(json.dumps(rec)))
    with pytest.raises(InputError, match="missing beside the model") as e:
        prior_from_record(recorded_prior(model), model)
    assert "--prior pcfg:COPY" in str(e.value)
    (tmp_path / "models" / "g.lt").write_bytes(prior_file.read_bytes())
    assert prior_from_record(recorded_prior(model), model).grammar.terminals  # control
