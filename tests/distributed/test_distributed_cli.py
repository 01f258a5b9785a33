"""The command line with --scheduler on a real LocalCluster of 2 worker processes (the
module fixture starts it; the commands join it by address): many files for ``infer`` and
``train``, ``pcfg train`` with a sharded E-step and with --chains, equal to the serial
runs; bad --scheduler values are one-line errors before any work."""

import json
import re
import socket
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from strgm.distributed.cluster import open_pool, parse_scheduler  # noqa: E402
from tests.robustness.harness import run_cli  # noqa: E402

SCHEMAS = Path(__file__).resolve().parents[2] / "strgm" / "schemas"  # package data
PARADIGMS = {
    "a.tsv": "R1\tkat\nR1 PL\tkatz\nR2\tmap\nR2 PL\tmaps\nR3\tdog\nR3 PL\tdogz\n",
    "b.tsv": "R1\tpit\nR1 PAST\tpitid\nR2\tsak\nR2 PAST\tsakt\nR3\tlub\nR3 PAST\tlubd\n",
    "c.tsv": "R1\tmɛl\nR1 PL\tmɛlɛr\nR2\ttos\nR2 PL\ttosar\n",
}
GRAMMAR = "S --> A B\nS --> B A\nS --> S S\nS --> A\nA --> a\nA --> b\nA --> A A\n" \
          "B --> a\nB --> b\nB --> a b\n"
CORPUS = "a b\nb a\na a b\na b b\na\nb a b\na b a b\nb b a\na a b a b\n"


@pytest.fixture(scope="module")
def address():
    with open_pool(parse_scheduler("local:2")) as p:
        yield p.client.scheduler.address


@pytest.fixture()
def files(tmp_path):
    for name, text in PARADIGMS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _validate(path: Path, fmt: str) -> dict:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == fmt
    jsonschema.validate(doc, json.loads((SCHEMAS / f"{fmt}.schema.json").read_text()))
    return doc


def _without_seconds(doc: dict) -> dict:
    """The document with every timing field dropped (they never repeat)."""
    text = json.dumps(doc, sort_keys=True)
    return json.loads(re.sub(r'"(inference_seconds|seconds|e_seconds|m_seconds)": '
                             r'[0-9.e+-]+', r'"\1": 0', text))


def test_infer_many_files_equals_serial_and_validates(files, address):
    serial = run_cli(["infer", files, "--json", files / "s.json", "--quiet"])
    assert serial.code == 0, serial.stderr
    dist = run_cli(["infer", files / "a.tsv", files / "b.tsv", files / "c.tsv", "--json",
                    files / "d.json", "--quiet", "--scheduler", address])
    assert dist.code == 0, dist.stderr
    s, d = _validate(files / "s.json", "strgm-batch"), _validate(files / "d.json",
                                                                  "strgm-batch")
    assert [f["file"] for f in s["files"]] == [str(files / n) for n in sorted(PARADIGMS)]
    assert s["command"] == "infer" and s["scheduler"]["kind"] == "serial"
    assert d["scheduler"] == {"kind": "address", "workers": 2, "address": address}
    for a, b in zip(s["files"], d["files"]):
        assert a["ok"] and b["ok"]
        assert _without_seconds(a["result"]) == _without_seconds(b["result"])
    # each file's result is a strgm-infer document once the envelope is put back
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "strgm-infer.schema.json").read_text())
    for f in d["files"]:
        jsonschema.validate({"format": "strgm-infer", "version": 1, "strgm_version": "x",
                             **f["result"]}, schema)
    assert "a.tsv" in dist.stdout and "3 files" in dist.stdout


def _serial_and_cluster(argv: list, files: Path, address: str, fmt: str) -> tuple:
    """The validated --json documents of ``strgm ARGV`` run here and on the cluster."""
    serial = run_cli(argv + ["--json", files / "s.json"])
    dist = run_cli(argv + ["--json", files / "d.json", "--scheduler", address])
    assert serial.code == 0 and dist.code == 0, serial.stderr + dist.stderr
    return _validate(files / "s.json", fmt), _validate(files / "d.json", fmt)


def test_train_many_files_equals_serial(files, address):
    argv = ["train", files / "a.tsv", files / "b.tsv", "--em-iters", "1", "--quiet",
            "--family", "edit", "--show-processes", "0", "--no-tier", "--max-iters", "1"]
    s, d = _serial_and_cluster(argv, files, address, "strgm-batch")
    assert s["command"] == "train"
    assert [_without_seconds(f["result"]) for f in s["files"]] == \
        [_without_seconds(f["result"]) for f in d["files"]]


def test_rules_many_files_equals_serial_and_each_file_alone(files, address):
    argv = ["rules", files / "a.tsv", files / "b.tsv", "--quiet", "--holdout", "0.3"]
    s, d = _serial_and_cluster(argv, files, address, "strgm-batch")
    assert s["command"] == "rules" and [f["ok"] for f in d["files"]] == [True, True]
    assert [f["result"] for f in s["files"]] == [f["result"] for f in d["files"]]
    alone = run_cli(["rules", files / "a.tsv", "--quiet", "--holdout", "0.3", "--json",
                     files / "a.json"])
    assert alone.code == 0, alone.stderr
    one = _validate(files / "a.json", "strgm-rules")
    assert {k: v for k, v in one.items() if k not in ("format", "version", "strgm_version")} \
        == s["files"][0]["result"]


def test_a_bad_file_fails_alone(files, address):
    (files / "bad.tsv").write_text("R1\n", encoding="utf-8")
    o = run_cli(["infer", files / "a.tsv", files / "bad.tsv", "--quiet", "--json",
                 files / "o.json", "--scheduler", address])
    assert o.code == 2
    doc = _validate(files / "o.json", "strgm-batch")
    assert [f["ok"] for f in doc["files"]] == [True, False]
    assert "bad.tsv" in o.stderr and doc["summary"]["failed"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("value,needle", [
    ("local:0", "local:0"), ("local:two", "local:two"),
    pytest.param("tcp://127.0.0.1:{port}", "127.0.0.1", marks=pytest.mark.slow)])
def test_bad_scheduler_is_one_line_error_before_work(files, value, needle):
    """The pcfg files are paradigms, not a grammar: reading them would fail otherwise.
    An unreachable address waits out the connect timeout (5 s) per command: slow."""
    value = value.format(port=_free_port())
    for argv in (["infer", files / "a.tsv", files / "b.tsv"],
                 ["rules", files / "a.tsv", files / "b.tsv"],
                 ["pcfg", "train", files / "a.tsv", files / "b.tsv"]):
        o = run_cli(argv + ["--json" if argv[0] != "pcfg" else "--trace-json",
                            files / "o.json", "--scheduler", value], watch=files)
        assert o.code == 2, o.stderr
        lines = o.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and "--scheduler" in lines[0]
        assert not (files / "o.json").exists()


def test_glob_matching_nothing_is_one_line_error(files):
    o = run_cli(["infer", str(files / "*.nothing"), "--quiet"])
    assert o.code == 2 and len(o.stderr.strip().splitlines()) == 1
    assert "matches no file" in o.stderr


def _weights(text: str) -> list:
    return [float(line.split()[0]) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("method", ["em", "vb"])
def test_pcfg_sharded_estep_equals_serial(tmp_path, address, method):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    argv = ["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", method,
            "--iters", "3", "--quiet"]
    serial = run_cli(argv + ["--out", tmp_path / "s.lt"])
    dist = run_cli(argv + ["--out", tmp_path / "d.lt", "--scheduler", address])
    assert serial.code == 0 and dist.code == 0, serial.stderr + dist.stderr
    s, d = _weights((tmp_path / "s.lt").read_text()), _weights((tmp_path / "d.lt").read_text())
    assert s == pytest.approx(d, rel=1e-10, abs=1e-12)


def test_pcfg_chains_report_rhat_and_equal_serial(tmp_path, address):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    argv = ["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", "gibbs",
            "--iters", "12", "--burn-in", "4", "--chains", "3", "--quiet"]
    serial = run_cli(argv + ["--out", tmp_path / "s.lt", "--trace-json", tmp_path / "s.json"])
    dist = run_cli(argv + ["--out", tmp_path / "d.lt", "--trace-json", tmp_path / "d.json",
                           "--scheduler", address])
    assert serial.code == 0 and dist.code == 0, serial.stderr + dist.stderr
    assert (tmp_path / "s.lt").read_text() == (tmp_path / "d.lt").read_text()
    s, d = (_validate(tmp_path / n, "strgm-pcfg-trace") for n in ("s.json", "d.json"))
    assert s == {**d, "strgm_version": s["strgm_version"]}
    assert s["diagnostics"]["chains"] == 3 and s["diagnostics"]["draws_per_chain"] == 8
    assert {r["chain"] for r in s["trace"]} == {0, 1, 2}
    assert "split R-hat" in serial.stderr and "effective sample size" in serial.stderr


def test_one_gibbs_chain_on_the_cluster_is_the_serial_chain_with_checkpoints(tmp_path,
                                                                               address):
    """Its tree draws run on sentence shards; the output, the trace and the checkpoint
    are those of the serial run, and the checkpoint resumes serially."""
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    argv = ["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", "gibbs",
            "--burn-in", "2", "--quiet"]
    serial = run_cli(argv + ["--iters", "6", "--out", tmp_path / "s.lt", "--trace-json",
                             tmp_path / "s.json"])
    dist = run_cli(argv + ["--iters", "3", "--out", tmp_path / "d.lt", "--checkpoint",
                           tmp_path / "k.json", "--scheduler", address])
    resumed = run_cli(argv + ["--iters", "6", "--out", tmp_path / "r.lt", "--trace-json",
                              tmp_path / "r.json", "--resume", tmp_path / "k.json"])
    assert serial.code == dist.code == resumed.code == 0, dist.stderr + resumed.stderr
    assert (tmp_path / "s.lt").read_text() == (tmp_path / "r.lt").read_text()
    s, r = (_validate(tmp_path / n, "strgm-pcfg-trace") for n in ("s.json", "r.json"))
    assert s["trace"] == r["trace"]


def test_chains_need_a_sampler_and_no_checkpoint(tmp_path):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    base = ["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--chains", "2"]
    for extra, needle in ((["--method", "em"], "--chains"),
                          (["--method", "gibbs", "--checkpoint", tmp_path / "k.json"],
                           "--chains"),
                          (["--method", "mh", "--chains", "1", "--scheduler", "local:1",
                            "--checkpoint", tmp_path / "k.json"], "--scheduler")):
        o = run_cli(base + extra)
        assert o.code == 2 and needle in o.stderr and len(o.stderr.splitlines()) == 1


def test_sharded_em_checkpoint_resumes_serially_to_the_same_grammar(tmp_path, address):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    base = ["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", "em",
            "--quiet"]
    first = run_cli(base + ["--iters", "2", "--checkpoint", tmp_path / "k.json", "--out",
                            tmp_path / "a.lt", "--scheduler", address])
    resumed = run_cli(base + ["--iters", "4", "--resume", tmp_path / "k.json", "--out",
                              tmp_path / "b.lt"])
    whole = run_cli(base + ["--iters", "4", "--out", tmp_path / "c.lt"])
    assert first.code == resumed.code == whole.code == 0, first.stderr + resumed.stderr
    assert _weights((tmp_path / "b.lt").read_text()) == pytest.approx(
        _weights((tmp_path / "c.lt").read_text()), rel=1e-10, abs=1e-12)


def test_train_one_file_with_a_scheduler_runs_here_and_says_so(files, address):
    """One FILE with --scheduler: the run is the serial one (one task per file), and a
    note says so; --blocks, which split one file's E-steps, is gone."""
    argv = ["train", files / "a.tsv", "--em-iters", "1", "--family", "edit",
            "--show-processes", "0", "--no-tier", "--max-iters", "2"]
    s, d = _serial_and_cluster(argv, files, address, "strgm-train")
    assert _without_seconds(s) == _without_seconds(d)
    o = run_cli(argv + ["--scheduler", address, "--quiet"])
    assert o.code == 0 and "a single file runs here" in o.stderr
    o = run_cli(["train", files / "a.tsv", "--blocks", "2", "--json", files / "e.json"],
                watch=files)
    assert o.code == 2 and "--blocks" in o.stderr and not (files / "e.json").exists()


def test_pcfg_parse_on_sentence_shards_prints_the_serial_lines(tmp_path, address):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS + "a x\n")  # a sentence without a parse
    for decode in ("viterbi", "maxrule"):
        argv = ["pcfg", "parse", tmp_path / "g.lt", tmp_path / "c.yld", "--decode", decode]
        serial = run_cli(argv + ["--scores", tmp_path / "s.tsv"])
        dist = run_cli(argv + ["--scores", tmp_path / "d.tsv", "--scheduler", address])
        assert serial.code == dist.code == 0, dist.stderr
        assert serial.stdout == dist.stdout and "(no parse)" in dist.stdout
        assert (tmp_path / "s.tsv").read_text() == (tmp_path / "d.tsv").read_text()


def test_tsg_parse_on_sentence_shards_prints_the_serial_lines(tmp_path, address):
    (tmp_path / "a.mrg").write_text(
        "( (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)) )\n"
        "( (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)) )\n"
        "( (S (NP (NNP Rex)) (VP (VBD sat)) (. .)) )\n")
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "m.json", "--iters",
                 "3", "--quiet"])
    assert o.code == 0, o.stderr
    (tmp_path / "s.txt").write_text("The dog sat .\nthe cat barked .\nRex sat on the mat .\n"
                                    "the dog sat on the cat .\n")
    argv = ["tsg", "parse", tmp_path / "m.json", tmp_path / "s.txt", "--samples", "20",
            "--seed", "4", "--quiet"]
    serial, dist = run_cli(argv), run_cli(argv + ["--scheduler", address])
    assert serial.code == dist.code == 0, dist.stderr
    assert serial.stdout == dist.stdout and len(serial.stdout.splitlines()) == 4
