"""``strgm tsg train|parse|show``: Bayesian tree substitution grammars (Cohn & Blunsom 2010).

    strgm tsg train TREES... --save MODEL [--sampler blocked|local] [--init minimal|maximal]
                    [--iters N] [--seed S] [--alpha A] [--s S] [--fixed-hyper]
                    [--process dp|py] [--discount D]
                    [--markov H|none] [--unk-threshold K] [--chains K]
                    [--scheduler local[:N]|ADDRESS] [--checkpoint PATH]
                    [--checkpoint-every K] [--resume PATH] [--trace-json PATH] [--quiet]
    strgm tsg parse MODEL SENTENCES [--decode mer|mpd] [--mer-objective sum|product]
                    [--samples K] [--seed S] [--max-length N] [--quiet] [--no-top]
                    [--scheduler local[:N]|ADDRESS]
    strgm tsg show MODEL [--top N]

``train`` reads ``.mrg`` files or folders (cleaned as ``strgm treebank grammar`` does),
replaces words seen at most ``--unk-threshold`` times by word-shape signatures, binarises
with horizontal Markovisation ``--markov`` and runs the DP-TSG sampler (blocked MH with
the grammar transform, or the local Gibbs sampler) for ``--iters`` sweeps in all, resumed
or not, resampling α_c and s_c every sweep unless ``--fixed-hyper``.  ``--process py``
makes every label's distribution over elementary trees a Pitman–Yor process
(Cohn, Blunsom & Goldwater 2010, JMLR) with discounts d_c starting at ``--discount``
and slice-sampled with α_c (:mod:`strgm.grammars.tsg.pitman_yor`); the discounts and the
seating are saved in the model, the trace rows carry ``mean_discount`` and the summary
line the discounts' range.  One progress line per sweep (training log-likelihood
log P(derivations | α, s), for PY log P(derivations, seating | α, d, s), MH acceptance)
goes to stderr.  ``--save`` writes the model (trees, last state, preparation) atomically.
``--chains K`` runs K independent chains (seeds S .. S+K−1; with ``--scheduler`` on Dask
workers), prints the split R-hat and effective sample size of the log-likelihood over the
second half of the sweeps, writes every chain's trace to ``--trace-json`` (rows carry
``chain`` and ``seed``) and saves chain 0's state, that of the single-chain run
(:mod:`strgm.distributed.tsg_chains`).

``parse`` reads one tokenised sentence per line and writes one Penn Treebank tree per
line to stdout (under a ``(TOP ...)`` root unless ``--no-top``, the format of ``pcfg
parse``), ``(no parse)`` when the model derives none: MER over ``--samples``
MH-corrected draws from the transformed grammar, or MPD (the most probable derivation).
MER maximises the product of the anchored CFG rules' Monte-Carlo marginals by default;
``--mer-objective sum`` maximises their sum, the expected number of correct rules of
Cohn & Blunsom 2010, which adds every unary bracket of positive marginal and so trades
precision for recall.  The default was chosen on a development split (trained on WSJ
0001-0139 of the sample, 308 sentences of 0140-0159: F1 82.1 with the product, 77.8 with
the sum, precision 82.2 against 73.5).  A sentence longer than ``--max-length`` is an error naming
its line, raised before parsing starts.  ``show`` prints the most frequent elementary
trees with their counts.
"""

from __future__ import annotations

import os
import sys
import time

from strgm.cli.common import add_scheduler_option, check_chains_options
from strgm.cli.errors import announce_written
from strgm.cli.json_output import write_document
from strgm.cli.pcfg_parse import add_top_option, no_parse_line, tree_line
from strgm.errors import InputError, OptionError
from strgm.validate import float_arg, int_arg

__all__ = ["add_subparser"]

#: ``tsg train``'s horizontal Markov order, chosen on the development split
#: (``python -m benchmarks.grammars.tsg_markov_dev``, ``benchmarks/results/tsg_markov_dev.md``):
#: order 2 did not beat it
TSG_MARKOV = 1


def add_subparser(subparsers) -> None:
    from strgm.cli.treebank import markov_arg

    p = subparsers.add_parser("tsg", help="Bayesian tree substitution grammars "
                                          "(Cohn & Blunsom 2010)")
    sub = p.add_subparsers(dest="tsg_command", required=True)
    t = sub.add_parser("train", help="sample TSG derivations of a treebank")
    t.add_argument("trees", nargs="+", help=".mrg files or folders of them")
    t.add_argument("--save", required=True, metavar="MODEL", help="write the model here")
    t.add_argument("--sampler", choices=("blocked", "local"), default="blocked",
                   help="blocked: whole trees by the Table 1 transform with an MH "
                        "correction; local: one node at a time (default: %(default)s)")
    t.add_argument("--init", choices=("minimal", "maximal"), default="minimal",
                   help="minimal: ETs are CFG rules; maximal: whole trees")
    t.add_argument("--iters", type=int_arg(min=1), default=100,
                   help="sweeps in all, resumed or not (default: %(default)s)")
    t.add_argument("--seed", type=int_arg(min=0), default=0,
                   help="random seed (default: %(default)s)")
    t.add_argument("--alpha", type=float_arg(min=0, min_open=True), default=1.0,
                   help="initial DP concentration α_c of every label (default 1)")
    t.add_argument("--s", type=float_arg(min=0, max=1, min_open=True, max_open=True),
                   default=0.5, help="initial stop probability s_c (default 0.5)")
    t.add_argument("--fixed-hyper", action="store_true", help="keep α and s (and d) fixed")
    t.add_argument("--process", choices=("dp", "py"), default="dp",
                   help="dp: Dirichlet process per label; py: Pitman–Yor process "
                        "(default: %(default)s)")
    t.add_argument("--discount", type=float_arg(min=0, max=1, max_open=True), default=0.5,
                   help="initial Pitman–Yor discount d_c of every label (--process py; "
                        "default 0.5)")
    t.add_argument("--markov", type=markov_arg, default=TSG_MARKOV,
                   help="horizontal Markovisation of the binarisation (default %(default)s)")
    t.add_argument("--unk-threshold", type=int_arg(min=0), default=1,
                   help="words seen at most this often become signatures (default 1)")
    t.add_argument("--chains", type=int_arg(min=1), default=1, metavar="K",
                   help="run K independent chains (seeds --seed .. --seed+K-1) and report "
                        "split R-hat and the effective sample size of the log-likelihood "
                        "over the second half of the sweeps; the model is chain 0's "
                        "(default: 1)")
    add_scheduler_option(t)
    t.add_argument("--checkpoint", default=None, help="checkpoint file, replaced atomically")
    t.add_argument("--checkpoint-every", type=int_arg(min=1), default=10,
                   help="sweeps between checkpoints (default: %(default)s)")
    t.add_argument("--resume", default=None, help="continue the run in this checkpoint")
    t.add_argument("--trace-json", default=None, help="write the per-sweep trace here")
    t.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw the training log-likelihood per sweep (needs strgm[plot])")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.set_defaults(func=_train)
    _add_parsing(sub)


def _add_parsing(sub) -> None:
    """The commands that read a trained model: parse and show."""
    q = sub.add_parser("parse", help="parse sentences with a trained TSG")
    q.add_argument("model", help="a model written by `strgm tsg train --save`")
    q.add_argument("sentences", help="one tokenised sentence per line")
    q.add_argument("--decode", choices=("mer", "mpd"), default="mer",
                   help="mer: the tree of largest expected rule marginals; mpd: the most "
                        "probable derivation (default: %(default)s)")
    q.add_argument("--mer-objective", choices=("sum", "product"), default="product",
                   help="MER maximises the product of the rules' marginals (default, "
                        "chosen on a development split) or their sum (the paper's "
                        "expected number of correct rules)")
    q.add_argument("--samples", type=int_arg(min=1), default=100,
                   help="MH draws per sentence for MER (default %(default)s)")
    q.add_argument("--seed", type=int_arg(min=0), default=0,
                   help="random seed of the derivation samples (default: %(default)s)")
    q.add_argument("--max-length", type=int_arg(min=1), default=None, metavar="N",
                   help="refuse (before parsing) a sentence of more than N words")
    q.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_top_option(q)
    add_scheduler_option(q)
    q.set_defaults(func=_parse)

    s = sub.add_parser("show", help="the most frequent elementary trees of a model")
    s.add_argument("model", help="a model written by `strgm tsg train --save`")
    s.add_argument("--top", type=int_arg(min=1), default=30, metavar="N",
                   help="how many elementary trees (default: %(default)s)")
    s.set_defaults(func=_show)


def _settings(args) -> dict:
    """The options that shape the chain; a resumed run must repeat them."""
    out = {"--sampler": args.sampler, "--init": args.init, "--seed": args.seed,
           "--alpha": args.alpha, "--s": args.s, "--fixed-hyper": bool(args.fixed_hyper),
           "--markov": args.markov, "--unk-threshold": args.unk_threshold}
    if args.process == "py":  # absent for DP, as in checkpoints made before PY existed
        out.update({"--process": "py", "--discount": args.discount})
    return out


def _start(args, kernel):
    """The chain's first state: fresh, or ``--resume``d (same options, not past --iters)."""
    from strgm.grammars.tsg import TSGState

    settings = _settings(args)
    if not args.resume:
        state = kernel.init(args.seed, args.init)
        state.settings = settings
        return state
    state = TSGState.load(args.resume, kernel)
    for opt, v in settings.items():
        if state.settings.get(opt) != v:
            raise InputError(f"checkpoint was made with {opt} "
                             f"{state.settings.get(opt, 'unrecorded')}, not {v}; resume "
                             "with the options of the interrupted run", args.resume)
    if state.iteration > args.iters:
        raise OptionError("--iters", args.iters, f"must be ≥ the {state.iteration} sweeps "
                          f"already in checkpoint {args.resume}")
    return state


def _describe(state, row) -> str:
    acc, disc = row.get("acceptance"), row.get("mean_discount")
    return (f"sweep {row['iteration']}: log-likelihood {row['log_likelihood']:.1f}, "
            f"{row['ets']} ETs" + ("" if acc is None else f", acceptance {acc:.3f}")
            + ("" if disc is None else f", mean discount {disc:.3f}"))


def _train(args) -> int:
    """``tsg train`` (module docstring)."""
    from strgm.cli.treebank import read_clean_trees, tree_files
    from strgm.chains.driver import drive
    from strgm.grammars.tsg import BlockedMHTSG, LocalGibbsTSG
    from strgm.grammars.tsg.model_file import TSGModel, prepare_trees, save_model

    from strgm.cli.common import check_chain_outputs

    resumed = "the --resume checkpoint"
    check_chain_outputs([(args.save, "--save"), (args.checkpoint, "--checkpoint"),
                         (args.trace_json, "--trace-json")], args.plot,
                        [(str(f), "a tree file") for f in tree_files(args.trees)]
                        + [(args.resume, resumed)], [("--checkpoint", resumed)])
    spec = check_chains_options(args)
    if args.process == "py" and (args.chains > 1 or spec is not None):
        raise OptionError("--process", "py", "runs one chain in this process (no "
                          "--chains or --scheduler)")
    trees, prepare = prepare_trees(read_clean_trees(args.trees), args.unk_threshold,
                                   args.markov)
    cls = BlockedMHTSG if args.sampler == "blocked" else LocalGibbsTSG
    kernel = cls(trees, alpha=args.alpha, s=args.s, resample_hyper=not args.fixed_hyper,
                 process=args.process, discount=args.discount)
    t0 = time.perf_counter()
    chains = args.chains > 1 or spec is not None
    state = None if chains else _start(args, kernel)  # a checkpoint checked first
    if not args.quiet:
        print(plan_text(args, len(trees), spec), file=sys.stderr, flush=True)
    if chains:
        state, rows, extra = _run_chains(args, spec, trees)
    else:
        state = drive(kernel.sample, state, args.iters - state.iteration,
                      describe=_describe, progress=not args.quiet, log=sys.stderr,
                      checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every)
        rows, extra = state.trace, {}
    save_model(args.save, TSGModel(kernel, state, prepare))
    if args.trace_json:
        write_document(args.trace_json, "strgm-tsg-trace", {"trace": rows, **extra})
    if args.plot:
        from strgm.cli.common import plot_trace
        chains = "diagnostics" in extra  # R-hat over the second half of the sweeps
        plot_trace(args.plot, rows, "log_likelihood", args.iters // 2 if chains else None,
                   extra["diagnostics"] if chains else False)
    announce_written(args.trace_json, args.plot, args.checkpoint
                     if args.checkpoint and os.path.exists(args.checkpoint) else None)
    last = state.trace[-1] if state.trace else {}
    print(f"{len(trees)} trees, {state.iteration} sweeps ({time.perf_counter() - t0:.1f} s "
          f"this run), log-likelihood {last.get('log_likelihood', float('nan')):.1f}"
          f"{_discounts(state, kernel)}; model written to {args.save}", file=sys.stderr)
    return 0


def _discounts(state, kernel) -> str:
    """The summary's note on a PY chain's discounts d_c: their range and those of the
    three labels with most sites ("" for a DP chain)."""
    if state.process != "py":
        return ""
    import numpy as np

    d, t = np.asarray(state.discount), kernel.table
    n = np.bincount(t.lab[np.asarray(state.site, dtype=bool)], minlength=t.n_labels)
    top = ", ".join(f"{t.labels[c]} {d[c]:.2f}" for c in np.argsort(-n, kind="stable")[:3])
    return f", discounts d_c {d.min():.2f}..{d.max():.2f} ({top})"


def plan_text(args, n_trees: int, spec) -> str:
    """One line announcing the work of ``strgm tsg train``: the trees, the sampler, the
    sweeps (a resumed run's start) and the chains (and where)."""
    chains = "1 chain" if args.chains == 1 else f"{args.chains} chains one after another"
    if spec is not None:
        chains = f"{args.chains} chain(s) on {spec.describe()}"
    resumed = f", resuming {args.resume}" if args.resume else ""
    hyper = "fixed" if args.fixed_hyper else "resampled every sweep"
    model, params = ("PY-TSG", "α, d and s") if args.process == "py" else ("DP-TSG", "α and s")
    return (f"strgm tsg train: {model} on {n_trees} trees, {args.sampler} sampler from "
            f"{args.init} derivations, {args.iters} sweeps in all{resumed} ({params} "
            f"{hyper}), {chains}")


def _run_chains(args, spec, trees) -> tuple:
    """(chain 0's final state, every chain's trace rows with ``chain`` and ``seed``,
    trace-JSON fields) of ``--chains K [--scheduler ...]``
    (:mod:`strgm.distributed.tsg_chains`)."""
    from strgm.distributed.cluster import open_pool
    from strgm.distributed.diagnostics import summary_line
    from strgm.distributed.tsg_chains import encode_trees, run_tsg_chains
    from strgm.grammars.tsg import TSGState

    problem = {"trees": encode_trees(trees), "sampler": args.sampler, "alpha": args.alpha,
               "s": args.s, "resample_hyper": not args.fixed_hyper}
    with open_pool(spec) as pool:
        states, summary = run_tsg_chains(pool, problem, chains=args.chains, seed=args.seed,
                                         init=args.init, iters=args.iters,
                                         settings=_settings(args))
    seeds = [args.seed + c for c in range(len(states))]
    rows = [{"chain": c, "seed": seeds[c], **r} for c, d in enumerate(states)
            for r in d["trace"]]
    print(summary_line(summary, len(states), "the log-likelihood", "too few sweeps for "
                       "R-hat and ESS (need 4 in the second half)"), file=sys.stderr)
    return TSGState.from_dict(states[0]), rows, {"chains": len(states), "seeds": seeds,
                                                 "diagnostics": summary}


def _read_sentences(path, max_length) -> list:
    """Tokenised sentences, one per non-blank line; an empty file, or a sentence longer
    than ``max_length``, is an InputError naming the file (and line)."""
    from strgm.safe_io import read_text

    out = []
    for i, line in enumerate(read_text(path, "sentence file").splitlines(), start=1):
        words = line.split()
        if not words:
            raise InputError("blank line (one tokenised sentence per line)", str(path), i)
        if max_length is not None and len(words) > max_length:
            raise InputError(f"sentence of {len(words)} tokens is longer than --max-length "
                             f"{max_length}", str(path), i)
        out.append(words)
    if not out:
        raise InputError("no sentences in file", str(path))
    return out


def _parse(args) -> int:
    """``tsg parse``: one tree per line on stdout (module docstring); sentence i samples
    from its own stream, so ``--scheduler`` (sentence shards) prints the same lines."""
    from strgm.cli.common import scheduler_spec
    from strgm.grammars.tsg.model_file import load_model

    spec = scheduler_spec(args)
    sentences = _read_sentences(args.sentences, args.max_length)
    model = load_model(args.model)
    t0 = time.perf_counter()
    if spec is None:
        trees, accepted, proposed = _parse_here(args, model, sentences, t0)
    else:
        from strgm.distributed.cluster import open_pool
        from strgm.distributed.tsg_parse import sharded_tsg_parse

        with open_pool(spec) as pool:
            trees, accepted, proposed = sharded_tsg_parse(
                pool, model, sentences, seed=args.seed, decode=args.decode,
                objective=args.mer_objective, samples=args.samples)
        print("\n".join(tree_line(t, args.top) for t in trees), flush=True)
    failed = [i for i, t in enumerate(trees, start=1) if t is None]
    if failed:
        print(no_parse_line(failed), file=sys.stderr)
    if args.decode == "mer" and proposed:
        print(f"MH acceptance {accepted / proposed:.4f}", file=sys.stderr)
    return 0


def _parse_here(args, model, sentences, t0) -> tuple:
    """The sentences parsed in this process, each line printed as it is done."""
    from strgm.distributed.tsg_parse import parse_sentences
    from strgm.grammars.tsg.parse import TSGParser

    parser = TSGParser(model.kernel, model.state, samples=args.samples)
    trees = []
    for i, words in enumerate(sentences):
        tree = parse_sentences(model, parser, [words], [i], args.seed, args.decode,
                               args.mer_objective)[0]
        trees.append(tree)
        print(tree_line(tree, args.top), flush=True)
        if not args.quiet and ((i + 1) % 10 == 0 or i + 1 == len(sentences)):
            print(f"parsed {i + 1}/{len(sentences)} sentences, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return trees, parser.accepted, parser.proposed


def _show(args) -> int:
    """``tsg show``: a count and an elementary tree per line, most frequent first."""
    from strgm.grammars.tsg import elementary_trees
    from strgm.grammars.tsg.model_file import load_model

    model = load_model(args.model)
    print("count\telementary tree")
    for n, et in elementary_trees(model.trained, model.sampler)[:args.top]:
        print(f"{n}\t{et}")
    return 0
