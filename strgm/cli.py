"""The ``strgm`` command line.

    strgm demo                      English verbs from CMUdict: URs and predictions
    strgm infer FILE [options]      underlying forms for a paradigm (TSV or wide CSV)
    strgm graph FILE --dot OUT      the paradigm's factor graph in Graphviz dot
    strgm beliefs DIR [options]     query beliefs saved by ``infer --save-beliefs DIR``
    strgm train FILE [options]      learn the phonology by EM (see ``strgm train --help``)
    strgm pcfg train|parse ...      Bayesian PCFGs (see ``strgm pcfg --help``)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional

from strgm.cli_errors import OneLineParser, bug_line
from strgm.errors import OptionError, StrgmError
from strgm.validate import float_arg, int_arg, size_arg

#: Library keywords (as named in an OptionError) -> the command-line option that sets them.
_CLI_NAMES = {"p_copy": "--p-copy", "mean_length": "--mean-length", "boundary": "--boundary",
              "fraction": "--holdout", "seed": "--seed", "n_roots": "--roots"}

#: Projections each EP method accepts (checked before any file is read).
_PROJECTIONS = {"ep": ("gradient", "closed"), "pep": ("prox", "grow")}


def _progress(args):
    from strgm.inference import Progress

    enabled = not getattr(args, "quiet", False) and (getattr(args, "progress", False)
                                                    or sys.stderr.isatty())
    return Progress(enabled)


def _relabel(fn, *args, **kw):
    """``fn(*args, **kw)``; an OptionError naming a library keyword is re-labelled with
    the command-line option that set it (``p_copy`` -> ``--p-copy``)."""
    try:
        return fn(*args, **kw)
    except OptionError as e:
        name = _CLI_NAMES.get(e.option)
        raise (OptionError(name, e.value, e.reason) if name else e) from None


def _symbol(text: str) -> str:
    """argparse type of ``--boundary``: one non-empty symbol without spaces."""
    if not text or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"must be one symbol without spaces, got {text!r}")
    return text


def check_paths(args) -> None:
    """Refuse unwritable outputs and a missing ``--model`` before any input is read or any
    inference starts, so that a long run is never lost to a bad ``--json`` path; checks
    the method/projection combination too."""
    from strgm.cli_train import check_outputs
    from strgm.safe_io import check_input

    check_outputs([(args.json, "--json", False), (args.save_beliefs, "--save-beliefs", True)],
                  [getattr(args, "file", None), args.model])
    if getattr(args, "model", None):
        check_input(args.model, "phonology model (--model)")
    if getattr(args, "save_beliefs", None):
        from strgm.inference.saved import check_save_target

        check_save_target(args.save_beliefs)
    projection = getattr(args, "projection", None)
    allowed = _PROJECTIONS.get(getattr(args, "method", None), ())
    if projection is not None and projection not in allowed:
        raise OptionError("--projection", projection,
                          f"projection {projection!r} is not available for {args.method!r} "
                          "(ep: gradient or closed; pep: prox or grow)")


def _add_inference_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("inference")
    g.add_argument("--method", default="pruned", choices=["bp", "pruned", "ep", "pep"],
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
    g.add_argument("--lambda", dest="lam", type=float_arg(0), default=0.01,
                   help="PEP penalty λ (default: %(default)s)")
    g.add_argument("--anneal", action="store_true", help="PEP: decay λ over iterations")
    g.add_argument("--max-iters", type=int_arg(1), default=10, help="default: %(default)s")
    g.add_argument("--tol", type=float_arg(0), default=1e-4,
                   help="convergence: max change of top-5 belief probabilities")
    g.add_argument("--max-states", type=int_arg(1), default=200_000,
                   help="size guard for exact messages (default: %(default)s)")
    g.add_argument("--max-memory", type=size_arg(), default=None, metavar="SIZE",
                   help="memory budget of inference, e.g. 2G (default: a safe fraction "
                        "of the machine's RAM)")
    m = p.add_argument_group("model")
    m.add_argument("--p-copy", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=0.99, help="untrained edit transducer copy probability, in "
                                      "(0, 1) (default: %(default)s)")
    m.add_argument("--boundary", type=_symbol, default=None, metavar="SYMBOL",
                   help="morpheme boundary symbol in word URs (default: none)")
    m.add_argument("--mean-length", type=float_arg(0, min_open=True), default=None,
                   help="prior mean UR length (default: surface segments per morpheme)")
    m.add_argument("--model", default=None, help="trained phonology from `strgm train --save`")
    o = p.add_argument_group("output")
    o.add_argument("--json", metavar="OUT", help="write results as JSON")
    o.add_argument("--save-beliefs", metavar="DIR",
                   help="save every belief (OpenFst files + beliefs.json) to query later "
                        "with `strgm beliefs DIR` or InferenceResult.load(DIR)")
    o.add_argument("--top", type=int_arg(1, 1000), default=3,
                   help="strings shown per morpheme, 1-1000 (default: %(default)s)")
    o.add_argument("--holdout", type=float_arg(0, 1, min_open=True, max_open=True),
                   default=None, metavar="FRAC",
                   help="hide this fraction (0 < FRAC < 1) of the observed words and "
                        "predict them (at least one word is kept for training)")
    o.add_argument("--seed", type=int_arg(0), default=0,
                   help="holdout seed (default: %(default)s)")
    o.add_argument("--quiet", action="store_true", help="no progress display")
    o.add_argument("--progress", action="store_true", help="progress even when not a tty")


def _method_options(args) -> dict:
    if args.method == "ep":
        return {"order": args.order, "projection": args.projection}
    if args.method == "pep":
        return {"projection": args.projection, "lam": args.lam, "anneal": args.anneal}
    return {}


def run_paradigm(paradigm, args, out=None, title: Optional[str] = None) -> int:
    """Shared body of ``infer`` and ``demo``: build, infer, print, optionally save."""
    out = sys.stdout if out is None else out
    from strgm.inference import infer
    from strgm.models.phonology import (build_phonology_model, holdout_split, in_alphabet,
                                        score_holdout)
    from strgm.report import holdout_line, morpheme_table, prediction_table, result_json

    gold = {}
    if args.holdout:
        keys = holdout_split(paradigm, args.holdout, args.seed)
        surf = {e.key: e.surface for e in paradigm.entries}
        gold = {k: surf[k] for k in keys}
    extra = {}
    if getattr(args, "model", None):
        from strgm.cli_train import load_phonology

        extra["alphabet"], extra["phonology"] = load_phonology(args.model)
    model = _relabel(build_phonology_model, paradigm, p_copy=args.p_copy, hidden=gold.keys(),
                     boundary=args.boundary, mean_length=args.mean_length, **extra)
    n_obs = len(model.paradigm.observed)
    print(title or f"{paradigm.source}", file=out)
    print(f"{len(paradigm)} words ({n_obs} observed), {len(model.morpheme_vars)} morphemes, "
          f"{model.alphabet.num_segments} segments; method: {args.method}", file=out)
    progress = _progress(args)
    opts = {"kbest": args.kbest} if args.method == "pruned" else {}
    if getattr(args, "max_memory", None) is not None:
        opts["max_memory"] = args.max_memory
    result = infer(model.graph, args.method, max_iters=args.max_iters, tol=args.tol,
                   max_states=args.max_states, progress=progress, **opts,
                   **_method_options(args))
    progress.done()
    status = "converged" if result.converged else "stopped at the iteration cap"
    print(f"inference: {result.seconds:.1f}s, {result.iterations} iterations ({status})\n",
          file=out)
    print("Underlying forms", file=out)
    print(morpheme_table(result, model, args.top), file=out)
    scores = None
    if model.unobserved_words:
        gold_joined = {k: model.alphabet.join(model.alphabet.encode(v))
                       if in_alphabet(v, model.alphabet) else v for k, v in gold.items()}
        print("\nPredicted surface forms", file=out)
        print(prediction_table(result, model, gold_joined), file=out)
        if gold:
            scores = score_holdout(result.beliefs(), model, gold)
            print("\n" + holdout_line(scores), file=out)
    if args.json:
        from strgm.safe_io import atomic_write_json

        atomic_write_json(args.json, result_json(result, model, args.top, scores))
        print(f"\nwrote {args.json}", file=out)
    if getattr(args, "save_beliefs", None):
        result.save(args.save_beliefs)
        print(f"saved {len(result.variables)} beliefs to {args.save_beliefs}", file=out)
    return 0


def cmd_infer(args) -> int:
    from strgm.datasets.paradigm import read_paradigm

    check_paths(args)
    return run_paradigm(read_paradigm(args.file), args)


def cmd_demo(args) -> int:
    from strgm.datasets.cmudict_paradigm import english_paradigm

    check_paths(args)
    t0 = time.perf_counter()
    paradigm = _relabel(english_paradigm, args.roots, args.seed)
    title = (f"strgm demo: {args.roots} regular English verbs from CMUdict (seed {args.seed}),"
             " bare/PAST/3SG/PROG forms.\nThe untrained phonology copies with p = "
             f"{args.p_copy}; `strgm train` (EM) learns alternations such as -d ~ -t ~ -ɪd.")
    rc = run_paradigm(paradigm, args, title=title)
    print(f"\ntotal time {time.perf_counter() - t0:.1f}s")
    return rc


def cmd_graph(args) -> int:
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import build_phonology_model
    from strgm.cli_train import check_outputs
    from strgm.safe_io import atomic_write_text

    check_outputs([(args.dot, "--dot", False)], [args.file])
    model = _relabel(build_phonology_model, read_paradigm(args.file), boundary=args.boundary)
    text = model.graph.to_dot()
    if args.dot == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(args.dot, text)
        print(f"wrote {args.dot} ({len(model.graph.variables)} variables, "
              f"{len(model.graph.factors)} factors)")
    return 0


def cmd_beliefs(args) -> int:
    """Query saved beliefs: top-k strings, probabilities of given strings, entropy.

    ``--top`` (1..100000) and the ``--json`` path are checked and every ``--var`` is
    looked up before any belief is read or queried. A ``--prob`` string with a segment
    outside the saved alphabet has probability 0 (no belief can produce it); the output
    says which symbol, and the JSON lists it under ``not_in_alphabet``. ``--json -``
    prints only the JSON, on stdout."""
    from strgm.alphabet import segment
    from strgm.inference.result import InferenceResult
    from strgm.safe_io import atomic_write_json, check_output, strict_json
    from strgm.validate import check_int

    check_int("--top", args.top, min=1, max=100_000)
    check_output(args.json, "--json")
    r = InferenceResult.load(args.dir)
    names = args.var or r.variables
    for v in names:
        if v not in r.variables:
            shown = ", ".join(map(repr, r.variables[:5])) + (", ..." if len(r.variables) > 5
                                                            else "")
            raise OptionError("--var", v, f"no such variable in {args.dir} (it has "
                                          f"{len(r.variables)}: {shown})")
    status = "converged" if r.converged else "stopped at the iteration cap"
    say = print if args.json != "-" else (lambda *a, **k: None)  # --json -: JSON only
    say(f"{args.dir}: {len(r.variables)} beliefs from method {r.method} "
        f"({r.iterations} iterations, {status})")
    data = {}
    for v in names:
        b = r.belief(v)
        row = {"top": [[s, p] for s, p in b.kbest(args.top)]}
        unknown = {}
        if args.prob:
            row["prob"] = {}
            for w in args.prob:
                missing = [c for c in segment(w) if c not in b.alphabet]
                if missing:
                    unknown[w] = missing
                row["prob"][w] = 0.0 if missing else b.prob(w)
            if unknown:
                row["not_in_alphabet"] = unknown
        if args.entropy:
            row["entropy_nats"] = b.entropy()
        data[v] = row
        top = "  ".join(f"{s or 'ε'} {p:.3f}" for s, p in row["top"])
        say(f"{v}\t{top}")
        for w, p in row.get("prob", {}).items():
            note = (f" (symbol {unknown[w][0]!r} is not in the alphabet)" if w in unknown
                    else "")
            say(f"\tP({w or 'ε'}) = {p:.4g}{note}")
        if args.entropy:
            say(f"\tentropy {row['entropy_nats']:.3f} nats")
    if args.json == "-":
        print(strict_json(data))
    elif args.json:
        atomic_write_json(args.json, data)
        print(f"wrote {args.json}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="strgm", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      epilog="--debug (any command): show the traceback of an error")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    d = sub.add_parser("demo", help="run the bundled English demo")
    d.add_argument("--roots", type=int_arg(1), default=30,
                   help="verbs sampled (default: %(default)s)")
    _add_inference_options(d)
    d.set_defaults(func=cmd_demo, holdout=0.1)
    i = sub.add_parser("infer", help="infer URs for a paradigm file")
    i.add_argument("file", help="paradigm: long TSV (morphemes<TAB>surface) or wide .csv")
    _add_inference_options(i)
    i.set_defaults(func=cmd_infer)
    gr = sub.add_parser("graph", help="export the factor graph as Graphviz dot")
    gr.add_argument("file", help="paradigm: long TSV or wide .csv")
    gr.add_argument("--dot", required=True, help="output path, or - for stdout")
    gr.add_argument("--boundary", type=_symbol, default=None, metavar="SYMBOL",
                    help="morpheme boundary symbol in word URs (default: none)")
    gr.set_defaults(func=cmd_graph)
    b = sub.add_parser("beliefs", help="query beliefs saved by `infer --save-beliefs`")
    b.add_argument("dir", help="directory written by --save-beliefs")
    b.add_argument("--var", action="append", metavar="NAME",
                   help="variable to show (repeatable; default: all)")
    b.add_argument("--top", type=int_arg(1, 100_000), default=5,
                   help="strings shown (default: %(default)s)")
    b.add_argument("--prob", action="append", metavar="STRING",
                   help="also print the probability of STRING (repeatable)")
    b.add_argument("--entropy", action="store_true", help="also print each entropy (nats)")
    b.add_argument("--json", metavar="OUT", help="write what is shown as JSON")
    b.set_defaults(func=cmd_beliefs)
    for module in ("strgm.grammars.cli", "strgm.cli_train"):
        try:
            mod = __import__(module, fromlist=["add_subparser"])
        except ImportError:
            continue
        mod.add_subparser(sub)
    return p


def main(argv: Optional[list] = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 input error, 3 bug,
    130 interrupted, 141 closed pipe). ``--debug`` re-raises with the traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except StrgmError as e:
        if debug:
            raise
        print(f"strgm: error: {e}".splitlines()[0], file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if debug:
            raise
        print("strgm: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`, say: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes
        return 141
    except MemoryError:
        if debug:
            raise
        print("strgm: error: out of memory; lower --max-states or --max-memory, or use "
              "--method pruned or ep", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the last line of defence, reported as a bug
        if debug:
            raise
        print(bug_line(e), file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
