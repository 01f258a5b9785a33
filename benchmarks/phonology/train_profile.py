"""Where `strgm train` spends its CPU: a sampling profile by phase.

    python -m benchmarks.phonology.train_profile [--files F ...] [--words 300]
                                                 [--duration 600] [--from-raw DIR]

Each input is trained as a user trains it, ``strgm train FILE --holdout 0.1 --seed 0``,
with ``--one-core`` so that the rule family runs in the profiled process, under
``py-spy record`` (50 samples per CPU second; ``--duration`` caps a long run, whose
shares are then those of its first part). The samples are classed by the outermost
phase on their stack: the harmony tier's screening, EM's E-step inference, expected
edit counts, M-steps, the phonology FST's compilation, the rule family (its candidate
screening and the rest), held-out scoring, and the remainder (imports, reading,
printing). Inputs: english-verbs (shipped), the files given, and the synthetic paradigm
of ``--words`` words (benchmarks/phonology/train_speed.py). ``--from-raw DIR``
re-reads earlier raw profiles (``NAME.txt``) instead of running. Writes
benchmarks/results/phonology_train_profile.{json,md}.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from benchmarks import harness

#: (phase, the frames that mark it), first match on a stack wins, innermost test first
#: for the EM phases (an E-step inside the screening counts as screening).
PHASES = [
    ("tier screening", ("choose_transparent",)),
    ("rule family: candidate screening", ("_Search.screen",)),
    ("rule family: other", ("train_rule_phonology",)),
    ("EM: FST compilation", ("compile_fst",)),
    ("EM: E-step inference", ("infer (", "_infer (")),
    ("EM: expected counts", ("expected_counts",)),
    ("EM: M-step", ("m_step",)),
    ("held-out scoring", ("score_trained",)),
]


def phase_of(stack: str) -> str:
    for name, marks in PHASES:
        if any(m in stack for m in marks):
            return name
    return "other (imports, reading, printing)"


def read_raw(path: str) -> dict:
    shares, total = {}, 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip()
            if not line or " " not in line:
                continue
            stack, n = line.rsplit(" ", 1)
            shares[phase_of(stack)] = shares.get(phase_of(stack), 0) + int(n)
            total += int(n)
    return {"samples": total, "cpu_seconds": total / 50.0,
            "phases": {k: v / total for k, v in sorted(shares.items(), key=lambda x: -x[1])}}


def profile(path: str, raw: str, duration: int) -> None:
    cmd = ["py-spy", "record", "--subprocesses", "-r", "50", "--format", "raw", "-o", raw,
           "--duration", str(duration), "--", sys.executable, "-m", "strgm.cli", "train",
           path, "--holdout", "0.1", "--seed", "0", "--one-core", "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write(rows: dict, note: str = "") -> None:
    harness.write_json("phonology_train_profile", rows)
    names = [n for n, _ in PHASES] + ["other (imports, reading, printing)"]
    cells = [["sampled CPU s"] + [f"{r['cpu_seconds']:.0f}" for r in rows.values()]]
    cells += [[n] + [f"{100 * r['phases'].get(n, 0):.1f}%" for r in rows.values()]
              for n in names]
    harness.write_markdown("phonology_train_profile", harness.markdown(
        "Where `strgm train --holdout 0.1 --seed 0 --one-core` spends its CPU",
        ["phase", *rows], cells,
        run=harness.run_line(__name__) + " py-spy, 50 samples per CPU second; shares of "
            "the sampled CPU." + (" " + note if note else "")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="*", default=[])
    ap.add_argument("--words", type=int, default=300)
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--from-raw", default=None)
    ap.add_argument("--note", default="", help="a sentence for the table's header")
    a = ap.parse_args()
    from benchmarks.phonology.train_speed import synthetic_file
    from strgm.datasets.examples import example_path

    work = a.from_raw or tempfile.mkdtemp()
    inputs = [str(example_path("english-verbs"))] + a.files
    if a.words:
        inputs.append(synthetic_file(a.words, work))
    rows = {}
    for p in inputs:
        name = os.path.splitext(os.path.basename(p))[0]
        raw = os.path.join(work, name + ".txt")
        if not a.from_raw:
            profile(p, raw, a.duration)
        rows[name] = read_raw(raw)
    write(rows, a.note)


if __name__ == "__main__":
    main()
