"""``strgm pcfg parse GRAMMAR CORPUS``: one Penn Treebank tree per line (the behaviour is
described in :mod:`strgm.cli.pcfg`), here or on sentence shards with ``--scheduler``
(:mod:`strgm.distributed.parse_shards`; the same lines).

Every parser prints its trees through :func:`tree_line` (``pcfg parse`` and ``tsg parse``),
so both share one format: with ``--top`` (the default) each tree stands under a single
``(TOP ...)`` root, the root of a treebank grammar's parses, which evalb's COLLINS.prm
and ``strgm treebank score`` delete before scoring; ``--no-top`` leaves out a ``TOP`` root
over a single tree."""

from __future__ import annotations

import argparse
import sys

from strgm.cli.errors import announce_written
from strgm.errors import GrammarError, InputError, MessageTooLargeError
from strgm.safe_io import atomic_write_text, check_outputs

__all__ = ["add_top_option", "check_chart_lengths", "located_grammar_error",
           "no_parse_line", "parse_command", "tree_line"]

NO_PARSE = "(no parse)"


def add_top_option(parser) -> None:
    """``--top/--no-top``, the root of every printed tree (module docstring)."""
    parser.add_argument("--top", action=argparse.BooleanOptionalAction, default=True,
                        help="print each tree under one (TOP ...) root, which evalb's "
                             "COLLINS.prm deletes (the default); --no-top leaves out a TOP "
                             "root over a single tree")


def tree_line(tree, top: bool) -> str:
    """One printed tree: ``tree`` (bracketed text, or None for no parse) under a ``TOP``
    root (``top``), or without a ``TOP`` root that has a single child (not ``top``)."""
    if tree is None:
        return NO_PARSE
    tree = tree.strip()
    has_top = tree.startswith("(TOP ") and tree.endswith(")")
    if top:
        return tree if has_top else f"(TOP {tree})"
    if has_top:
        inner = tree[len("(TOP "):-1].strip()
        if inner.startswith("(") and _group_end(inner) == len(inner) - 1:
            return inner
    return tree


def no_parse_line(lines: list) -> str:
    """The warning both parsers print for the sentences without a parse (line numbers)."""
    more = f" and {len(lines) - 50} more" if len(lines) > 50 else ""
    return f"strgm: warning: {len(lines)} sentence(s) have no parse: lines {lines[:50]}{more}"


def _group_end(text: str) -> int:
    """The index of the bracket closing the one that opens ``text``."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i
    return -1


def check_chart_lengths(g, max_memory, *corpora) -> None:
    """Refuse, before any work, a sentence whose parse chart alone exceeds the chart memory
    limit, naming its file and line (batches of shorter sentences are sized to fit)."""
    from strgm.grammars.cfg import compile_grammar
    from strgm.grammars.chart import DEFAULT_MAX_CHART_BYTES, chart_bytes

    limit = DEFAULT_MAX_CHART_BYTES if max_memory is None else max_memory
    n_nts = compile_grammar(g).n_nts
    for path, sents in corpora:
        if not sents:
            continue
        i = max(range(len(sents)), key=lambda j: len(sents[j]))
        need = chart_bytes(n_nts, len(sents[i]))
        if need > limit:
            raise MessageTooLargeError(
                f"{path}:{i + 1}: a sentence of {len(sents[i])} tokens needs a parse chart of "
                f"~{need / 2**20:.0f} MiB with this grammar ({n_nts} nonterminals), above the "
                f"{limit / 2**20:.0f} MiB limit (--max-memory); split the line or leave it "
                "out")


def parse_command(args) -> int:
    """``pcfg parse``: every option and path checked, then one line per sentence."""
    from strgm.cli.common import scheduler_spec
    from strgm.grammars.johnson_format import read_grammar, read_yld

    spec = scheduler_spec(args)
    check_outputs([(args.scores, "--scores")], [(args.grammar, "the grammar"),
                                                 (args.corpus, "the corpus")])
    g = read_grammar(args.grammar, dialect=args.grammar_dialect)
    corpus = read_yld(args.corpus, chars=args.chars)
    if args.max_length is not None:
        _check_max_length(corpus, args.max_length, args.corpus)
    check_chart_lengths(g, args.max_memory, (args.corpus, corpus))
    mapped = _mapped_corpus(g, corpus, args.chars)
    try:
        lines = _lines(args, spec, g, corpus, mapped)
    except GrammarError as e:
        raise located_grammar_error(e, args) from None
    _print_parses(args, lines)
    return 0


def _lines(args, spec, g, corpus, mapped) -> list:
    """(tree text, score, log P(w)) per sentence or None, here or on ``spec``'s pool."""
    from strgm.grammars.cfg import compile_grammar
    from strgm.grammars.corpus_parse import decode_sentences, parse_lines

    if spec is None:
        cg = compile_grammar(g)
        cg.max_chart_bytes = args.max_memory
        return parse_lines(g, corpus, decode_sentences(cg, g.probabilities(), mapped,
                                                       args.decode))
    from strgm.distributed.cluster import open_pool
    from strgm.distributed.parse_shards import sharded_parse

    with open_pool(spec) as pool:
        return sharded_parse(pool, g, corpus, mapped, args.decode, args.max_memory)


def located_grammar_error(e: GrammarError, args) -> InputError:
    """A grammar error as an input error naming the file at fault: the corpus when none of
    its sentences parses, else the grammar (a unary cycle of probability 1, say)."""
    if getattr(e, "corpus_unparsable", False):
        return InputError(str(e), args.corpus)
    return InputError(str(e), args.grammar)


def _check_max_length(corpus, n: int, path) -> None:
    """The first sentence longer than ``n`` tokens, as an error naming its line."""
    for i, s in enumerate(corpus):
        if len(s) > n:
            raise InputError(f"sentence of {len(s)} tokens is longer than --max-length "
                             f"{n}", str(path), i + 1)


def _mapped_corpus(g, corpus, chars: bool) -> list:
    """The sentences with unknown words mapped to signatures, when the grammar has any."""
    from strgm.grammars.unknown_words import grammar_known_words, is_signature, \
        map_sentence

    if chars or not any(is_signature(t) for t in g.terminals):
        return corpus
    known, terminals = grammar_known_words(g), frozenset(g.terminals)
    return [map_sentence(s, known, terminals) for s in corpus]


def _print_parses(args, lines) -> None:
    """Trees on stdout, the unparsable lines on stderr, the ``--scores`` TSV."""
    bad, rows = [], ["line\tparsed\tscore\tlog_prob"]
    for i, r in enumerate(lines):
        print(tree_line(None if r is None else r[0], args.top))
        if r is None:
            bad.append(i + 1)
            rows.append(f"{i + 1}\t0\t-inf\t-inf")
        else:
            rows.append(f"{i + 1}\t1\t{r[1]:.10g}\t{r[2]:.10g}")
    if bad:
        print(no_parse_line(bad), file=sys.stderr)
    if args.scores:
        atomic_write_text(args.scores, "\n".join(rows) + "\n")
        announce_written(args.scores)
