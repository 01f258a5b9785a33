"""Saved beliefs (strgm.inference.saved): a loaded result answers every query with the
numbers of the result it was saved from, for every inference method; bad directories
give errors that name the file and the variable."""

import json
import shutil

import numpy as np
import pynini
import pytest

import fst_factors.transducers as ff
from tests.fst_factors.wfsa_oracles import enumerate_strings
from fst_factors.alphabet import Alphabet
from strgm.cli import main
from strgm.errors import GraphError, InputError
from strgm.graph import FactorGraph
from strgm.inference import InferenceResult, infer
from strgm.safe_io import sha256_file

ALPH = Alphabet(["a", "b"], boundary="+")
LATENT = ("M1", "M2", "W")


def small_graph():
    """M1, M2 ~ prior; W = M1 + M2; S = edit(W) observed (loopless, so BP is exact)."""
    g = FactorGraph(ALPH)
    for v in LATENT:
        g.add_variable(v)
    g.add_variable("S", observed="abb")
    g.add_unary("p1", "M1", ff.geometric_unigram_prior(ALPH.size, 1.0))
    g.add_unary("p2", "M2", ff.geometric_unigram_prior(ALPH.size, 1.0))
    g.add_concat("c", ["M1", "M2"], "W", boundary=True)
    g.add_binary("t", "W", "S", ff.edit_transducer(2, ff.EditParams(0.8), boundary_label=3))
    return g


def assert_same_kbest(got, want, rtol=1e-9):
    """k-best lists agree: the same strings in the same order (exactly) and the same
    probabilities up to ``rtol`` (pytest.approx does not take nested pairs)."""
    assert [s for s, _ in got] == [s for s, _ in want]
    assert np.allclose([p for _, p in got], [p for _, p in want], rtol=rtol, atol=0)


RUNS = {"bp": {}, "pruned": {"kbest": 5},
        "ep": {"order": 2, "relay": False}, "pep": {"relay": False}}


@pytest.fixture(scope="module")
def results():
    g = small_graph()
    return {m: infer(g, m, max_iters=3, **opts) for m, opts in RUNS.items()}


@pytest.mark.parametrize("method", list(RUNS))
def test_loaded_beliefs_give_the_same_answers(results, method, tmp_path):
    r = results[method]
    r.save(tmp_path / "saved")
    loaded = InferenceResult.load(tmp_path / "saved")
    assert loaded.variables == r.variables == list(LATENT)
    assert (loaded.method, loaded.iterations, loaded.converged) == (
        r.method, r.iterations, r.converged)
    strings = list(enumerate_strings(ALPH.size, 5))
    for v in LATENT:
        b, c = r.belief(v), loaded.belief(v)
        p, q = b.logprobs(strings), c.logprobs(strings)
        assert np.array_equal(np.isfinite(p), np.isfinite(q))
        assert np.allclose(p[np.isfinite(p)], q[np.isfinite(q)], atol=1e-9)
        # the stored log Z normalises the stored automaton (not only the original)
        assert np.exp(np.logaddexp.reduce(q)) <= 1 + 1e-9
        assert_same_kbest(c.kbest(4), b.kbest(4))
        assert c.sample(5, seed=3) == b.sample(5, seed=3)
    assert loaded.to_dict(3)["beliefs"] == r.to_dict(3)["beliefs"]


def test_saved_files_are_standard_openfst_with_the_alphabet(results, tmp_path):
    index = results["ep"].save(tmp_path)
    data = json.loads(index.read_text(encoding="utf-8"))
    assert data["format"] == "strgm-beliefs-v2" and data["settings"]["order"] == 2
    f = pynini.Fst.read(str(tmp_path / data["variables"]["W"]["file"]))
    st = f.input_symbols()
    assert [st.find(i) for i in range(1, 4)] == ["a", "b", "+"]
    # the result's own belief is untouched by the save (symbols are set on a copy)
    assert results["ep"].belief("W").fst.input_symbols() is None


def test_load_reports_what_is_wrong(results, tmp_path):
    with pytest.raises(InputError, match="missing beliefs.json"):
        InferenceResult.load(tmp_path / "nowhere")
    d = tmp_path / "s"
    results["pruned"].save(d)
    shutil.copytree(d, tmp_path / "bad")
    name = json.loads((d / "beliefs.json").read_text())["variables"]["M2"]["file"]
    (tmp_path / "bad" / name).write_bytes(b"not an fst")
    with pytest.raises(InputError, match=r"variable 'M2'") as e:
        InferenceResult.load(tmp_path / "bad")
    assert name in str(e.value)
    # a belief file from a save over another alphabet
    other = FactorGraph(Alphabet(["x", "y"], boundary="+"))
    other.add_variable("M")
    other.add_unary("p", "M", ff.geometric_unigram_prior(3, 1.0))
    infer(other, "bp").save(tmp_path / "other")
    foreign = next((tmp_path / "other").glob("*.fst"))
    shutil.copy(foreign, tmp_path / "bad" / name)
    with pytest.raises(InputError, match=r"variable 'M2' (has \d+ bytes|differs from the file saved)"):
        InferenceResult.load(tmp_path / "bad")
    # ... and even when the index is edited to carry the foreign file's checksum
    index = json.loads((tmp_path / "bad" / "beliefs.json").read_text(encoding="utf-8"))
    index["variables"]["M2"].update(bytes=foreign.stat().st_size,
                                    sha256=sha256_file(foreign))
    (tmp_path / "bad" / "beliefs.json").write_text(json.dumps(index), encoding="utf-8")
    with pytest.raises(InputError, match="symbol table that differs"):
        InferenceResult.load(tmp_path / "bad")
    (d / "beliefs.json").write_text('{"format": "something else"}')
    with pytest.raises(InputError, match="not a saved strgm result"):
        InferenceResult.load(d)
    loaded = InferenceResult.load(tmp_path / "other")
    with pytest.raises(GraphError, match="no belief for variable 'W'"):
        loaded.belief("W")


def test_cli_saves_and_queries_beliefs(tmp_path, capsys):
    f = tmp_path / "toy.tsv"
    f.write_text("R1\tro\nR1 PAST\trod\nR2\tsim\nR2 PAST\tsimd\n", encoding="utf-8")
    d = tmp_path / "beliefs"
    assert main(["infer", str(f), "--quiet", "--save-beliefs", str(d)]) == 0
    assert f"saved 5 beliefs to {d}" in capsys.readouterr().err
    out = tmp_path / "q.json"
    assert main(["beliefs", str(d), "--var", "M:PAST", "--top", "2", "--prob", "d",
                 "--entropy", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "5 beliefs from method pruned" in text and "M:PAST\td " in text
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["format"] == "strgm-beliefs" and doc["strgm_version"]
    data = doc["beliefs"]
    assert list(data) == ["M:PAST"] and data["M:PAST"]["top"][0][0] == "d"
    assert data["M:PAST"]["prob"]["d"] == pytest.approx(data["M:PAST"]["top"][0][1])
    assert data["M:PAST"]["entropy_nats"] >= 0
    # a string with a symbol outside the alphabet: probability 0, and the output says why
    assert main(["beliefs", str(d), "--var", "M:PAST", "--prob", "dq", "--json",
                 str(out)]) == 0
    assert "P(dq) = 0 (symbol 'q' is not in the alphabet)" in capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))["beliefs"]["M:PAST"]
    assert data["prob"] == {"dq": 0.0} and data["not_in_alphabet"] == {"dq": ["q"]}
    assert main(["beliefs", str(d), "--var", "M:PAST", "--top", "1", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["beliefs"]["M:PAST"]["top"][0][0] == "d"  # JSON only
    assert main(["beliefs", str(d), "--var", "M:NOPE"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--var" in err and "'M:NOPE'" in err
    assert main(["beliefs", str(tmp_path)]) == 2
    assert "missing beliefs.json" in capsys.readouterr().err


def _files(d):
    return sorted(p.name for p in d.iterdir())


def test_resave_replaces_the_whole_directory(results, tmp_path):
    """A re-save with fewer variables leaves no stale file of the earlier save, and the
    index records each file's size and checksum; the index is strict JSON."""
    d = tmp_path / "s"
    results["bp"].save(d)
    assert len(_files(d)) == 4
    results["bp"].save(d, names=["W"])
    assert _files(d) == ["0000_W.fst", "beliefs.json"]
    assert _files(tmp_path) == ["s"]  # no temporary or backup directory left
    text = (d / "beliefs.json").read_text(encoding="utf-8")
    entry = json.loads(text)["variables"]["W"]
    assert entry["bytes"] == (d / "0000_W.fst").stat().st_size
    assert entry["sha256"] == sha256_file(d / "0000_W.fst")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the index"))
    assert json.loads(text)["belief_changes"][0] == "Infinity"
    assert InferenceResult.load(d).deltas == results["bp"].deltas  # inf read back


def test_interrupted_resave_keeps_the_earlier_save(results, tmp_path, monkeypatch):
    """An error (or interruption) half-way through a re-save leaves the earlier save
    untouched and loadable; a broken save that wrote in place would fail here."""
    import strgm.inference.saved as saved

    d = tmp_path / "s"
    results["pep"].save(d)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    calls = []

    def failing_sha(path):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return sha256_file(path)

    monkeypatch.setattr(saved, "sha256_file", failing_sha)
    with pytest.raises(KeyboardInterrupt):
        results["bp"].save(d)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert _files(tmp_path) == ["s"]
    assert InferenceResult.load(d).method == "pep"


def test_swapped_belief_files_are_refused(results, tmp_path):
    d = tmp_path / "s"
    results["bp"].save(d)
    a, b = d / "0000_M1.fst", d / "0002_W.fst"
    ta, tb = a.read_bytes(), b.read_bytes()
    a.write_bytes(tb)
    b.write_bytes(ta)
    with pytest.raises(InputError, match=r"0000_M1.fst: the belief of variable 'M1'"):
        InferenceResult.load(d)


def test_save_refuses_a_directory_with_other_files(results, tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="notes.txt"):
        results["bp"].save(d)
    assert _files(d) == ["notes.txt"]
    with pytest.raises(InputError, match="--save-beliefs.*notes.txt"):
        from strgm.inference.saved import check_save_target
        check_save_target(d)


def test_earlier_format_and_loose_json_are_refused(results, tmp_path):
    d = tmp_path / "s"
    results["bp"].save(d)
    index = (d / "beliefs.json").read_text(encoding="utf-8")
    (d / "beliefs.json").write_text(index.replace("strgm-beliefs-v2", "strgm-beliefs-v1"))
    with pytest.raises(InputError, match="earlier strgm.*re-save"):
        InferenceResult.load(d)
    data = json.loads(index)
    data["seconds"] = float("nan")
    (d / "beliefs.json").write_text(json.dumps(data))  # Python writes a bare NaN
    with pytest.raises(InputError, match="not JSON"):
        InferenceResult.load(d)
    data["seconds"] = "NaN"  # the strict spelling is read back
    (d / "beliefs.json").write_text(json.dumps(data))
    assert np.isnan(InferenceResult.load(d).seconds)


def test_save_into_the_current_directory(results, tmp_path, monkeypatch):
    """``save(".")`` swaps the real directory (an empty one here), not the name ".". """
    d = tmp_path / "here"
    d.mkdir()
    monkeypatch.chdir(d)
    results["bp"].save(".")
    monkeypatch.chdir(tmp_path)
    assert InferenceResult.load(d).variables == list(LATENT)
    assert _files(tmp_path) == ["here"]


def test_load_points_at_the_backup_left_between_the_two_renames(results, tmp_path):
    """A save interrupted between its two renames leaves the target absent and the
    earlier save under .NAME.old-*: the loader says where it is."""
    d = tmp_path / "s"
    results["bp"].save(d)
    d.rename(tmp_path / ".s.old-x1")
    with pytest.raises(InputError, match=r"previous beliefs in .*\.s\.old-x1 \(rename it back"):
        InferenceResult.load(d)
    (tmp_path / ".s.old-x1").rename(d)
    assert InferenceResult.load(d).method == "bp"


def test_resave_needs_no_force_and_foreign_files_need_it(results, tmp_path):
    """Only files the earlier save's manifest lists are ours to replace: a re-save over
    an earlier save works without ``force`` (control); a foreign file stops the save and
    is untouched; with ``force=True`` it is kept beside the new save, also on the next
    forced re-save, while the files of the earlier save are replaced."""
    d = tmp_path / "s"
    results["bp"].save(d)
    results["pep"].save(d)  # control: an earlier save alone is replaced
    assert InferenceResult.load(d).method == "pep"
    (d / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match=r"/s: .*notes\.txt.*force"):
        results["bp"].save(d)
    assert (d / "notes.txt").read_text() == "keep me"
    assert InferenceResult.load(d).method == "pep"  # the earlier save is untouched too
    results["bp"].save(d, names=["W"], force=True)
    assert _files(d) == ["0000_W.fst", "beliefs.json", "notes.txt"]
    assert (d / "notes.txt").read_text() == "keep me"
    results["pep"].save(d, force=True)
    assert _files(d) == ["0000_M1.fst", "0001_M2.fst", "0002_W.fst", "beliefs.json",
                         "notes.txt"]
    assert InferenceResult.load(d).method == "pep"
    assert _files(tmp_path) == ["s"]  # no staging or backup directory left


def test_files_named_like_a_save_are_never_deleted(results, tmp_path):
    """A user's ``beliefs.json`` (not a strgm manifest) and ``0001_devoicing.fst`` are
    not ours by their names: the save is refused with and without ``force`` and both
    stay as they were. A manifest of another format is no manifest either."""
    d = tmp_path / "mine"
    d.mkdir()
    (d / "beliefs.json").write_text('{"my": "notes"}\n')
    (d / "0001_devoicing.fst").write_text("my rule\n")
    for force in (False, True):
        with pytest.raises(InputError, match=r"mine: .*'0001_devoicing\.fst'"):
            results["bp"].save(d, force=force)
    assert (d / "beliefs.json").read_text() == '{"my": "notes"}\n'
    assert (d / "0001_devoicing.fst").read_text() == "my rule\n"
    (d / "0001_devoicing.fst").unlink()
    (d / "beliefs.json").write_text(json.dumps({"format": "strgm-beliefs-v1",
                                                "variables": {}}))
    with pytest.raises(InputError, match=r"mine: .*'beliefs\.json'"):
        results["bp"].save(d, force=True)
    assert json.loads((d / "beliefs.json").read_text())["format"] == "strgm-beliefs-v1"


def test_a_manifest_owns_only_the_files_it_lists(results, tmp_path):
    """An earlier save's manifest does not own a save-like file it does not list: a
    ``0009_extra.fst`` dropped into the directory is refused (and kept) even though the
    rest is a real save; a file the manifest lists is replaced (control)."""
    d = tmp_path / "s"
    results["bp"].save(d)
    (d / "0009_extra.fst").write_bytes((d / "0000_M1.fst").read_bytes())
    for force in (False, True):
        with pytest.raises(InputError, match="0009_extra.fst"):
            results["pep"].save(d, force=force)
    assert (d / "0009_extra.fst").is_file()
    (d / "0009_extra.fst").unlink()
    index = json.loads((d / "beliefs.json").read_text())
    index["variables"]["W"]["file"] = "0009_extra.fst"
    (d / "0002_W.fst").rename(d / "0009_extra.fst")
    (d / "beliefs.json").write_text(json.dumps(index))
    results["pep"].save(d)
    assert "0009_extra.fst" not in _files(d)
