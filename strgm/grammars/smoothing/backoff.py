"""Backoff contexts of the binarised treebank PCFG's phrasal rules (right factoring).

A phrasal rule of the binarised tree (:func:`strgm.grammars.binarize.binarize`,
``factor="right"``) is a draw of an *outcome* from the distribution of its *context*:

* a node context ``("node", X, P)``: an original phrasal node with label X under a
  parent labelled P (``"<root>"`` at the root, None without parent annotation); its
  outcome is its binarised right-hand side;
* an intermediate context ``("mid", X, P, H)``: the node ``X^P|<H>`` with horizontal
  history H (the unannotated labels of the first ``horizontal`` children it spans); its
  outcome is its two children.

Children are outcome *tokens*: a child's label as it stands in the binarised tree
(``NN``, ``PP^VP``; the annotation ``^X`` is fixed by X, which every context of a chain
shares), or ``("|", H')`` for the intermediate child ``X^P|<H'>`` (its label depends
on the context, the token does not).  So an outcome means the same under every context
of a backoff chain, and its rule under a full context is :func:`concretize`.

Backoff chain (:func:`chain`) of a full context, the finest first (Collins 2003 §7;
Dawson 2015, eqs. 58-59: "smaller K collapse prefix-equivalent contexts"):

* ``X^P``:  ``("node", X, P)`` -> ``("node", X)``; without annotation there is no
  coarser node context;
* ``X^P|<H1..Hk>``: ``("mid", X, P, H[j:])`` for j = 1..k-1 (the history shortened from
  the sibling farthest from the next child), then ``("mid", X, None, (Hk,))`` (parent
  dropped, the adjacent sibling kept), then ``("mid", X, None, ())``.

A coarser context predicts outcomes a full context cannot produce (under ``NP|<>``, an
outcome whose first child is ``DT`` is impossible for ``NP^S|<JJ>``, whose first child is
``JJ``): :func:`consistent` says which outcomes a full context admits.  All functions are
pure; :func:`observe` is linear in the size of the trees.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from strgm.errors import OptionError
from strgm.grammars.binarize import MARKER, PARENT, is_preterminal, strip_parent

__all__ = ["ROOT", "Context", "observe", "concretize", "chain", "level_name", "consistent",
           "token_base"]

#: The parent of a root node in context keys.
ROOT = "<root>"


class Context(NamedTuple):
    """A full context: ``kind`` "node" or "mid", the node's label ``x``, its parent
    ``p`` (ROOT, or None without annotation), history ``hist`` (tuple; None for a node)
    and ``label``, the node's label in the binarised tree (``X^P``)."""
    kind: str
    x: str
    p: str | None
    hist: tuple | None
    label: str

    def key(self) -> tuple:
        """The structured key of the context (without ``label``)."""
        return (self.kind, self.x, self.p) if self.kind == "node" else \
            (self.kind, self.x, self.p, self.hist)

    def lhs(self) -> str:
        """The left-hand side of the context's rules."""
        if self.kind == "node":
            return self.label
        return f"{self.label}{MARKER}{','.join(self.hist)}>"


def token_base(tok) -> str | tuple:
    """A symbol token's unannotated label (intermediate tokens as they are)."""
    return tok if isinstance(tok, tuple) else strip_parent(tok)


def observe(trees, horizontal: int | None, parent: bool) -> tuple:
    """(Counter of ``(lhs, outcome)``, dict ``lhs -> Context``) of the phrasal rules of
    the right-binarised ``trees`` (relabelled, not binarised); exactly the rules of
    ``binarize(t, horizontal, "right", parent)`` whose right-hand side has no word."""
    counts: Counter = Counter()
    ctxs: dict = {}
    for t in trees:
        _walk(t, ROOT if parent else None, horizontal, parent, counts, ctxs)
    return counts, ctxs


def _walk(t, up, h, parent: bool, counts: Counter, ctxs: dict) -> None:
    if isinstance(t, str) or is_preterminal(t):
        return
    x = t[0]
    label = x if not parent or up == ROOT else f"{x}{PARENT}{up}"
    base = [c[0] for c in t[1:]]
    toks = [c[0] if (not parent or is_preterminal(c)) else f"{c[0]}{PARENT}{x}"
            for c in t[1:]]
    n = len(toks)

    def hist(i):
        return tuple(base[i:] if h is None else base[i:i + h])

    def add(ctx, outcome):
        ctxs.setdefault(ctx.lhs(), ctx)
        counts[(ctx.lhs(), outcome)] += 1
    if n <= 2:
        add(Context("node", x, up, None, label), tuple(toks))
    else:
        add(Context("node", x, up, None, label), (toks[0], ("|", hist(1))))
        for i in range(1, n - 1):
            nxt = toks[n - 1] if i == n - 2 else ("|", hist(i + 1))
            add(Context("mid", x, up, hist(i), label), (toks[i], nxt))
    for c in t[1:]:
        _walk(c, x if parent else None, h, parent, counts, ctxs)


def concretize(ctx: Context, outcome: tuple) -> tuple:
    """The right-hand side of ``outcome`` under the full context ``ctx``."""
    return tuple(tok if isinstance(tok, str) else f"{ctx.label}{MARKER}{','.join(tok[1])}>"
                 for tok in outcome)


def chain(ctx: Context) -> list:
    """The backoff keys of a full context, finest first (module docstring)."""
    if ctx.kind == "node":
        return [("node", ctx.x)] if ctx.p is not None else []
    hs = ctx.hist
    out = [("mid", ctx.x, ctx.p, hs[j:]) for j in range(1, len(hs))]
    if ctx.p is not None and hs:
        out.append(("mid", ctx.x, None, hs[-1:]))
    out.append(("mid", ctx.x, None, ()))
    return out


def level_name(key) -> str:
    """The level (one concentration α_K each) of a context key: its kind, whether it
    has a parent, and its history length (capped at 3); full contexts are their own
    levels."""
    if key[0] == "full":
        return "full-" + key[1].kind
    if key[0] == "node":
        return "node"
    return f"mid{'^P' if key[2] is not None else ''}-h{min(len(key[3]), 3)}"


def consistent(ctx: Context, outcome: tuple, horizontal: int | None) -> bool:
    """Whether a full context can produce ``outcome``: for an intermediate context with
    history H (k labels) the children it commits to, ``seq`` = [first child] + (the next
    intermediate's history, or [second child]), must begin with H; when H covers every
    remaining child (k < horizontal, or no Markovisation) ``seq`` must be exactly H.
    Node contexts admit every outcome."""
    if ctx.kind == "node":
        return True
    if len(outcome) != 2:
        return False
    first, second = outcome
    if isinstance(first, tuple):
        return False
    seq = [token_base(first)] + (list(second[1]) if isinstance(second, tuple)
                                 else [token_base(second)])
    k = len(ctx.hist)
    if seq[:k] != list(ctx.hist):
        return False
    if horizontal is not None and k >= horizontal:
        return True
    return len(seq) == k


def check_right(factor: str) -> None:
    """Smoothing follows right factoring only."""
    if factor != "right":
        raise OptionError("factor", factor, "must be 'right' when smoothing (the backoff "
                          "contexts follow right factoring)")
