"""Bad inputs for memory: tiny budgets, a very long word, .fst headers that lie.

Each run must stop with exit 2 and one line naming the message (factor and variable) and
the option to change, before OpenFst could abort with ``std::bad_alloc``.
"""

from __future__ import annotations

import random
import struct

import pytest

import fst_factors.transducers as ff
from fst_factors.alphabet import Alphabet
from strgm.errors import InputError
from strgm.graph import FactorGraph

from .harness import assert_clean_error, run_cli

SMALL = "R1\tpata\nR1 PAST\tpatad\nR2\tkiti\nR2 PAST\tkitid\nR3 PAST\tbod\n"


def paradigm(tmp_path, text=SMALL, name="p.tsv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_tiny_max_states_names_the_message(tmp_path):
    p = paradigm(tmp_path)
    line = assert_clean_error(run_cli(["infer", p, "--method", "bp", "--max-states", "2",
                                       "--quiet"], watch=tmp_path),
                              "--max-states 2", "message from", "--method pruned")
    assert "factor '" in line and "variable '" in line


def test_tiny_max_memory_refuses_before_building(tmp_path):
    p = paradigm(tmp_path)
    line = assert_clean_error(run_cli(["infer", p, "--method", "bp", "--max-memory", "1M",
                                       "--quiet"], watch=tmp_path), "--max-memory")
    assert "could reach" in line and ("factor '" in line or "variable '" in line)


def test_max_memory_option_is_validated(tmp_path):
    p = paradigm(tmp_path)
    assert_clean_error(run_cli(["infer", p, "--max-memory", "lots"], watch=tmp_path),
                       "--max-memory")


def test_a_500_segment_word_stops_cleanly_and_quickly(tmp_path):
    rng = random.Random(0)
    root = "".join(rng.choice("ptkbdgaeiou") for _ in range(500))
    text = f"R1\t{root}\nR1 PAST\t{root}d\nR1 3SG\t{root}z\nR2\tkat\nR2 PAST\tkatd\n"
    p = paradigm(tmp_path, text, "long.tsv")
    o = run_cli(["infer", p, "--method", "bp", "--max-memory", "2G", "--quiet"],
                watch=tmp_path, subprocess_timeout=60)
    line = assert_clean_error(o, "R1")
    assert "--max-memory" in line or "--max-states" in line


def _header_states_offset(blob: bytes) -> int:
    pos = 4
    for _ in range(2):
        (n,) = struct.unpack_from("<i", blob, pos)
        pos += 4 + n
    return pos + 4 + 4 + 8 + 8


@pytest.mark.parametrize("damage", ["huge", "truncated_header", "magic"])
def test_fst_file_with_a_lying_header_is_an_input_error(tmp_path, damage):
    good = tmp_path / "good.fst"
    ff.edit_transducer(2).write(str(good))
    blob = good.read_bytes()
    at = _header_states_offset(blob)
    bad = {"huge": blob[:at] + struct.pack("<q", 10 ** 15) + blob[at + 8:],
           "truncated_header": blob[:at + 3],
           "magic": b"\0\0\0\0" + blob[4:]}[damage]
    path = tmp_path / "bad.fst"
    path.write_bytes(bad)
    g = FactorGraph(Alphabet("ab"))
    g.add_variable("U")
    g.add_variable("S")
    with pytest.raises(InputError, match="bad.fst"):
        g.add_fst_file("F", str(path), "U", "S")
