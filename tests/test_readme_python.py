"""Every ```python block of README.md runs, in order, in one namespace (a tutorial:
later blocks use earlier results), in a directory holding the files the blocks name.
A block preceded by ``<!-- readme-test: needs X -->`` needs what it says: nltk is
imported if installed, a SLURM cluster never is here; no other block is skipped."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"(<!-- readme-test: needs ([^>]*?) -->\n)?```python\n(.*?)```", re.S)

#: The user's files the README's blocks name, made here: a paradigm and a grammar whose
#: terminals are the symbols of the "Build your own" alphabet.
SYLLABLES = "\n".join(["Word --> Syl", "Word --> Syl Word", "Syl --> C V", "Syl --> C V C"]
                      + [f"C --> {c}" for c in "ktsdɡz"] + [f"V --> {v}" for v in "æɔ"])


def blocks() -> list:
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(README.read_text("utf-8"))]


def run_blocks(items, ns: dict) -> tuple[int, list]:
    """Run (needs, code) blocks in order in ``ns``: (blocks run, needs of those skipped).
    A block that raises is an AssertionError naming its number and the error."""
    ran, skipped = 0, []
    for i, (needs, code) in enumerate(items, 1):
        if needs == "nltk":
            try:
                import nltk  # noqa: F401
            except ImportError:
                skipped.append(needs)
                continue
        elif needs is not None:
            skipped.append(needs)
            continue
        try:
            exec(compile(code, f"README.md python block {i}", "exec"), ns)
        except Exception as e:
            raise AssertionError(f"README.md python block {i} failed: "
                                 f"{type(e).__name__}: {e}") from e
        ran += 1
    return ran, skipped


def test_readme_blocks_run(tmp_path):
    """In a fresh interpreter, as a reader runs them (and so that what they load does not
    stay in the test process)."""
    import strgm

    shutil.copy(strgm.example_path("english-verbs"), tmp_path / "words.tsv")
    (tmp_path / "syllables.lt").write_text(SYLLABLES + "\n", encoding="utf-8")
    script = ("import sys; sys.path.insert(0, %r)\n"
              "from tests.test_readme_python import blocks, run_blocks\n"
              "ns = {}\nran, skipped = run_blocks(blocks(), ns)\n"
              "import json; print(json.dumps([ran, skipped, "
              "ns['run'].scores.exact_match >= 0]))\n"
              % str(README.parent))
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    ran, skipped, scored = json.loads(out.stdout.splitlines()[-1])
    assert ran >= 6 and set(skipped) <= {"nltk", "a SLURM cluster"}
    assert scored and (tmp_path / "past.png").exists()


def test_a_broken_block_is_caught(tmp_path, monkeypatch):
    """Controls: a block that raises fails the run, naming it; a marked block is skipped
    with what it needs; an unmarked one never is."""
    monkeypatch.chdir(tmp_path)
    ok = "import strgm\nx = 1\n"
    broken = "import strgm\nstrgm.read_paradigm('missing.tsv')\n"
    with pytest.raises(AssertionError, match="block 2 failed: InputError"):
        run_blocks([(None, ok), (None, broken)], {})
    assert run_blocks([("a SLURM cluster", broken), (None, ok)], {}) == (1, ["a SLURM cluster"])
