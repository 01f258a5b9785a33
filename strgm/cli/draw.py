"""``strgm plot KIND INPUT... --out FILE.png``: draw results saved by other commands.

Every picture of :mod:`strgm.plot` is reachable from the command line, from the files the
commands write, so a run need not be repeated to draw it:

* ``tradeoff RUN.json...``: one point per ``strgm infer --holdout … --json`` run, its
  inference seconds against held-out −log p(true form) (``--y exact``: exact match),
  labelled with the method and PEP's λ — the speed/accuracy trade-off of methods or λ;
* ``predictions RUN.json``: the held-out words of an ``infer`` or ``train`` run;
* ``convergence RUN.json...``: belief change per iteration (``infer``), EM's objective
  (``train``), a sampler's or estimator's trace (``pcfg|tsg|hmm train``), one curve per
  file;
* ``urs RUN.json``: a morpheme's k-best URs from an ``infer`` run (``--morpheme``;
  default the least certain one);
* ``tree TREES``: the ``--index``-th tree of a Penn Treebank file (``strgm pcfg parse``
  writes one per line);
* ``graph PARADIGM``: the factor graph of a paradigm file (as ``strgm infer`` builds it)
  on one page, a block per stem.

The output path (and matplotlib) are checked and every input is read and checked before
anything is drawn; a file without what the picture needs is a one-line error naming it.
"""

from __future__ import annotations

import json
import math

from strgm.cli.errors import announce_written
from strgm.errors import InputError, OptionError, did_you_mean
from strgm.validate import int_arg

KINDS = ("tradeoff", "predictions", "convergence", "urs", "tree", "graph")
#: the trade-off's axis labels (the keys of its points)
X_NAME = "inference seconds (wall clock)"
Y_NAMES = {"nats": "held-out -log p(true form), nats", "exact": "held-out exact match"}


def add_subparser(sub) -> None:
    p = sub.add_parser("plot", help="draw results saved by other commands (their --json "
                       "files, PTB trees) as a figure")
    p.add_argument("kind", choices=KINDS,
                   help="tradeoff: inference time against held-out -log p of `infer "
                        "--json` runs; predictions: held-out words of an infer or train "
                        "run; convergence: a run's trace; urs: a morpheme's k-best URs; "
                        "tree: a Penn Treebank tree; graph: a paradigm's factor graph")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="--json files of strgm commands, a PTB tree file for 'tree', a "
                        "paradigm file for 'graph'")
    p.add_argument("--out", required=True, metavar="FILE.png",
                   help="the figure (.png/.pdf/.svg/...; needs strgm[plot])")
    p.add_argument("--y", choices=("nats", "exact"), default="nats",
                   help="tradeoff: held-out -log p (nats, default) or exact match")
    p.add_argument("--morpheme", metavar="LABEL", help="urs: the morpheme (default: the "
                   "one whose best UR is least probable)")
    p.add_argument("--top", type=int_arg(1, 1000), default=8,
                   help="urs: strings shown (default: %(default)s)")
    p.add_argument("--index", type=int_arg(1), default=1,
                   help="tree: which tree of the file, from 1 (default: %(default)s)")
    p.set_defaults(func=cmd_plot)


def _document(path: str) -> dict:
    from strgm.safe_io import read_text

    text = read_text(path, "JSON results")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", path=path, line=e.lineno) from None
    except RecursionError:
        raise InputError("not a results file (JSON nested too deeply)", path=path) from None
    if not isinstance(doc, dict):
        raise InputError("expected the JSON object a strgm command writes", path=path)
    return doc


def _holdout(doc: dict, path: str) -> dict:
    h = doc.get("holdout")
    if not isinstance(h, dict) or "per_word" not in h:
        raise InputError("no held-out scores in this file (run the command with "
                         "--holdout FRAC --json)", path=path)
    return h


def _point(doc: dict, path: str, y: str) -> dict:
    """One trade-off point of an ``infer --json`` document."""
    h = _holdout(doc, path)
    timing = doc.get("timing")
    seconds = timing.get("inference_seconds") if isinstance(timing, dict) else None
    if not isinstance(seconds, (int, float)):
        raise InputError("no timing.inference_seconds (expected the JSON of strgm infer)",
                         path=path)
    settings = doc.get("settings")
    lam = settings.get("lam") if isinstance(settings, dict) else None
    lam = lam if isinstance(lam, (int, float)) and abs(lam) <= 1e308 else None
    label = str(doc.get("method", "?")) + (f" λ={lam:g}" if isinstance(lam, (int, float))
                                           else "")
    value = h.get("mean_neg_logp") if y == "nats" else h.get("exact_match")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or abs(value) > 1e308 \
            or abs(seconds) > 1e308:
        raise InputError(f"held-out scores without a usable "
                         f"{'mean_neg_logp' if y == 'nats' else 'exact_match'}", path=path)
    return {X_NAME: float(seconds), Y_NAMES[y]: value, "label": label,
            "method": str(doc.get("method", "?"))}


def _series(doc: dict, path: str):
    """What :func:`strgm.plot.plot_convergence` reads from a document."""
    timing = doc.get("timing")
    if isinstance(timing, dict) and "belief_changes" in timing:
        return timing
    if "trace" in doc:
        return doc
    raise InputError("no trace or belief changes in this file (expected the --json of "
                     "strgm infer, train, or pcfg|tsg|hmm train)", path=path)


def _urs(doc: dict, path: str, label, top: int):
    ms = doc.get("morphemes")
    if not isinstance(ms, dict) or not ms:
        raise InputError("no morphemes in this file (expected the JSON of strgm infer)",
                         path=path)
    for m, pairs in ms.items():
        if not isinstance(pairs, list) or not all(
                isinstance(x, list) and len(x) == 2 and isinstance(x[0], str)
                and isinstance(x[1], (int, float)) and not isinstance(x[1], bool)
                for x in pairs):
            raise InputError(f"morpheme {m!r}: expected a list of [string, probability] "
                             "pairs (the JSON of strgm infer)", path=path)
    if label is None:
        label = min(sorted(ms), key=lambda m: ms[m][0][1] if ms[m] else -math.inf)
    elif label not in ms:
        shown = ", ".join(sorted(ms)[:8])
        raise OptionError("--morpheme", label, f"not a morpheme of {path}"
                          f"{did_you_mean(label, ms)} ({shown}, …)")
    return label, ms[label][:top]


def _tree(path: str, index: int):
    from strgm.grammars.ptb import parse_trees
    from strgm.safe_io import read_text

    trees = parse_trees(read_text(path, "trees"), str(path))
    if index > len(trees):
        raise OptionError("--index", index, f"{path} has {len(trees)} tree(s)")
    return trees[index - 1]


def _convergence(series):
    """One curve per file; a single file of several chains (``--chains K``): one line per
    chain, with its burn-in and R̂ when the file records them."""
    from strgm import plot

    data = series[0][0]
    rows = data.get("trace") if len(series) == 1 else None
    if isinstance(rows, list) and len({r.get("chain") for r in rows if isinstance(r, dict)
                                       and "chain" in r}) > 1:
        training = data.get("training")
        burn = training.get("burn_in") if isinstance(training, dict) else None
        return plot.plot_chains(rows, burn_in=burn if isinstance(burn, int) else None,
                                rhat=data.get("diagnostics") if isinstance(
                                    data.get("diagnostics"), dict) else None)
    ax = None
    for d, f in series:
        ax = plot.plot_convergence(d, ax=ax, label=f if len(series) > 1 else None)
    return ax


def _graph(path: str):
    """The factor graph ``strgm infer`` builds for the paradigm file ``path``."""
    from strgm.datasets.paradigm import read_paradigm
    from strgm.models.phonology import build_phonology_model

    return build_phonology_model(read_paradigm(path)).graph


def _check(args) -> None:
    from strgm.plot import check_figure_path
    from strgm.safe_io import check_outputs

    check_outputs([(args.out, "--out")], args.inputs)
    check_figure_path(args.out, "--out")
    single = ("predictions", "urs", "tree", "graph")
    if args.kind in single and len(args.inputs) > 1:
        raise OptionError("INPUT", " ".join(args.inputs),
                          f"'{args.kind}' draws one file, {len(args.inputs)} given")


def cmd_plot(args) -> int:
    """Check the output, read every input, then draw and write the figure atomically."""
    from strgm import plot

    _check(args)
    if args.kind == "tree":
        ax = plot.plot_tree(_tree(args.inputs[0], args.index))
    elif args.kind == "graph":
        ax = plot.plot_factor_graph(_graph(args.inputs[0]))
    elif args.kind == "predictions":
        ax = plot.plot_predictions(_holdout(_document(args.inputs[0]), args.inputs[0]))
    elif args.kind == "urs":
        label, pairs = _urs(_document(args.inputs[0]), args.inputs[0], args.morpheme,
                            args.top)
        ax = plot.plot_belief(pairs, k=args.top, name=label, form="ur")
    elif args.kind == "tradeoff":
        points = [_point(_document(f), f, args.y) for f in args.inputs]
        ax = plot.plot_tradeoff(points, x=X_NAME, y=Y_NAMES[args.y], label="label",
                                by="method")  # one series per method, joined in order
    else:
        ax = _convergence([(_series(_document(f), f), f) for f in args.inputs])
    plot.save_figure(ax, args.out)
    announce_written(args.out)
    return 0
