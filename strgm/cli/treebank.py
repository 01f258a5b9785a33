"""``strgm treebank grammar|yield|score``: Penn Treebank PCFGs and bracket scoring.

    strgm treebank grammar TREES... --out G.lt [--unk-threshold 1] [--markov H|none]
                           [--factor right|left] [--start TOP] [--parent]
                           [--smoothing none|collins|hdp] [--iters N] [--seed S]
                           [--collins-b B] [--extra K]
    strgm treebank grammar TREES... --lexicalized --out G.npz [--smoothing S] [...]
    strgm treebank yield TREES... [--max-length N]
    strgm treebank score GOLD... PARSED [--max-length N] [--json]
    strgm treebank score GOLD... PARSED --evalb-params FILE [--per-sentence] [--json]

TREES and GOLD are ``.mrg`` files or folders (a folder stands for all its ``*.mrg``
files, sorted by name); trees are taken in the order given.  Every tree is cleaned as
:func:`strgm.grammars.ptb.clean_tree` does: ``-NONE-`` elements removed, function tags
and indices stripped (``NP-SBJ-1`` -> ``NP``), constituents left empty removed, X → X
collapsed (``score`` keeps X → X, as evalb does); the
grammar's root rules are ``START --> root`` for one start symbol (``--start``).

``grammar`` writes a relative-frequency PCFG in Johnson's format (atomically: after a
failed run ``--out`` does not exist) built by :func:`strgm.grammars.unknown_words.
treebank_pcfg`: words seen at most ``--unk-threshold`` times become word-shape signatures
with a back-off chain, trees are binarised with horizontal Markovisation of order
``--markov`` (``none``: no Markovisation).  A summary line and ``wrote G.lt`` go to
stderr.  The default ``--markov 2`` was chosen on the development split (train
wsj_0001-0139, parse wsj_0140-0159: ``benchmarks/results/treebank_pcfg_dev.md``).

``--parent`` annotates every phrasal node with its parent's label (``NP^S``; vertical
Markovisation of order 2, Klein & Manning 2003; stripped again when ``strgm pcfg parse``
restores the trees).  ``--smoothing`` replaces the relative frequencies of the phrasal
rules by a backoff estimate along ``X^P|<Y>`` -> ``X|<Y>`` -> ``X|<>`` (and ``X^P`` ->
``X``), :mod:`strgm.grammars.smoothing`: ``collins`` (λ = c/(c + b·u), ``--collins-b``)
or ``hdp`` (hierarchical Dirichlet process, ``--iters`` Gibbs sweeps of which the second
half are averaged, ``--seed``); each context keeps its observed right-hand sides and at
most ``--extra`` unseen ones.  ``none`` (default) is the unsmoothed grammar.

``grammar --lexicalized`` writes the head-driven lexicalised grammar and its pruning
PCFG to one ``.npz`` for ``strgm lexparse`` (:mod:`strgm.cli.lexicalized`): ``--smoothing``
``none`` (relative frequencies backing off without smoothing), ``collins`` or ``hdp``
smooths its head, modifier and word events along their backoff chains.

``yield`` prints the cleaned trees' words, one sentence per line (the input of
``strgm pcfg parse``), skipping trees longer than ``--max-length`` words.

``score`` compares PARSED (one tree per line, ``(no parse)`` for a failure, as written by
``strgm pcfg parse``) with the gold trees by labelled brackets, with evalb's COLLINS.prm
conventions (:mod:`strgm.grammars.bracket_score`): prints precision, recall, F1, exact
match, tagging accuracy and counts (``--json``: as JSON).  With ``--max-length N`` gold
trees of more than N words (punctuation included, ``-NONE-`` excluded) are skipped, and
PARSED holds either one line per gold tree (lines of skipped trees are ignored) or one
line per kept tree (as ``yield --max-length N`` and ``pcfg parse`` give).

``score --evalb-params FILE`` scores as evalb does with the parameter file FILE (a
``.prm``: :mod:`strgm.grammars.evalb_params`, :mod:`strgm.grammars.evalb_report`) and
prints evalb's summary, both blocks (all sentences, and those of at most ``CUTOFF_LEN``
words); ``--per-sentence`` prints evalb's whole report instead, a row per sentence, the
totals line and the summary, exactly as evalb prints it (``--json``: the same numbers
under ``evalb``, the rows under ``evalb.rows``, and the plain scorer's fields as fractions
of all valid sentences, ``failed`` counting the skip sentences).  The file is read before anything else: a bad line is an
error naming the file and the line.  Gold ``.mrg`` files (and folders) are read tree by
tree, each tree without its outer unlabelled bracket as everywhere in strgm; any other
GOLD file is read as evalb reads its gold file, one sentence per line.  PARSED is read
line by line as evalb reads its test file; a ``(no parse)`` line counts as evalb counts
an empty line (a skip sentence).  ``--max-length`` is refused with ``--evalb-params``:
evalb scores every sentence, and ``CUTOFF_LEN`` in the file sets the second block.  The
error sentences (evalb's status 1: different words) are named in one warning.
"""

from __future__ import annotations

import json
import sys
from argparse import RawDescriptionHelpFormatter
from pathlib import Path

from strgm.cli.errors import announce_written
from strgm.errors import InputError, OptionError
from strgm.validate import float_arg, int_arg

__all__ = ["add_subparser"]

#: ``treebank grammar``'s horizontal Markov order: the highest F1 on the development split
#: under both decoders (``python -m benchmarks.grammars.treebank_pcfg --split dev``,
#: ``benchmarks/results/treebank_pcfg_dev.md``)
DEFAULT_MARKOV = 2

GRAMMAR_HELP = """\
A relative-frequency PCFG of the trees, in Mark Johnson's grammar format.

TREES are .mrg files or folders of them (a folder: its *.mrg files, sorted). Every tree is
cleaned: -NONE- elements removed, function tags and indices stripped (NP-SBJ-1 -> NP),
empty constituents removed, X -> X collapsed. Words seen at most --unk-threshold times become word-shape
signatures; trees are binarised with horizontal Markovisation of order --markov.
--parent annotates phrasal nodes with their parent's label (NP^S). --smoothing backs off
phrasal rules X^P|<Y> -> X|<Y> -> X|<> (collins: lambda = c/(c + b*u); hdp: Gibbs-sampled
hierarchical Dirichlet process). The grammar is written atomically.

--lexicalized writes the head-driven lexicalised grammar (Collins's Model 1 events: head
child, modifiers and their head words, each side ending in STOP) and the PCFG that
prunes its parser, as one .npz for `strgm lexparse`; --smoothing none|collins|hdp smooths
its events along their backoff chains (--collins-b, --iters, --seed)."""

SCORE_HELP = """\
Labelled bracket precision, recall and F1 of PARSED against the GOLD trees, with
evalb's COLLINS.prm conventions; also exact match and tagging accuracy.

PARSED holds one tree per line, "(no parse)" for a failure (as `strgm pcfg parse`
writes). With --max-length N, gold trees of more than N words are skipped, and PARSED
holds one line per gold tree or one per kept tree.

With --evalb-params FILE, scoring follows evalb and its parameter file (.prm, such as
evalb's COLLINS.prm) exactly, and evalb's summary is printed: for all sentences and for
those of at most CUTOFF_LEN words, the numbers of sentences, error sentences (different
words), skip sentences (empty or "(no parse)" lines) and valid ones, bracketing recall,
precision and F-measure, complete match, crossing brackets and tagging accuracy.
--per-sentence prints evalb's whole report (a row per sentence first), as evalb prints
it. Gold .mrg files are read tree by tree (without the outer unlabelled bracket); other
gold files one sentence per line, as evalb reads them. --max-length cannot be used with
--evalb-params: set CUTOFF_LEN in the file."""


def add_subparser(subparsers) -> None:
    """Register ``strgm treebank`` and its three commands."""
    p = subparsers.add_parser("treebank", help="Penn Treebank PCFGs and bracket scoring")
    sub = p.add_subparsers(dest="treebank_command", required=True)
    g = sub.add_parser("grammar", help="relative-frequency PCFG of treebank trees",
                       description=GRAMMAR_HELP, formatter_class=RawDescriptionHelpFormatter)
    g.add_argument("trees", nargs="+", help=".mrg files or folders of them")
    g.add_argument("--out", required=True, help="grammar file to write (Johnson's format)")
    g.add_argument("--unk-threshold", type=int_arg(min=0), default=1, metavar="K",
                   help="words seen at most K times become signatures (default: 1)")
    g.add_argument("--markov", type=markov_arg, default=DEFAULT_MARKOV, metavar="H|none",
                   help="horizontal Markovisation order; 'none': no Markovisation "
                        "(default: %(default)s, chosen on a development split)")
    g.add_argument("--factor", choices=("right", "left"), default="right",
                   help="binarisation direction (default: right)")
    g.add_argument("--start", default="TOP", help="start symbol (default: TOP)")
    _smoothing_options(g)
    g.set_defaults(func=_grammar)
    y = sub.add_parser("yield", help="the trees' sentences, one per line")
    y.add_argument("trees", nargs="+", help=".mrg files or folders of them")
    y.add_argument("--max-length", type=int_arg(min=1), default=None, metavar="N",
                   help="only sentences of at most N words")
    y.set_defaults(func=_yield)
    s = sub.add_parser("score", help="labelled bracket scores (evalb, COLLINS.prm)",
                       description=SCORE_HELP, formatter_class=RawDescriptionHelpFormatter)
    s.add_argument("gold", nargs="+", help="gold .mrg files or folders, in order (with "
                   "--evalb-params also evalb gold files, one tree per line)")
    s.add_argument("parsed", help="one tree per line, '(no parse)' for a failure")
    s.add_argument("--max-length", type=int_arg(min=1), default=None, metavar="N",
                   help="score only sentences of at most N words (evalb: 40)")
    s.add_argument("--json", action="store_true", help="print the scores as JSON")
    s.add_argument("--evalb-params", default=None, metavar="FILE",
                   help="score exactly as evalb does with this parameter file (.prm) "
                        "and print evalb's summary")
    s.add_argument("--per-sentence", action="store_true",
                   help="with --evalb-params: evalb's whole report, a row per sentence "
                        "before the summary")
    s.set_defaults(func=_score)


def _smoothing_options(g) -> None:
    """The parent-annotation and smoothing options of ``treebank grammar``."""
    from strgm.grammars.smoothing.collins import DEFAULT_B
    from strgm.grammars.smoothing.grammar import DEFAULT_EXTRA, DEFAULT_ITERS, SMOOTHINGS

    g.add_argument("--parent", action="store_true",
                   help="parent annotation of phrasal nodes (X^P)")
    g.add_argument("--lexicalized", action="store_true",
                   help="write the head-driven lexicalised grammar instead (a .npz for "
                        "strgm lexparse), smoothed by --smoothing")
    g.add_argument("--smoothing", choices=SMOOTHINGS, default="none",
                   help="phrasal rule estimates (default: none, relative frequencies)")
    g.add_argument("--iters", type=int_arg(min=1), default=DEFAULT_ITERS, metavar="N",
                   help="hdp: Gibbs sweeps, the last half averaged (default: %(default)s)")
    g.add_argument("--seed", type=int_arg(min=0), default=0, metavar="S",
                   help="hdp: random seed (default: 0)")
    g.add_argument("--collins-b", type=float_arg(min=0, min_open=True), default=DEFAULT_B,
                   metavar="B", help="collins: b of λ = c/(c + b·u) (default: %(default)s, "
                   "chosen on a development split)")
    g.add_argument("--extra", type=int_arg(min=0), default=DEFAULT_EXTRA, metavar="K",
                   help="unseen right-hand sides kept per smoothed context "
                        "(default: %(default)s)")


def markov_arg(text: str):
    """``none`` or an integer ≥ 0 (for argparse)."""
    import argparse

    if text.lower() == "none":
        return None
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0 or 'none', got {text!r}")
    return v


def tree_files(paths) -> list:
    """The ``.mrg`` files named: files as given, folders as their sorted ``*.mrg``."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(f for f in p.glob("*.mrg") if not f.is_dir())
            if not files:
                raise InputError("no .mrg files in folder", str(p))
            out.extend(files)
        else:
            out.append(p)
    return out


def read_clean_trees(paths) -> list:
    """Cleaned trees of the files or folders, in order (trees cleaned to nothing are
    dropped; a file of nothing else, e.g. only ``-NONE-`` traces, is an InputError)."""
    from strgm.grammars.ptb import clean_tree, read_mrg

    out = []
    for f in tree_files(paths):
        trees = [t for t in map(clean_tree, read_mrg(f)) if t is not None]
        if not trees:
            raise InputError("no tree left once -NONE- traces and the constituents they "
                             "leave empty are removed", str(f))
        for i, t in enumerate(trees):
            _check_labelled(t, f"tree {i + 1}", str(f))
        out.extend(trees)
    return out


def _check_labelled(tree, where: str, path: str) -> None:
    """InputError naming ``path`` when a constituent of the cleaned ``tree`` (nested
    tuples (label, child, ...) with words as strings) has an empty label."""
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, str):
            continue
        if not t or not isinstance(t[0], str) or not t[0]:
            raise InputError(f"{where}: a constituent has no label", path)
        stack.extend(t[1:])


def _grammar(args) -> int:
    from strgm.grammars.johnson_format import format_grammar
    from strgm.grammars.smoothing.grammar import DEFAULT_EXTRA
    from strgm.grammars.smoothing import smoothed_pcfg
    from strgm.safe_io import atomic_write_text, check_outputs

    check_outputs([(args.out, "--out")], [(str(f), "a tree file")
                                          for f in tree_files(args.trees)])
    if args.smoothing != "none" and args.factor != "right":
        raise OptionError("--factor", args.factor, "must be right with --smoothing "
                          f"{args.smoothing}")
    if args.lexicalized:
        from strgm.cli.lexicalized import lexicalized_grammar
        if args.parent or args.factor != "right" or args.extra != DEFAULT_EXTRA:
            raise OptionError("--lexicalized", True, "takes none of --parent, --factor, "
                              "--extra (they shape the PCFG's rules)")
        return lexicalized_grammar(args, read_clean_trees(args.trees))
    trees = read_clean_trees(args.trees)
    g, info = smoothed_pcfg(trees, args.smoothing, horizontal=args.markov,
                            parent=args.parent, threshold=args.unk_threshold,
                            start=args.start, factor=args.factor, iters=args.iters,
                            seed=args.seed, collins_b=args.collins_b, extra=args.extra)
    atomic_write_text(args.out, format_grammar(g))
    print(f"{info['trees']} trees, {info['rules']} rules, {info['nonterminals']} "
          f"nonterminals, {info['words']} words, {info['signatures']} signatures",
          file=sys.stderr)
    announce_written(args.out)
    return 0


def _yield(args) -> int:
    for t in read_clean_trees(args.trees):
        words = _leaves(t)
        if args.max_length is None or len(words) <= args.max_length:
            print(" ".join(words))
    return 0


def _leaves(t) -> list:
    from strgm.grammars.ptb import tree_leaves

    return list(tree_leaves(t))


def _score(args) -> int:
    from strgm.grammars.bracket_score import read_parsed, score_corpus
    from strgm.grammars.ptb import read_mrg

    if args.evalb_params is not None:
        return _score_evalb(args)
    if args.per_sentence:
        raise OptionError("--per-sentence", True, "only with --evalb-params")
    gold = [t for f in tree_files(args.gold) for t in read_mrg(f)]
    test, lines = read_parsed(args.parsed)
    kept = _aligned_gold(gold, len(test), args)
    res = score_corpus(kept, test, args.max_length, where=args.parsed, lines=lines)
    res.skipped_long += len(gold) - len(kept)
    d = res.summary()
    if args.json:
        from strgm.cli.json_output import document
        print(json.dumps(document("strgm-treebank-score", d), indent=1))
        return 0
    print(f"sentences {d['sentences']} (failed {d['failed']}, longer than --max-length "
          f"skipped {d['skipped_long']})")
    print(f"brackets gold {d['gold']} test {d['test']} matched {d['matched']}")
    print(f"precision {100 * d['precision']:.2f}  recall {100 * d['recall']:.2f}  "
          f"F1 {100 * d['f1']:.2f}  exact {100 * d['exact_match']:.2f}  "
          f"tagging {100 * d['tagging_accuracy']:.2f}")
    return 0


def _aligned_gold(gold, n_test: int, args) -> list:
    """The gold trees PARSED's lines stand for: all of them, or with ``--max-length``
    only those short enough (module docstring); otherwise a count mismatch error."""
    from strgm.grammars.ptb import clean_tree

    if n_test == len(gold):
        return gold
    if args.max_length is not None:
        short = [t for t in gold
                 if len(_leaves(clean_tree(t) or ("", ))) <= args.max_length]
        if n_test == len(short):
            return short
        raise InputError(f"{n_test} parsed lines for {len(gold)} gold trees "
                         f"({len(short)} of at most {args.max_length} words)", args.parsed)
    raise InputError(f"{n_test} parsed lines for {len(gold)} gold trees", args.parsed)


def _score_evalb(args) -> int:
    """``score --evalb-params``: evalb's report (module docstring)."""
    from strgm.cli.errors import warning_line
    from strgm.grammars.evalb_params import read_evalb_params
    from strgm.grammars.evalb_report import evalb_lines, score_evalb

    if args.max_length is not None:
        raise OptionError("--max-length", args.max_length, "cannot be used with "
                          "--evalb-params (evalb scores every sentence; set CUTOFF_LEN "
                          "in the parameter file for the second block)")
    params = read_evalb_params(args.evalb_params)
    gold = _evalb_gold(args.gold)
    report = score_evalb(gold, evalb_lines(args.parsed, "parsed file"), params,
                         where=args.parsed)
    bad = [r for r in report.rows if r.status == 1]
    if bad:
        shown = "; ".join(f"line {r.id}: {r.message}" for r in bad[:5])
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        print(warning_line(f"{len(bad)} error sentence(s) not scored (evalb's status 1) "
                           f"in {args.parsed}: {shown}{more}"), file=sys.stderr)
    if not args.json:
        sys.stdout.write(report.format(per_sentence=args.per_sentence))
        return 0
    from strgm.cli.json_output import document

    a = report.all
    p = a.matched / a.test if a.test else 0.0
    r = a.matched / a.gold if a.gold else 0.0
    d = {"sentences": a.sentences, "failed": a.skip_sentences,
         "error_sentences": a.error_sentences, "gold": a.gold, "test": a.test,
         "matched": a.matched, "exact": a.complete, "words": a.words,
         "tags_correct": a.correct_tags, "precision": p, "recall": r,
         "f1": 2 * p * r / (p + r) if p + r else 0.0,
         "exact_match": a.complete / a.valid_sentences if a.valid_sentences else 0.0,
         "tagging_accuracy": a.correct_tags / a.words if a.words else 0.0,
         "evalb": report.to_dict(per_sentence=args.per_sentence)}
    print(json.dumps(document("strgm-treebank-score", d), indent=1))
    return 0


def _evalb_gold(paths) -> list:
    """The gold sentences as evalb lines: ``.mrg`` files tree by tree (outer unlabelled
    bracket removed), other files line by line."""
    from strgm.grammars.evalb_report import evalb_lines, tree_text
    from strgm.grammars.ptb import read_mrg
    from strgm.safe_io import resolve_input

    out = []
    for f in tree_files(paths):
        if resolve_input(f).suffix == ".mrg":
            out.extend(tree_text(t) for t in read_mrg(f))
        else:
            out.extend(evalb_lines(f, "gold file"))
    return out
