"""Does the harmony-tier screening's statistic change the answer? Where the shared-E-step
auxiliary Q and the per-candidate objective ℓ chose different transparent vowels
(``benchmarks/results/tier_screening.json``, rows with ``agree`` false), run

    strgm train FILE --holdout 0.1 --seed S --transparent CHOICE --json OUT --quiet

once with Q's choice and once with ℓ's, and compare the held-out scores the command
reports (every ``exact_match`` and ``mean_neg_log_p``-like number in its JSON, by key path).

    python -m benchmarks.phonology.tier_choice_effect [--only Catalan] [--max-rows N]

Writes benchmarks/results/tier_choice_effect.{json,md}.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

from benchmarks import harness


def _path(problem: str) -> str:
    return f"example:{problem[:-4]}" if problem == "english-verbs.tsv" else \
        str(harness.PHONOLOGY / problem)


def _scores(d, prefix="") -> dict:
    """Every held-out score in the JSON, by key path."""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            p = f"{prefix}.{k}" if prefix else k
            if isinstance(v, (int, float)) and not isinstance(v, bool) and (
                    "exact" in k or "log_p" in k or "nll" in k) and ("holdout" in p or "family" in p):
                out[p] = float(v)
            elif isinstance(v, dict):
                out.update(_scores(v, p))
    return out


def run(problem: str, seed: int, vowels: list) -> dict:
    choice = ",".join(vowels) if vowels else "none"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([sys.executable, "-m", "strgm.cli", "train", _path(problem),
                            "--holdout", "0.1", "--seed", str(seed), "--transparent", choice,
                            "--json", out, "--quiet"], capture_output=True, text=True,
                           cwd=tmp)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            return {"choice": choice, "error": p.stderr.strip().splitlines()[-1:]}
        with open(out, encoding="utf-8") as f:
            d = json.load(f)
    return {"choice": choice, "scores": _scores(d),
            "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="problems whose name contains this")
    ap.add_argument("--max-rows", type=int, default=100)
    a = ap.parse_args()
    rows = [r for r in harness.read_json("tier_screening")
            if not r["agree"] and a.only in r["problem"]]
    results = []
    for r in rows[:a.max_rows]:
        res = {"problem": r["problem"], "seed": r["seed"],
               "by_q": run(r["problem"], r["seed"], r["chosen_q"]),
               "by_objective": run(r["problem"], r["seed"], r["chosen_objective"])}
        results.append(res)
        print(json.dumps(res, ensure_ascii=False), flush=True)
    tag = f"_{a.only}" if a.only else ""
    harness.write_json(f"tier_choice_effect{tag}", results)
    cells = []
    for res in results:
        q, o = res["by_q"], res["by_objective"]
        for key in sorted(set(q.get("scores", {})) | set(o.get("scores", {}))):
            cells.append([res["problem"], res["seed"], key, q["choice"],
                          f"{q.get('scores', {}).get(key, float('nan')):.3f}", o["choice"],
                          f"{o.get('scores', {}).get(key, float('nan')):.3f}"])
    args = f"--only {a.only}" if a.only else ""
    harness.write_markdown(f"tier_choice_effect{tag}", harness.markdown(
        "Effect of the tier screening's statistic on the answer",
        ["problem", "seed", "score", "Q's choice", "value", "ℓ's choice", "value"], cells,
        run=f"Command: `{harness.command(__name__, args)}` at {harness.git_revision()} "
            "(rows of tier_screening.json where the two statistics disagree; `strgm train "
            "--holdout 0.1 --seed S --transparent CHOICE`)."))


if __name__ == "__main__":
    main()
