"""Every command of the README's command-line block runs as written, in an empty
directory, on the data shipped with the package (``example:NAME``). Slow: minutes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## The command line\n\n```bash\n") + len("## The command line\n\n```bash\n")
    block = text[start:text.index("```", start)]
    return [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.strip()]


def test_the_block_uses_only_shipped_data():
    for cmd in readme_commands():
        assert "../shared" not in cmd and "words.tsv" not in cmd, cmd


@pytest.mark.slow
def test_every_readme_command_runs_in_an_empty_directory(tmp_path):
    strgm = shutil.which("strgm", path=str(Path(sys.executable).parent))
    assert strgm, "the strgm command is not installed beside this Python"
    env = {**os.environ, "PATH": f"{Path(strgm).parent}{os.pathsep}{os.environ['PATH']}"}
    for cmd in readme_commands():
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=900)
        assert r.returncode == 0, f"{cmd}\n{r.stderr[-2000:]}"
