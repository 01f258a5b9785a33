"""``strgm pcfg train|parse``: the PCFG commands.

    strgm pcfg train GRAMMAR CORPUS --method em|map|vb|cvb|gibbs|mh [--alpha A] [--iters N]
                     [--seed S] [--out GRAMMAR] [--chars] [--heldout YLD] [--burn-in B]
                     [--checkpoint PATH] [--resume PATH] [--resample-alpha]
                     [--chains K] [--scheduler local[:N]|ADDRESS]
    strgm pcfg parse GRAMMAR CORPUS [--decode viterbi|maxrule] [--chars] [--no-top]
                     [--max-length N] [--scores FILE] [--scheduler local[:N]|ADDRESS]

``train`` prints the per-iteration trace (stderr) and the final grammar in Johnson's format
(``--out FILE``, or stdout when it is a file or a pipe; on a terminal a summary with the
rule count and the first rules, ``--out -`` for all of them); each file it writes
(``--out``, ``--trace-json``, ``--plot``, ``--checkpoint``) is announced as ``wrote FILE``
on stderr.  ``parse`` prints exactly one Penn Treebank bracketed tree per line (stdout),
under a ``(TOP ...)`` root unless ``--no-top``, in the format of ``tsg parse``
(:func:`strgm.cli.pcfg_parse.tree_line`): the sentence's own words as leaves, the
intermediate nodes of a binarised treebank grammar (labels with ``|<``) spliced out, tags
renamed because they are also words (``.^``) restored; sentences without a parse print
``(no parse)`` and are listed on stderr in one ``strgm: warning:`` line.  When the grammar
has word-shape signature terminals (``<UNK...>``, from ``strgm treebank grammar``),
unknown words are parsed as the finest signature of their back-off chain that the grammar
has (:mod:`strgm.grammars.unknown_words`).  A sentence longer than ``--max-length`` tokens
is an error naming its file and line, raised before any parsing.  ``--scores FILE`` writes
a TSV (header ``line  parsed  score  log_prob``: the decoder's score — log P(t, w) for
viterbi, the sum of rule log posteriors for maxrule — and log P(w)).

Options are checked by their argparse types before anything is read, output paths
(``--out``, ``--trace-json``, ``--checkpoint``) before any work, and outputs written
atomically; errors are one line (:func:`strgm.cli.main`).

Checkpoints, for every method: ``--iters`` counts every iteration (samplers: sweeps of
the whole chain), resumed or not, so an interrupted run is finished by repeating its
command with ``--resume CHECKPOINT``; the checkpoint holds the complete state
(:mod:`strgm.grammars.sampler_state`, :mod:`strgm.grammars.estimator_state`) and the
resumed run writes the same grammar and trace, byte for byte, as an uninterrupted one
(with a checkpoint, the estimators' trace rows carry no wall-clock seconds).
"""

from __future__ import annotations

import os
import re
import sys

from strgm.cli.errors import announce_written, warning_line
from strgm.errors import GrammarError, InputError, OptionError
from strgm.cli.common import add_scheduler_option, pcfg_chains, scheduler_spec, \
    sharded_tree_draws
from strgm.cli.json_output import write_document
from strgm.cli.pcfg_parse import add_top_option, check_chart_lengths, \
    located_grammar_error, parse_command
from strgm.safe_io import atomic_write_text, check_outputs, sha256_file
from strgm.validate import float_arg, int_arg, size_arg

__all__ = ["add_subparser"]

METHODS = ("em", "map", "vb", "cvb", "gibbs", "mh")
SAMPLERS = ("gibbs", "mh")


def add_subparser(subparsers) -> None:
    p = subparsers.add_parser("pcfg", help="Bayesian PCFG estimation and parsing")
    sub = p.add_subparsers(dest="pcfg_command", required=True)

    t = sub.add_parser("train", help="estimate rule probabilities from a corpus of strings")
    t.add_argument("grammar", help="grammar file in Mark Johnson's format")
    t.add_argument("corpus", help="yield file: one sentence per line")
    t.add_argument("--grammar-dialect", choices=("auto", "pcfg", "py-cfg"), default="auto",
                   help="numbers before a rule's '-->': pcfg '[weight [pseudocount]]' "
                        "(gibbs-pcfg), py-cfg '[theta [a [b]]]' (a < 1, an adapted "
                        "nonterminal, is refused); auto: py-cfg if a line has three "
                        "numbers, else pcfg (default: %(default)s)")
    t.add_argument("--method", choices=METHODS, default="em",
                   help="estimator: em, map (MAP-EM), vb (variational Bayes), cvb (collapsed "
                        "VB), gibbs or mh (collapsed Metropolis–Hastings; default: "
                        "%(default)s)")
    t.add_argument("--alpha", type=float_arg(min=0, min_open=True), default=None,
                   help="Dirichlet pseudocount for rules without their own (default 1)")
    t.add_argument("--iters", type=int_arg(min=1), default=20,
                   help="iterations in all, resumed or not (samplers: sweeps of the chain)")
    t.add_argument("--seed", type=int_arg(min=0), default=0,
                   help="random seed of the samplers (default: %(default)s)")
    t.add_argument("--out", default=None,
                   help="write the final grammar here; '-' for stdout (default: stdout "
                        "when it is a file or pipe, a summary on a terminal)")
    t.add_argument("--chars", action="store_true", help="split corpus lines into characters")
    t.add_argument("--heldout", default=None, help="held-out yield file for perplexity")
    t.add_argument("--burn-in", type=int_arg(min=0), default=0,
                   help="samplers: sweeps before averaging (< --iters)")
    t.add_argument("--checkpoint", default=None,
                   help="checkpoint file, replaced atomically (samplers: .json or .npz)")
    t.add_argument("--checkpoint-every", type=int_arg(min=1), default=10,
                   help="iterations between checkpoints (default: %(default)s)")
    t.add_argument("--resume", default=None,
                   help="continue the run saved in this checkpoint up to --iters iterations "
                        "in all (repeat the interrupted command's options)")
    t.add_argument("--resample-alpha", action="store_true",
                   help="samplers: resample the Dirichlet pseudocount α each sweep")
    t.add_argument("--min-weight", type=float_arg(min=0, max=1, max_open=True), default=0.0,
                   help="omit rules whose final probability is below this from the output")
    t.add_argument("--trace-json", default=None, help="also write the trace as JSON here")
    t.add_argument("--parses", default=None, metavar="FILE",
                   help="samplers, one chain: write the final sampled tree of every "
                        "training sentence here, one bracketed tree per line ('(no "
                        "parse)' for a sentence the grammar cannot parse)")
    t.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw log P(trees) per sweep (samplers) or -log P(corpus) per "
                        "iteration (estimators); needs strgm[plot]")
    t.add_argument("--quiet", action="store_true", help="no per-iteration trace")
    _add_max_memory(t)
    add_scheduler_option(t)
    t.add_argument("--chains", type=int_arg(min=1), default=1, metavar="K", help="samplers:"
                   " K independent chains (seeds --seed, --seed+1, ...) pooled; R-hat, ESS")
    t.set_defaults(func=_train)
    _add_parsing(sub)


def _add_parsing(sub) -> None:
    """The commands that read a trained model or grammar."""
    q = sub.add_parser("parse", help="parse a corpus with a PCFG")
    q.add_argument("grammar", help="grammar file in Mark Johnson's format")
    q.add_argument("corpus", help="yield file: one sentence per line")
    q.add_argument("--grammar-dialect", choices=("auto", "pcfg", "py-cfg"), default="auto",
                   help="numbers before a rule's '-->': pcfg '[weight [pseudocount]]' "
                        "(gibbs-pcfg), py-cfg '[theta [a [b]]]' (a < 1, an adapted "
                        "nonterminal, is refused); auto: py-cfg if a line has three "
                        "numbers, else pcfg (default: %(default)s)")
    q.add_argument("--decode", choices=("viterbi", "maxrule"), default="viterbi",
                   help="the most probable tree, or the tree of largest expected rule "
                        "count (default: %(default)s)")
    q.add_argument("--chars", action="store_true", help="split lines into characters")
    q.add_argument("--max-length", type=int_arg(min=1), default=None, metavar="N",
                   help="refuse (before parsing) a corpus with a sentence of more than N "
                        "tokens, naming its line")
    q.add_argument("--scores", default=None, metavar="FILE",
                   help="write per-sentence scores here as TSV with a header line")
    add_top_option(q)
    _add_max_memory(q)
    add_scheduler_option(q)
    q.set_defaults(func=parse_command)


def _add_max_memory(p) -> None:
    p.add_argument("--max-memory", type=size_arg(), default=None, metavar="SIZE",
                   help="memory for one parse chart, e.g. 512M or 4G (default 2G): sentences "
                        "are batched to fit, and a sentence too long for it is refused "
                        "before any work")


def _check_options(args) -> None:
    """Option combinations, and every output path, before anything is read."""
    from strgm.distributed.chains import check_parallel
    args.spec = check_parallel(args.method, args.chains, scheduler_spec(args),
                               args.checkpoint, args.resume)
    if args.burn_in >= args.iters:
        raise OptionError("--burn-in", args.burn_in, f"must be < --iters ({args.iters})")
    if args.parses and (args.method not in SAMPLERS or args.chains > 1):
        raise OptionError("--parses", args.parses, "writes the sampled trees of one chain: "
                          "use it with --method gibbs or mh and --chains 1")
    if args.plot:
        from strgm.plot import check_figure_path
        check_figure_path(args.plot)
    resumed = "the --resume checkpoint"
    check_outputs([(args.out, "--out"), (args.trace_json, "--trace-json"),
                   (args.checkpoint, "--checkpoint"), (args.plot, "--plot"),
                   (args.parses, "--parses")],
                  [(args.grammar, "the grammar"), (args.corpus, "the corpus"),
                   (args.heldout, "the --heldout corpus"), (args.resume, resumed)],
                  [("--checkpoint", resumed)])


def _run_settings(args) -> dict:
    """The options that shape a sampler's output; a checkpoint records them and a resumed
    run must repeat them (else its output would silently mix two runs)."""
    return {"--alpha": args.alpha, "--resample-alpha": bool(args.resample_alpha),
            "--burn-in": args.burn_in, "--seed": args.seed,
            "--heldout": sha256_file(args.heldout) if args.heldout else None,
            "--max-memory": args.max_memory}  # it sets the batches, hence the RNG draws


def _resumed(args, state, settings: dict):
    """``state`` loaded from ``--resume``, refused when made with other options or when
    it is already past ``--iters``."""
    for opt, v in settings.items():
        if state.settings.get(opt) != v:
            was = state.settings.get(opt, "unrecorded")
            if opt == "--heldout":  # digests: say what differs, not the hex
                was, v = ("another file" if was else "none"), (args.heldout or "none")
            raise InputError(f"checkpoint was made with {opt} {was}, not {v}; resume "
                             "with the options of the interrupted run", args.resume)
    if state.iteration > args.iters:
        raise OptionError("--iters", args.iters, f"must be ≥ the {state.iteration} "
                          f"iterations already in checkpoint {args.resume}")
    if getattr(args, "plan", None):
        print(args.plan, file=sys.stderr, flush=True)
    return state


def _sample(args, g, corpus, held, log, pool):
    from strgm.grammars.driver import stuck_chain
    from strgm.grammars.samplers import CollapsedMH, GibbsPCFG, SamplerState, run

    if args.chains > 1 or (pool.distributed and args.method == "mh"):
        return pcfg_chains(args, pool, g, corpus, held, log)  # independent chains
    cls = GibbsPCFG if args.method == "gibbs" else CollapsedMH
    k = cls(g, corpus, alpha=args.alpha, resample_alpha=args.resample_alpha,
            max_memory=args.max_memory)
    if pool.distributed:  # one Gibbs chain: its tree draws over sentence shards
        k.tree_sampler = sharded_tree_draws(pool, k)
    settings = _run_settings(args)
    if args.resume:
        state = _resumed(args, SamplerState.load(args.resume, kernel=k), settings)
    else:
        state = k.init(args.seed)
        state.settings = settings
        bad = [i for i, t in enumerate(state.trees) if t is None]
        if bad:
            print(warning_line(f"{len(bad)} sentence(s) have no parse (line numbers "
                               f"{[i + 1 for i in bad[:20]]}); they are left out"), file=log)
    res = run(k, state, args.iters - state.iteration, burn_in=args.burn_in, eval_every=1,
              heldout=held, progress=not args.quiet, log=log, checkpoint=args.checkpoint,
              checkpoint_every=args.checkpoint_every)
    acc = None
    if args.method == "mh" and res.state.proposed:
        acc = res.state.accepted / res.state.proposed
        print(f"acceptance rate {acc:.4f}", file=log)
    note = stuck_chain(res.trace, "log_p_trees", acceptance=acc)
    if note:
        print(f"strgm: warning: {note}", file=log)
    if args.parses:
        _write_parses(args.parses, g, res.state.trees)
    return res.theta_mean, res.trace, {}


def _write_parses(path, g, trees) -> None:
    """The chain's final trees, one bracketed tree per line, written atomically."""
    from strgm.grammars.cfg import tree_to_str
    from strgm.grammars.chart_trees import tree_of_rules

    atomic_write_text(path, "".join(
        ("(no parse)" if t is None else tree_to_str(tree_of_rules(g, t))) + "\n"
        for t in trees))


def _estimate_resumable(args, g, corpus, held, log, pool):
    """EM/MAP/VB/CVB as a chain of updates with checkpoints (:func:`strgm.grammars.
    estimators.run`): ``--iters`` counts every update, resumed or not, and the trace has
    no wall-clock seconds, so an interrupted and resumed run writes the same bytes."""
    from strgm.distributed.pcfg_shards import sharded_kernel
    from strgm.grammars.estimators import KERNELS, EstimatorState, run

    alpha = None if args.method == "em" else args.alpha
    k = sharded_kernel(args.method, g, corpus, alpha, held, args.max_memory, pool=pool) \
        if pool.distributed else KERNELS[args.method](g, corpus, alpha, held, args.max_memory)
    settings = {"--seed": args.seed, "--heldout": _run_settings(args)["--heldout"],
                "--max-memory": args.max_memory}
    if args.resume:
        state = _resumed(args, EstimatorState.load(args.resume, kernel=k), settings)
    else:
        state = k.init(seed=args.seed) if args.method == "cvb" else k.init()
        state.settings = settings
    state = run(k, state, args.iters - state.iteration, progress=not args.quiet, log=log,
                checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every)
    return k.result(state)


def _estimate(args, g, corpus, held, log, pool):
    from strgm.distributed.pcfg_shards import fit_on_pool
    from strgm.grammars.estimators import fit

    if args.checkpoint or args.resume:
        res = _estimate_resumable(args, g, corpus, held, log, pool)
        _notes(res, log)
        return res.theta, res.trace, {}

    kw = dict(iters=args.iters, heldout=held, progress=not args.quiet, log=log,
              max_memory=args.max_memory)
    if args.method != "em":
        kw["alpha"] = args.alpha
    if args.method == "cvb":
        kw["seed"] = args.seed
    res = (fit_on_pool(pool, args.method, g, corpus, **kw) if pool.distributed else
           fit(args.method, g, corpus, **kw))  # the E-step over sentence shards
    _notes(res, log)
    return res.theta, res.trace, {}


def _notes(res, log) -> None:
    """The estimator's notes, their sentences named by line number (the estimators count
    from 0) as in the warning that follows; a note of the initial grammar's unparsable
    sentences is left out when that warning lists the same ones."""
    final = sorted(res.unparsable)
    for n in res.notes:
        m = _SENTENCES.search(n)
        if m and n.startswith(f"{len(final)} sentence(s) unparsable") \
                and _indices(m.group(1)) == final[:20]:
            continue
        print("note: " + (_SENTENCES.sub(_line_numbers, n) if m else n), file=log)
    if res.unparsable:
        print(warning_line(f"{len(res.unparsable)} sentence(s) have no parse (line "
                           f"numbers {[i + 1 for i in res.unparsable[:20]]})"), file=log)


#: the list of 0-based sentence indices that ends an estimator's note
_SENTENCES = re.compile(r"unparsable(?: under the initial grammar)?: \[([0-9, ]*)\]$")


def _indices(text: str) -> list:
    return [int(i) for i in text.split(",") if i.strip()]


def _line_numbers(m) -> str:
    lines = [i + 1 for i in _indices(m.group(1))]
    return m.group(0)[:m.start(1) - m.start(0) - 1] + f"line numbers {lines}"


def _train(args) -> int:
    from strgm.grammars.johnson_format import format_grammar, read_grammar, read_yld
    from strgm.distributed.cluster import open_pool

    _check_options(args)
    with open_pool(args.spec) as pool:  # joined or started before any file is read
        g = read_grammar(args.grammar, dialect=args.grammar_dialect)
        corpus = read_yld(args.corpus, chars=args.chars)
        held = read_yld(args.heldout, chars=args.chars, what="held-out corpus") \
            if args.heldout else None
        check_chart_lengths(g, args.max_memory, (args.corpus, corpus), (args.heldout, held))
        args.plan = None if args.quiet else plan_text(args, len(corpus), held, pool)
        if args.plan and not args.resume:  # else once the checkpoint is accepted
            print(args.plan, file=sys.stderr, flush=True)
        try:
            if args.method in SAMPLERS:
                theta, trace, extra = _sample(args, g, corpus, held, sys.stderr, pool)
            else:
                theta, trace, extra = _estimate(args, g, corpus, held, sys.stderr, pool)
        except GrammarError as e:
            raise located_grammar_error(e, args) from None
        text = format_grammar(g, theta, min_weight=args.min_weight or None)
        if args.out and args.out != "-":
            atomic_write_text(args.out, text)
        elif args.out == "-" or not sys.stdout.isatty():
            sys.stdout.write(text)
        else:
            sys.stdout.write(_grammar_summary(text))
        if args.trace_json:
            write_document(args.trace_json, "strgm-pcfg-trace", {"method": args.method,
                                                                  "trace": trace, **extra})
        if args.plot:
            from strgm.cli.common import plot_trace
            sampled = args.method in SAMPLERS
            plot_trace(args.plot, trace, "log_p_trees" if sampled else "neg_log_prob",
                       args.burn_in if sampled else None, extra.get("diagnostics", False))
        ck = args.checkpoint if args.checkpoint and os.path.exists(args.checkpoint) else None
        announce_written(args.out if args.out != "-" else None, args.trace_json, args.plot, ck,
                         args.parses)
        return 0


NAMES = {"em": "EM", "map": "MAP-EM", "vb": "variational Bayes", "cvb": "collapsed VB",
         "gibbs": "Gibbs sampler", "mh": "collapsed Metropolis-Hastings sampler"}


def plan_text(args, n_sentences: int, held, pool) -> str:
    """One line announcing the work of ``strgm pcfg train``: the estimator, the sentences
    (and held-out ones), the iterations (samplers: sweeps, burn-in, chains)."""
    held = f" (perplexity on {len(held)} held-out sentences)" if held else ""
    resumed = f", resuming {args.resume}" if args.resume else ""
    if args.method in SAMPLERS:
        chains = "1 chain" if args.chains == 1 else f"{args.chains} chains"
        where = " on the --scheduler cluster" if pool.distributed else ""
        what = (f"{args.iters} sweeps in all{resumed} (burn-in {args.burn_in}), "
                f"{chains}{where}")
    else:
        where = ", E-steps on the --scheduler cluster" if pool.distributed else ""
        what = f"{args.iters} iterations in all{resumed}{where}"
    return (f"strgm pcfg train: {NAMES[args.method]} on {n_sentences} sentences{held}, "
            f"{what}")


def _grammar_summary(text: str, top: int = 10) -> str:
    """What a terminal gets instead of thousands of rules: the count, the first ``top``
    rules and how to get them all."""
    rules = text.splitlines()
    head = "\n".join(rules[:top])
    more = (f"… {len(rules) - top} more\n" if len(rules) > top else "")
    return (f"{len(rules)} rules; the first {min(top, len(rules))}:\n{head}\n{more}"
            "write them all with --out FILE (or --out - for stdout)\n")
