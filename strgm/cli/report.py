"""Plain-text tables and JSON summaries of phonology inference results, for users.

:func:`run_text` is what ``strgm infer`` and ``strgm demo`` print after inference. The
JSON summary (:func:`result_json`) is written with :func:`strgm.safe_io.strict_json`,
so an infinite -log p appears as the string ``"Infinity"``."""

from __future__ import annotations

import unicodedata
from typing import Optional

from strgm.models.phonology import PhonologyModel
from strgm.models.scoring import HoldoutScores
from strgm.validate import check_int


def _fmt(s: str, p: float) -> str:
    return f"{s or 'ε'} ({p:.3f})"


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: combining marks (tie bars, diacritics) and
    zero-width characters take none, East Asian wide and full-width characters two, every
    other character one (Unicode 15, UAX #11)."""
    w = 0
    for ch in unicodedata.normalize("NFC", text):
        if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Columns aligned by display width (IPA with tie bars and diacritics lines up)."""
    cols = list(zip(header, *rows)) if rows else [(h,) for h in header]
    widths = [max(display_width(str(x)) for x in col) for col in cols]
    line = lambda r: "  ".join(_pad(str(x), w) for x, w in zip(r, widths)).rstrip()  # noqa
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def morpheme_table(result, model: PhonologyModel, k: int = 3) -> str:
    k = check_int("k", k, min=1)
    rows = []
    for label, var in model.morpheme_vars.items():
        top = result.belief(var).kbest(k)
        rows.append([label] + [_fmt(s, p) for s, p in top] + [""] * (k - len(top)))
    return _table(["morpheme"] + [f"UR #{i + 1} (p)" for i in range(k)], rows)


def prediction_table(result, model: PhonologyModel, gold: Optional[dict] = None,
                     k: int = 1) -> str:
    gold = gold or {}
    rows = []
    for key in model.unobserved_words:
        top = result.belief(model.word_vars[key]).kbest(k)
        pred = top[0] if top else ("?", 0.0)
        row = [key, _fmt(*pred)]
        if gold:
            g = gold.get(key, "")
            row += [g, "✓" if g and pred[0] == g else "✗"]
        rows.append(row)
    header = ["word", "predicted surface (p)"] + (["true surface", "ok"] if gold else [])
    return _table(header, rows)


def holdout_line(scores: HoldoutScores) -> str:
    """One line: exact match and mean -log p; held-out words with a segment seen in no
    training word have p = 0, so the mean is infinite, and the line says which words."""
    line = (f"held-out words: {scores.n}   exact match: {scores.exact_match:.1%}   "
            f"mean -log p(true form): {scores.mean_neg_logp:.3f} nats")
    unseen = scores.unseen
    if unseen:
        segs = sorted({s for k in unseen for s in scores.per_word[k]["unseen"]})
        line += (f"\n  p = 0 for {len(unseen)} word(s) with a segment seen in no training "
                 f"word ({' '.join(segs)}): {', '.join(unseen)}")
    return line


def result_json(result, model: PhonologyModel, k: int, scores: Optional[HoldoutScores],
                extra: Optional[dict] = None) -> dict:
    k = check_int("k", k, min=1)
    out = {
        "source": model.paradigm.source,
        "method": result.method,
        "settings": {**result.settings, **model.settings, "kbest_reported": k},
        "timing": {"inference_seconds": result.seconds, "iterations": result.iterations,
                   "converged": result.converged,
                   "stop_reason": result.extra.get("stop_reason"),
                   "last_change": result.deltas[-1] if result.deltas else None,
                   "belief_changes": list(result.deltas)},
        "alphabet": model.alphabet.to_dict(),
        "morphemes": {lab: [[s, p] for s, p in result.belief(v).kbest(k)]
                      for lab, v in model.morpheme_vars.items()},
        "words": {key: [[s, p] for s, p in result.belief(model.word_vars[key]).kbest(k)]
                  for key in model.unobserved_words},
    }
    if scores is not None:
        out["holdout"] = scores.to_dict()
    if extra:
        out.update(extra)
    return out


def run_text(run, k: int) -> str:
    """The report of a :class:`~strgm.workflows.paradigm.ParadigmRun`: timing, the k-best
    underlying forms, the predicted surfaces (marked against the held-out truth) and the
    held-out scores."""
    result, model = run.result, run.model
    why = result.extra.get("stop_reason")
    status = "converged" if result.converged else \
        "stopped at the time limit" if why == "max_seconds" else "stopped at the iteration cap"
    if result.deltas and not result.converged:
        status += f", last change {result.deltas[-1]:.2g} > tol {result.settings['tol']:.2g}"
    parts = [f"inference: {result.seconds:.1f}s, {result.iterations} iterations ({status})\n",
             "Underlying forms", morpheme_table(result, model, k)]
    if model.unobserved_words:
        gold = {key: w["gold"] for key, w in run.scores.per_word.items()} if run.scores \
            else {}
        parts += ["\nPredicted surface forms", prediction_table(result, model, gold)]
        if run.scores is not None:
            parts.append("\n" + holdout_line(run.scores))
    return "\n".join(parts)


def scored_table(scores: HoldoutScores) -> str:
    """Held-out words: the predicted surface next to the true one, with p(true form)."""
    rows = [[key, w.get("predicted") or "—", w["gold"], f"{w['p_gold']:.3f}",
             "✓" if w.get("exact") else "✗"] for key, w in scores.per_word.items()]
    return _table(["word", "predicted", "true surface", "p(true)", "ok"], rows)


def training_text(run, k: int = 2, processes: Optional[list] = None) -> str:
    """What ``strgm train`` shows after training (a
    :class:`~strgm.workflows.training.TrainRun`): the underlying forms, the strongest
    learned processes (:mod:`strgm.models.processes`) and the held-out predictions."""
    parts = []
    if run.train.result is not None:
        parts += ["Underlying forms", morpheme_table(run.train.result, run.train.graph_model,
                                                     k)]
    if processes:
        parts += ["\nStrongest learned processes"] + [f"  {p.notation()}" for p in processes]
    if run.scores is not None:
        parts += ["\nHeld-out predictions", scored_table(run.scores)]
    return "\n".join(parts)
