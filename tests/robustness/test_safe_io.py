"""safe_io: located decoding errors, BOM, non-regular files, atomic writes that leave the
target untouched on failure, atomic directory swaps, strict JSON round trips."""

import json
import math
import os

import pytest

from strgm.errors import InputError
from strgm.safe_io import (atomic_directory, atomic_write_text, check_output, json_float,
                           read_text, strict_json)


def test_read_text_drops_a_bom_and_locates_bad_bytes(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_bytes(b"\xef\xbb\xbfab\tc\n")
    assert read_text(p) == "ab\tc\n"
    p.write_bytes(b"ok\nok\nbad \xff here\n")
    with pytest.raises(InputError, match=r"a\.tsv:3: .*0xff at offset 10"):
        read_text(p)


def test_read_text_refuses_missing_directories_and_pipes(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_text(tmp_path / "nope")
    with pytest.raises(InputError, match="is a directory"):
        read_text(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_text(fifo)  # would block forever if opened


def test_check_output_refuses_what_cannot_be_written(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    for bad, why in [(tmp_path / "f.txt" / "out.json", "is not a directory"),
                     (tmp_path / "missing" / "out.json", "does not exist"),
                     (tmp_path, "is a directory")]:
        with pytest.raises(InputError, match=why) as e:
            check_output(bad, "--json")
        assert "--json" in str(e.value)
    with pytest.raises(InputError, match="not a directory"):
        check_output(tmp_path / "f.txt", "--save-beliefs", directory=True)
    check_output(tmp_path / "new.json", "--json")  # fine
    check_output(None, "--json")
    check_output("-", "--dot")


def test_atomic_write_leaves_the_target_untouched_when_writing_fails(tmp_path, monkeypatch):
    p = tmp_path / "out.json"
    atomic_write_text(p, "old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(InputError, match="No space left"):
        atomic_write_text(p, "new")
    assert p.read_text() == "old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]  # no temp left over


def test_atomic_directory_swaps_only_complete_directories(tmp_path):
    d = tmp_path / "beliefs"
    with atomic_directory(d) as t:
        (t / "a").write_text("1")
        (t / "b").write_text("1")
    with pytest.raises(RuntimeError):
        with atomic_directory(d) as t:
            (t / "a").write_text("2")
            raise RuntimeError("interrupted half way")
    assert {x.name: x.read_text() for x in d.iterdir()} == {"a": "1", "b": "1"}
    with atomic_directory(d) as t:
        (t / "c").write_text("3")
    assert sorted(x.name for x in d.iterdir()) == ["c"]  # replaced whole, not merged
    assert sorted(x.name for x in tmp_path.iterdir()) == ["beliefs"]


def test_strict_json_round_trips_non_finite_floats():
    import numpy as np

    obj = {"a": math.inf, "b": [-math.inf, float("nan"), np.float64(1.5), np.arange(2)]}
    text = strict_json(obj)
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert back["a"] == "Infinity" and back["b"][0] == "-Infinity"
    assert json_float(back["a"]) == math.inf and math.isnan(json_float(back["b"][1]))
    assert back["b"][2:] == [1.5, [0, 1]]
    with pytest.raises(ValueError):
        json_float("1.0")


def test_an_interrupted_swap_puts_the_earlier_directory_back(tmp_path, monkeypatch):
    d = tmp_path / "beliefs"
    with atomic_directory(d) as t:
        (t / "a").write_text("1")
    real_rename = os.rename

    def rename(src, dst):
        if str(src).startswith(str(tmp_path / ".beliefs.new-")):
            raise KeyboardInterrupt  # Ctrl-C between the two renames
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(d) as t:
            (t / "a").write_text("2")
    monkeypatch.setattr(os, "rename", real_rename)
    assert (d / "a").read_text() == "1"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["beliefs"]


def test_leftovers_of_a_killed_save_are_removed_by_the_next_save(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f".b.new-{dead}-xyz").mkdir()
    (tmp_path / f".b.new-{os.getpid()}-live").mkdir()  # this process: not stale
    (tmp_path / ".b.new-notapid").mkdir()  # not ours: left alone
    with atomic_directory(tmp_path / "b") as t:
        (t / "f").write_text("x")
    names = sorted(x.name for x in tmp_path.iterdir())
    assert names == [f".b.new-{os.getpid()}-live", ".b.new-notapid", "b"]


def test_temporary_files_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f".ck.json.{dead}-abc.tmp").write_text("half")
    (tmp_path / ".other.json.1-abc.tmp").write_text("someone else's")
    atomic_write_text(tmp_path / "ck.json", "{}")
    assert sorted(x.name for x in tmp_path.iterdir()) == [".other.json.1-abc.tmp", "ck.json"]
