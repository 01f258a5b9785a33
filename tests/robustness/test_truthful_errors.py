"""Errors that tell the truth: out-of-memory advice that fits the command that ran, a
model or checkpoint of another kind named as what it is (never "damaged"), and the inputs
that used to end in "internal error" (a full standard output, deeply nested trees, trees
of only ``-NONE-`` traces) as one clear line naming the file. Each case has a control that
passes, so each test can fail."""

import socket
import subprocess
import sys
import threading

import pytest

import strgm.cli.hmm as hmm_cmds
import strgm.cli.paradigm as paradigm_cmds
import strgm.cli.pcfg as pcfg_cmds
import strgm.cli.treebank as treebank_cmds
import strgm.cli.tsg as tsg_cmds
from strgm.errors import InputError, WrongKindError
from tests.robustness.harness import assert_clean_error, run_cli

GRAMMAR = "S --> A B\nS --> S S\nA --> a\nA --> b\nB --> a\nB --> b\n"
CORPUS = "a b\nb a\na b a b\n"
SEQS = "a b c\nb c a\na a b\nc b a b\n"
TREES = "(S (A a) (B b))\n(S (A b) (B a))\n"


def _out_of_memory(args):
    raise MemoryError()


# --------------------------------------------------------------------------- memory advice
@pytest.mark.parametrize("module, fn, argv, named, foreign", [
    (paradigm_cmds, "cmd_infer", ["infer", "x.tsv"], "--max-states", None),
    (hmm_cmds, "_train", ["hmm", "train", "s.txt", "--save", "m.json"], "--states",
     "--max-states"),
    (hmm_cmds, "_score", ["hmm", "score", "m.json", "s.txt"], "shorter sequences",
     "--max-states"),
    (tsg_cmds, "_train", ["tsg", "train", "t.mrg", "--save", "m.json"], "smaller treebank",
     "--max-states"),
    (pcfg_cmds, "_train", ["pcfg", "train", "g.lt", "c.yld"], "--max-memory", "--max-states"),
    (pcfg_cmds, "parse_command", ["pcfg", "parse", "g.lt", "c.yld"], "--max-length",
     "--method"),
    (treebank_cmds, "_yield", ["treebank", "yield", "t.mrg"], "--max-length", "--max-states"),
])
def test_memory_advice_names_what_the_command_has(module, fn, argv, named, foreign,
                                                  monkeypatch, tmp_path):
    monkeypatch.setattr(module, fn, _out_of_memory)
    line = assert_clean_error(run_cli(argv, watch=tmp_path), "out of memory",
                              " ".join(argv[:2 if argv[0] != "infer" else 1]), named)
    if foreign is not None:
        assert foreign not in line, line


def _memory_error_in_dask(args):
    code = compile("raise MemoryError()", "/venv/site-packages/distributed/comm/tcp.py",
                   "exec")
    exec(code)


@pytest.mark.parametrize("scheduler, named", [
    ("tcp://127.0.0.1:1", "check that the address is that of a Dask scheduler"),
    ("local:2", "--states"),  # control: no remote scheduler, the command's own advice
    (None, "--states"),
])
def test_memory_error_talking_to_a_scheduler_says_so(scheduler, named, monkeypatch,
                                                     tmp_path):
    monkeypatch.setattr(hmm_cmds, "_train", _memory_error_in_dask)
    extra = ["--scheduler", scheduler] if scheduler else []
    line = assert_clean_error(run_cli(["hmm", "train", "s.txt", "--save", "m.json", *extra],
                                      watch=tmp_path), "out of memory", named)
    assert "--max-states" not in line


def _http_server(reply: bytes = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"):
    """A local server that answers every connection with ``reply`` (by default as a web
    server would)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(60)

    def serve():
        try:
            while True:
                c, _ = srv.accept()
                c.sendall(reply)
                c.close()
        except OSError:
            return
    threading.Thread(target=serve, daemon=True).start()
    return srv


@pytest.mark.parametrize("reply", [None, b"\xff" * 64], ids=["http", "garbage"])
def test_a_scheduler_address_that_is_no_dask_scheduler(tmp_path, reply):
    (tmp_path / "s.txt").write_text(SEQS)
    srv = _http_server() if reply is None else _http_server(reply)
    try:
        o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                     "--iters", "2", "--quiet", "--scheduler",
                     f"tcp://127.0.0.1:{srv.getsockname()[1]}"], watch=tmp_path,
                    subprocess_timeout=60)
    finally:
        srv.close()
    line = assert_clean_error(o, "--scheduler", "tcp://127.0.0.1:", "Dask scheduler")
    assert "--max-states" not in line


# --------------------------------------------------------------------------- other kinds
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A genuine model and checkpoint of each sampler: hmm, tsg, pcfg (em and gibbs)."""
    d = tmp_path_factory.mktemp("kinds")
    (d / "g.lt").write_text(GRAMMAR)
    (d / "c.yld").write_text(CORPUS)
    (d / "s.txt").write_text(SEQS)
    (d / "t.mrg").write_text(TREES)
    for argv in (["hmm", "train", d / "s.txt", "--save", d / "hmm.json", "--iters", "2",
                  "--checkpoint", d / "hmm_ck.json"],
                 ["tsg", "train", d / "t.mrg", "--save", d / "tsg.json", "--iters", "2",
                  "--checkpoint", d / "tsg_ck.json"],
                 ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method", "em",
                  "--checkpoint", d / "em_ck.json"],
                 ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method",
                  "gibbs", "--checkpoint", d / "gibbs_ck.json"]):
        o = run_cli([*argv, "--quiet"])
        assert o.code == 0, o.stderr
    return d


def _resume(d, command, ck):
    return {"hmm": ["hmm", "train", d / "s.txt", "--save", d / "out.json", "--iters", "2"],
            "tsg": ["tsg", "train", d / "t.mrg", "--save", d / "out.json", "--iters", "2"],
            "em": ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method", "em"],
            "gibbs": ["pcfg", "train", d / "g.lt", d / "c.yld", "--iters", "2", "--method",
                      "gibbs"]}[command] + ["--quiet", "--resume", d / ck]


@pytest.mark.parametrize("command, given, is_a, not_a", [
    ("tsg", "hmm.json", "is an HMM model", "not a TSG checkpoint"),
    ("tsg", "tsg.json", "is a TSG model", "not a TSG checkpoint"),
    ("tsg", "em_ck.json", "is a PCFG estimator checkpoint (em", "not a TSG checkpoint"),
    ("hmm", "hmm.json", "is an HMM model", "not an HMM checkpoint"),
    ("hmm", "tsg_ck.json", "is a TSG checkpoint", "not an HMM checkpoint"),
    ("hmm", "gibbs_ck.json", "is a PCFG sampler checkpoint (gibbs", "not an HMM checkpoint"),
    ("em", "hmm_ck.json", "is an HMM checkpoint", "not a PCFG estimator checkpoint"),
    ("em", "gibbs_ck.json", "is a PCFG sampler checkpoint", "not a PCFG estimator"),
    ("gibbs", "em_ck.json", "is a PCFG estimator checkpoint", "not a PCFG sampler"),
    ("gibbs", "tsg.json", "is a TSG model", "not a PCFG sampler checkpoint"),
])
def test_a_file_of_another_kind_is_named_as_what_it_is(files, command, given, is_a, not_a):
    line = assert_clean_error(run_cli(_resume(files, command, given)), str(files / given),
                              is_a, not_a)
    assert "damaged" not in line and "delete" not in line, line


@pytest.mark.parametrize("command, ck", [("hmm", "hmm_ck.json"), ("tsg", "tsg_ck.json"),
                                         ("em", "em_ck.json"), ("gibbs", "gibbs_ck.json")])
def test_control_each_checkpoint_resumes_its_own_run(files, command, ck):
    o = run_cli(_resume(files, command, ck))
    assert o.code == 0, o.stderr


def test_an_em_checkpoint_loader_names_a_phonology_model(tmp_path):
    from strgm.models.em_checkpoint import load_checkpoint

    p = tmp_path / "model.json"
    p.write_text('{"format": "strgm-phonology-v1", "alphabet": {}}')
    with pytest.raises(WrongKindError, match="model.json is a phonology model .*, not a "
                                             "phonology EM checkpoint"):
        load_checkpoint(str(p))
    # control: a file of the right format is read further (and here refused as incomplete)
    p.write_text('{"format": "strgm-em-checkpoint-v2"}')
    with pytest.raises(InputError) as e:
        load_checkpoint(str(p))
    assert not isinstance(e.value, WrongKindError)


# --------------------------------------------------------------------------- internal errors
@pytest.mark.parametrize("argv", [["treebank", "yield", "{t}"],
                                  ["pcfg", "parse", "{g}", "{c}"]])
def test_a_full_standard_output_is_one_line(argv, tmp_path):
    (tmp_path / "t.mrg").write_text(TREES)
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    argv = [a.format(t=tmp_path / "t.mrg", g=tmp_path / "g.lt", c=tmp_path / "c.yld")
            for a in argv]
    cmd = [sys.executable, "-m", "strgm.cli", *argv]
    with open("/dev/full", "w") as full:
        p = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "standard output" in lines[0] and "No space left" in lines[0], lines[0]
    assert "internal error" not in lines[0]
    with open(tmp_path / "out.txt", "w") as ok:  # control: a writable standard output
        p = subprocess.run(cmd, stdout=ok, stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 0 and (tmp_path / "out.txt").read_text(), p.stderr


TREE_COMMANDS = [["tsg", "train", "{f}", "--save", "{d}/m.json", "--iters", "1", "--quiet"],
                 ["treebank", "grammar", "{f}", "--out", "{d}/g.lt"],
                 ["treebank", "yield", "{f}"],
                 ["treebank", "score", "{f}", "{f}"]]


def _run_trees(argv, f, d, **kw):
    return run_cli([a.format(f=f, d=d) for a in argv], **kw)


@pytest.mark.parametrize("argv", TREE_COMMANDS)
def test_a_deeply_nested_tree_is_one_line_naming_the_file(argv, tmp_path):
    f = tmp_path / "deep.mrg"
    f.write_text("(S (A a) (B b))\n" + "(" * 100000 + "(A a)" + ")" * 100000 + "\n")
    assert_clean_error(_run_trees(argv, f, tmp_path, watch=tmp_path), f"{f}:2",
                       "nested deeper than")
    # control: a tree as deep as allowed is read
    f.write_text("(S " + "(X " * 298 + "(A a)" + ")" * 298 + ")\n(S (A a) (B b))\n")
    o = _run_trees(argv, f, tmp_path)
    assert o.code == 0, o.stderr


@pytest.mark.parametrize("argv", TREE_COMMANDS[:2])
@pytest.mark.parametrize("text", ["( (-NONE- *T*-1))\n", "(-NONE- *)\n",
                                  "(S (NP (-NONE- *)) (VP (-NONE- *)))\n"])
def test_a_treebank_of_only_traces_is_one_line_naming_the_file(argv, text, tmp_path):
    f = tmp_path / "none.mrg"
    f.write_text(text)
    assert_clean_error(_run_trees(argv, f, tmp_path, watch=tmp_path), str(f), "-NONE-")
    f.write_text(text + "(S (A a) (B b))\n")  # control: a real tree besides the traces
    o = _run_trees(argv, f, tmp_path)
    assert o.code == 0, o.stderr


def test_a_non_utf8_pcfg_prior_names_the_file(tmp_path):
    g = tmp_path / "g.lt"
    g.write_bytes(b"S --> A\xe9 B\nA --> a\n")
    o = run_cli(["infer", "example:english-verbs", "--prior", f"pcfg:{g}", "--quiet"],
                watch=tmp_path)
    assert_clean_error(o, str(g), "UTF-8")


@pytest.mark.parametrize("given, is_a", [("tsg.json", "is a TSG model"),
                                         ("hmm_ck.json", "is an HMM checkpoint")])
def test_hmm_score_names_a_file_of_another_kind(files, given, is_a):
    line = assert_clean_error(run_cli(["hmm", "score", files / given, files / "s.txt"]),
                              str(files / given), is_a, "not an HMM model")
    assert "damaged" not in line, line
    assert run_cli(["hmm", "score", files / "hmm.json", files / "s.txt"]).code == 0  # control


def test_infer_model_names_a_file_of_another_kind(tmp_path):
    from strgm.models.edit_model import PhonologyEditModel

    p = tmp_path / "ck.json"
    p.write_text('{"format": "strgm-hmm-model"}')
    with pytest.raises(WrongKindError, match="ck.json is an HMM model .*not a phonology model"):
        PhonologyEditModel.load(str(p))


@pytest.mark.parametrize("command", [["tsg", "train"], ["treebank", "grammar"]])
def test_an_unlabelled_constituent_names_the_file_and_tree(tmp_path, command):
    bad = tmp_path / "u.mrg"
    bad.write_text("(S (NP a) (VP b))\n(S (NP c) ( (Y d)))\n")
    out = ["--save", tmp_path / "t.json"] if command[0] == "tsg" else ["--out",
                                                                       tmp_path / "g.lt"]
    assert_clean_error(run_cli([*command, bad, *out, "--iters", "1"]), str(bad),
                       "tree 2: a constituent has no label")
    ok = tmp_path / "ok.mrg"  # control: the standard unlabelled root bracket is fine
    ok.write_text("( (S (NP a) (VP b)))\n")
    assert run_cli([*command, ok, *out, "--iters", "1"]).code == 0
