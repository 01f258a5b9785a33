"""plot_convergence: the curve's data are the input's numbers, read from every producer
(inference result, EM trace, sampler trace rows, JSON)."""

import math

import numpy as np
import pytest

from strgm.errors import InputError
from strgm.plot import plot_convergence


def curve(ax, i=-1):
    line = ax.get_lines()[i]
    return list(line.get_xdata()), [float(y) for y in line.get_ydata()]


def test_belief_changes_of_an_inference_result_on_a_log_scale(mpl, run):
    deltas = run.result.deltas
    assert math.isinf(deltas[0])  # the first iteration has nothing to compare with
    ax = plot_convergence(run.result)
    xs, ys = curve(ax)
    assert ys == [float(d) for d in deltas]
    assert xs == list(range(1, len(deltas) + 1))
    assert ax.get_yscale() == "log"
    # the same numbers from the JSON of strgm infer --json (strict JSON's "Infinity")
    record = {"belief_changes": ["Infinity"] + deltas[1:]}
    assert curve(plot_convergence(record))[1] == ys


def test_em_objective_rows(mpl):
    rows = [{"iteration": i, "objective": -10.0 / (i + 1), "log_evidence": -9.0}
            for i in range(5)]
    ax = plot_convergence(rows)
    assert curve(ax) == ([0, 1, 2, 3, 4], [r["objective"] for r in rows])
    assert ax.get_yscale() == "linear"
    assert ax.get_ylabel() == "EM objective: log evidence − L2 penalty (nats)"
    assert ax.get_title() and ax.get_xlabel() == "EM iteration"

    class TrainResult:  # anything with a trace, as EM's result and the samplers' states
        trace = rows

    assert curve(plot_convergence(TrainResult(), key="log_evidence"))[1] == [-9.0] * 5


def test_sampler_rows_skip_rows_without_the_key(mpl):
    rows = [{"iteration": i, "log_p_trees": -100.0 + i} for i in range(1, 7)]
    for r in rows[1::2]:
        r["neg_log_prob"] = 50.0 - r["iteration"]  # evaluated every 2 sweeps
    assert curve(plot_convergence(rows)) == ([1, 2, 3, 4, 5, 6], [-99.0 + i for i in range(6)])
    assert curve(plot_convergence(rows, key="neg_log_prob")) == ([2, 4, 6], [48.0, 46.0, 44.0])
    hmm = {"trace": [{"iteration": i, "loglik": -5.0 * i, "states": 3} for i in (1, 2)]}
    assert curve(plot_convergence(hmm)) == ([1, 2], [-5.0, -10.0])


def test_values_and_several_labelled_curves_on_one_axes(mpl):
    ax = plot_convergence([3.0, 2.0, 1.5], label="run A")
    assert plot_convergence([4.0, 1.0], ax=ax, label="run B", log=True) is ax
    assert curve(ax, 0)[1] == [3.0, 2.0, 1.5] and curve(ax, 1)[1] == [4.0, 1.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["run A", "run B"]
    assert np.isclose(ax.get_xlim()[0], 1, atol=0.5)


def test_bad_inputs_are_named(mpl):
    with pytest.raises(InputError, match=r"pass key= one of \['states'\]"):
        plot_convergence([{"iteration": 1, "states": 3}])
    with pytest.raises(InputError, match="no trace row has the key 'x'"):
        plot_convergence([{"objective": 1.0}], key="x")
    with pytest.raises(InputError, match="not trace rows"):
        plot_convergence([1.0, 2.0], key="objective")
    with pytest.raises(InputError, match="value 1 is not a number"):
        plot_convergence([1.0, "x"])
    with pytest.raises(InputError, match="'belief_changes', 'deltas' or 'trace'"):
        plot_convergence({"beliefs": {}})


@pytest.mark.parametrize("key", ["objective", "log_p_trees", "log_likelihood", "loglik",
                                 "neg_log_prob"])
def test_every_trace_key_is_named_with_its_unit(mpl, key):
    ax = plot_convergence([{"iteration": 1, key: -3.0}, {"iteration": 2, key: -2.0}])
    assert ax.get_ylabel() != key and ax.get_ylabel().endswith("(nats)")
    assert ax.get_title()
    other = plot_convergence([{"iteration": 1, "mine": 1.0}], key="mine")
    assert other.get_ylabel() == "mine"  # a key without a known meaning is shown as it is
