"""Coarse-to-fine pruning of the lexicalised parser by a treebank PCFG's span posteriors.

The coarse grammar is a PCFG of binarised, possibly parent-annotated treebank trees
(:func:`strgm.grammars.unknown_words.treebank_pcfg`).  A constituent of the fine
(lexicalised) grammar is an anchored unannotated label (i, j, X); its coarse posterior is

    μ(i, j, X) = Σ_{A : base(A) = X} o(A, i, j) q(A, i, j) / Z

over the coarse symbols A whose base label is X: ``X`` and the parent-annotated ``X^P``
(:func:`~strgm.grammars.binarize.split_parent`); the intermediate symbols ``X|<…>`` and
``X^P|<…>`` of binarisation (:data:`~strgm.grammars.binarize.MARKER`) and the symbols the
grammar compiler introduces are not constituents and count for no label.  Labels renamed
for colliding with a word (``X^`` for ``X``) are restored as
:func:`~strgm.grammars.unknown_words.restore_tree` does.  q and o are the (post unary
closure) inside and outside scores of :mod:`strgm.grammars.chart`, so o·q/Z is the
expected number of A-nodes over (i, j); it is A's posterior because a treebank grammar of
X → X-collapsed trees has no unary chain from a symbol back to one of the same base label
(for a grammar that has, μ counts each node of such a chain and may exceed 1).

:func:`pcfg_span_mask` keeps the (i, j, X) with μ ≥ threshold and μ > 0 (so threshold 0
keeps exactly what the PCFG can build in some parse of the sentence).  A parent-annotated
PCFG also says under which parent a constituent sits: the posterior of ``X^P`` over
(i, j) is that of an X over (i, j) whose parent is a P, and :func:`pcfg_parent_mask`
keeps the (i, j, X, P) where it is ≥ threshold (and > 0) — the parser's ``parents``
mask, which confines each phrasal node's head child and modifiers to the labels and
spans the coarse grammar puts under it (the root, and preterminals, which the
annotation leaves bare, are not restricted).

:func:`parse_pruned` tries thresholds from the tightest down and parses with the first
masks under which the lexicalised parser finds a parse; the threshold 0 means *unpruned*
(``allowed=None``), so every sentence the scorer can parse at all gets a parse.  It
parses with the parser's ``beam`` (:data:`DEFAULT_BEAM`) unless told otherwise.

Cost: one inside–outside pass, O(n³ R) for R binary rules, then O(n² N) to sum the
posteriors per label (and per label pair); :func:`parse_pruned` makes the pass once per
sentence whatever the thresholds it tries.
"""

from __future__ import annotations

import weakref

import numpy as np

from strgm.errors import GrammarError, OptionError
from strgm.grammars.binarize import is_intermediate, split_parent
from strgm.grammars.cfg import CompiledGrammar, Grammar, compile_grammar
from strgm.grammars.chart import inside
from strgm.grammars.chart_ops import _log
from strgm.grammars.lexicalized.parser import Parser
from strgm.grammars.unknown_words import grammar_known_words, is_signature, map_sentence
from strgm.validate import check_float

__all__ = ["span_posteriors", "symbol_posteriors", "label_groups", "pcfg_span_mask",
           "pcfg_parent_mask", "parse_pruned", "THRESHOLDS", "DEFAULT_BEAM"]

#: The default thresholds of :func:`parse_pruned`, tightest first (0: unpruned).
THRESHOLDS = (1e-3, 1e-4, 1e-5, 0.0)
#: The default beam of :func:`parse_pruned`: items more than e^10 below the best of
#: their (i, j, label) are dropped (on WSJ sentences of 15-30 words with a
#: relative-frequency model, one in twenty Viterbi parses under the 1e-3 mask was missed).
DEFAULT_BEAM = 10.0


#: Compiled forms of the grammars given to this module (each compiled once).
_COMPILED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _compiled(grammar_or_compiled) -> CompiledGrammar:
    """The compiled grammar (compiled once per :class:`Grammar`)."""
    if isinstance(grammar_or_compiled, CompiledGrammar):
        return grammar_or_compiled
    if not isinstance(grammar_or_compiled, Grammar):
        raise OptionError("grammar", type(grammar_or_compiled).__name__,
                          "must be a Grammar or a CompiledGrammar")
    cg = _COMPILED.get(grammar_or_compiled)
    if cg is None:
        cg = _COMPILED[grammar_or_compiled] = compile_grammar(grammar_or_compiled)
    return cg


def _restored(g: Grammar, label: str) -> str:
    """``label`` without the collision marker ``^`` when that is what it carries."""
    bare = label.rstrip("^")
    if bare != label and bare and bare not in g.nt_index and bare in g.terminals:
        return bare
    return label


def label_groups(cg: CompiledGrammar) -> tuple:
    """(labels, col, pairs, pcol): the unannotated label of every user nonterminal that
    is a constituent (``labels[col[a]]``, −1 for the others), and for the
    parent-annotated ones ``X^P`` the pair (X, P) (``pairs[pcol[a]]``, −1 for the
    others), both per compiled symbol (module docstring)."""
    hit = cg._cache.get("lexparse_groups")
    if hit is not None:
        return hit
    g = cg.grammar
    labels: dict = {}
    pairs: dict = {}
    col = np.full(cg.n_nts, -1, dtype=np.int64)
    pcol = np.full(cg.n_nts, -1, dtype=np.int64)
    for a, name in enumerate(g.nonterminals):
        if is_intermediate(name):
            continue
        base, up = split_parent(name)
        base = _restored(g, base)
        col[a] = labels.setdefault(base, len(labels))
        if up is not None:
            pcol[a] = pairs.setdefault((base, _restored(g, up)), len(pairs))
    hit = cg._cache["lexparse_groups"] = (tuple(labels), col, tuple(pairs), pcol)
    return hit


def _mapped(cg: CompiledGrammar, words) -> tuple:
    """The sentence with unknown words mapped to the grammar's signatures (when it has
    any), as :func:`~strgm.grammars.unknown_words.map_sentence` does."""
    g = cg.grammar
    if not any(is_signature(t) for t in g.terminals):
        return tuple(words)
    return map_sentence(tuple(words), grammar_known_words(g), frozenset(g.terminals))


def symbol_posteriors(cg: CompiledGrammar, words) -> list:
    """``post[w][i, a]`` = o(a, i, i + w) q(a, i, i + w) / Z for every compiled symbol
    a, w = 1..n (``post[0]`` is None); all zeros when the PCFG cannot parse the
    sentence.  Unknown words are mapped to signatures first.  O(n³ R + n² N)."""
    toks = _mapped(cg, words)
    n = len(toks)
    if n == 0:
        raise GrammarError("cannot parse an empty sentence")
    ch = inside(cg, [toks])
    if not np.isfinite(ch.logZ[0]):
        return [None] + [np.zeros((n - w + 1, cg.n_nts)) for w in range(1, n + 1)]
    ch._outside()
    lz = float(ch.logZ[0])
    post: list = [None]
    for w in range(1, n + 1):
        with np.errstate(invalid="ignore"):
            lg = (_log(ch.out_val[w][0]) + ch.out_sc[w][0][:, None]
                  + _log(ch.in_val[w][0]) + ch.in_sc[w][0][:, None] - lz)
        post.append(np.where(np.isfinite(lg), np.exp(np.minimum(lg, 50.0)), 0.0))
    return post


def _grouped(post: list, col: np.ndarray, k: int) -> list:
    """Per width, the posteriors summed into the ``k`` groups ``col`` (−1: none)."""
    keep = np.flatnonzero(col >= 0)
    out: list = [None]
    for p in post[1:]:
        acc = np.zeros((p.shape[0], k))
        np.add.at(acc.T, col[keep], p[:, keep].T)
        out.append(acc)
    return out


def span_posteriors(grammar_or_compiled, words) -> tuple:
    """(labels, post): ``post[w][i, x]`` = μ(i, i + w, labels[x]) of the module
    docstring for w = 1..n (``post[0]`` is None); all zeros when the PCFG cannot parse
    the sentence.  O(n³ R + n² N)."""
    cg = _compiled(grammar_or_compiled)
    labels, col, _, _ = label_groups(cg)
    return labels, _grouped(symbol_posteriors(cg, words), col, len(labels))


def _mask_of(labels, post, threshold: float) -> set:
    """The (i, j, *labels[x]) with μ ≥ threshold and μ > 0."""
    out = set()
    for w in range(1, len(post)):
        ii, xx = np.nonzero((post[w] >= threshold) & (post[w] > 0))
        out.update((int(i), int(i) + w) + _tup(labels[x]) for i, x in zip(ii, xx))
    return out


def _tup(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def pcfg_span_mask(grammar_or_compiled, words, threshold: float) -> set:
    """The set of anchored labels (i, j, X) whose posterior under the PCFG is ≥
    ``threshold`` (and > 0), X unannotated and unbinarised (module docstring).
    Unknown words are mapped to the grammar's signatures.  Empty when the PCFG cannot
    parse the sentence.  O(n³ R + n² N)."""
    threshold = check_float("threshold", threshold, min=0.0, max=1.0)
    labels, post = span_posteriors(grammar_or_compiled, words)
    return _mask_of(labels, post, threshold)


def pcfg_parent_mask(grammar_or_compiled, words, threshold: float):
    """The set of (i, j, X, P) such that the posterior of an X over (i, j) whose parent
    is labelled P — the parent-annotated symbol ``X^P`` — is ≥ ``threshold`` (and > 0);
    None when the grammar has no parent annotation.  The mask ``parents`` of
    :func:`strgm.grammars.lexicalized.parser.parse`.  O(n³ R + n² N)."""
    threshold = check_float("threshold", threshold, min=0.0, max=1.0)
    cg = _compiled(grammar_or_compiled)
    _, _, pairs, pcol = label_groups(cg)
    if not pairs:
        return None
    return _mask_of(pairs, _grouped(symbol_posteriors(cg, words), pcol, len(pairs)),
                    threshold)


def parse_pruned(scorer, words, pcfg, thresholds=THRESHOLDS, *, max_unary: int = 2,
                 parents: bool = True, beam: float | None = DEFAULT_BEAM):
    """(tree, log P, threshold used): :func:`strgm.grammars.lexicalized.parser.parse`
    under the masks of each threshold in turn (tightest first) until a parse exists; a
    threshold of 0 parses unpruned.  ``parents`` (when the PCFG is parent-annotated):
    also restrict each phrasal node's parent label (:func:`pcfg_parent_mask`).
    ``beam``: the parser's beam (:class:`~strgm.grammars.lexicalized.parser.Parser`;
    None: exact Viterbi under each mask).  ``(None, -inf, None)`` when no threshold
    gives a parse.  The PCFG's inside–outside pass is done once; the lexicalised events
    scored for one threshold are reused by the next (one score cache per sentence)."""
    ths = [check_float("thresholds", t, min=0.0, max=1.0) for t in thresholds]
    if not ths:
        raise OptionError("thresholds", thresholds, "must name at least one threshold")
    p = Parser(scorer, words, max_unary=max_unary, beam=beam)
    cg = _compiled(pcfg)
    labels, col, pairs, pcol = label_groups(cg)
    sym = symbol_posteriors(cg, words)
    post = _grouped(sym, col, len(labels))
    ppost = _grouped(sym, pcol, len(pairs)) if parents and pairs else None
    for t in ths:
        if t == 0.0:
            tree, logp = p.parse()
        else:
            allowed = _mask_of(labels, post, t)
            if not allowed:  # the PCFG cannot parse the sentence
                continue
            tree, logp = p.parse(allowed, None if ppost is None else _mask_of(pairs, ppost, t))
        if tree is not None:
            return tree, logp, t
    return None, -np.inf, None
