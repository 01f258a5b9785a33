"""``strgm pcfg parse`` over sentence shards (``--scheduler``).

Every sentence is decoded on its own (:mod:`strgm.grammars.corpus_parse`), so the corpus
is cut into shards of about equal cost (:func:`strgm.distributed.pcfg_shards.
shard_indices`) parsed on the workers, and the lines are put back in corpus order: the
output is the serial one. The grammar travels once as arrays; each shard carries its
sentences as token ids (mapped to the grammar's terminals) and its original words as
text, and returns its trees as bracketed text with two arrays of scores.
"""

from __future__ import annotations

import numpy as np

from strgm.distributed.pcfg_shards import compiled, corpus_shards, decode_corpus, \
    decode_grammar

__all__ = ["parse_shard", "sharded_parse"]


def parse_shard(shard: dict, grammar: dict, decode: str) -> dict:
    """One task: the parse lines of a shard's sentences."""
    from strgm.grammars.corpus_parse import decode_sentences, parse_lines

    g = decode_grammar(grammar)
    mapped = decode_corpus(shard, [str(s) for s in grammar["symbols"]])
    words = [tuple(str(x).split(" ")) if str(x) else () for x in shard["words"]]
    lines = parse_lines(g, words, decode_sentences(compiled(grammar), g.probabilities(),
                                                   mapped, decode))
    return {"trees": np.array(["" if r is None else r[0] for r in lines], dtype=str),
            "parsed": np.array([r is not None for r in lines]),
            "scores": np.array([[np.nan, np.nan] if r is None else [r[1], r[2]]
                                for r in lines], dtype=float).reshape(-1, 2)}


def sharded_parse(pool, g, words, mapped, decode: str, max_memory=None) -> list:
    """The lines :func:`strgm.grammars.corpus_parse.parse_lines` gives for ``words``
    (decoded as ``mapped``), computed shard by shard on ``pool``."""
    arrays, shards = corpus_shards(pool, g, mapped, max_memory)
    for shard in shards:
        shard["words"] = np.array([" ".join(words[i]) for i in shard["idx"]], dtype=str)
    grammar = pool.scatter(arrays)
    parts = pool.map(parse_shard, shards, grammar, decode, key="strgm-parse")
    out: list = [None] * len(words)
    for shard, part in zip(shards, parts):
        for j, i in enumerate(shard["idx"].tolist()):
            if part["parsed"][j]:
                out[i] = (str(part["trees"][j]), float(part["scores"][j, 0]),
                          float(part["scores"][j, 1]))
    return out
