"""strgm.distributed.files without a cluster: FILE arguments expanded (files,
directories, globs) in a fixed order, and one task's outcome (record, captured output,
warnings, a StrgmError as its error line)."""

import os
import warnings

import pytest

from strgm.distributed.cluster import TaskPool
from strgm.distributed.files import expand_inputs, file_task, run_files
from strgm.errors import InputError, OptionError


@pytest.fixture()
def tree(tmp_path):
    for name in ("b.tsv", "a.tsv", "c.csv", "notes.txt"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_one_plain_file_keeps_single_mode(tree):
    assert expand_inputs([str(tree / "a.tsv")]) == ([str(tree / "a.tsv")], False)


def test_directory_glob_and_duplicates(tree):
    files, several = expand_inputs([str(tree)])
    assert several and files == [str(tree / n) for n in ("a.tsv", "b.tsv", "c.csv")]
    files, several = expand_inputs([str(tree / "*.tsv"), str(tree / "a.tsv")])
    assert several and files == [str(tree / "a.tsv"), str(tree / "b.tsv")]  # a.tsv once


def test_empty_directory_and_unmatched_glob_name_the_argument(tree):
    with pytest.raises(OptionError, match="no .tsv or .csv.*sub"):
        expand_inputs([str(tree / "sub")])
    with pytest.raises(OptionError, match=r"matches no file.*\*\.none"):
        expand_inputs([str(tree / "*.none")])


def _job(path, options):
    print("report of", path)
    warnings.warn("same warning")
    warnings.warn("same warning")
    if options.get("fail"):
        raise InputError("bad line", path, 3)
    return {"file": path, "k": options["k"]}


def test_file_task_captures_output_warnings_and_errors():
    ok = file_task("p.tsv", _job, {"k": 1})
    assert ok["record"] == {"file": "p.tsv", "k": 1} and ok["error"] is None
    assert ok["text"] == "report of p.tsv\n" and ok["warnings"] == ["same warning"]
    bad = file_task("q.tsv", _job, {"k": 1, "fail": True})
    assert bad["record"] is None and bad["error"] == "q.tsv:3: bad line"


def test_run_files_serial_keeps_order():
    out = run_files(TaskPool(None), _job, ["x", "y", "z"], {"k": 2})
    assert [o["record"]["file"] for o in out] == ["x", "y", "z"]


class _RecordingPool(TaskPool):
    """A serial pool that remembers the order in which tasks were handed to it."""

    def __init__(self):
        super().__init__(None)
        self.submitted = []

    def map(self, fn, items, *shared, key="strgm"):
        self.submitted = list(items)
        return super().map(fn, items, *shared, key=key)


def test_run_files_submits_largest_first_and_returns_in_input_order(tmp_path):
    sizes = {"small.tsv": 10, "large.tsv": 1000, "mid.tsv": 100, "also_mid.tsv": 100}
    paths = []
    for name, n in sizes.items():
        (tmp_path / name).write_text("x" * n)
        paths.append(str(tmp_path / name))
    pool = _RecordingPool()
    out = run_files(pool, _job, paths, {"k": 1})
    assert [o["record"]["file"] for o in out] == paths  # the caller's order
    assert [os.path.basename(p) for p in pool.submitted] == \
        ["large.tsv", "mid.tsv", "also_mid.tsv", "small.tsv"]  # LPT; ties in input order
