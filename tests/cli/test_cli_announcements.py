"""Every file a command writes is announced as ``wrote FILE`` on stderr, so that stdout
stays data (a report, a table, a grammar) that can be piped; before, infer, rules, train,
beliefs, plot, graph and a batch of files announced on stdout."""

import re
from pathlib import Path

import pytest

from strgm.cli import main

TINY = "R1\tkip\nR1 PL\tkibe\nR2\tsot\nR2 PL\tsode\nR3\tmuk\nR3 PL\tmuke\n"


@pytest.fixture
def tiny(tmp_path):
    for name in ("a.tsv", "b.tsv"):
        (tmp_path / name).write_text(TINY, encoding="utf-8")
    return tmp_path


def _announced(capsys, argv, *files):
    assert main([str(a) for a in argv]) == 0
    o = capsys.readouterr()
    assert "wrote " not in o.out, o.out
    for f in files:
        assert re.search(rf"^wrote {re.escape(str(f))}\b", o.err, re.M), o.err
    return o


def test_infer_single_and_batch_and_graph_announce_on_stderr(tiny, capsys):
    a, b = tiny / "a.tsv", tiny / "b.tsv"
    run = tiny / "run.json"
    o = _announced(capsys, ["infer", a, "--max-iters", "1", "--quiet", "--json", run], run)
    assert "== " not in o.out and o.out.strip()  # the report itself stays on stdout
    batch = tiny / "batch.json"
    _announced(capsys, ["infer", a, b, "--max-iters", "1", "--quiet", "--json", batch],
               batch)
    dot = tiny / "g.dot"
    _announced(capsys, ["graph", a, "--dot", dot], dot)
    beliefs = tiny / "beliefs"
    o = _announced(capsys, ["infer", a, "--max-iters", "1", "--quiet", "--save-beliefs",
                            beliefs])
    assert f"saved 7 beliefs to {beliefs}" in o.err
    got = tiny / "q.json"
    _announced(capsys, ["beliefs", beliefs, "--json", got], got)


def test_rules_and_plot_announce_on_stderr(tiny, capsys):
    pytest.importorskip("matplotlib")
    g, rec, png = tiny / "g.json", tiny / "r.json", tiny / "c.png"
    _announced(capsys, ["rules", tiny / "a.tsv", "--max-rules", "1", "--window", "1",
                        "--quiet", "--save", g, "--json", rec], g, rec)
    run = tiny / "run.json"
    _announced(capsys, ["infer", tiny / "a.tsv", "--max-iters", "2", "--quiet", "--json",
                        run], run)
    _announced(capsys, ["plot", "convergence", run, "--out", png], png)


def test_no_command_prints_wrote_to_stdout():
    """The source check behind the runs above: every ``wrote`` print of strgm/cli goes
    through errors.announce_written or names sys.stderr (control: the pattern finds an
    offending print)."""
    bad = re.compile(r"print\(f\"wrote [^\n]*(?:\n[^\n]*)?")

    def stdout_prints(text: str) -> list:
        return [m.group(0) for m in bad.finditer(text) if "sys.stderr" not in m.group(0)
                and "stream or sys.stderr" not in m.group(0)]

    cli = Path(__file__).parents[2] / "strgm" / "cli"
    found = {p.name: stdout_prints(p.read_text(encoding="utf-8"))
             for p in cli.glob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}
    assert stdout_prints('    print(f"wrote {args.json}")\n')
