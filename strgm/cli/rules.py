"""``strgm rules FILE``: learn an ordered cascade of rewrite rules and the underlying
forms (the rule family, :mod:`strgm.models.rule_phonology`), print them in
phonological notation, and predict held-out words.

Every option is range-checked by its argparse type and every output path is checked
before the paradigm is read. ``--save`` writes the grammar as JSON (atomically);
``strgm rules FILE --grammar SAVED`` predicts with a saved grammar instead of learning.
"""

from __future__ import annotations

import sys

from strgm.cli.common import add_scheduler_option, check_outputs
from strgm.cli.errors import announce_written
from strgm.errors import OptionError
from strgm.validate import float_arg, int_arg

#: the defaults of :func:`strgm.models.rule_phonology.train_rule_phonology` (a test
#: keeps them equal)
WORD_COST, UR_COST, MAX_RULES, WINDOW, BEAM_WORDS = 4.0, 1.0, 12, 2, 200
WIDE_BEAM_WORDS = 25


def add_subparser(sub) -> None:
    p = sub.add_parser("rules", help="learn ordered rewrite rules and URs "
                                     "(phonological notation)")
    p.add_argument("file", nargs="+", metavar="FILE",
                   help="paradigm (TSV or wide CSV); several files, a directory or a glob "
                        "run one task per file, one table (--json: one strgm-batch "
                        "document)")
    p.add_argument("--holdout", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=None, metavar="FRAC",
                   help="hold out this fraction (0 < FRAC < 1) of the observed words")
    p.add_argument("--seed", type=int_arg(0), default=0, help="holdout seed")
    p.add_argument("--word-cost", type=float_arg(0, min_open=True), default=None,
                   metavar="λ", help="description length of one training word the rules "
                                     "get wrong, in feature units; a rule must fix about "
                                     f"cost/λ more words than it breaks (default: {WORD_COST})")
    p.add_argument("--ur-cost", type=float_arg(0), default=None, metavar="μ",
                   help="description length of one underlying-form segment, in feature "
                        f"units (default: {UR_COST})")
    p.add_argument("--max-rules", type=int_arg(0), default=None, metavar="N",
                   help=f"longest cascade (default: {MAX_RULES})")
    p.add_argument("--beam", type=int_arg(1), default=None, metavar="B",
                   help="grammars kept per step of the search; 1 is greedy (default: 4 "
                        f"up to {WIDE_BEAM_WORDS} training words, 2 up to {BEAM_WORDS}, "
                        "1 above)")
    p.add_argument("--window", type=int_arg(1, 2), default=None, metavar="W",
                   help="how far a rule's context reaches on each side: 1 (the "
                        f"neighbour) or 2 (also the segment beyond; default: {WINDOW})")
    p.add_argument("--grammar", metavar="SAVED", help="predict with a grammar saved by "
                                                      "--save instead of learning one")
    p.add_argument("--json", metavar="OUT", help="write rules, URs and held-out scores")
    p.add_argument("--save", metavar="GRAMMAR", help="write the learned grammar (JSON)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_scheduler_option(p)
    p.set_defaults(func=cmd_rules)


def _load(path: str):
    import json

    from strgm.errors import InputError
    from strgm.models.rule_phonology import grammar_from_dict
    from strgm.safe_io import read_text

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    try:
        d = json.loads(read_text(path, "rule grammar"), parse_constant=refuse)
    except (ValueError, RecursionError) as e:
        raise InputError(f"rule grammar is damaged (not JSON: {e})", path=path) from None
    return grammar_from_dict(d, path)


def grammar_text(g) -> str:
    """The cascade in order, then the URs."""
    lines = [f"rules, in order of application (description length {g.description_length:.1f}; "
             f"training words reproduced {g.train_correct}/{g.train_words}):"]
    lines += [f"  {i}. {r.text}" for i, r in enumerate(g.rules, 1)] or ["  (none)"]
    lines.append("underlying forms:")
    lines += [f"  {m}  /{''.join(g.symbols[a - 1] for a in u)}/" for m, u in g.urs.items()]
    return "\n".join(lines)


def undecided_note(forms, weights=None) -> str:
    """"  (undecided: a 0.67 | b 0.33)" when the training words allow several forms (best
    first: the first is the prediction; each with its weight q when given), else ""."""
    if len(forms) <= 1:
        return ""
    ws = weights if weights is not None else [None] * len(forms)
    return "  (undecided: " + " | ".join(f if q is None else f"{f} {q:.2f}"
                                         for f, q in zip(forms, ws)) + ")"


def cmd_rules(args) -> int:
    """``strgm rules FILE...``: one file as always; several (or a directory or glob) one
    task per file (:func:`strgm.cli.common.run_batch`)."""
    import sys

    from strgm.cli.common import run_batch, scheduler_spec
    from strgm.distributed.files import expand_inputs

    spec = scheduler_spec(args)  # checked before any work
    files, several = expand_inputs(args.file, "FILE")
    _check_search_options(args)
    if several:
        return run_batch(args, files, "rules", rules_task, _rules_summary,
                         [("--save", args.save)])
    if spec is not None:
        print("strgm: note: --scheduler runs one task per file; a single file runs here",
              file=sys.stderr)
    args.file = files[0]
    check_outputs([(args.json, "--json", False), (args.save, "--save", False)],
                  [args.file, args.grammar])
    out = _rules_run(args)
    if args.save:
        from strgm.safe_io import atomic_write_json

        atomic_write_json(args.save, out["grammar"])
        announce_written(args.save)
    if args.json:
        from strgm.cli.json_output import write_document

        write_document(args.json, "strgm-rules", out["record"])
        announce_written(args.json)
    return 0


def _check_search_options(args) -> None:
    for opt, value in (("--word-cost", args.word_cost), ("--ur-cost", args.ur_cost),
                       ("--max-rules", args.max_rules),
                       ("--beam", args.beam), ("--window", args.window)):
        if args.grammar and value is not None:
            raise OptionError(opt, value, "sets the search, and --grammar skips it; drop "
                                          f"{opt} or --grammar")


def rules_task(path: str, options: dict) -> dict:
    """One file of ``strgm rules FILE...`` (a task of :func:`strgm.cli.common.run_batch`,
    run here or on a Dask worker): its report printed, its ``strgm-rules`` record
    returned."""
    import argparse

    args = argparse.Namespace(**{**options, "file": path, "json": None, "save": None,
                                 "quiet": True})
    record = _rules_run(args)["record"]
    record.pop("format", None)  # the grammar's own; a document's envelope replaces it
    return record


def _rules_summary(rec) -> list:
    """The columns of one file in the table of ``strgm rules FILE...`` (None: names)."""
    if rec is None:
        return ["rules", "training words right", "held-out exact"]
    h = rec.get("holdout")
    return [str(len(rec["rules"])), f"{rec['train_correct']}/{rec['train_words']}",
            f"{100 * h['exact_match']:.1f}%" if h else "-"]


def _rules_run(args) -> dict:
    """Learn (or load) the grammar of ``args.file`` and print it with the held-out
    predictions: {"grammar": the grammar's dict, "record": the strgm-rules content}."""
    from strgm.cli.common import progress, warnings_as_lines
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.rule_phonology import (RuleRun, grammar_to_dict,
                                             train_rule_phonology)
    from strgm.workflows.paradigm import held_out_entries

    saved = _load(args.grammar) if args.grammar else None
    para = read_paradigm(args.file)
    held = sorted(held_out_entries(para, args.holdout, args.seed))
    prog = progress(args)
    if prog.enabled and saved is None:
        print(plan_text(args, len(para.observed) - len(held)), file=sys.stderr, flush=True)
    with prog, warnings_as_lines():  # the heartbeat stops, also on an error
        if saved is None:
            run = train_rule_phonology(
                para, held, progress=prog,
                word_cost=WORD_COST if args.word_cost is None else args.word_cost,
                ur_cost=UR_COST if args.ur_cost is None else args.ur_cost,
                max_rules=MAX_RULES if args.max_rules is None else args.max_rules,
                beam=args.beam, window=WINDOW if args.window is None else args.window)
        else:
            out_keys = set(held)
            run = RuleRun(saved, [e for e in para.entries if e.key in out_keys and e.surface],
                          {}, [e for e in para.entries if e.key not in out_keys and e.surface])
    prog.done()
    print(grammar_text(run.grammar))
    grammar = grammar_to_dict(run.grammar)
    out = dict(grammar)
    if run.held_out:
        out["holdout"] = _print_heldout(run)
    return {"grammar": grammar, "record": out}


def plan_text(args, n_words: int) -> str:
    """One line announcing the work of ``strgm rules`` on ``n_words`` training words: the
    UR candidates' inference, the search (starts, beam, rules, window), the narrowing."""
    from strgm.models.rule_search import default_beam

    beam = default_beam(n_words) if args.beam is None else args.beam
    rules = MAX_RULES if args.max_rules is None else args.max_rules
    window = WINDOW if args.window is None else args.window
    return (f"strgm rules: UR candidates from one inference (3 iterations) over "
            f"{n_words} training words, then a rule search from 2 starts (beam {beam}, at "
            f"most {rules} rules, window {window}), then the rules' contexts narrowed")


def _print_heldout(run) -> dict:
    """Print the held-out predictions (with the forms the training words leave open and
    their calibrated q, :mod:`strgm.models.rule_calibration`); their JSON."""
    from strgm.models.rule_calibration import calibrated_forms

    calibration = calibrated_forms(run)
    ranked = calibration.ranked
    pred = run.predictions()
    forms = {k: [f for f, _ in v] for k, v in ranked.items()}
    rows = [(e.key, pred[e.key], "".join(e.segments)) for e in run.held_out]
    acc = run.exact_match()
    print(f"held-out words: {sum(p is not None for _, p, _ in rows)}   "
          f"exact match: {acc:.1%}   undecided forms weighted with concentration "
          f"{calibration.alpha:.3g} (learned on {len(calibration.cases)} training words)")
    for key, p, t in rows:
        print(f"  {key}  {p if p is not None else '(morpheme without UR)'}  "
              f"true {t}  {'✓' if p == t else '✗'}"
              + undecided_note(forms.get(key, []), [q for _, q in ranked.get(key, [])]))
    return {"exact_match": acc, "concentration": calibration.alpha, "words": [
        {"key": k, "predicted": p, "truth": t,
         **({"forms": forms[k], "weights": [q for _, q in ranked[k]]} if k in forms
            else {})} for k, p, t in rows]}
