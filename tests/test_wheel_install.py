"""The built wheel, installed into a fresh virtual environment, runs outside the
repository: ``strgm --version``, ``strgm demo --roots 5`` and every README command on the
data shipped in the wheel. Slow (it builds and installs): ``pytest -m slow``."""

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.test_readme_commands import readme_commands

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_runs_in_an_empty_directory(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist),
                    str(ROOT)], check=True, capture_output=True, timeout=600)
    wheel = next(dist.glob("strgm-*.whl"))
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    work = tmp_path / "empty"
    work.mkdir()
    path = f"{env_dir / 'bin'}:/usr/bin:/bin"
    for cmd in ["strgm --version", "strgm demo --roots 5", *readme_commands()]:
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env={"PATH": path, "HOME": str(tmp_path)},
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, f"{cmd}\n{r.stderr[-2000:]}"
