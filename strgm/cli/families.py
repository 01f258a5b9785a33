"""``strgm train --family auto``: the rule family learned beside EM, and the per-word
choice between the two phonology families printed (docs/phonology.md)."""

from __future__ import annotations

import contextlib
import math


@contextlib.contextmanager
def rules_beside_em(args, para, prog, parallel, prior=None):
    """The rule family's job (UR candidates under the UR prior ``prior``), started before
    EM when ``parallel`` and ``--family auto`` (else None), and ended on the way out if
    its result was never taken."""
    if not (parallel and args.family == "auto"):
        yield None
        return
    from strgm.workflows.family_choice import start_rule_family
    from strgm.workflows.paradigm import held_out_entries

    job = start_rule_family(para, held_out_entries(para, args.holdout, args.seed),
                            progress=prog, ur_prior=prior)
    try:
        yield job
    finally:
        job.cancel()


def family_report(run, prog, job) -> dict:
    """Learn the rule family on the same training words, print it and, with held-out
    words, the per-word choice between the families
    (:mod:`strgm.workflows.family_choice`; ``job``: the rules started beside EM, or
    None); the same for ``--json``, where the choice, the answer printed, is also the
    ``holdout`` record (:func:`answer_record`)."""
    from strgm.cli.rules import grammar_text, undecided_note
    from strgm.models.rule_phonology import grammar_to_dict
    from strgm.workflows.family_choice import choose_family

    choice = choose_family(run, progress=prog, rules=job)
    prog.done()
    print(grammar_text(choice.rules.grammar))
    out = {"rules": grammar_to_dict(choice.rules.grammar)}
    if choice.per_word:
        print(f"families chosen per held-out word: exact match {choice.exact_match:.1%}   "
              f"mean -log p(true form): {choice.mean_neg_logp:.3f} nats")
        for key, w in choice.per_word.items():
            unseen = run.scores.per_word.get(key, {}).get("unseen_morphemes")
            print(f"  {key}  {w['predicted'] or '—'}  ({w['family']})  true {w['gold']}  "
                  f"{'✓' if w['predicted'] == w['gold'] else '✗'}"
                  + (undecided_note(w["rules_forms"], w["rules_weights"])
                     if w["family"] == "rules" else "")
                  + (f"  (no prediction: {', '.join(unseen)} in no training word)"
                     if unseen else ""))
        out["family_choice"] = choice.to_dict()
        out["holdout"] = answer_record(choice, run.scores.per_word)
    return out


def answer_record(choice, em_words: dict) -> dict:
    """The held-out scores of the answer printed, the per-word family choice, in the
    layout of :meth:`strgm.models.scoring.HoldoutScores.to_dict` (``p_gold`` is the
    mixture's p(true form)) with each word's ``family``; the markers of a word EM could
    not predict (``unseen``, ``unseen_morphemes``) are kept from ``em_words``."""
    words = {}
    for key, w in choice.per_word.items():
        marks = {k: v for k, v in em_words.get(key, {}).items()
                 if k in ("unseen", "unseen_morphemes")}
        words[key] = {"gold": w["gold"], "predicted": w["predicted"],
                      "p_gold": math.exp(-w["neg_logp"]), "neg_logp": w["neg_logp"],
                      "exact": w["predicted"] == w["gold"], "family": w["family"], **marks}
    return {"system": "family_choice", "n": len(words), "exact_match": choice.exact_match,
            "mean_neg_logp": choice.mean_neg_logp, "per_word": words}
