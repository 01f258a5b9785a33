"""Every command of the README's command-line block, run as a user would: from a wheel
installed into a fresh virtual environment, in an empty directory, one after another
(later commands read what earlier ones wrote), stdout and stderr going to pipes (not a
terminal, as when the output goes to a file).

For each command: the wall time, and the longest silence: the longest time without a
line on stderr (from the start to the first line, between two lines, from the last line
to the exit), and the same over stdout and stderr together. The README's timing claims
("about N s", "about N min") are checked against these figures by
tests/test_cli_readme_timings.py (within 2x).

The wheel is built from the committed tree (``git archive HEAD``, so work in progress in
the checkout is left out) with ``pip wheel --no-deps``; the environment gets the wheel's
dependencies from the package index, or, with ``--deps-from-here`` (or when that install
fails), from this Python's environment through a ``.pth`` line (strgm itself still comes
from the wheel).

    nice -n 19 python -m benchmarks.infra.readme_commands  # results/readme_commands.{json,md}
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import site
import subprocess
import sys
import tempfile
import threading
import time
import venv
from pathlib import Path

from benchmarks import harness
from tests.test_readme_commands import readme_commands

ROOT = harness.ROOT


def build_wheel(tmp: Path) -> Path:
    """The wheel of the committed tree (HEAD)."""
    src, dist = tmp / "src", tmp / "dist"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist),
                    str(src)], check=True, capture_output=True, timeout=900)
    return next(dist.glob("strgm-*.whl"))


def install(tmp: Path, wheel: Path, deps_from_here: bool) -> tuple:
    """(the environment's bin directory, where its dependencies came from)."""
    env = tmp / "env"
    venv.create(env, with_pip=True)
    py = env / "bin" / "python"
    if not deps_from_here:
        r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)],
                           capture_output=True, text=True, timeout=3600)
        if r.returncode == 0:
            return env / "bin", "the package index (pip install WHEEL)"
        print(f"pip install failed, dependencies from here instead:\n{r.stderr[-1000:]}",
              file=sys.stderr)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=900)
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True,
                             text=True).stdout.strip()
    Path(purelib, "deps_from_build_env.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return env / "bin", "this benchmark's environment (a .pth line; strgm from the wheel)"


def _reader(stream, name: str, arrivals: list) -> None:
    for _ in iter(stream.readline, b""):
        arrivals.append((time.monotonic(), name))
    stream.close()


def _longest_gap(start: float, end: float, times: list) -> float:
    marks = [start] + sorted(times) + [end]
    return max(b - a for a, b in zip(marks, marks[1:]))


def run(cmd: str, cwd: Path, env: dict, timeout: float) -> dict:
    """Run ``cmd`` with bash, timestamping each line of its stdout and stderr."""
    arrivals: list = []
    start = time.monotonic()
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    readers = [threading.Thread(target=_reader, args=(s, n, arrivals))
               for s, n in ((p.stdout, "stdout"), (p.stderr, "stderr"))]
    for t in readers:
        t.start()
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        code = "timeout"
    for t in readers:
        t.join()
    end = time.monotonic()
    err = [t for t, n in arrivals if n == "stderr"]
    return {"command": cmd, "returncode": code, "seconds": round(end - start, 2),
            "longest_silence_stderr": round(_longest_gap(start, end, err), 2),
            "longest_silence_any": round(_longest_gap(start, end, [t for t, _ in arrivals]),
                                         2),
            "stderr_lines": len(err), "stdout_lines": len(arrivals) - len(err)}


def markdown(doc: dict) -> str:
    rows = ["| command | exit | wall s | longest silence on stderr s | on either s |",
            "|---|---|---|---|---|"]
    for r in doc["commands"]:
        rows.append(f"| `{r['command']}` | {r['returncode']} | {r['seconds']:.1f} | "
                    f"{r['longest_silence_stderr']:.1f} | {r['longest_silence_any']:.1f} |")
    cmds = doc["commands"]
    total = sum(r["seconds"] for r in cmds)
    silence = max(r["longest_silence_stderr"] for r in cmds)
    ok = all(r["returncode"] == 0 for r in cmds)
    run = f"What was run: `{doc['run']}`. " if "run" in doc else ""
    return (f"# README commands from a wheel\n\n{run}{doc['conditions']}\n\nWheel: "
            f"`{doc['wheel']}` (commit {doc['commit']}); dependencies from "
            f"{doc['dependencies']}. {doc['date']}.\n\n" + "\n".join(rows) + "\n\n"
            f"Total: {total:.0f} s; every command exited 0: {ok}; longest silence on "
            f"stderr: {silence:.1f} s.\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deps-from-here", action="store_true",
                    help="take the dependencies from this environment, not the index")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    ap.add_argument("--conditions", default="Run once under `nice -n 19` on a shared "
                    "2-core machine, so the figures are likely above a quiet machine's.",
                    help="how the run was made, for the results")
    args = ap.parse_args()
    commit = harness.git_revision()
    with tempfile.TemporaryDirectory(prefix="strgm-readme-") as d:
        tmp = Path(d)
        wheel = build_wheel(tmp)
        bindir, deps = install(tmp, wheel, args.deps_from_here)
        work = tmp / "empty"
        work.mkdir()
        env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8"}
        rows = []
        for cmd in readme_commands():
            rows.append(run(cmd, work, env, args.timeout))
            print(json.dumps(rows[-1]), flush=True)
    doc = {"run": harness.command(__name__), "conditions": args.conditions,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "platform": platform.platform()},
           "commit": commit, "wheel": wheel.name, "dependencies": deps,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commands": rows}
    harness.write_json("readme_commands", doc)
    harness.write_markdown("readme_commands", markdown(doc))
    return 0 if all(r["returncode"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
