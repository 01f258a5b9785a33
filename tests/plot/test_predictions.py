"""plot_predictions: one bar per held-out word, p(true form) long, green when right."""

import pytest

from strgm.errors import InputError
from strgm.models.scoring import score_words
from strgm.plot import plot_predictions

to_rgba = pytest.importorskip("matplotlib.colors").to_rgba

PER_WORD = {
    "kæt PL": {"gold": "kætz", "predicted": "kætz", "p_gold": 0.9, "neg_logp": 0.1,
               "exact": True},
    "dɔɡ PL": {"gold": "dɔɡz", "predicted": "dɔɡs", "p_gold": 0.3, "neg_logp": 1.2,
               "exact": False},
    "bɛd PL": {"gold": "bɛdʒ", "predicted": "bɛd", "p_gold": 0.0, "neg_logp": "Infinity",
               "exact": False, "unseen": ["ʒ"]},
    "x Y": {"gold": "xy", "predicted": None, "p_gold": 0.0, "unseen_morphemes": ["Y"]},
}


def drawn(ax):
    return ([p.get_width() for p in ax.patches],
            [p.get_facecolor() for p in ax.patches])


def test_lengths_and_colours(mpl):
    ax = plot_predictions({"per_word": PER_WORD})
    widths, colours = drawn(ax)
    assert widths == [0.9, 0.3, 0.0, 0.0]
    green, red = to_rgba("tab:green"), to_rgba("tab:red")
    assert colours == [green, red, red, red]
    notes = [t.get_text() for t in ax.texts]
    assert notes == ["→ [dɔɡs]", "→ [bɛd]", "no prediction"]  # the wrong ones, annotated
    assert "1 of 4" in ax.get_title()


def test_every_form_of_the_scores_gives_the_same_picture(mpl, run):
    scores = run.scores
    assert scores.per_word["dɔɡ PL"]["exact"]  # the fixture's prediction is right
    want = drawn(plot_predictions(scores))
    assert want[0] == [scores.per_word["dɔɡ PL"]["p_gold"]]
    assert want[1] == [to_rgba("tab:green")]
    for form in (scores.to_dict(), {"holdout": scores.to_dict()}, scores.per_word):
        assert drawn(plot_predictions(form)) == want


def test_score_words_output_directly(mpl, run):
    belief = run.result.belief(run.model.word_vars["dɔɡ PL"])
    scored = score_words({"a": belief, "b": belief}, {"a": "dɔɡz", "b": "dɔɡd"},
                         run.model.alphabet)
    ax = plot_predictions(scored, log=True)
    assert drawn(ax)[0] == [scored.per_word[k]["p_gold"] for k in ("a", "b")]
    assert ax.get_xscale() == "log"


def test_bad_scores(mpl):
    with pytest.raises(InputError, match="no 'p_gold'"):
        plot_predictions({"w": {"gold": "a"}})
    with pytest.raises(InputError, match="no held-out words"):
        plot_predictions({"per_word": {}})
    with pytest.raises(InputError, match="expected held-out scores"):
        plot_predictions([1, 2])
