"""The scripts in examples/ run to the end (from a directory where ../shared is absent,
so they use the data shipped with the package and say so)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FAST = ["underlying_forms.py"]
SLOW = ["train_phonology.py", "pcfg_morphology.py", "pcfg_prior_underlying_forms.py"]


@pytest.mark.parametrize("name", FAST)
def test_example_runs(name, tmp_path):
    script = tmp_path / "ex" / "copy" / name
    script.parent.mkdir(parents=True)
    script.write_bytes((EXAMPLES / name).read_bytes())
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip()
    if name == "underlying_forms.py":
        assert "NOTE: the textbook data" in r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_slow_example_runs(name, tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
