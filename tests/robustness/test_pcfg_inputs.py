"""Bad inputs to ``strgm pcfg train|parse``, tried as a user would: every option with bad
values, every reader with missing, directory, non-UTF-8, empty and malformed files,
unwritable outputs and damaged ``--resume`` checkpoints. Each case must exit 2 with one
line naming the culprit, no traceback, and no file created or changed."""

import json

import numpy as np
import pytest

from tests.robustness.harness import assert_clean_error, run_cli

GRAMMAR = "S --> A B\nS --> S S\nA --> a\nA --> b\nB --> a\nB --> b\n"
CORPUS = "a b\nb a\na b a b\n"


@pytest.fixture
def d(tmp_path):
    (tmp_path / "g.lt").write_text(GRAMMAR)
    (tmp_path / "c.yld").write_text(CORPUS)
    (tmp_path / "f.txt").write_text("a regular file\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


def _train(d, *extra, method="gibbs"):
    return ["pcfg", "train", d / "g.lt", d / "c.yld", "--method", method, "--iters", "3",
            "--quiet", *extra]


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("option, value", [
    ("--alpha", "0"), ("--alpha", "-1"), ("--alpha", "nan"), ("--alpha", "inf"),
    ("--alpha", "-inf"), ("--alpha", "x"),
    ("--iters", "0"), ("--iters", "-3"), ("--iters", "1.5"), ("--iters", "many"),
    ("--seed", "-1"), ("--seed", "0.5"),
    ("--burn-in", "-1"), ("--burn-in", "3"), ("--burn-in", "9"),
    ("--checkpoint-every", "0"), ("--checkpoint-every", "-2"),
    ("--min-weight", "-0.1"), ("--min-weight", "1"), ("--min-weight", "nan"),
    ("--min-weight", "inf"),
    ("--method", "magic"),
    ("--max-memory", "0"), ("--max-memory", "-1G"), ("--max-memory", "lots"),
    ("--max-memory", "nanG"),
])
@pytest.mark.parametrize("method", ["gibbs", "mh", "em"])
def test_bad_option_values(d, option, value, method):
    o = run_cli(_train(d, f"{option}={value}", method=method), watch=d)
    assert_clean_error(o, option, value)


@pytest.mark.parametrize("method", ["mh", "gibbs", "vb", "map", "cvb"])
def test_negative_alpha_never_prints_a_grammar(d, method):
    o = run_cli(_train(d, "--alpha", "-1", method=method), watch=d)
    assert_clean_error(o, "--alpha")
    assert o.stdout == ""


def test_an_estimator_refuses_a_sampler_checkpoint(d):
    ck = _checkpoint(d)
    o = run_cli(_train(d, "--resume", ck, method="em"), watch=d)
    assert_clean_error(o, str(ck))


def test_bad_decode(d):
    o = run_cli(["pcfg", "parse", d / "g.lt", d / "c.yld", "--decode", "best"], watch=d)
    assert_clean_error(o, "--decode", "best")


# --------------------------------------------------------------------------- readers
BAD_GRAMMARS = {
    "empty": (b"", "no rules"),
    "comments only": (b"# nothing\n\n% here\n", "no rules"),
    "no arrow": (b"S --> a\nS a b\n", ":2:"),
    "negative weight": (b"S --> a\n-1 S --> b\n", ":2:"),
    "nan weight": (b"nan S --> a\n", ":1:"),
    "inf weight": (b"S --> a\ninf S --> b\n", ":2:"),
    "huge weight": (b"1e400 S --> a\n", ":1:"),
    "overflowing weights": (b"1e308 S --> a\n1e308 S --> b\n", ":1: weight 1e+308"),
    "overflowing pseudocount": (b"1 1e300 S --> a\n", ":1: pseudocount 1e+300"),
    "zero pseudocount": (b"S --> a\n1 0 S --> b\n", ":2:"),
    "nan pseudocount": (b"1 nan S --> a\n", ":1:"),
    "word weight": (b"S --> a\nfoo S --> b\n", ":2:"),
    "missing parent": (b"S --> a\n1 --> b\n", ":2:"),
    "empty right side": (b"S --> a\nS -->\n", ":2:"),
    "two arrows": (b"S --> a --> b\n", ":1:"),
    "duplicate rule": (b"S --> a\nS --> b\nS --> a\n", ":3:"),
    "latin-1": (b"S --> a\nS --> caf\xe9\n", ":2:"),
    "binary": (b"\x00\x01\xff\xfe garbage", ":1:"),
    "unary cycle": (b"S --> A\nA --> S\n", "spectral radius"),
    "unary loop": (b"1 S --> S\n0 S --> a b\n", "spectral radius"),
}

BAD_CORPORA = {
    "empty": (b"", "no sentences"),
    "blank lines only": (b"\n\n  \n", "no sentences"),
    "blank line inside": (b"a b\n\nb a\n", ":2:"),
    "latin-1": (b"a b\nb \xe9\n", ":2:"),
    "none parse": (b"x y\nz\n", "none of the 2"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRAMMARS))
@pytest.mark.parametrize("command", ["train", "parse"])
def test_bad_grammar_files(d, case, command):
    data, where = BAD_GRAMMARS[case]
    (d / "bad.lt").write_bytes(data)
    argv = ["pcfg", command, d / "bad.lt", d / "c.yld"]
    o = run_cli(argv + (["--iters", "2", "--quiet"] if command == "train" else []), watch=d)
    assert_clean_error(o, str(d / "bad.lt"), where)


@pytest.mark.parametrize("case", sorted(BAD_CORPORA))
@pytest.mark.parametrize("method", ["em", "cvb", "gibbs", "mh"])
def test_bad_corpus_files(d, case, method):
    data, where = BAD_CORPORA[case]
    (d / "bad.yld").write_bytes(data)
    o = run_cli(["pcfg", "train", d / "g.lt", d / "bad.yld", "--method", method,
                 "--iters", "2", "--quiet"], watch=d)
    assert_clean_error(o, str(d / "bad.yld"), where)


@pytest.mark.parametrize("case", ["empty", "blank line inside", "latin-1"])
def test_bad_corpus_for_parse_and_heldout(d, case):
    data, where = BAD_CORPORA[case]
    (d / "bad.yld").write_bytes(data)
    o = run_cli(["pcfg", "parse", d / "g.lt", d / "bad.yld"], watch=d)
    assert_clean_error(o, str(d / "bad.yld"), where)
    o = run_cli(_train(d, "--heldout", d / "bad.yld"), watch=d)
    assert_clean_error(o, str(d / "bad.yld"), where)


@pytest.mark.parametrize("role", ["grammar", "corpus", "heldout"])
@pytest.mark.parametrize("kind, words", [("missing", "not found"), ("sub", "directory")])
def test_missing_and_directory_inputs(d, role, kind, words):
    p = d / kind
    argv = {"grammar": ["pcfg", "train", p, d / "c.yld", "--quiet"],
            "corpus": ["pcfg", "train", d / "g.lt", p, "--quiet"],
            "heldout": _train(d, "--heldout", p)}[role]
    assert_clean_error(run_cli(argv, watch=d), str(p), words)


def test_a_byte_order_mark_is_accepted(d):
    (d / "bom.lt").write_bytes(b"\xef\xbb\xbf" + GRAMMAR.encode())
    (d / "bom.yld").write_bytes(b"\xef\xbb\xbf" + CORPUS.encode())
    o = run_cli(["pcfg", "train", d / "bom.lt", d / "bom.yld", "--iters", "2", "--quiet"])
    assert o.code == 0, o.stderr
    assert o.stdout.splitlines()[0].endswith("S --> A B")


# --------------------------------------------------------------------------- outputs
@pytest.mark.parametrize("option", ["--out", "--trace-json", "--checkpoint"])
@pytest.mark.parametrize("target", ["f.txt/x.out", "nowhere/x.out", "sub"])
def test_unwritable_outputs_fail_before_any_work(d, option, target):
    o = run_cli(_train(d, option, d / target), watch=d)
    assert_clean_error(o, option, str(d / target))
    assert o.stdout == ""


# --------------------------------------------------------------------------- --resume
def _checkpoint(d, name="ck.json", method="gibbs", corpus=None):
    """A genuine checkpoint of a 2-sweep chain (optionally over another corpus)."""
    c = d / "c.yld"
    if corpus is not None:
        c = d / "other.yld"
        c.write_text(corpus)
    o = run_cli(["pcfg", "train", d / "g.lt", c, "--method", method, "--iters", "2",
                 "--quiet", "--checkpoint", d / name])
    assert o.code == 0, o.stderr
    return d / name


def _damage(case, path):
    data = path.read_bytes()
    if case == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "not json":
        path.write_text("this is not a checkpoint\n")
    elif case == "json list":
        path.write_text("[1, 2, 3]\n")
    elif case == "latin-1":
        path.write_bytes(b"{\"kind\": \"gibbs\xe9\"}")
    else:
        d = json.loads(data)
        if case == "nan counts":
            d["counts"][0] = "NaN"
        elif case == "bare NaN":
            path.write_text(json.dumps(d).replace('"counts": [', '"counts": [NaN, ', 1))
            return
        elif case == "negative alpha":
            d["alpha"][0] = -1.0
        elif case == "counts off":
            d["counts"][0] += 1
        elif case == "rule out of range":
            d["trees"][0] = [99]
        elif case == "missing field":
            del d["rng_state"]
        elif case == "bad rng":
            d["rng_state"] = {"bit_generator": "MT19937", "state": 3}
        elif case == "short trace":
            d["trace"] = d["trace"] * 3
        elif case == "wrong kind":
            d["kind"] = "mh"
        path.write_text(json.dumps(d))


DAMAGE = ["truncated", "empty", "not json", "json list", "latin-1", "nan counts",
          "bare NaN", "negative alpha", "counts off", "rule out of range", "missing field",
          "bad rng", "short trace", "wrong kind"]


@pytest.mark.parametrize("case", DAMAGE)
def test_damaged_resume(d, case):
    ck = _checkpoint(d)
    _damage(case, ck)
    o = run_cli(_train(d, "--resume", ck, "--checkpoint", ck), watch=d)
    assert_clean_error(o, str(ck))


@pytest.mark.parametrize("case", ["truncated", "garbage"])
def test_damaged_npz_resume(d, case):
    ck = _checkpoint(d, "ck.npz")
    data = ck.read_bytes()
    ck.write_bytes(data[: len(data) // 2] if case == "truncated" else b"PK\x03\x04junk")
    assert_clean_error(run_cli(_train(d, "--resume", ck), watch=d), str(ck))


def test_resume_from_another_corpus_grammar_or_sampler(d):
    ck = _checkpoint(d, corpus="a b\n")
    o = run_cli(_train(d, "--resume", ck), watch=d)
    assert_clean_error(o, str(ck), "different grammar or corpus")
    ck2 = _checkpoint(d, "mh.json", method="mh")
    assert_clean_error(run_cli(_train(d, "--resume", ck2), watch=d), str(ck2), "mh")


@pytest.mark.parametrize("kind, words", [("missing.json", "not found"), ("sub", "directory")])
def test_resume_missing_or_directory(d, kind, words):
    assert_clean_error(run_cli(_train(d, "--resume", d / kind), watch=d), str(d / kind),
                       words)


def test_checkpoint_holds_no_bare_nonfinite_numbers(d):
    ck = _checkpoint(d, method="mh")
    json.loads(ck.read_text(), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert np.isfinite(json.loads(ck.read_text())["counts"]).all()


@pytest.mark.parametrize("option, target, other", [
    ("--out", "c.yld", "corpus"), ("--out", "g.lt", "grammar"),
    ("--trace-json", "c.yld", "corpus"), ("--checkpoint", "g.lt", "grammar"),
    ("--trace-json", "o.lt", "--out")])
def test_an_output_over_an_input_or_another_output_is_refused(d, option, target, other):
    extra = ["--out", d / "o.lt"] if other == "--out" else []
    o = run_cli(_train(d, *extra, option, d / target), watch=d)
    assert_clean_error(o, option, other)


@pytest.mark.parametrize("command", ["train", "parse"])
def test_a_sentence_too_long_for_memory_is_named_before_work(d, command):
    (d / "long.yld").write_text("a b\n" + " ".join(["a"] * 20000) + "\n")
    argv = ["pcfg", command, d / "g.lt", d / "long.yld"]
    o = run_cli(argv + (["--out", d / "o.lt"] if command == "train" else []), watch=d)
    assert_clean_error(o, f"{d / 'long.yld'}:2:", "20000 tokens", "MiB")
    (d / "long.yld").write_text("a b\n" + " ".join(["a"] * 30) + "\n")
    o = run_cli(argv + ["--max-memory", "20K"], watch=d)
    assert_clean_error(o, f"{d / 'long.yld'}:2:", "30 tokens", "--max-memory")


@pytest.mark.parametrize("change, named", [
    (["--alpha", "0.25"], "--alpha"), (["--burn-in", "1"], "--burn-in"),
    (["--seed", "5"], "--seed"), (["--resample-alpha"], "--resample-alpha"),
    (["--heldout", "c.yld"], "--heldout"), (["--max-memory", "1G"], "--max-memory")])
def test_resume_with_other_options_names_the_option(d, change, named):
    ck = _checkpoint(d)
    change = [str(d / x) if x.endswith(".yld") else x for x in change]
    o = run_cli(_train(d, "--resume", ck, *change), watch=d)
    assert_clean_error(o, str(ck), named)


def test_large_weights_in_range_parse_as_their_ratios(d):
    """Control of the weight bound: weights up to it are normalised per parent without
    overflow, so a grammar scaled by 1e100 parses exactly as the unscaled one."""
    scaled = "".join(f"1e100 {line}\n" for line in GRAMMAR.splitlines())
    (d / "big.lt").write_text(scaled)
    plain = run_cli(["pcfg", "parse", d / "g.lt", d / "c.yld"])
    big = run_cli(["pcfg", "parse", d / "big.lt", d / "c.yld"])
    assert plain.code == big.code == 0, big.stderr
    assert big.stdout == plain.stdout and "(no parse)" not in big.stdout


def test_normalising_finite_weights_whose_sum_overflows():
    from strgm.grammars.cfg import normalise_per_lhs

    p = normalise_per_lhs(np.array([1e308, 1e308, 3e307, 1.0]), np.array([0, 0, 0, 1]), 2)
    assert np.allclose(p, [1 / 2.3, 1 / 2.3, 0.3 / 2.3, 1.0])
