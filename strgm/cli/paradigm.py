"""``strgm infer``, ``strgm demo`` and ``strgm graph``: the paradigm commands.

They parse options, check every output path before any input is read, call the paradigm
workflow (:mod:`strgm.workflows.paradigm`) and format what it returns
(:mod:`strgm.cli.report`); the workflow itself neither parses nor prints.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional

from strgm.cli.common import INFERENCE_METHODS, add_limit_options, add_scheduler_option, \
    check_outputs, progress, relabel, run_batch, scheduler_spec, symbol
from strgm.cli.errors import announce_written
from strgm.errors import OptionError
from strgm.validate import float_arg, int_arg

#: Projections each EP method accepts (checked before any file is read).
_PROJECTIONS = {"ep": ("gradient", "closed"), "pep": ("prox", "grow")}


def check_paths(args) -> None:
    """Refuse unwritable outputs and a missing ``--model`` before any input is read or any
    inference starts, so that a long run is never lost to a bad ``--json`` path; checks
    the method/projection combination too."""
    from strgm.safe_io import check_input

    check_outputs([(args.json, "--json", False), (args.save_beliefs, "--save-beliefs", True),
                   (getattr(args, "plot", None), "--plot", False)], run_inputs(args))
    if getattr(args, "plot", None):
        from strgm.plot import check_figure_path

        check_figure_path(args.plot)
    if getattr(args, "model", None):
        check_input(args.model, "phonology model (--model)")
    if getattr(args, "save_beliefs", None):
        from strgm.cli.saved_dir import check_beliefs_dir

        check_beliefs_dir(args.save_beliefs, getattr(args, "force", False))
    args.ur_prior = resolve_prior(args)
    projection = getattr(args, "projection", None)
    allowed = _PROJECTIONS.get(getattr(args, "method", None), ())
    if projection is not None and projection not in allowed:
        raise OptionError("--projection", projection,
                          f"projection {projection!r} is not available for {args.method!r} "
                          "(ep: gradient or closed; pep: prox or grow)")


def _as_list(files) -> list:
    return files if isinstance(files, list) else [files]


def run_inputs(args) -> list:
    """The files a phonology run reads, named for the output policy
    (:func:`strgm.safe_io.check_outputs`): the paradigm(s) (a directory stands for the
    problem files it holds, so an output may sit beside them), ``--model``, a ``--prior``
    file."""
    import os

    from strgm.distributed.files import expand_inputs
    from strgm.models.ur_prior import parse_prior

    out = []
    for f in _as_list(getattr(args, "file", None)):  # a directory: the problem files it holds
        files = expand_inputs([f], "FILE")[0] if f and os.path.isdir(f) else [f]
        out += [(x, "the paradigm") for x in files]
    out.append((getattr(args, "model", None), "the --model file"))
    if getattr(args, "prior", None):
        out.append((parse_prior(args.prior, "--prior")[1], "the --prior file"))
    return out


def add_prior_option(group, model_option: bool = True) -> None:
    """``--prior``, the prior on underlying forms (``infer``, ``demo`` and ``train``)."""
    group.add_argument("--prior", default=None, metavar="unigram|hmm:MODEL|pcfg[:G]",
                       help="prior on every morpheme's underlying form: unigram (geometric "
                            "length × segment frequencies; the default), hmm:MODEL, a "
                            "`strgm hmm train` model as a string prior, or pcfg[:GRAMMAR], "
                            "a syllable grammar (or yours) learned jointly, with --method "
                            "ep|pep (docs/phonology.md)" + ("; with --model, default the prior it was trained with"
                                     if model_option else "; --save records it"))


def resolve_prior(args):
    """The UR prior of ``args`` (an :class:`~strgm.models.ur_prior.HMMPrior`, or None for
    the unigram prior), read and checked before any work: ``--prior``, else the prior
    ``--model`` was trained with. A prior other than the model's is a note on stderr."""
    from strgm.models.grammar_prior import load_pcfg_prior
    from strgm.models.ur_prior import (load_hmm_prior, parse_prior, prior_from_record,
                                       recorded_prior)

    model = getattr(args, "model", None)
    record = recorded_prior(model) if model else None
    if args.prior is None:
        prior = prior_from_record(record, model) if record else None
    else:
        kind, path = parse_prior(args.prior, "--prior")
        prior = load_hmm_prior(path) if kind == "hmm" else \
            load_pcfg_prior(path) if kind == "pcfg" else None
        was = record.get("sha256") if isinstance(record, dict) else None
        if record is not None and was != (prior.sha256 if prior else None):
            print(f"strgm: note: --model {model} was trained with another UR prior "
                  f"({record.get('path', record.get('kind'))}); using --prior {args.prior}",
                  file=sys.stderr)
    if prior is not None and getattr(args, "mean_length", None) is not None:
        raise OptionError("--mean-length", args.mean_length, "sets the length of the "
                          "unigram prior; the --prior given has its own length model")
    if hasattr(prior, "add_to") and getattr(args, "method", "pep") not in ("ep", "pep"):
        raise OptionError("--method", args.method, "the pcfg prior needs --method ep or pep "
                          "(a grammar has no finite-state message; EP reads its moments)")
    return prior


def note_unseen(prior, alphabet) -> None:
    """One note on stderr listing the segments the HMM prior never saw (they share its
    unknown-symbol mass), so that a vocabulary mismatch is never silent."""
    missing = prior.unseen(alphabet) if prior is not None else []
    if missing:
        print(f"strgm: note: the HMM prior never saw {len(missing)} of the "
              f"{alphabet.num_segments} segments ({' '.join(missing)}); they share its "
              "unknown-symbol mass", file=sys.stderr)


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("inference")
    g.add_argument("--method", default="pruned", choices=INFERENCE_METHODS,
                   help="bp: exact messages; pruned: k-best domains (Cotterell et al. 2015); "
                        "ep: n-gram EP; pep: penalized EP (default: %(default)s)")
    g.add_argument("--kbest", type=int_arg(1), default=20,
                   help="pruned BP domain size per message (default: %(default)s)")
    g.add_argument("--order", type=int, default=2, choices=[1, 2, 3],
                   help="EP n-gram order (default: %(default)s)")
    g.add_argument("--projection", default=None,
                   choices=["prox", "grow", "gradient", "closed"],
                   help="pep: prox (default) or grow; ep: gradient (default; one step "
                        "per visit, as in PEP §7) or closed (exact fit per visit; "
                        "exact on trees, degrades on loopy graphs)")
    g.add_argument("--lambda", dest="lam", type=float_arg(0), default=None,
                   help="PEP penalty λ (default: 0.03 for prox, 0.01 for grow)")
    g.add_argument("--anneal", action="store_true", help="PEP: decay λ over iterations")
    g.add_argument("--max-iters", type=int_arg(1), default=10, help="default: %(default)s")
    g.add_argument("--tol", type=float_arg(0), default=None,
                   help="convergence: max change of top-5 belief probabilities (bp, "
                        "pruned; default 1e-4) or symmetric KL divergence between "
                        "successive beliefs in nats (ep: default 0.01; pep: 0.05)")
    g.add_argument("--max-seconds", type=float_arg(0), default=None, metavar="S",
                   help="anytime stop: end at the first iteration that finishes after S "
                        "seconds, and report where the run stood")
    add_limit_options(g, "inference")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("model")
    m.add_argument("--p-copy", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=0.99, help="untrained edit transducer copy probability, in "
                                      "(0, 1) (default: %(default)s)")
    m.add_argument("--boundary", type=symbol, default=None, metavar="SYMBOL",
                   help="morpheme boundary symbol in word URs (default: none)")
    m.add_argument("--mean-length", type=float_arg(0, min_open=True), default=None,
                   help="prior mean UR length (default: surface segments per morpheme)")
    m.add_argument("--model", default=None, help="trained phonology from `strgm train --save`")
    add_prior_option(m)


def _add_output_options(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("output")
    o.add_argument("--json", metavar="OUT", help="write results as JSON")
    o.add_argument("--save-beliefs", metavar="DIR",
                   help="save every belief (OpenFst files + beliefs.json) to query later "
                        "with `strgm beliefs DIR` or InferenceResult.load(DIR); DIR must "
                        "be new, empty or an earlier save (see --force)")
    o.add_argument("--force", action="store_true",
                   help="with --save-beliefs: save into a directory that also holds other "
                        "files; they are kept, and only the files of an earlier save "
                        "there are replaced")
    o.add_argument("--top", type=int_arg(1, 1000), default=3,
                   help="strings shown per morpheme, 1-1000 (default: %(default)s)")
    o.add_argument("--holdout", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=None, metavar="FRAC",
                   help="hide this fraction (0 < FRAC < 1) of the observed words and "
                        "predict them (at least one word is kept for training)")
    o.add_argument("--seed", type=int_arg(0), default=0,
                   help="holdout seed (default: %(default)s)")
    o.add_argument("--plot", metavar="FILE.png",
                   help="draw the run: belief change per iteration, held-out predictions, "
                        "the least certain morpheme's URs (.png/.pdf/.svg; needs "
                        "strgm[plot])")
    o.add_argument("--quiet", action="store_true", help="no progress display")
    o.add_argument("--progress", action="store_true",
                   help="show progress (the default unless --quiet: a bar on a terminal, "
                        "otherwise a line at least every 8 s)")


def add_inference_options(p: argparse.ArgumentParser) -> None:
    """The options of ``infer`` and ``demo``: engine, model and output."""
    _add_engine_options(p)
    _add_model_options(p)
    _add_output_options(p)


def engine_options(args) -> dict:
    """The keywords of :func:`strgm.inference.infer` that ``args`` sets for its method."""
    opts = {"max_iters": args.max_iters, "max_states": args.max_states}
    for key in ("tol", "max_seconds"):  # None: the method's default, no limit
        if getattr(args, key, None) is not None:
            opts[key] = getattr(args, key)
    if args.method == "pruned":
        opts["kbest"] = args.kbest
    if getattr(args, "max_memory", None) is not None:
        opts["max_memory"] = args.max_memory
    if args.method == "ep":
        opts.update(order=args.order, projection=args.projection)
    elif args.method == "pep":
        opts.update(projection=args.projection, anneal=args.anneal)
        if args.lam is not None:
            opts["lam"] = args.lam
    return opts


def run_paradigm(paradigm, args, out=None, title: Optional[str] = None, record=False):
    """Shared body of ``infer`` and ``demo``: the paradigm workflow, printed and saved;
    returns 0, or with ``record`` the ``strgm-infer`` record (for :func:`infer_task`)."""
    from strgm.cli import report
    from strgm.workflows.paradigm import prepare_paradigm, run_inference

    out = sys.stdout if out is None else out
    trained = None
    if getattr(args, "model", None):
        from strgm.models.edit_model import PhonologyEditModel

        trained = PhonologyEditModel.load(args.model)
    prior = getattr(args, "ur_prior", None)
    from strgm.progress import announce_if_slow

    note = (f"strgm {getattr(args, 'command', 'infer')}: building the factor graph of "
            f"{paradigm.source} ({len(paradigm)} words) ...")
    with announce_if_slow(note, enabled=not getattr(args, "quiet", False)):
        run = relabel(prepare_paradigm, paradigm, args.holdout, args.seed, trained,
                      p_copy=args.p_copy, boundary=args.boundary,
                      mean_length=args.mean_length, ur_prior=prior)
    model = run.model
    note_unseen(prior, model.alphabet)
    print(title or f"{paradigm.source}", file=out)
    print(f"{len(paradigm)} words ({run.n_observed} observed), {len(model.morpheme_vars)} "
          f"morphemes, {model.alphabet.num_segments} segments; method: {args.method}; "
          f"UR prior: {prior.describe() if prior else 'unigram'}", file=out)
    prog = progress(args)
    if prog.enabled:
        print(plan_text(args, run), file=sys.stderr, flush=True)
    try:
        run = run_inference(run, args.method, progress=prog, **engine_options(args))
    finally:
        prog.done()
    print(report.run_text(run, args.top), file=out)
    doc = None
    if args.json or record:
        extra = {"ur_prior": prior.record() if prior else {"kind": "unigram"}}
        doc = report.result_json(run.result, model, args.top, run.scores, extra)
    if args.json:
        from strgm.cli.json_output import write_document

        write_document(args.json, "strgm-infer", doc)
        announce_written(args.json)
    if getattr(args, "save_beliefs", None):
        from strgm.cli.saved_dir import save_beliefs_keeping

        save_beliefs_keeping(run.result, args.save_beliefs, getattr(args, "force", False))
        print(f"saved {len(run.result.variables)} beliefs to {args.save_beliefs}",
              file=sys.stderr)
    if getattr(args, "plot", None):
        from strgm.plot import plot_inference_run, save_figure

        save_figure(plot_inference_run(run), args.plot)
        announce_written(args.plot)
    return doc if record else 0


def plan_text(args, run) -> str:
    """One line announcing the work of ``strgm infer`` (and ``demo``): the method, the
    words and morphemes of the factor graph, and the most iterations it may take."""
    limit = f" or {args.max_seconds:g} s" if getattr(args, "max_seconds", None) else ""
    held = f", then {len(run.held_out)} held-out words predicted" if run.held_out else ""
    return (f"strgm {getattr(args, 'command', 'infer')}: {args.method} inference over "
            f"{run.n_observed} observed words and {len(run.model.morpheme_vars)} "
            f"morphemes, at most {args.max_iters} iterations{limit}{held}")


def infer_task(path: str, options: dict) -> dict:
    """One file of ``strgm infer FILE...`` (a task of :func:`strgm.cli.common.run_batch`,
    run here or on a Dask worker): its report printed, its ``strgm-infer`` record
    returned."""
    from strgm.datasets.paradigm import read_paradigm

    args = argparse.Namespace(**{**options, "file": path, "json": None, "quiet": True,
                                 "save_beliefs": None, "progress": False, "plot": None})
    args.ur_prior = resolve_prior(args)
    return run_paradigm(read_paradigm(path), args, record=True)


def _infer_summary(rec) -> list:
    """The columns of one file in the table of ``strgm infer FILE...`` (None: names)."""
    if rec is None:
        return ["method", "iterations", "converged", "held-out exact"]
    h = rec.get("holdout")
    return [rec["method"], str(rec["timing"]["iterations"]), str(rec["timing"]["converged"]),
            f"{100 * h['exact_match']:.1f}%" if h else "-"]


def cmd_infer(args) -> int:
    """``strgm infer FILE...``: one file as always; several (or a directory or glob) one
    task per file (:func:`strgm.cli.common.run_batch`)."""
    from strgm.datasets.paradigm import read_paradigm
    from strgm.distributed.files import expand_inputs

    spec = scheduler_spec(args)  # checked before any work
    files, several = expand_inputs(args.file, "FILE")
    if several:
        check_paths(args)
        return run_batch(args, files, "infer", infer_task, _infer_summary,
                         [("--save-beliefs", args.save_beliefs),
                          ("--plot", getattr(args, "plot", None))])
    if spec is not None:
        print("strgm: note: --scheduler runs one task per file; a single file runs here",
              file=sys.stderr)
    args.file = files[0]
    check_paths(args)
    return run_paradigm(read_paradigm(args.file), args)


def cmd_demo(args) -> int:
    from strgm.datasets.cmudict_paradigm import english_paradigm

    check_paths(args)
    t0 = time.perf_counter()
    paradigm = relabel(english_paradigm, args.roots, args.seed)
    title = (f"strgm demo: {args.roots} regular English verbs from CMUdict (seed {args.seed}),"
             " bare/PAST/3SG/PROG forms.\nThe untrained phonology copies with p = "
             f"{args.p_copy}; `strgm train` (EM) learns alternations such as -d ~ -t ~ -ɪd.")
    rc = run_paradigm(paradigm, args, title=title)
    print(f"\ntotal time {time.perf_counter() - t0:.1f}s")
    return rc


def cmd_graph(args) -> int:
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import build_phonology_model
    from strgm.safe_io import atomic_write_text

    check_outputs([(args.dot, "--dot", False)], [args.file])
    model = relabel(build_phonology_model, read_paradigm(args.file), boundary=args.boundary)
    text = model.graph.to_dot()
    if args.dot == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(args.dot, text)
        print(f"wrote {args.dot} ({len(model.graph.variables)} variables, "
              f"{len(model.graph.factors)} factors)", file=sys.stderr)
    return 0


def add_subparsers(sub) -> None:
    """``demo``, ``infer`` and ``graph`` (their functions are looked up when the parser
    is built, so a test may replace one)."""
    d = sub.add_parser("demo", help="run the bundled English demo")
    d.add_argument("--roots", type=int_arg(1), default=30,
                   help="verbs sampled (default: %(default)s)")
    add_inference_options(d)
    d.set_defaults(func=cmd_demo, holdout=0.1)
    i = sub.add_parser("infer", help="infer URs for a paradigm file")
    i.add_argument("file", nargs="+", help="paradigm: long TSV (morphemes<TAB>surface) or "
                   "wide .csv; several files, directories or globs: one task per file, "
                   "one table (--json: one strgm-batch document)")
    add_inference_options(i)
    add_scheduler_option(i)
    i.set_defaults(func=cmd_infer)
    gr = sub.add_parser("graph", help="export the factor graph as Graphviz dot")
    gr.add_argument("file", help="paradigm: long TSV or wide .csv")
    gr.add_argument("--dot", required=True, help="output path, or - for stdout")
    gr.add_argument("--boundary", type=symbol, default=None, metavar="SYMBOL",
                    help="morpheme boundary symbol in word URs (default: none)")
    gr.set_defaults(func=cmd_graph)
