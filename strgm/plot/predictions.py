"""Held-out predictions against the truth: per held-out word, the probability the model
gives its true surface form (written in [ ]), green when the 1-best prediction is the
truth and red when not.

The input is what :func:`strgm.models.scoring.score_words` returns and ``strgm infer
--holdout`` / ``strgm train --holdout`` write: a
:class:`~strgm.models.scoring.HoldoutScores`, its ``to_dict()``, the whole ``--json``
record (scores under ``holdout``), or the ``per_word`` mapping itself (word key ->
``{"gold", "predicted", "p_gold", "exact", ...}``). A word that could not be predicted
(``unseen`` segments or ``unseen_morphemes``) has p = 0 and is never right.
"""

from __future__ import annotations

from collections.abc import Mapping

from strgm.errors import InputError
from strgm.plot._mpl import axes_for, plain, require_matplotlib

__all__ = ["plot_predictions", "per_word", "surface"]

RIGHT, WRONG = "tab:green", "tab:red"


def per_word(scored) -> dict:
    """The ``per_word`` mapping of any accepted input (module docstring)."""
    if hasattr(scored, "per_word"):
        return dict(scored.per_word)
    if not isinstance(scored, Mapping):
        raise InputError("plot_predictions: expected held-out scores (HoldoutScores or "
                         "the JSON of --holdout)")
    if "holdout" in scored:
        scored = scored["holdout"]
        if not isinstance(scored, Mapping):
            raise InputError("plot_predictions: 'holdout' is not a scores record")
    if "per_word" in scored:
        scored = scored["per_word"]
        if not isinstance(scored, Mapping):
            raise InputError("plot_predictions: 'per_word' is not a record per word")
    for key, rec in scored.items():
        if not isinstance(rec, Mapping) or "p_gold" not in rec:
            raise InputError(f"plot_predictions: word {key!r} has no 'p_gold' (expected "
                             "the per_word records of score_words)")
    return dict(scored)


def _p(rec) -> float:
    p = rec["p_gold"]
    try:
        return float(p)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"plot_predictions: p_gold is not a number: {p!r}") from None


def surface(form) -> str:
    """A surface form as phonologists write it: in square brackets."""
    return f"[{plain(form)}]"


def _note(ax, text: str, p: float, y: float, log: bool) -> None:
    """``text`` beside the bar of probability ``p``, inside the axes: after a short bar,
    within a long one (the axis ends at 1), at the left edge when a log scale has no
    bar."""
    at_left = log and p <= 0
    inside = not log and p > 0.6
    ax.annotate(text, (0 if at_left else p, y), xytext=(-3 if inside else 3, 0),
                xycoords=("axes fraction", "data") if at_left else "data",
                textcoords="offset points", va="center", fontsize="small",
                ha="right" if inside else "left", color="white" if inside else "black")


def plot_predictions(scored, ax=None, log=False):
    """One horizontal bar per held-out word (in the scores' order, top down): its length
    the probability of the true form, its colour whether the top prediction is right;
    a wrong word is annotated with the prediction. ``log``: log scale for p (a p of 0
    then has no bar). Returns the Axes."""
    require_matplotlib()
    words = per_word(scored)
    if not words:
        raise InputError("plot_predictions: no held-out words")
    keys = list(words)
    probs = [_p(words[k]) for k in keys]
    right = [bool(words[k].get("exact")) for k in keys]
    ax = axes_for(ax, figsize=(6.4, 1.2 + 0.3 * len(keys)))
    ys = list(range(len(keys)))
    ax.barh(ys, probs, color=[RIGHT if r else WRONG for r in right])
    ax.set_yticks(ys, labels=[f"{plain(k)}  {surface(words[k].get('gold', ''))}"
                              for k in keys])
    ax.invert_yaxis()
    for y, k, p, r in zip(ys, keys, probs, right):
        if not r:
            pred = words[k].get("predicted")
            _note(ax, "no prediction" if pred is None else f"→ {surface(pred)}", p, y, log)
    if log:
        ax.set_xscale("log")
    else:
        ax.set_xlim(0, 1)
    ax.set_xlabel("p(true surface form) (probability)")
    ax.set_title(f"{sum(right)} of {len(keys)} held-out words predicted exactly")
    return ax
