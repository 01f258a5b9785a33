"""The head-driven lexicalised grammar from the command line.

    strgm treebank grammar TREES... --lexicalized --out G.npz
                           [--smoothing none|collins|hdp] [--collins-b B] [--iters N]
                           [--seed S] [--unk-threshold K]
    strgm lexparse G.npz CORPUS [--thresholds T...] [--top/--no-top] [--quiet]

``treebank grammar --lexicalized`` fits :func:`strgm.grammars.lexicalized.model.
fit_lexicalized` and, on the same trees, the parent-annotated treebank PCFG that prunes
the parser (its posteriors restrict both a constituent's span and its parent's label),
and writes both to one file (:mod:`strgm.grammars.lexicalized.files`).  ``lexparse`` parses
CORPUS (one tokenised sentence per line) with
:func:`strgm.grammars.lexicalized.prune.parse_pruned`: the lexicalised grammar's most
probable tree among the constituents whose posterior under the PCFG reaches the first of
``--thresholds`` that admits a parse.  Trees go to stdout, one per line, as
``strgm pcfg parse`` prints them; sentences without a parse print ``(no parse)`` and are
named on stderr.
"""

from __future__ import annotations

import sys
import time

from strgm.cli.errors import announce_written
from strgm.validate import float_arg

__all__ = ["add_subparser", "lexicalized_grammar", "LEXPARSE_HELP"]

LEXPARSE_HELP = """\
Parse sentences with a head-driven lexicalised grammar written by
`strgm treebank grammar --lexicalized`.

CORPUS holds one tokenised sentence per line. The parser keeps the constituents whose
posterior under the grammar's treebank PCFG is at least the first threshold, and lowers
the threshold until the sentence has a parse. Trees are printed one per line."""


def add_subparser(subparsers) -> None:
    """Register ``strgm lexparse``."""
    from argparse import RawDescriptionHelpFormatter

    from strgm.cli.pcfg_parse import add_top_option
    from strgm.grammars.lexicalized.prune import THRESHOLDS
    p = subparsers.add_parser("lexparse", help="parse with a lexicalised grammar",
                              description=LEXPARSE_HELP,
                              formatter_class=RawDescriptionHelpFormatter)
    p.add_argument("grammar", help="a lexicalised grammar (.npz from treebank grammar "
                                   "--lexicalized)")
    p.add_argument("corpus", help="one tokenised sentence per line")
    p.add_argument("--thresholds", type=float_arg(min=0, max=1), nargs="+",
                   default=list(THRESHOLDS), metavar="T",
                   help="PCFG posterior thresholds tried in turn (default: %(default)s)")
    add_top_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=_lexparse)


def lexicalized_grammar(args, trees) -> int:
    """``treebank grammar --lexicalized``: fit, write, summarise."""
    from strgm.grammars.lexicalized.files import save_lexicalized
    from strgm.grammars.lexicalized.model import fit_lexicalized
    from strgm.grammars.unknown_words import treebank_pcfg
    g = fit_lexicalized(trees, args.smoothing, threshold=args.unk_threshold,
                        collins_b=args.collins_b, iters=args.iters, seed=args.seed)
    pcfg, _ = treebank_pcfg(trees, args.unk_threshold, args.markov, args.start,
                            parent=True)
    save_lexicalized(g, pcfg, args.out)
    info = g.info
    print(f"{len(trees)} trees, {info['events']} events, {info['contexts']} contexts, "
          f"{len(g.known)} known words, smoothing {g.smoothing}", file=sys.stderr)
    announce_written(args.out)
    return 0


def _lexparse(args) -> int:
    from strgm.cli.pcfg_parse import no_parse_line, tree_line
    from strgm.grammars.johnson_format import read_yld
    from strgm.grammars.lexicalized.files import load_lexicalized
    from strgm.grammars.lexicalized.prune import parse_pruned
    from strgm.progress import StepProgress
    g, pcfg = load_lexicalized(args.grammar)
    corpus = read_yld(args.corpus)
    bad = []
    t0 = time.perf_counter()
    with StepProgress(len(corpus), "lexparse", enabled=not args.quiet) as bar:
        for i, words in enumerate(corpus):
            tree, _, _ = parse_pruned(g, list(words), pcfg, thresholds=tuple(args.thresholds))
            print(tree_line(None if tree is None else _bracketed(tree), args.top), flush=True)
            if tree is None:
                bad.append(i + 1)
            bar.step(f"sentence {i + 1}: {len(words)} words", show=False)
    if bad:
        print(no_parse_line(bad), file=sys.stderr)
    if not args.quiet:
        print(f"{len(corpus)} sentences in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
    return 0


def _bracketed(tree) -> str:
    if isinstance(tree, str):
        return tree
    return "(" + " ".join([tree[0]] + [_bracketed(c) for c in tree[1:]]) + ")"
