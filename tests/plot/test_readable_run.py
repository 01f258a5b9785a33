"""The phonology pictures read as phonology: surface forms in [ ], URs in / /,
probability axes on [0, 1], and no convergence panel of a single point
(``strgm infer|train --plot``, :func:`plot_predictions`, :func:`plot_belief`)."""

from dataclasses import replace

import pytest

from strgm.plot import plot_belief, plot_inference_run, plot_predictions
from tests.robustness.harness import run_cli

pytest.importorskip("matplotlib")
WORDS = "R1\tkat\nR1 PL\tkatz\nR2\tdog\nR2 PL\tdogz\nR3\tpit\nR3 PL\tpits\n"


def ticks(ax) -> list:
    return [t.get_text() for t in ax.get_yticklabels()]


def inside_unit_interval(ax) -> bool:
    lo, hi = ax.get_xlim()
    return 0 <= lo and hi <= 1


def test_predictions_bracket_surface_forms_on_the_unit_interval(mpl, run):
    ax = plot_predictions(run.scores)
    gold = run.scores.per_word["dɔɡ PL"]["gold"]
    assert ticks(ax) == [f"dɔɡ PL  [{gold}]"]
    assert not any("/" in t for t in ticks(ax))
    assert inside_unit_interval(ax) and "probability" in ax.get_xlabel()
    wrong = {"w": {"gold": "ab", "predicted": "ba", "p_gold": 0.2, "exact": False}}
    notes = [t.get_text() for t in plot_predictions(wrong).texts]
    assert notes == ["→ [ba]"]


def test_belief_forms_and_unit_interval(mpl, run):
    ur = plot_belief(run.result.belief("M:PL"), k=3)
    assert all(t.startswith("/") and t.endswith("/") for t in ticks(ur))
    assert inside_unit_interval(ur)
    surface = plot_belief([["kæts", 0.99], ["kæt", 0.01]], name="S:kæt PL")
    assert ticks(surface) == ["[kæts]", "[kæt]"] and inside_unit_interval(surface)
    assert ticks(plot_belief([["a", 1.0]], name="x", form=None)) == ["a"]


class Changes:
    """An inference result with the given belief changes."""

    def __init__(self, result, deltas):
        self.result, self.deltas, self.method = result, deltas, result.method

    def belief(self, var):
        return self.result.belief(var)


def lines_of_one_point(fig) -> list:
    return [ln for ax in fig.axes for ln in ax.get_lines() if len(ln.get_xdata()) < 2]


def test_no_single_point_convergence_panel(mpl, run):
    inf = float("inf")
    for deltas in ([inf], [inf, 1e-3, 0.0]):  # one point to show on the log scale
        fig = plot_inference_run(replace(run, result=Changes(run.result, deltas)))
        assert not lines_of_one_point(fig)
        assert len(fig.axes) == 2
        assert f"{len(deltas)} iteration" in fig.get_suptitle()
    more = Changes(run.result, [inf, 1e-1, 1e-2, 1e-3])  # a curve: the panel is there
    full = plot_inference_run(replace(run, result=more))
    assert len(full.axes) == 3 and "belief change" in full.axes[0].get_title()
    assert "no unit" in full.axes[0].get_ylabel()


@pytest.mark.parametrize("command", ["infer", "train"])
def test_infer_and_train_figures_read_as_phonology(tmp_path, monkeypatch, command):
    import strgm.plot

    got, save = [], strgm.plot.save_figure
    monkeypatch.setattr(strgm.plot, "save_figure",
                        lambda fig, path, **kw: (got.append(fig), save(fig, path, **kw))[1])
    (tmp_path / "w.tsv").write_text(WORDS)
    extra = ["--em-iters", "1", "--no-tier"] if command == "train" else []
    o = run_cli([command, tmp_path / "w.tsv", "--holdout", "0.3", *extra, "--plot",
                 tmp_path / "f.png", "--quiet"])
    assert o.code == 0, o.stderr
    fig = got[0]
    assert not lines_of_one_point(fig)
    for ax in fig.axes:
        assert ax.get_title()
        if ax.get_xlabel() == "probability" or "probability" in ax.get_xlabel():
            assert inside_unit_interval(ax)
    held, urs = fig.axes[-2], fig.axes[-1]
    assert all("[" in t and "/" not in t for t in ticks(held))
    assert all(t.startswith("/") for t in ticks(urs))
