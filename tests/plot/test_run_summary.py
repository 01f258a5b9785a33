"""The summary figure of a phonology run (``strgm infer|train --plot``): its panels, the
least certain morpheme (against a brute-force minimum), and the CLI option."""

import pytest

from tests.robustness.harness import assert_clean_error, run_cli

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"
WORDS = "R1\tkat\nR1 PL\tkatz\nR2\tdog\nR2 PL\tdogz\nR3\tpit\nR3 PL\tpits\n"


def test_least_certain_is_the_lowest_top_probability(run):
    from strgm.plot.run_summary import least_certain

    mv = run.model.morpheme_vars
    label, var = least_certain(run.result, mv)
    tops = {lab: run.result.belief(v).kbest(1)[0][1] for lab, v in mv.items()}
    assert tops[label] == min(tops.values()) and var == mv[label]
    # negative control: the most certain morpheme is a different one here
    assert max(tops, key=tops.get) != label
    assert least_certain(run.result, {}) is None


def test_inference_figure_panels(run):
    from dataclasses import replace

    from strgm.plot import plot_inference_run

    class Changes:  # belief changes that make a curve (the fixture's make one point)
        deltas, method = [float("inf"), 0.1, 0.01], run.result.method
        belief = staticmethod(run.result.belief)

    run = replace(run, result=Changes())
    fig = plot_inference_run(run)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and "belief change" in titles[0]
    assert "held-out" in titles[1] and titles[2].startswith("least certain: ")
    no_holdout = plot_inference_run(replace(run, scores=None))
    assert len(no_holdout.axes) == 2  # no predictions panel without held-out words


def test_infer_and_train_write_the_figure(tmp_path):
    (tmp_path / "w.tsv").write_text(WORDS)
    o = run_cli(["infer", tmp_path / "w.tsv", "--holdout", "0.3", "--plot",
                 tmp_path / "i.png", "--quiet"])
    assert o.code == 0, o.stderr
    o = run_cli(["train", tmp_path / "w.tsv", "--holdout", "0.3", "--em-iters", "1",
                 "--no-tier", "--plot", tmp_path / "t.png", "--quiet"])
    assert o.code == 0, o.stderr
    for name in ("i", "t"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("command", ["infer", "train"])
def test_bad_plot_path_fails_before_the_work(tmp_path, command):
    (tmp_path / "w.tsv").write_text(WORDS)
    o = run_cli([command, tmp_path / "w.tsv", "--plot", tmp_path / "x.xyz"], watch=tmp_path)
    assert_clean_error(o, "--plot", "x.xyz")
