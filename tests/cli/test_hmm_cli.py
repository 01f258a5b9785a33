"""``strgm hmm train|score|decode``: outputs, exact resume, one-line errors naming the
file, line, option or value, nothing half-written."""

import json

import numpy as np
import pytest

from tests.robustness.harness import assert_clean_error, run_cli

WORDS = ["k a t", "k a t a", "t a k", "a t a k", "k a k", "t a t a", "a k a",
         "k a t a k", "t a", "a t"] * 3


@pytest.fixture
def data(tmp_path):
    (tmp_path / "seqs.txt").write_text("\n".join(WORDS) + "\n")
    (tmp_path / "test.txt").write_text("k a t\nt a z a\n")
    return tmp_path


def _train(tmp, *extra, name="m.json", iters="6"):
    o = run_cli(["hmm", "train", tmp / "seqs.txt", "--save", tmp / name, "--iters", iters,
                 "--states", "5", *extra])
    assert o.code == 0, o.stderr
    return tmp / name, o


def test_train_score_decode(data):
    model, o = _train(data, "--json", data / "trace.json")
    assert "sweep 6/6: log-likelihood" in o.stderr and "model written" in o.stderr
    m = json.loads(model.read_text())
    assert m["format"] == "strgm-hmm-model" and m["vocab"] == ["a", "k", "t", "<unk>"]
    assert len(m["samples"]) == 3  # burn-in 3 of 6, thin 1
    assert len(json.loads((data / "trace.json").read_text())["trace"]) == 6
    s = run_cli(["hmm", "score", model, data / "test.txt"])
    assert s.code == 0, s.stderr
    lines = s.stdout.splitlines()
    assert lines[0] == "log p (nats)\tlength\tsequence"  # the columns are named
    assert lines[1].split("\t")[1:] == ["3", "k a t"]
    assert lines[-1].startswith("mean log-likelihood per symbol: ") and lines[-1].endswith(" nats")
    assert "tokens unseen in training: 1" in lines[-3]
    assert lines[-2].startswith("mean log-likelihood per symbol given the lengths: ")
    per_seq = [float(ln.split("\t")[0]) for ln in lines[1:3]]
    assert float(lines[-1].split()[-2]) == pytest.approx(sum(per_seq) / 7, abs=1e-3)
    d = run_cli(["hmm", "decode", model, data / "test.txt"])
    assert d.code == 0 and [len(x.split()) for x in d.stdout.splitlines()] == [3, 4]
    # each state beside the symbol it emits; an unseen token keeps its own spelling
    pairs = [[p.split("/") for p in x.split()] for x in d.stdout.splitlines()]
    assert [[sym for sym, _ in line] for line in pairs] == [list("kat"), list("taza")]
    assert all(k.isdigit() for line in pairs for _, k in line)


def test_resumed_run_equals_uninterrupted(data):
    """A named model's run extended from 4 to 6 sweeps equals a 6-sweep run."""
    sched = ("--burn-in", "3", "--thin", "1", "--model", "lt")
    whole, _ = _train(data, *sched, name="whole.json")
    ck = data / "ck.json"
    _train(data, *sched, "--checkpoint", ck, name="part.json", iters="4")
    resumed, _ = _train(data, *sched, "--resume", ck, name="resumed.json")
    a, b = json.loads(whole.read_text()), json.loads(resumed.read_text())
    assert a["samples"] == b["samples"]


def test_auto_run_interrupted_and_resumed_equals_uninterrupted(data, monkeypatch):
    """With --model auto the choice depends on --iters (each candidate runs that many
    sweeps), so the run is resumed with the same --iters: it continues the chosen chain
    from the checkpoint and ends where the uninterrupted run ends."""
    from strgm.cli import main
    from strgm.hmm import HMMSampler

    sched = ("--burn-in", "3", "--thin", "1", "--checkpoint-every", "2")
    whole, _ = _train(data, *sched, name="whole.json")
    real, calls = HMMSampler.sample, []

    def interrupted(self, state):
        calls.append(state.iteration)
        if len(calls) == 6 * 6 + 5:  # 6 candidate chains of 6 sweeps, then 4 sweeps
            raise KeyboardInterrupt
        return real(self, state)

    ck = data / "ck.json"
    argv = ["hmm", "train", str(data / "seqs.txt"), "--save", str(data / "resumed.json"),
            "--iters", "6", "--states", "5", "--quiet", *sched, "--checkpoint", str(ck)]
    monkeypatch.setattr(HMMSampler, "sample", interrupted)
    assert main(argv) == 130  # "strgm: error: interrupted"
    monkeypatch.setattr(HMMSampler, "sample", real)
    assert json.loads(ck.read_text())["iteration"] == 4 and not (data / "resumed.json").exists()
    assert main(argv + ["--resume", str(ck)]) == 0
    a, b = json.loads(whole.read_text()), json.loads((data / "resumed.json").read_text())
    assert a["samples"] == b["samples"] and a["training"]["auto"]["model"] in (
        "lt", "hdp", "sticky")
    # control: a fresh run of the chosen model without the choice ends elsewhere
    other, _ = _train(data, "--burn-in", "3", "--thin", "1", "--model",
                      a["training"]["auto"]["model"], name="plain.json")
    assert json.loads(other.read_text())["samples"] != a["samples"]


@pytest.mark.parametrize("model", ["hdp", "sticky"])
def test_other_models_train(data, model):
    path, o = _train(data, "--model", model)
    assert json.loads(path.read_text())["settings"]["model"] == model


def test_vectors_with_gaussian_emissions(data):
    rng = np.random.default_rng(0)
    blocks = ["\n".join(f"{v[0]:.3f} {v[1]:.3f}" for v in rng.normal(size=(n, 2)) + off)
              for n, off in ((5, 0), (4, 3), (6, -3))]
    (data / "vec.txt").write_text("\n\n".join(blocks) + "\n")
    o = run_cli(["hmm", "train", data / "vec.txt", "--vectors", "--save", data / "v.json",
                 "--iters", "4", "--states", "4"])
    assert o.code == 0, o.stderr
    s = run_cli(["hmm", "score", data / "v.json", data / "vec.txt"])
    assert s.code == 0 and "per symbol" in s.stdout.splitlines()[-1]
    d = run_cli(["hmm", "decode", data / "v.json", data / "vec.txt"])
    # vectors have no symbols: the states alone, one line per sequence
    assert d.code == 0 and [len(x.split()) for x in d.stdout.splitlines()] == [5, 4, 6]
    assert all(k.isdigit() for x in d.stdout.splitlines() for k in x.split())


def test_empty_sequence_names_file_and_line(data):
    (data / "bad.txt").write_text("k a t\n\nt a\n")
    o = run_cli(["hmm", "train", data / "bad.txt", "--save", data / "x.json"], watch=data)
    assert_clean_error(o, "bad.txt:2", "empty sequence")


@pytest.mark.parametrize("opt,value", [("--states", "1"), ("--alpha", "-1"),
                                       ("--gamma", "0"), ("--kappa", "-0.5"),
                                       ("--eta", "nan"), ("--iters", "0")])
def test_bad_options(data, opt, value):
    o = run_cli(["hmm", "train", data / "seqs.txt", "--save", data / "x.json", opt, value],
                watch=data)
    assert_clean_error(o, opt, value)


def test_burn_in_past_iters(data):
    o = run_cli(["hmm", "train", data / "seqs.txt", "--save", data / "x.json", "--iters",
                 "5", "--burn-in", "5"], watch=data)
    assert_clean_error(o, "--burn-in", "5")


def test_resume_with_other_data_is_refused(data):
    ck = data / "ck.json"
    _train(data, "--checkpoint", ck, iters="2")
    (data / "other.txt").write_text("a a\nk k\n")
    o = run_cli(["hmm", "train", data / "other.txt", "--save", data / "y.json", "--states",
                 "5", "--resume", ck], watch=data)
    assert_clean_error(o, "ck.json", "different data or settings")


def test_damaged_model_file(data):
    model, _ = _train(data)
    d = json.loads(model.read_text())
    d["samples"][0]["P"][0][0] = 5.0
    model.write_text(json.dumps(d))
    o = run_cli(["hmm", "score", model, data / "test.txt"], watch=data)
    assert_clean_error(o, "m.json", "does not sum to 1")


def test_truncated_model_file_says_retrain(data):
    model, _ = _train(data)
    model.write_text(model.read_text()[:50])
    o = run_cli(["hmm", "score", model, data / "test.txt"], watch=data)
    line = assert_clean_error(o, "m.json", "damaged HMM model file")
    assert "train it again" in line and "resume" not in line


def test_every_file_written_is_announced(data):
    ck, trace = data / "ck.json", data / "trace.json"
    model, o = _train(data, "--json", trace, "--checkpoint", ck)
    assert f"wrote {trace}" in o.stderr and f"wrote {ck}" in o.stderr
    assert f"model written to {model}" in o.stderr
    s = run_cli(["hmm", "score", model, data / "test.txt", "--json", data / "sc.json"])
    assert s.code == 0 and f"wrote {data / 'sc.json'}" in s.stderr
    assert "wrote" not in s.stdout  # the table on stdout stays data
    # control: nothing asked for, nothing announced
    _, plain = _train(data, name="plain.json")
    plain_score = run_cli(["hmm", "score", model, data / "test.txt"])
    assert "wrote " not in plain.stderr and "wrote " not in plain_score.stderr
