"""OpenFst files are verified before OpenFst reads them (:mod:`fst_factors.wfsa.fst_verify`).

Fuzz (hypothesis, in-process): every mutated file (:mod:`tests.robustness.fst_mutations`) is
either refused by the verifier with one line naming the file, or read by OpenFst into the
automaton the file describes (OpenFst's own serialisation of what it read parses to the
same states and arcs), and ``connect`` — which follows every arc — survives it. The same
kinds of file, drawn by a seeded generator, are read in a child process, where a crash
would be an exit by signal: none is; and a verifier without the target check (the broken
variant) lets a file through that kills the child. The cases of the review (an arc to
state 1,000,000 or −5, a count of 10¹⁵, a log64 body labelled ``standard``, a ``const``
FST) are refused through every reader: :func:`read_fst`, ``FactorGraph.add_fst_file``,
``InferenceResult.load`` and ``strgm beliefs``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pynini
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fst_factors.alphabet import Alphabet
from strgm.errors import InputError
from strgm.graph import FactorGraph
from strgm.safe_io import sha256_file
from fst_factors.wfsa.fst_file import read_fst
from fst_factors.wfsa.fst_verify import verify_fst_bytes
from tests.robustness import fst_mutations as fm
from tests.robustness.harness import assert_clean_error, run_cli

BASES = fm.bases()
PARSED = {k: fm.parse(v) for k, v in BASES.items()}


def _crafted() -> dict:
    """The files of the review, each with what the refusal must say."""
    b, p = BASES["edit"], PARSED["edit"]
    target_at = p["arcs"][0] + 8 + p["w"]
    return {"target_1e6": (fm.put(b, target_at, "<i", 10 ** 6), "leads to state 1000000"),
            "target_neg": (fm.put(b, target_at, "<i", -5), "leads to state -5"),
            "count_1e15": (fm.put(b, p["counts"][0], "<q", 10 ** 15), "1000000000000000"),
            "standard": (fm.rename(b, 1, "standard"), "claims"),
            "const": (fm.const_file(), "'const'")}


CRAFTED = _crafted()


def _read_back(blob: bytes) -> None:
    """Refused with one line naming the file, or read as the file describes."""
    try:
        v = verify_fst_bytes(blob, "mut.fst")
    except InputError as e:
        assert str(e).startswith("mut.fst: not a valid OpenFst file: ")
        assert "\n" not in str(e)
        return
    fst = pynini.Fst.read_from_string(v.data)
    want, got = fm.parse(blob), fm.parse(fst.write_to_string())
    assert (got["arc_type"], got["start"], got["states"]) == \
        (want["arc_type"], want["start"], want["states"])
    fst.connect()


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(BASES)))
    kind = draw(st.sampled_from(fm.KINDS))
    return fm.mutate(BASES[name], PARSED[name], kind,
                     lambda lo, hi: draw(st.integers(lo, hi)), lambda s: draw(st.sampled_from(s)))


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_every_mutated_file_is_refused_or_read_back_equal(blob):
    _read_back(blob)


def test_good_files_read_back_equal():
    for blob in BASES.values():
        v = verify_fst_bytes(blob, "good.fst")
        assert fm.parse(pynini.Fst.read_from_string(v.data).write_to_string())["states"] \
            == fm.parse(blob)["states"]


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_the_crafted_files_are_refused_by_read_fst(tmp_path, case):
    blob, says = CRAFTED[case]
    path = tmp_path / f"{case}.fst"
    path.write_bytes(blob)
    with pytest.raises(InputError, match=str(path)) as e:
        read_fst(path)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("case", ["target_1e6", "count_1e15", "const"])
def test_the_crafted_files_are_refused_as_factors(tmp_path, case):
    path = tmp_path / f"{case}.fst"
    path.write_bytes(CRAFTED[case][0])
    g = FactorGraph(Alphabet("ab"))
    g.add_variable("U")
    g.add_variable("S")
    with pytest.raises(InputError, match=f"{case}.fst"):
        g.add_fst_file("F", str(path), "U", "S")


# ------------------------------------------------------------------ in a child process
CHILD = """
import glob, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # an allocation storm aborts
from strgm.errors import InputError
from fst_factors.wfsa import fst_verify
from fst_factors.wfsa.fst_file import read_fst
if sys.argv[1] == "no_target_check":  # the broken variant
    fst_verify._targets_problem = lambda recs, n: -1
refused = read = 0
for path in sorted(glob.glob(sys.argv[2] + "/*.fst")):
    try:
        fst = read_fst(path)
    except InputError:
        refused += 1
        continue
    fst.connect()
    read += 1
print(refused, read)
"""


def _child(mode: str, directory) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, mode, str(directory)],
                          capture_output=True, text=True, timeout=300)


def _batch(d, count: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for i in range(count):
        name = rng.choice(sorted(BASES))
        blob = fm.mutate(BASES[name], PARSED[name], rng.choice(fm.KINDS), rng.randint,
                         rng.choice)
        (d / f"{i:04d}.fst").write_bytes(blob)
    for case, (blob, _) in CRAFTED.items():
        (d / f"crafted_{case}.fst").write_bytes(blob)


def test_a_batch_of_mutated_files_never_crashes_the_reader(tmp_path):
    _batch(tmp_path, 300)
    p = _child("verified", tmp_path)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    refused, read = map(int, p.stdout.split())
    assert refused + read == 300 + len(CRAFTED) and refused >= len(CRAFTED) and read > 0


def test_a_verifier_without_the_target_check_lets_a_crash_through(tmp_path):
    (tmp_path / "bad.fst").write_bytes(CRAFTED["target_1e6"][0])
    control = _child("verified", tmp_path)
    assert control.returncode == 0 and control.stdout.split() == ["1", "0"], control.stderr
    broken = _child("no_target_check", tmp_path)
    assert broken.returncode < 0, (broken.returncode, broken.stdout)  # killed by a signal


# ------------------------------------------------------------------ saved beliefs
@pytest.fixture
def saved(tmp_path):
    import fst_factors.transducers as ff
    from strgm.inference import infer

    alph = Alphabet(["a", "b"], boundary="+")
    g = FactorGraph(alph)
    g.add_variable("M1")
    g.add_unary("p", "M1", ff.geometric_unigram_prior(alph.size, 1.0))
    d = tmp_path / "saved"
    infer(g, "bp").save(d)
    return d


def _swap_in(d, blob: bytes) -> str:
    """Replace M1's file by ``blob`` and tamper the index to match (size, checksum)."""
    index = json.loads((d / "beliefs.json").read_text(encoding="utf-8"))
    entry = index["variables"]["M1"]
    f = d / entry["file"]
    f.write_bytes(blob)
    entry.update(bytes=f.stat().st_size, sha256=sha256_file(f))
    (d / "beliefs.json").write_text(json.dumps(index), encoding="utf-8")
    return entry["file"]


def _belief_blob(d) -> bytes:
    index = json.loads((d / "beliefs.json").read_text(encoding="utf-8"))
    return (d / index["variables"]["M1"]["file"]).read_bytes()


def test_a_belief_with_a_bad_target_is_refused_by_load(saved):
    from strgm.inference.result import InferenceResult

    blob = _belief_blob(saved)
    p = fm.parse(blob)
    name = _swap_in(saved, fm.put(blob, p["arcs"][0] + 8 + p["w"], "<i", 10 ** 6))
    with pytest.raises(InputError, match=name) as e:
        InferenceResult.load(saved)
    assert "leads to state 1000000" in str(e.value)


@pytest.mark.parametrize("damage", ["target", "standard"])
def test_strgm_beliefs_refuses_a_crafted_belief(saved, tmp_path, damage):
    blob = _belief_blob(saved)
    p = fm.parse(blob)
    bad = {"target": fm.put(blob, p["arcs"][0] + 8 + p["w"], "<i", -5),
           "standard": fm.rename(blob, 1, "standard")}[damage]
    name = _swap_in(saved, bad)
    o = run_cli(["beliefs", str(saved)], watch=tmp_path, subprocess_timeout=120)
    assert_clean_error(o, name, "variable 'M1'")
