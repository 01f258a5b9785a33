"""The tree draws of the blocked Gibbs sampler over sentence shards (``strgm pcfg train
--method gibbs --scheduler ...`` with one chain).

Given θ, the trees t_i ~ P(t | w_i, θ) of a Gibbs sweep are independent, and sentence i
draws from its own stream ``default_rng([base, i])`` (``base``: one draw of the chain's
stream, :meth:`strgm.grammars.samplers._Kernel._sample_trees`). So the sentences can be
cut into shards (:func:`strgm.distributed.pcfg_shards.shard_indices`) whose trees are
drawn on workers, and the chain is the serial chain: the same trees, θ, trace and
checkpoints. The θ draw, the counts and the chain state stay in this process.

Data movement (only numpy arrays travel): the grammar's structure once per run and the
shards' token ids once (:mod:`strgm.distributed.pcfg_shards`); per sweep θ (|R| floats)
and ``base``; each task returns its trees as rule ids in preorder, flattened, with their
offsets (−1: no parse). Collapsed MH's proposals depend on the current trees of all other
sentences, one sentence at a time, and stay serial (several MH chains run with
``--chains``).
"""

from __future__ import annotations

import numpy as np

from strgm.distributed.pcfg_shards import compiled, corpus_shards, decode_corpus

__all__ = ["ShardedTrees", "shard_trees"]


def shard_trees(shard: dict, grammar: dict, theta: np.ndarray, base: int,
                batch_size: int) -> dict:
    """One task: the trees of a shard's sentences (packed; module docstring)."""
    from strgm.grammars.samplers import sample_trees

    words = decode_corpus(shard, [str(s) for s in grammar["symbols"]])
    trees = sample_trees(compiled(grammar), words, shard["idx"], theta, int(base),
                         batch_size)
    lengths = np.array([-1 if t is None else len(t) for t in trees], dtype=np.int64)
    flat = np.fromiter((r for t in trees if t is not None for r in t), dtype=np.int64)
    return {"lengths": lengths, "rules": flat}


class ShardedTrees:
    """``(theta, base, idx) → {i: tree}`` for a Gibbs kernel's ``tree_sampler``, drawn
    shard by shard on ``pool`` (a :class:`~strgm.distributed.cluster.TaskPool`)."""

    def __init__(self, pool, kernel, n_shards=None):
        self.pool, self.batch_size = pool, kernel.batch_size
        arrays, self.shards = corpus_shards(pool, kernel.cg.grammar, kernel.corpus,
                                            kernel.cg.max_chart_bytes, n_shards)
        self.grammar = pool.scatter(arrays)

    def __call__(self, theta, base: int, idx) -> dict:
        th = self.pool.scatter(np.asarray(theta, dtype=float))
        parts = self.pool.map(shard_trees, self.shards, self.grammar, th, int(base),
                              self.batch_size, key="strgm-trees")
        self.pool.release(th)
        out: dict = {}
        for shard, part in zip(self.shards, parts):
            ends = np.cumsum(np.maximum(part["lengths"], 0))
            for i, n, e in zip(shard["idx"].tolist(), part["lengths"].tolist(), ends.tolist()):
                out[i] = None if n < 0 else tuple(part["rules"][e - n:e].tolist())
        return {i: out[i] for i in idx}
