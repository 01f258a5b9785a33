"""The events of a lexicalised tree and their backoff contexts.

A tree's log-probability (:mod:`strgm.grammars.lexicalized.scorer`) is a sum over events,
each an *outcome* drawn from the distribution of a *context*.  Every context has a
backoff chain, finest first; below the coarsest key is ε, uniform over the family's
outcomes (Dawson 2015, "Parameter estimation": (parent, head, tag, word) → (parent,
head, tag) → (parent) → ε; Collins 2003 §7.1, Table 7).  Families and chains, with P the
parent label, H the head child's label, t and w the head tag and word, side "L"/"R",
adj the adjacency flag, M, mt, mw a modifier's label, head tag and head word:

=======  ==================  =======================================================
family   outcome             chain (finest first)
=======  ==================  =======================================================
head     H                   (P, t, w) → (P, t) → (P)
mod      (M, mt) or (STOP,)  (side, adj, P, H, t, w) → (side, adj, P, H, t)
                             → (side, adj, P, H)
word     mw                  (side, M, mt, P, H, t, w) → (side, M, mt, P, H, t) → (mt)
top      (X, t) of the root  (top)
word     the root's word w   (X, t) → (t)
=======  ==================  =======================================================

The word family's coarsest key (t) is shared by the modifiers' and the root's words:
it pools every word seen with tag t.  Unlike Collins, the word event does not
condition on adjacency.  A modifier's log-probability in the scorer's sense is its
``mod`` event plus its ``word`` event.  Keys are tuples whose first element names their
kind (``"h"``, ``"m"``, ``"w"``, ``"wt"``, ``"top"``, ``"tw"``); a kind and a length
make a *level* (one concentration each in the HDP).  All functions are pure and linear
in the size of the tree.
"""

from __future__ import annotations

from strgm.grammars.lexicalized.heads import LexNode
from strgm.grammars.lexicalized.scorer import LEFT, RIGHT, STOP

__all__ = ["FAMILIES", "head_chain", "mod_chain", "word_chain", "top_chain",
           "top_word_chain", "tree_events", "level_of"]

FAMILIES = ("head", "mod", "word", "top")


def head_chain(p, t, w) -> tuple:
    """Backoff keys of the head event of a node labelled ``p`` headed by (t, w)."""
    return (("h", p, t, w), ("h", p, t), ("h", p))


def mod_chain(side, adj, p, h, t, w) -> tuple:
    """Backoff keys of a modifier (or STOP) event."""
    adj = bool(adj)
    return (("m", side, adj, p, h, t, w), ("m", side, adj, p, h, t), ("m", side, adj, p, h))


def word_chain(side, m, mt, p, h, t, w) -> tuple:
    """Backoff keys of a modifier's head word."""
    return (("w", side, m, mt, p, h, t, w), ("w", side, m, mt, p, h, t), ("wt", mt))


def top_chain() -> tuple:
    """The root's (label, tag) event has one context."""
    return (("top",),)


def top_word_chain(x, t) -> tuple:
    """Backoff keys of the root's head word."""
    return (("tw", x, t), ("wt", t))


def level_of(key) -> str:
    """The level of a context key: its kind and length."""
    return f"{key[0]}{len(key)}"


def tree_events(tree: LexNode) -> list:
    """Every event of a lexicalised tree as ``(family, chain, outcome)``: the root's two,
    then, for every phrasal node in preorder, its head event, its right modifiers
    outward and STOP, its left modifiers outward and STOP (each modifier with its word
    event)."""
    out = [("top", top_chain(), (tree.label, tree.tag)),
           ("word", top_word_chain(tree.label, tree.tag), tree.word)]
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.children is None:
            continue
        _node_events(node, out)
        stack.extend(reversed(node.children))
    return out


def _node_events(node: LexNode, out: list) -> None:
    p, t, w, k = node.label, node.tag, node.word, node.head
    h = node.children[k].label
    out.append(("head", head_chain(p, t, w), h))
    for side, mods in ((RIGHT, node.children[k + 1:]), (LEFT, node.children[:k][::-1])):
        for i, m in enumerate(mods):
            out.append(("mod", mod_chain(side, i == 0, p, h, t, w), (m.label, m.tag)))
            out.append(("word", word_chain(side, m.label, m.tag, p, h, t, w), m.word))
        out.append(("mod", mod_chain(side, not mods, p, h, t, w), (STOP,)))
