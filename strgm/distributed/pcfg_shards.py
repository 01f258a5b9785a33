"""The inside–outside E-step of EM, MAP-EM and VB over sentence shards.

The expected rule counts of a corpus are a sum over sentences,
E_r = Σ_i E[f_r | w_i, θ], and log P(w | θ) = Σ_i log P(w_i | θ), so the corpus can be cut
into shards whose counts are computed independently (on Dask workers) and added up.  The
result equals the serial E-step (:func:`strgm.grammars.chart.corpus_inside_outside`) up to
the order of floating-point additions (|Δ| ≲ 1e-12 relative).

Data movement (only numpy arrays travel):

* once per run, the grammar's *structure* as arrays (symbol table, rule left-hand sides,
  flattened right-hand sides with offsets, start symbol) is broadcast to every worker,
  which rebuilds and compiles it once and caches it by digest; the weights travel as θ;
* once per iteration, θ (|R| floats) is broadcast;
* each task carries its shard (token ids, int32, and sentence lengths) and returns the
  shard's log P(w_i | θ) and its summed counts (|R| floats).

Shards are the sentences sorted by length and dealt round-robin, so that every shard has
about the same Σ_i n_i³ cost; the sums are taken in shard order, so a run gives the same
numbers on any number of workers.  A shard is a pure function of its inputs: a task whose
worker dies is re-run elsewhere with the same result.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from strgm.errors import OptionError
from strgm.grammars.cfg import Grammar, Rule, compile_grammar
from strgm.grammars.chart import CorpusCounts, corpus_inside_outside
from strgm.grammars.estimator_kernels import EMKernel, MAPKernel, VBKernel

__all__ = ["ShardedEStep", "SHARDED_METHODS", "corpus_shards", "decode_corpus", "decode_grammar",
           "encode_corpus", "encode_grammar", "shard_estep", "shard_indices", "sharded_kernel"]

#: Estimators whose E-step is one inside–outside pass under a fixed θ.
SHARDED_METHODS = ("em", "map", "vb")
#: Shards per worker (several, so that a slow or restarted worker delays little).
SHARDS_PER_WORKER = 4
_CACHE: "OrderedDict[str, object]" = OrderedDict()


def encode_grammar(g: Grammar, max_chart_bytes=None) -> dict:
    """The rules of ``g`` as numpy arrays: symbols, left-hand sides, flattened right-hand
    sides and their offsets, start symbol, raw weights and pseudocounts (NaN: none)."""
    symbols = list(g.nonterminals) + list(g.terminals)
    index = {s: i for i, s in enumerate(symbols)}
    rhs = np.array([index[x] for r in g.rules for x in r.rhs], dtype=np.int32)
    offsets = np.cumsum([0] + [len(r.rhs) for r in g.rules]).astype(np.int64)
    arrays = {"symbols": np.array(symbols, dtype=str), "lhs": g.lhs_index.astype(np.int32),
              "rhs": rhs, "offsets": offsets,
              "start": np.array([index[g.start]], dtype=np.int32),
              "weights": np.asarray(g.weights, dtype=float),
              "pseudocounts": np.array([np.nan if r.pseudocount is None else r.pseudocount
                                        for r in g.rules] + [g.default_pseudocount]),
              "max_chart_bytes": np.array([-1.0 if max_chart_bytes is None
                                           else float(max_chart_bytes)])}
    h = hashlib.sha256()
    for k in sorted(arrays):
        h.update(k.encode())
        h.update(np.ascontiguousarray(arrays[k]).tobytes())
    arrays["digest"] = np.array([h.hexdigest()])
    return arrays


def decode_grammar(arrays: dict) -> Grammar:
    """The grammar :func:`encode_grammar` encoded (same rules in the same order)."""
    sym = [str(s) for s in arrays["symbols"]]
    nts = sym[:int(arrays["lhs"].max()) + 1]
    off, rhs, pc = arrays["offsets"], arrays["rhs"], arrays["pseudocounts"]
    rules = [Rule(nts[int(a)], tuple(sym[int(j)] for j in rhs[off[i]:off[i + 1]]),
                  float(arrays["weights"][i]), None if np.isnan(pc[i]) else float(pc[i]))
             for i, a in enumerate(arrays["lhs"])]
    return Grammar(rules, start=sym[int(arrays["start"][0])],
                   default_pseudocount=float(pc[-1]))


def compiled(arrays: dict):
    """The compiled grammar of ``arrays``, built once per process (cached by digest)."""
    key = str(arrays["digest"][0])
    if key not in _CACHE:
        cg = compile_grammar(decode_grammar(arrays))
        limit = float(arrays["max_chart_bytes"][0])
        cg.max_chart_bytes = None if limit < 0 else limit
        _CACHE[key] = cg
        while len(_CACHE) > 4:
            _CACHE.popitem(last=False)
    return _CACHE[key]


def shard_indices(lengths, n_shards: int) -> list:
    """Sentence indices of each shard: sorted by length, dealt round-robin (module
    docstring); empty shards are dropped."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [np.sort(order[s::n_shards]) for s in range(n_shards) if len(order[s::n_shards])]


def encode_corpus(sentences, idx, symbols: dict) -> dict:
    """Sentences ``idx`` as token ids (int32; a word the grammar lacks gets an id past its
    symbols, so its sentence stays unparsable) and lengths."""
    extra: dict = {}
    toks = []
    for i in idx:
        for w in sentences[i]:
            if w not in symbols:
                extra.setdefault(w, len(symbols) + len(extra))
            toks.append(symbols.get(w, extra.get(w)))
    return {"idx": np.asarray(idx, dtype=np.int64), "tokens": np.array(toks, dtype=np.int32),
            "lengths": np.array([len(sentences[i]) for i in idx], dtype=np.int32),
            "unknown": np.array(sorted(extra, key=extra.get), dtype=str)}


def decode_corpus(shard: dict, symbols: list) -> list:
    """The sentences :func:`encode_corpus` encoded, as tuples of words."""
    sym = symbols + [str(s) for s in shard["unknown"]]
    ends = np.cumsum(shard["lengths"])
    toks = shard["tokens"]
    return [tuple(sym[t] for t in toks[e - n:e]) for e, n in zip(ends, shard["lengths"])]


def corpus_shards(pool, g: Grammar, sentences, max_chart_bytes=None, n_shards=None
                  ) -> tuple:
    """(grammar arrays, shards): :func:`encode_grammar` of ``g`` and the sentences cut by
    :func:`shard_indices` into ``n_shards`` (default SHARDS_PER_WORKER per worker of
    ``pool``), each encoded by :func:`encode_corpus`."""
    arrays = encode_grammar(g, max_chart_bytes)
    symbols = {str(s): i for i, s in enumerate(arrays["symbols"])}
    n_shards = n_shards or SHARDS_PER_WORKER * pool.n_workers
    return arrays, [encode_corpus(sentences, idx, symbols)
                    for idx in shard_indices([len(s) for s in sentences], n_shards)]


def shard_estep(shard: dict, grammar: dict, theta: np.ndarray):
    """One task: (log P(w_i | θ) of the shard's sentences, their summed expected counts)."""
    cg = compiled(grammar)
    words = decode_corpus(shard, [str(s) for s in grammar["symbols"]])
    res = corpus_inside_outside(cg, words, theta)
    return res.logZ, res.counts


class ShardedEStep:
    """``estep(theta)`` → :class:`~strgm.grammars.chart.CorpusCounts` of the whole corpus,
    computed shard by shard on ``pool`` (a :class:`~strgm.distributed.cluster.TaskPool`)."""

    def __init__(self, pool, cg, sentences, n_shards=None):
        self.pool = pool
        self.n = len(sentences)
        self.n_rules = len(cg.grammar.rules)
        arrays, self.shards = corpus_shards(pool, cg.grammar, sentences,
                                            cg.max_chart_bytes, n_shards)
        self.grammar = pool.scatter(arrays)
        self.grammar_bytes = sum(v.nbytes for v in arrays.values())

    def __call__(self, theta) -> CorpusCounts:
        th = self.pool.scatter(np.asarray(theta, dtype=float))
        parts = self.pool.map(shard_estep, self.shards, self.grammar, th, key="strgm-estep")
        self.pool.release(th)
        logz = np.full(self.n, -np.inf)
        tot = np.zeros(self.n_rules)
        for shard, (lz, c) in zip(self.shards, parts):
            logz[shard["idx"]] = lz
            tot += c
        return CorpusCounts(logz, tot)


class _Sharded:
    """The E-step of an estimator kernel replaced by :class:`ShardedEStep`."""

    sharded = None

    def attach(self, pool, n_shards=None):
        self.sharded = ShardedEStep(pool, self.cg, self.corpus, n_shards)
        return self

    def _estep(self, theta):
        return self.sharded(theta)


class ShardedEMKernel(_Sharded, EMKernel):
    """:class:`~strgm.grammars.estimator_kernels.EMKernel` with a sharded E-step."""


class ShardedMAPKernel(_Sharded, MAPKernel):
    """:class:`~strgm.grammars.estimator_kernels.MAPKernel` with a sharded E-step."""


class ShardedVBKernel(_Sharded, VBKernel):
    """:class:`~strgm.grammars.estimator_kernels.VBKernel` with a sharded E-step."""


_KERNELS = {"em": ShardedEMKernel, "map": ShardedMAPKernel, "vb": ShardedVBKernel}


def sharded_kernel(method: str, grammar, corpus, alpha=None, heldout=None, max_memory=None,
                   *, pool, tol=None, n_shards=None, option: str = "--method"):
    """The estimator kernel of ``method`` (em, map, vb; ``alpha`` for map and vb,
    ``tol`` for em, as in :mod:`strgm.grammars.estimators`) with its E-step run on
    ``pool``. CVB is refused: it updates one sentence at a time against all the others."""
    if method not in _KERNELS:
        raise OptionError(option, method, "collapsed VB updates one sentence at a time "
                                          "against all others; --scheduler serves em, map "
                                          "and vb (and --chains the samplers)")
    third = tol if method == "em" else alpha
    return _KERNELS[method](grammar, corpus, third, heldout, max_memory).attach(pool, n_shards)


def fit_on_pool(pool, method: str, grammar, corpus, *, iters: int, alpha=None,
                heldout=None, max_memory=None, progress: bool = False, log=None):
    """EM, MAP-EM or VB (:func:`strgm.grammars.estimators.fit`, same keywords) with the
    E-step on ``pool``: the same :class:`~strgm.grammars.estimator_kernels.FitResult`,
    trace rows with the seconds since the start included."""
    import sys

    from strgm.grammars.estimators import _check_args, _fit

    _check_args(iters, alpha if method != "em" else None)
    kernel = sharded_kernel(method, grammar, corpus, alpha, heldout, max_memory, pool=pool)
    return _fit(kernel, iters, progress, log or sys.stderr)
