"""Parsing a corpus with a PCFG: one decoded tree per sentence, written in Penn Treebank
form (``strgm pcfg parse``, serially or on sentence shards).

:func:`decode_sentences` fills inside charts batch by batch (sentences of one length,
sized to the chart memory limit) and decodes each sentence independently: ``viterbi``,
the most probable tree, or ``maxrule``, the tree maximising the sum of its anchored
rules' log posteriors (:mod:`strgm.grammars.chart_trees`). A sentence's result does not
depend on the other sentences of its batch, so a corpus can be cut into shards.
:func:`parse_lines` restores the sentence's own words and the treebank labels
(:func:`strgm.grammars.unknown_words.restore_tree`). Cost: one inside pass and one
decoding pass per sentence, O(n³ R).
"""

from __future__ import annotations

from strgm.grammars.cfg import Grammar, tree_to_str
from strgm.grammars.chart import batches_by_length, chart_limit, inside

__all__ = ["decode_sentences", "parse_lines"]


def decode_sentences(cg, theta, sentences, decode: str = "viterbi") -> list:
    """(tree, score, log P(w)) per sentence, None without a parse."""
    out: list = [None] * len(sentences)
    for idx in batches_by_length(sentences, n_nts=cg.n_nts, max_chart_bytes=chart_limit(cg)):
        ch = inside(cg, [sentences[i] for i in idx], theta)
        res = ch.viterbi() if decode == "viterbi" else ch.maxrule()
        for i, r, lz in zip(idx, res, ch.logZ):
            out[i] = None if r is None else (r[0], r[1], float(lz))
    return out


def parse_lines(g: Grammar, words, decoded) -> list:
    """(bracketed tree with the sentence's own words, score, log P(w)) per sentence, None
    without a parse; ``words`` the original sentences, ``decoded`` what
    :func:`decode_sentences` gave for them (mapped to the grammar's terminals)."""
    from strgm.grammars.unknown_words import restore_tree

    return [None if r is None else (tree_to_str(restore_tree(r[0], w, g)), r[1], r[2])
            for w, r in zip(words, decoded)]
