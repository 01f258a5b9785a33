"""``--plot FILE.png`` on the commands that draw: a PNG is written; a bad path or a
missing matplotlib is a one-line error before the work starts."""

import sys

import pytest

from tests.robustness.harness import assert_clean_error, run_cli

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"
WORDS = "\n".join(["k a t", "t a k", "a t a", "k a k a"] * 3) + "\n"


def test_hmm_pcfg_tsg_beliefs_draw(tmp_path):
    (tmp_path / "s.txt").write_text(WORDS)
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json", "--iters",
                 "3", "--states", "3", "--plot", tmp_path / "h.png", "--quiet"])
    assert o.code == 0, o.stderr
    (tmp_path / "g.lt").write_text("S --> A B\nS --> A\nA --> a\nB --> b\nA --> A A\n")
    (tmp_path / "c.yld").write_text("a b\na\na a b\n")
    for m in ("vb", "gibbs"):
        o = run_cli(["pcfg", "train", tmp_path / "g.lt", tmp_path / "c.yld", "--method", m,
                     "--iters", "3", "--out", tmp_path / "o.lt", "--plot", tmp_path / f"{m}.png",
                     "--quiet"])
        assert o.code == 0, o.stderr
    (tmp_path / "a.mrg").write_text("( (S (NP (DT the) (NN dog)) (VP (VBD barked))) )\n")
    o = run_cli(["tsg", "train", tmp_path / "a.mrg", "--save", tmp_path / "t.json", "--iters",
                 "2", "--plot", tmp_path / "t.png", "--quiet"])
    assert o.code == 0, o.stderr
    (tmp_path / "w.tsv").write_text("R1\tkat\nR1 PL\tkatz\nR2\tdog\nR2 PL\tdogz\n")
    assert run_cli(["infer", tmp_path / "w.tsv", "--quiet", "--save-beliefs",
                    tmp_path / "b"]).code == 0
    o = run_cli(["beliefs", tmp_path / "b", "--plot", tmp_path / "b.png"])
    assert o.code == 0, o.stderr
    for name in ("h", "vb", "gibbs", "t", "b"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == PNG


def test_bad_plot_path_fails_before_the_work(tmp_path):
    (tmp_path / "s.txt").write_text(WORDS)
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--plot", tmp_path / "h.xyz"], watch=tmp_path)
    assert_clean_error(o, "--plot", "h.xyz")


def test_missing_matplotlib_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "s.txt").write_text(WORDS)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    o = run_cli(["hmm", "train", tmp_path / "s.txt", "--save", tmp_path / "m.json",
                 "--plot", tmp_path / "h.png"], watch=tmp_path)
    assert_clean_error(o, "pip install 'strgm[plot]'")
