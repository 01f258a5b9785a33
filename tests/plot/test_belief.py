"""plot_belief: one bar per string of the belief's top k, as long as its probability."""

import numpy as np
import pytest

from strgm.errors import InputError, OptionError
from strgm.plot import plot_belief


def bars(ax):
    return [(p.get_y() + p.get_height() / 2, p.get_width()) for p in ax.patches]


@pytest.mark.parametrize("k", [1, 3, 6])
def test_k_bars_with_the_beliefs_probabilities(mpl, run, k):
    belief = run.result.belief("M:PL")
    ax = plot_belief(belief, k=k)
    want = belief.kbest(k)
    assert len(ax.patches) == k
    assert np.allclose([w for _, w in bars(ax)], [p for _, p in want], rtol=1e-12, atol=0)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"/{s or 'ε'}/" for s, _ in want]  # a UR in / /, the empty one ε
    assert ax.yaxis_inverted()  # the best string at the top
    assert "M:PL" in ax.get_title()


def test_draws_on_the_given_axes_and_from_the_json_top_k(mpl, run):
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    pairs = run.result.to_dict(k=4)["beliefs"]["M:kæt"]  # [[string, p], ...]
    assert plot_belief(pairs, k=10, ax=ax, name="M:kæt") is ax
    assert [p.get_width() for p in ax.patches] == [p for _, p in pairs]
    assert "M:kæt" in ax.get_title()


def test_bad_inputs(mpl):
    with pytest.raises(OptionError, match="k"):
        plot_belief([("a", 1.0)], k=0)
    with pytest.raises(InputError, match="Belief or a list"):
        plot_belief(3.5)
