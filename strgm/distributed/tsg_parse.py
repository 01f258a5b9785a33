"""``strgm tsg parse`` over sentence shards (``--scheduler``).

Sentence i (0-based line) draws its MER samples from its own stream
``default_rng([seed, i])``, here and on a worker alike, so its tree does not depend on
the other sentences nor on where it is parsed: the output is the serial one. The model
travels once as the text of its model file (strict JSON) and is read and transformed
once per worker process; each shard carries its sentences as text and returns its trees
in bracketed form with the MH counts of its parsing chains (summed in shard order).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict

import numpy as np

from strgm.distributed.pcfg_shards import SHARDS_PER_WORKER, shard_indices

__all__ = ["parse_sentences", "sharded_tsg_parse"]

_PARSERS: "OrderedDict[tuple, tuple]" = OrderedDict()


def parse_sentences(model, parser, sentences, keys, seed: int, decode: str,
                    objective: str) -> list:
    """Bracketed tree (None without a parse) of every sentence, sentence j sampling from
    ``default_rng([seed, keys[j]])``."""
    from strgm.grammars.cfg import tree_to_str

    out = []
    for words, key in zip(sentences, keys):
        rng = np.random.default_rng([seed, int(key)])
        tree = parser.parse(model.map_words(words), decode, rng, objective)
        out.append(None if tree is None else tree_to_str(model.restore(tree, words)))
    return out


def _parser(text: str, samples: int):
    """(model, parser) of a model file's text, made once per process."""
    from strgm.grammars.tsg.model_file import TSGModel
    from strgm.grammars.tsg.parse import TSGParser

    key = (hashlib.sha1(text.encode("utf-8")).hexdigest(), samples)
    if key not in _PARSERS:
        model = TSGModel.from_dict(json.loads(text))
        _PARSERS[key] = (model, TSGParser(model.kernel, model.state, samples=samples))
        while len(_PARSERS) > 2:
            _PARSERS.popitem(last=False)
    return _PARSERS[key]


def parse_task(shard: dict, text: str, opts: dict) -> dict:
    """One task: the trees of a shard's sentences and its parsing chains' MH counts."""
    model, parser = _parser(text, opts["samples"])
    a0, p0 = parser.accepted, parser.proposed
    sentences = [str(s).split(" ") for s in shard["lines"]]
    trees = parse_sentences(model, parser, sentences, shard["idx"], opts["seed"],
                            opts["decode"], opts["objective"])
    return {"trees": np.array(["" if t is None else t for t in trees], dtype=str),
            "parsed": np.array([t is not None for t in trees]),
            "mh": np.array([parser.accepted - a0, parser.proposed - p0], dtype=np.int64)}


def sharded_tsg_parse(pool, model, sentences, *, seed: int, decode: str, objective: str,
                      samples: int) -> tuple:
    """(bracketed tree or None per sentence, MH accepted, MH proposed) on ``pool``."""
    from strgm.safe_io import strict_json

    text = pool.scatter(strict_json(model.to_dict(), indent=None))
    shards = [{"idx": idx, "lines": np.array([" ".join(sentences[i]) for i in idx],
                                             dtype=str)}
              for idx in shard_indices([len(s) for s in sentences],
                                       SHARDS_PER_WORKER * pool.n_workers)]
    opts = {"seed": seed, "decode": decode, "objective": objective, "samples": samples}
    parts = pool.map(parse_task, shards, text, opts, key="strgm-tsg-parse")
    pool.release(text)
    out: list = [None] * len(sentences)
    for shard, part in zip(shards, parts):
        for j, i in enumerate(shard["idx"].tolist()):
            out[i] = str(part["trees"][j]) if part["parsed"][j] else None
    mh = np.sum([p["mh"] for p in parts], axis=0) if parts else np.zeros(2, dtype=np.int64)
    return out, int(mh[0]), int(mh[1])
