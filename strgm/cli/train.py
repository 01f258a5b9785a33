"""``strgm train FILE``: learn the phonology by EM (see strgm.models.em and the training
workflow, strgm.workflows.training).

Every option is range-checked by its argparse type, and every output path (``--json``,
``--save``, ``--checkpoint``) and the ``--resume`` checkpoint are checked before the
paradigm is read, so that a bad path never costs a training run. Saved models read back
by ``strgm infer --model`` are checked for finite weights (a NaN weight would otherwise
surface much later as "observations inconsistent").
"""

from __future__ import annotations

import sys

from strgm.cli.common import INFERENCE_METHODS, add_limit_options, add_scheduler_option, \
    check_outputs, run_batch, scheduler_spec
from strgm.cli.families import family_report, rules_beside_em
from strgm.cli.paradigm import add_prior_option, note_unseen, resolve_prior, run_inputs
from strgm.cli.errors import announce_written
from strgm.errors import OptionError
from strgm.validate import float_arg, int_arg


#: The help's statement of ``DEFAULT_CLASSES["tier_features"]`` of
#: :mod:`strgm.models.edit_model` (not imported here: it would load pynini for ``--help``;
#: a test keeps the two equal).
DEFAULT_TIER_FEATURES = False
#: ``version`` of ``--json`` (schemas/strgm-train.schema.json): 2 since ``holdout`` is the
#: answer printed and EM's own scores are ``em_phonology.holdout``.
TRAIN_JSON_VERSION = 2


def add_subparser(sub) -> None:
    p = sub.add_parser("train", help="train the phonology by EM over factor-graph beliefs")
    p.add_argument("file", nargs="+", help="paradigm (TSV or wide CSV); several files, "
                   "directories or globs: one task per file, one table (--json: one "
                   "strgm-batch document)")
    add_scheduler_option(p)
    p.add_argument("--method", default="pruned", choices=INFERENCE_METHODS,
                   help="inference of each E-step (default: %(default)s)")
    p.add_argument("--em-iters", type=int_arg(0), default=1,
                   help="EM iterations (M-steps) in all, counting those of a --resume "
                        "checkpoint; 0 evaluates the initial model (one E-step) without "
                        "training (default: %(default)s)")
    p.add_argument("--l2", type=float_arg(0), default=1.0,
                   help="L2 penalty λ ≥ 0 (default: %(default)s)")
    p.add_argument("--l1", type=float_arg(0), default=0.0,
                   help="L1 weight on θ (sparse: only the contexts the data need get a "
                        "weight; default: %(default)s)")
    p.add_argument("--max-iters", type=int_arg(1), default=2,
                   help="inference iterations per E-step (default: %(default)s)")
    add_limit_options(p, "each E-step")
    p.add_argument("--json", metavar="OUT", help="write trace and held-out scores as JSON")
    p.add_argument("--save", metavar="MODEL", help="write the trained phonology (JSON)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw the run: EM objective per iteration, held-out predictions, "
                        "the least certain morpheme's URs (.png/.pdf/.svg; needs "
                        "strgm[plot])")
    p.add_argument("--checkpoint", metavar="PATH", help="checkpoint θ after every iteration")
    p.add_argument("--resume", metavar="CHECKPOINT",
                   help="continue from a --checkpoint file")
    p.add_argument("--holdout", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=None, metavar="FRAC",
                   help="hold out this fraction (0 < FRAC < 1) of the observed words")
    p.add_argument("--seed", type=int_arg(0), default=0, help="holdout seed")
    p.add_argument("--restarts", type=int_arg(1), default=1, metavar="N",
                   help="run EM from N starting points (the copy-biased one and N-1 "
                        "perturbed ones) and keep the best training objective "
                        "(default: %(default)s)")
    p.add_argument("--restart-scale", type=float_arg(0), default=0.3, metavar="SIGMA",
                   help="standard deviation of the perturbation of θ for restarts "
                        "(default: %(default)s)")
    p.add_argument("--family", default="auto", choices=["auto", "edit"],
                   help="auto (default): also learn ordered rewrite rules (as `strgm rules`) "
                        "and answer each held-out word with the rules unless they get at "
                        "least half of the training words sharing a morpheme with it wrong; "
                        "edit: the trained edit phonology alone")
    p.add_argument("--one-core", action="store_true",
                   help="with --family auto, learn the rules after EM in this process "
                        "(default: beside EM on a second core when there is one; the "
                        "results are the same)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_prior_option(p, model_option=False)
    p.add_argument("--show-processes", type=int_arg(0), default=10, metavar="N",
                   help="print the N strongest learned processes, e.g. 'd → t / _ #' "
                        "(0: none; default: %(default)s)")
    _add_context_options(p)
    p.set_defaults(func=cmd_train)


def _add_context_options(p) -> None:
    c = p.add_argument_group("phonology context (Cotterell, Peng & Eisner 2014 windows)")
    c.add_argument("--left-window", type=int, default=1, choices=[0, 1],
                   help="input symbols to the left (default: %(default)s)")
    c.add_argument("--right-window", type=int, default=1, choices=[0, 1, 2],
                   help="input symbols to the right; 2 for processes triggered two "
                        "segments ahead (default: %(default)s)")
    c.add_argument("--output-window", type=int, default=1, choices=[0, 1],
                   help="output symbols to the left (default: %(default)s)")
    c.add_argument("--no-tier", action="store_true",
                   help="drop the nearest-preceding-output-vowel (harmony) context")
    c.add_argument("--transparent", default="auto", metavar="auto|none|V,V...",
                   help="vowels the harmony tier skips (neutral vowels): learned from the "
                        "training words (auto, the default), none, or a comma-separated "
                        "list of vowels")
    c.add_argument("--tier-features", default=None, choices=["on", "off"],
                   help="harmony also over single vowel features (back, round, high), so "
                        "that it carries over between vowel classes (default: "
                        f"{'on' if DEFAULT_TIER_FEATURES else 'off'})")
    c.add_argument("--right-classes", default="coarse",
                   choices=["coarse", "major", "natural", "exact"],
                   help="class scheme of the right context (default: %(default)s)")


def initial_model(args, alphabet):
    """The copy-biased starting phonology with the context options of ``args``."""
    from fst_factors.transducers.contextual_edit import ContextSpec
    from strgm.models.edit_model import PhonologyEditModel

    spec = ContextSpec(args.left_window, args.right_window, args.output_window,
                       not args.no_tier)
    tf = None if args.tier_features is None else args.tier_features == "on"
    return PhonologyEditModel.copy_biased(alphabet, spec, args.right_classes,
                                          tier_features=tf)


def transparent_option(value: str, alphabet):
    """``--transparent`` as the workflow takes it: "auto", () for none, or a tuple of
    vowels of ``alphabet`` (anything else is an OptionError naming the value)."""
    from strgm.models.ipa_features import vowels

    if value in ("auto", "none"):
        return value if value == "auto" else ()
    segs = tuple(s.strip() for s in value.split(",") if s.strip())
    vs = vowels(alphabet.segment_symbols)
    if not segs or any(s not in vs for s in segs):
        raise OptionError("--transparent", value, "expected auto, none or a comma-separated "
                          f"list of vowels of the paradigm ({' '.join(vs) or 'none'})")
    return segs


def _choices_shown(run, args) -> dict:
    """Print what training chose among alternatives (restarts, the tier's transparent
    vowels); the same for ``--json``."""
    out = {}
    if args.restarts > 1:
        finals = ", ".join(f"{o:.3f}" for o in run.train.restart_objectives)
        print(f"restarts: final objectives {finals}; kept restart {run.train.restart}")
        out["restart_objectives"] = run.train.restart_objectives
        out["restart"] = run.train.restart
    if run.tier_choice:
        print(tier_choice_text(run.tier_choice, run.train.model.classes["transparent"]))
        out["tier_choice"] = [{"transparent": list(c), "objective": o}
                              for c, o in run.tier_choice]
    return out


def tier_choice_text(choice: list, chosen) -> str:
    """One line: the learned transparent vowels and every candidate's objective."""
    def name(c):
        return " ".join(c) if c else "none"
    scores = "; ".join(f"{name(c)}: {o:.3f}" for c, o in choice)
    return (f"harmony tier skips: {name(tuple(chosen))} (learned; screening Q "
            f"{scores})")


def load_phonology(path: str):
    """(alphabet, compiled FST) of a saved model, for ``strgm infer --model``; the loader
    refuses a missing, non-JSON or damaged file and non-finite weights naming the file
    (a NaN weight would otherwise surface later as "observations inconsistent")."""
    from strgm.models.edit_model import PhonologyEditModel

    m = PhonologyEditModel.load(path)
    return m.alphabet, m.fst()


def _check_run_options(args) -> None:
    """Options that exclude each other, and the ``--resume`` checkpoint, refused before
    the paradigm is read."""
    if args.restarts > 1 and (args.checkpoint or args.resume):
        raise OptionError("--restarts", args.restarts, "a checkpoint holds one run; use "
                          "--restarts 1 with --checkpoint or --resume")
    if args.resume and args.transparent != "auto":
        raise OptionError("--transparent", args.transparent, "a resumed run keeps the tier "
                          "of its checkpoint; drop --transparent with --resume")
    if args.resume and args.tier_features is not None:
        raise OptionError("--tier-features", args.tier_features, "a resumed run keeps the "
                          "features of its checkpoint; drop --tier-features with --resume")
    if args.resume:
        check_resume(args.resume)
    if args.prior is not None and args.prior != "unigram" and (args.checkpoint or args.resume):
        raise OptionError("--prior", args.prior, "an EM checkpoint does not record the UR "
                          "prior; train with this --prior without --checkpoint or --resume")


def check_resume(path: str) -> None:
    """Refuse a missing or damaged ``--resume`` checkpoint before any work starts, with
    the trainer's own loader (so no paradigm is read and no E-step run in vain)."""
    from strgm.models.em_checkpoint import load_checkpoint
    from strgm.safe_io import check_input

    check_input(path, "checkpoint (--resume)")
    load_checkpoint(path)


def _print_scores(sc) -> None:
    print(f"held-out words: {sc.n}   exact match: {100 * sc.exact_match:.1f}%   "
          f"mean -log p(true form): {sc.mean_neg_logp:.3f} nats")
    lost = [k for k, w in sc.per_word.items() if "unseen_morphemes" in w]
    if lost:
        print(f"  p = 0 for {len(lost)} word(s) with a morpheme seen in no training "
              f"word: {', '.join(lost)}")


def _reporter(prog):
    """Print each EM iteration's objective as soon as it is known (flushed, so that it
    shows in a log file too); a fall of the objective is flagged on the line."""
    def report(e: dict) -> None:
        prog.clear()
        tag = f"restart {e['restart']}, " if "restart" in e else ""
        fell = "  (fell: the E-step is approximate)" if e.get("decreased") else ""
        print(f"{tag}EM {e['iteration']}: objective {e['objective']:.3f}{fell}",
              flush=True)
    return report


def _train(args, para, prog, prior):
    """The training workflow with the options of ``args`` and the UR prior ``prior``."""
    from strgm.workflows.training import train_paradigm

    model = None if args.resume else initial_model(args, para.alphabet())
    transparent = None if args.resume or args.no_tier else \
        transparent_option(args.transparent, para.alphabet())
    infer_opts = {"max_iters": args.max_iters, "max_states": args.max_states}
    if args.max_memory is not None:
        infer_opts["max_memory"] = args.max_memory
    return train_paradigm(para, args.method, args.holdout, args.seed, model, progress=prog,
                          transparent=transparent, ur_prior=prior,
                          em_iters=args.em_iters, l2=args.l2, l1=args.l1,
                          infer_opts=infer_opts,
                          checkpoint=args.checkpoint, resume=args.resume,
                          restarts=args.restarts, restart_scale=args.restart_scale,
                          restart_seed=args.seed, report=_reporter(prog))


def cmd_train(args) -> int:
    """Check every path and the UR prior, train (:func:`strgm.workflows.training.
    train_paradigm`), print the trace and held-out scores, write ``--save`` (recording
    the UR prior, so that ``strgm infer --model`` uses it too) and ``--json``."""
    from strgm.datasets.paradigm import read_paradigm
    from strgm.distributed.files import expand_inputs
    from strgm.inference import Progress
    from strgm.cli.json_output import write_document

    spec = scheduler_spec(args)  # checked before any work
    files, several = expand_inputs(args.file, "FILE")
    if several:
        _check_run_options(args)
        resolve_prior(args)
        return run_batch(args, files, "train", train_task, _train_summary,
                         [("--save", args.save), ("--checkpoint", args.checkpoint),
                          ("--resume", args.resume), ("--plot", getattr(args, "plot", None))])
    if spec is not None:
        print("strgm: note: --scheduler runs one task per file; a single file runs here",
              file=sys.stderr)
    args.file = files[0]
    resumed = "the --resume checkpoint"
    check_outputs([(args.json, "--json", False), (args.save, "--save", False),
                   (args.plot, "--plot", False), (args.checkpoint, "--checkpoint", False)],
                  run_inputs(args) + [(args.resume, resumed)], [("--checkpoint", resumed)])
    if args.plot:
        from strgm.plot import check_figure_path

        check_figure_path(args.plot)
    _check_run_options(args)
    prior = resolve_prior(args)
    para = read_paradigm(args.file)
    note_unseen(prior, para.alphabet())
    prog = Progress(not args.quiet, heartbeat=True)  # off a terminal: lines every 8 s
    if not args.quiet:
        print(plan_text(args, para, parallel_rules=spec is None and not args.one_core),
              file=sys.stderr, flush=True)
    try:
        run, out = _trained(args, para, prog, prior,
                            parallel_rules=spec is None and not args.one_core)
    finally:
        prog.done()  # the heartbeat stops, also on an error
    if args.save:
        run.train.model.save(args.save, {"method": args.method, "l2": args.l2,
                                         "l1": args.l1, "ur_prior": out["ur_prior"]})
        announce_written(args.save)
    if args.json:
        write_document(args.json, "strgm-train", out, version=TRAIN_JSON_VERSION)
        announce_written(args.json)
    if args.plot:
        from strgm.plot import plot_training_run, save_figure

        save_figure(plot_training_run(run), args.plot)
        announce_written(args.plot)
    return 0


def plan_text(args, para, parallel_rules: bool) -> str:
    """One line announcing the work of ``strgm train``: the harmony-tier screening, the
    EM iterations and where the rule family runs."""
    from strgm.models.tier_choice import transparent_candidates
    from strgm.workflows.paradigm import held_out_entries

    n = len(para.observed) - len(held_out_entries(para, args.holdout, args.seed))
    steps = []
    k = len(transparent_candidates(para.alphabet().segment_symbols))
    if not (args.resume or args.no_tier) and args.transparent == "auto" and k > 1:
        steps.append(f"harmony-tier screening ({k} candidate vowel sets, one shared "
                     f"E-step and one M-step each on {n} words: EM's first iteration)")
    runs = f"{args.restarts} × " if args.restarts > 1 else ""
    steps.append(f"{runs}{args.em_iters} EM iteration(s) ({args.em_iters + 1} {args.method} "
                 f"E-steps) on {n} training words")
    rules = "" if args.family != "auto" else "; the rule family " + (
        "beside EM on a second core" if parallel_rules else "after EM")
    return "strgm train: " + ", then ".join(steps) + rules


def _trained(args, para, prog, prior, stream=None, parallel_rules=False):
    """(run, JSON record) of training on ``para``: the trace, choices, processes and
    outcome printed (warnings as lines on ``stream``, default stderr). With
    ``parallel_rules`` the rule family is learned beside EM on a second core."""
    from strgm.cli.common import warnings_as_lines
    from strgm.cli.report import training_text
    from strgm.models.processes import learned_processes

    with warnings_as_lines(stream), \
            rules_beside_em(args, para, prog, parallel_rules, prior) as job:
        run = _train(args, para, prog, prior)
        prog.done()
        out = {"trace": run.train.trace, **_choices_shown(run, args),
               "ur_prior": prior.record() if prior else {"kind": "unigram"}}
        processes = learned_processes(run.train.model, top=args.show_processes) \
            if args.show_processes else []
        print(training_text(run, processes=processes))
        if processes:
            out["processes"] = [p.to_dict() for p in processes]
        out.update(_outcome(run, args, prog, job))
    return run, out


def train_task(path: str, options: dict) -> dict:
    """One file of ``strgm train FILE...`` (a task of :func:`strgm.cli.common.run_batch`,
    run here or on a Dask worker): its report printed, its ``strgm-train`` record
    returned."""
    import argparse

    from strgm.datasets.paradigm import read_paradigm
    from strgm.inference import Progress

    args = argparse.Namespace(**{**options, "file": path, "json": None, "save": None,
                                 "checkpoint": None, "resume": None, "quiet": True,
                                 "plot": None})
    prior = resolve_prior(args)
    para = read_paradigm(path)
    note_unseen(prior, para.alphabet())
    return _trained(args, para, Progress(False), prior, sys.stdout)[1]


def _train_summary(rec) -> list:
    """The columns of one file in the table of ``strgm train FILE...`` (None: names)."""
    if rec is None:
        return ["EM iterations", "objective", "held-out exact"]
    h, t = rec.get("holdout"), rec["trace"]
    return [str(len(t)), f"{t[-1]['objective']:.3f}" if t else "-",
            f"{100 * h['exact_match']:.1f}%" if h else "-"]


def _outcome(run, args, prog, job=None) -> dict:
    """Print the URs' and held-out scores, and the family choice; the same for JSON,
    where ``holdout`` is the answer printed (the family choice when there is one) and
    EM's own scores are ``em_phonology.holdout``."""
    out = {}
    if run.train.result is not None:
        res, pm = run.train.result, run.train.graph_model
        out["underlying_forms"] = {lab: [[s, p] for s, p in res.belief(v).kbest(2)]
                                   for lab, v in pm.morpheme_vars.items()}
    if run.scores is not None:
        _print_scores(run.scores)
        out["em_phonology"] = {"holdout": run.scores.to_dict()}
        out["holdout"] = {"system": "em_phonology", **run.scores.to_dict()}
    elif run.held_out:
        print("held-out words not scored: the checkpoint is already past --em-iters, so no "
              "E-step ran")
    if args.family == "auto" and run.train.result is not None:
        out.update(family_report(run, prog, job))
    return out
