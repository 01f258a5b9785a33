"""The README's timings are measured, not guessed: every command of its command-line
block that took more than 10 s in benchmarks/results/readme_commands.json (run from a
wheel in an empty directory by benchmarks/infra/readme_commands.py) says how long it
takes, '(about N s)' or '(about N min)', within 2x of that measurement; every command ran
and none was silent on stderr for more than 10 s (plus a second of slack for the machine)."""

import json
import re

import pytest

from tests.test_readme_commands import ROOT, readme_commands

RESULTS = ROOT / "benchmarks" / "results" / "readme_commands.json"
CLAIM = re.compile(r"about (\d+(?:\.\d+)?) (s|min)\b")
LONG = 10.0  # seconds from which a command must say how long it takes


def claims(readme: str) -> dict:
    """{command: claimed seconds} of the README's command-line block."""
    head = "## The command line\n\n```bash\n"
    start = readme.index(head) + len(head)
    out = {}
    for line in readme[start:readme.index("```", start)].splitlines():
        cmd, _, comment = line.partition("  #")
        m = CLAIM.search(comment)
        if cmd.strip() and m:
            out[cmd.strip()] = float(m[1]) * (60 if m[2] == "min" else 1)
    return out


def disagreements(claimed: dict, measured: dict) -> list:
    """The commands whose claim is missing (a long command) or off by more than 2x."""
    bad = []
    for cmd, seconds in measured.items():
        c = claimed.get(cmd)
        if c is None and seconds > LONG:
            bad.append(f"{cmd}: took {seconds:.0f} s, the README says nothing")
        elif c is not None and not 0.5 <= c / max(seconds, 0.1) <= 2:
            bad.append(f"{cmd}: the README says {c:.0f} s, measured {seconds:.0f} s")
    return bad


@pytest.fixture(scope="module")
def results():
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_every_readme_command_was_measured_and_ran(results):
    rows = results["commands"]
    assert [r["command"] for r in rows] == readme_commands(), \
        "the README's commands changed: run python -m benchmarks.infra.readme_commands again"
    assert all(r["returncode"] == 0 for r in rows), [r for r in rows if r["returncode"]]
    assert "shared" in results["conditions"]  # the run says what else ran beside it


def test_no_readme_command_is_silent_for_more_than_10_s(results):
    quiet = [(r["command"], r["longest_silence_stderr"]) for r in results["commands"]
             if r["longest_silence_stderr"] > LONG]
    assert quiet == []


def test_the_readme_timings_agree_with_the_measurements(results):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    measured = {r["command"]: r["seconds"] for r in results["commands"]}
    assert disagreements(claims(readme), measured) == []
    assert set(claims(readme)) <= set(measured)


def test_the_check_catches_a_missing_or_wrong_claim():
    readme = ("## The command line\n\n```bash\nstrgm a  # EM (about 2 min)\n"
              "strgm b\nstrgm c  # (about 30 s)\n```\n")
    assert claims(readme) == {"strgm a": 120.0, "strgm c": 30.0}
    assert disagreements(claims(readme), {"strgm a": 100, "strgm b": 3, "strgm c": 40}) == []
    # controls: a long command without a claim, a claim 3x off
    assert len(disagreements(claims(readme), {"strgm a": 100, "strgm b": 30,
                                              "strgm c": 10})) == 2
