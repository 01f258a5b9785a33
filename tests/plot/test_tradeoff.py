"""plot_tradeoff: points at (seconds, accuracy), labelled by their setting."""

import pytest

from strgm.errors import InputError
from strgm.plot import plot_tradeoff


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_tuples(mpl):
    pts = [(0.5, 0.62, 0.2), (1.5, 0.80, 0.05), (4.0, 0.84, 0.01)]
    ax = plot_tradeoff(pts)
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [0.5, 1.5, 4.0]
    assert list(line.get_ydata()) == [0.62, 0.80, 0.84]
    assert texts(ax) == ["0.2", "0.05", "0.01"]  # tuples: the label as given


def test_lambda_sweep_rows_split_into_series(mpl):
    rows = [{"lambda": lam, "projection": proj, "seconds_per_projection": s,
             "mean_xent_to_belief": x}
            for proj, scale in (("prox", 1.0), ("grow", 0.01))
            for lam, s, x in ((0.2, 1 * scale, 0.9), (0.01, 3 * scale, 0.1))]
    ax = plot_tradeoff({"rows": rows}, by="projection", logx=True)
    assert len(ax.get_lines()) == 2
    assert list(ax.get_lines()[1].get_xdata()) == [0.01, 0.03]
    assert texts(ax) == ["λ=0.2", "λ=0.01"] * 2
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "seconds_per_projection"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["prox", "grow"]


def test_benchmark_records_and_named_keys(mpl):
    recs = [{"method": "ep1", "cpu_seconds": 6.0, "seconds": 6.1, "heldout_exact": 0.0},
            {"method": "pep", "cpu_seconds": 2.0, "seconds": 2.2, "heldout_exact": 0.5}]
    ax = plot_tradeoff(recs)
    assert list(ax.get_lines()[0].get_xdata()) == [6.0, 2.0]  # cpu_seconds first
    assert texts(ax) == ["ep1", "pep"]
    ax = plot_tradeoff(recs, x="seconds", y="heldout_exact", label="method")
    assert list(ax.get_lines()[0].get_xdata()) == [6.1, 2.2]


def test_bad_points(mpl):
    with pytest.raises(InputError, match="no points"):
        plot_tradeoff([])
    with pytest.raises(InputError, match="no y key"):
        plot_tradeoff([{"seconds": 1.0, "features": 3}])
    with pytest.raises(InputError, match="no point has the x key 'wall'"):
        plot_tradeoff([{"seconds": 1.0, "accuracy": 3}], x="wall")
    with pytest.raises(InputError, match="point 0"):
        plot_tradeoff([(1.0,)])
