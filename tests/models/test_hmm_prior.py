"""The learned HMM as the prior on underlying forms (strgm.models.ur_prior,
``strgm infer/train --prior hmm:MODEL``; docs/phonology.md).

Oracles: the prior factor's weight of every UR up to length 3 against the forward
algorithm of the posterior-mean HMM (``HMM.log_likelihoods``) × (1 − empty); an unseen
segment against the forward probability of <unk> divided among the unseen segments.
Negative controls: the default unigram prior fails the same oracle; a prior that did not
reach EM or inference would leave the E-step's objective and the beliefs unchanged.
"""

from __future__ import annotations

import itertools
import json
import shutil

import numpy as np
import pynini
import pytest

from strgm.cli import main
from strgm.datasets.paradigm import read_paradigm
from strgm.hmm.data import UNK, encode
from strgm.hmm.emissions import Categorical
from strgm.hmm.model import HMM, HMMPosterior
from strgm.hmm.model_file import save_model
from strgm.hmm.settings import HMMSettings
from strgm.models.phonology import build_phonology_model
from strgm.models.ur_prior import load_hmm_prior
from fst_factors.wfsa.construct import string_acceptor
from fst_factors.wfsa.core import shortest_distance
from tests.robustness.harness import assert_clean_error, run_cli

VOCAB = ("a", "d", "i", "t", UNK)
WORDS = [("R1", "tad"), ("R1 PL", "tadi"), ("R2", "pat"), ("R2 PL", "pati"),
         ("R3", "dit"), ("R3 PL", "diti"), ("R4", "kat"), ("R4 PL", "kati")]


def _hmm(rng, L=3, V=len(VOCAB), stop=True, em=None):
    p0 = rng.dirichlet(np.ones(L))
    P = rng.dirichlet(np.ones(L), size=L)
    theta = rng.dirichlet(np.ones(V), size=L)
    return HMM(p0, P, rng.uniform(0.2, 0.6, L) if stop else None, {"theta": theta},
               em or Categorical(V, 0.1))


def _posterior(seed=0, stop=True) -> HMMPosterior:
    rng = np.random.default_rng(seed)
    return HMMPosterior((_hmm(rng, stop=stop), _hmm(rng, stop=stop)), VOCAB,
                        HMMSettings(L=3, model_length=stop))


@pytest.fixture
def hmm_file(tmp_path):
    path = tmp_path / "hmm.json"
    save_model(path, _posterior(), {"iterations": 0, "source": "by hand"})
    return path


@pytest.fixture
def paradigm_file(tmp_path):
    path = tmp_path / "words.tsv"
    path.write_text("".join(f"{m}\t{s}\n" for m, s in WORDS), encoding="utf-8")
    return path


def _logprob(fst, labels) -> float:
    c = pynini.compose(string_acceptor(tuple(labels)), fst)
    if c.start() < 0:
        return -np.inf
    return -float(shortest_distance(c, reverse=True, delta=1e-14)[c.start()])


def _prior_factor(paradigm_file, ur_prior):
    pm = build_phonology_model(read_paradigm(paradigm_file), ur_prior=ur_prior)
    return pm, pm.graph.factors["prior:R1"].fst


def _oracle(posterior, strings, unseen=()):
    """log[(1 − empty)·p_mean-HMM(x)], an unseen segment as <unk> shared equally."""
    vocab = posterior.vocab
    seqs, _ = encode([tuple(s) for s in strings], vocab)
    ll = posterior.mean().log_likelihoods(seqs)
    shares = np.array([sum(c in unseen for c in s) for s in strings])
    return np.log1p(-0.05) + ll - shares * np.log(max(len(unseen), 1))


def test_prior_factor_weight_is_the_hmm_probability_times_one_minus_empty(
        paradigm_file, hmm_file):
    prior = load_hmm_prior(hmm_file, min_occupancy=0.0)
    pm, fst = _prior_factor(paradigm_file, prior)
    seen = [s for s in pm.alphabet.segment_symbols if s in VOCAB]
    strings = [x for n in (1, 2, 3) for x in itertools.product(seen, repeat=n)]
    want = _oracle(prior.posterior, strings)
    got = [_logprob(fst, pm.alphabet.encode(list(x))) for x in strings]
    assert np.allclose(got, want, atol=1e-9)
    assert _logprob(fst, []) == pytest.approx(np.log(0.05), abs=1e-12)
    assert pm.settings["ur_prior"].startswith("hmm:")


def test_unseen_segments_share_the_unknown_mass(paradigm_file, hmm_file):
    prior = load_hmm_prior(hmm_file, min_occupancy=0.0)
    pm, fst = _prior_factor(paradigm_file, prior)
    assert prior.unseen(pm.alphabet) == ["k", "p"]
    strings = [("p", "a"), ("k", "a", "t"), ("p", "k"), ("t", "i", "p")]
    want = _oracle(prior.posterior, strings, unseen=("k", "p"))
    got = [_logprob(fst, pm.alphabet.encode(list(x))) for x in strings]
    assert np.allclose(got, want, atol=1e-9)
    # the control: without the division among unseen segments the oracle disagrees
    assert not np.allclose(got, _oracle(prior.posterior, strings), atol=1e-3)


def test_negative_control_the_default_prior_fails_the_oracle(paradigm_file, hmm_file):
    prior = load_hmm_prior(hmm_file, min_occupancy=0.0)
    pm, fst = _prior_factor(paradigm_file, None)
    strings = [("t", "a", "d"), ("d", "i")]
    got = [_logprob(fst, pm.alphabet.encode(list(x))) for x in strings]
    assert not np.allclose(got, _oracle(prior.posterior, strings), atol=1e-3)
    assert pm.settings["ur_prior"] == "unigram"
    pm2, fst2 = _prior_factor(paradigm_file, prior)  # control: the prior passed
    assert np.allclose([_logprob(fst2, pm2.alphabet.encode(list(x))) for x in strings],
                       _oracle(prior.posterior, strings), atol=1e-6)


def test_boundary_is_no_segment_of_the_prior(paradigm_file, hmm_file):
    prior = load_hmm_prior(hmm_file, min_occupancy=0.0)
    pm = build_phonology_model(read_paradigm(paradigm_file), boundary="+", ur_prior=prior)
    fst = pm.graph.factors["prior:R1"].fst
    assert _logprob(fst, [pm.alphabet.boundary_label]) == -np.inf
    x = ("t", "a")
    assert _logprob(fst, pm.alphabet.encode(list(x))) == pytest.approx(
        _oracle(prior.posterior, [x])[0], abs=1e-9)


def _json_run(argv, capsys):
    assert main(argv) == 0
    return capsys.readouterr()


def test_infer_with_the_hmm_prior(tmp_path, paradigm_file, hmm_file, capsys):
    out_h, out_u = tmp_path / "h.json", tmp_path / "u.json"
    base = ["infer", str(paradigm_file), "--quiet", "--max-iters", "2", "--top", "2"]
    cap = _json_run(base + ["--prior", f"hmm:{hmm_file}", "--json", str(out_h)], capsys)
    notes = [ln for ln in cap.err.splitlines() if "never saw" in ln]
    assert len(notes) == 1 and "k p" in notes[0] and "2 of the" in notes[0]
    assert "UR prior: hmm:" in cap.out
    _json_run(base + ["--json", str(out_u)], capsys)
    h, u = (json.loads(p.read_text(encoding="utf-8")) for p in (out_h, out_u))
    assert h["ur_prior"]["kind"] == "hmm" and len(h["ur_prior"]["sha256"]) == 64
    assert u["ur_prior"] == {"kind": "unigram"}
    # the prior reached inference: the morphemes' posteriors differ
    assert h["morphemes"]["PL"] != u["morphemes"]["PL"]


def _gaussian_file(path):
    from strgm.hmm.emissions import Gaussian

    rng = np.random.default_rng(0)
    em = Gaussian(np.zeros(2), 1.0, 4.0, np.eye(2))
    h = HMM(rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3), size=3),
            rng.uniform(0.2, 0.6, 3), {"mu": np.zeros((3, 2)), "sigma": np.tile(np.eye(2),
                                                                                (3, 1, 1))}, em)
    save_model(path, HMMPosterior((h,), (), HMMSettings(L=3)), {})


_CASES = ["empty", "missing", "unknown", "damaged", "gaussian", "no-length", "mean-length"]


@pytest.mark.parametrize("command,case", [(c, k) for c in ("infer", "train") for k in _CASES
                                          if (c, k) != ("train", "mean-length")])
def test_bad_priors_are_one_line_errors_before_any_work(tmp_path, case, command):
    watch = tmp_path / "out"
    watch.mkdir()
    bad = tmp_path / "bad.json"
    spec, names = {"empty": ("hmm:", ["--prior", "hmm:"]),
                   "missing": (f"hmm:{tmp_path / 'missing.json'}", ["missing.json"]),
                   "unknown": ("foo", ["--prior", "foo"]),
                   "damaged": (f"hmm:{bad}", ["bad.json", "damaged"]),
                   "gaussian": (f"hmm:{bad}", ["bad.json", "categorical"]),
                   "no-length": (f"hmm:{bad}", ["bad.json", "length model"]),
                   "mean-length": (f"hmm:{bad}", ["--mean-length"])}[case]
    if case in ("damaged", "mean-length"):
        save_model(bad, _posterior(), {})
        if case == "damaged":
            bad.write_text(bad.read_text(encoding="utf-8")[:200], encoding="utf-8")
    elif case == "gaussian":
        _gaussian_file(bad)
    elif case == "no-length":
        save_model(bad, _posterior(stop=False), {})
    extra = ["--mean-length", "3"] if case == "mean-length" else []
    out = ["--json", str(watch / "o.json")] + (["--save", str(watch / "m.json")]
                                               if command == "train" else [])
    o = run_cli([command, str(tmp_path / "absent.tsv"), "--prior", spec, "--quiet", *extra,
                 *out], watch=watch)
    assert "absent.tsv" not in assert_clean_error(o, *names)  # refused before reading it


def test_train_refuses_the_hmm_prior_with_a_checkpoint(tmp_path, paradigm_file, hmm_file):
    (tmp_path / "out").mkdir()
    o = run_cli(["train", str(paradigm_file), "--prior", f"hmm:{hmm_file}", "--checkpoint",
                 str(tmp_path / "out" / "ck.json"), "--quiet"], watch=tmp_path / "out")
    assert_clean_error(o, "--prior", "checkpoint")


def _train(tmp_path, paradigm_file, prior, name, capsys):
    save, js = tmp_path / f"{name}.model.json", tmp_path / f"{name}.json"
    argv = ["train", str(paradigm_file), "--em-iters", "0", "--max-iters", "2",
            "--family", "edit", "--transparent", "none", "--show-processes", "0",
            "--quiet", "--save", str(save), "--json", str(js)]
    _json_run(argv + (["--prior", prior] if prior else []), capsys)
    return save, json.loads(js.read_text(encoding="utf-8"))


def test_a_trained_model_keeps_its_prior(tmp_path, paradigm_file, hmm_file, capsys):
    model, out = _train(tmp_path, paradigm_file, f"hmm:{hmm_file}", "h", capsys)
    _, out_u = _train(tmp_path, paradigm_file, None, "u", capsys)
    # the prior reached EM: the E-step's log evidence differs from the unigram prior's
    assert out["trace"][0]["objective"] != pytest.approx(out_u["trace"][0]["objective"])
    rec = json.loads(model.read_text(encoding="utf-8"))["settings"]["ur_prior"]
    assert rec["kind"] == "hmm" and rec == out["ur_prior"]
    js = tmp_path / "i.json"
    cap = _json_run(["infer", str(paradigm_file), "--model", str(model), "--quiet",
                     "--max-iters", "2", "--json", str(js)], capsys)
    assert "UR prior: hmm:" in cap.out
    assert json.loads(js.read_text(encoding="utf-8"))["ur_prior"] == rec
    cap = _json_run(["infer", str(paradigm_file), "--model", str(model), "--quiet",
                     "--max-iters", "2", "--prior", "unigram"], capsys)
    assert "UR prior: unigram" in cap.out and "trained with another UR prior" in cap.err


def test_a_changed_or_moved_prior_is_refused(tmp_path, paradigm_file, hmm_file, capsys):
    model, _ = _train(tmp_path, paradigm_file, f"hmm:{hmm_file}", "h", capsys)
    watch = tmp_path / "out"
    watch.mkdir()
    argv = ["infer", str(paradigm_file), "--model", str(model), "--quiet", "--json",
            str(watch / "o.json")]
    save_model(hmm_file, _posterior(seed=1), {})
    assert_clean_error(run_cli(argv, watch=watch), "SHA-256", str(model))
    shutil.move(hmm_file, tmp_path / "elsewhere.json")
    assert_clean_error(run_cli(argv, watch=watch), "missing", str(model))
    o = run_cli(argv + ["--prior", f"hmm:{tmp_path / 'elsewhere.json'}"], watch=tmp_path / "x")
    assert o.code == 0, o.stderr


def test_the_prior_reaches_every_graph_training_builds(paradigm_file, hmm_file, monkeypatch):
    """train_paradigm's ur_prior is passed, as an argument, to the tier screening's and
    EM's graphs and to the rule family's UR candidates (no ambient setting); control:
    without it every graph gets the unigram prior."""
    from strgm.models import phonology
    from strgm.workflows.family_choice import choose_family
    from strgm.workflows.training import train_paradigm

    seen = []
    real = phonology.build_phonology_model

    def spy(*args, **kw):
        pm = real(*args, **kw)
        seen.append(pm.settings["ur_prior"])
        return pm
    for module in ("strgm.models.em", "strgm.models.baselines"):
        monkeypatch.setattr(f"{module}.build_phonology_model", spy)
    prior = load_hmm_prior(hmm_file, min_occupancy=0.0)
    para = read_paradigm(paradigm_file)
    run = train_paradigm(para, "pruned", 0.3, 0, transparent="auto", em_iters=1,
                         ur_prior=prior, infer_opts={"max_iters": 2})
    choose_family(run)
    assert len(seen) >= 3 and all(s.startswith("hmm:") for s in seen), seen
    seen.clear()
    choose_family(train_paradigm(para, "pruned", 0.3, 0, em_iters=1,
                                 infer_opts={"max_iters": 2}))
    assert seen and all(s == "unigram" for s in seen)
