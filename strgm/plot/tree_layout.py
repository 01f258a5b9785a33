"""A tidy layout of a parse tree, shared by the matplotlib drawing and the SVG view.

Trees are nested tuples ``(label, child, ...)`` with string leaves, as
:mod:`strgm.grammars.ptb` reads them and the PCFG parsers return them; bracketed text
``(S (NP a) b)`` is read with :func:`strgm.grammars.ptb.parse_trees`. The layout puts
the leaves (and childless nodes) one unit apart, left to right, and every parent midway
between its first and last child; depth is the distance from the root. It is computed
without recursion, so a deep tree does not meet Python's recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from strgm.errors import InputError

__all__ = ["Node", "layout_tree", "as_tree"]


@dataclass
class Node:
    """One node of a laid-out tree: ``x`` in leaf units, ``depth`` from the root,
    ``parent`` an index into the node list (None for the root), ``leaf`` for words."""

    label: str
    x: float
    depth: int
    parent: Optional[int]
    leaf: bool


def as_tree(tree):
    """``tree`` as nested tuples: bracketed text is parsed (exactly one tree), a tuple
    is checked (a string label first, then string or tuple children)."""
    if isinstance(tree, str) and tree.lstrip().startswith("("):
        from strgm.grammars.ptb import parse_trees

        trees = parse_trees(tree)
        if len(trees) != 1:
            raise InputError(f"expected one bracketed tree, found {len(trees)}")
        return trees[0]
    stack = [(tree, "the tree")]
    while stack:
        t, where = stack.pop()
        if isinstance(t, str):
            continue
        if not isinstance(t, tuple) or not t or not isinstance(t[0], str):
            raise InputError(f"{where} is not a tree: expected a string leaf or a tuple "
                             f"(label, child, ...), got {t!r:.60}")
        stack.extend((c, f"child {i} of {t[0]!r}") for i, c in enumerate(t[1:], 1))
    return tree


def layout_tree(tree) -> list[Node]:
    """The nodes of ``tree`` in preorder (module docstring for the layout)."""
    tree = as_tree(tree)
    nodes: list[Node] = []
    children: list[list[int]] = []
    stack = [(tree, None, 0)]
    while stack:  # preorder: nodes and their children's indices
        t, parent, depth = stack.pop()
        i = len(nodes)
        leaf = isinstance(t, str)
        nodes.append(Node(t if leaf else t[0], 0.0, depth, parent, leaf))
        children.append([])
        if parent is not None:
            children[parent].append(i)
        if not leaf:
            stack.extend((c, i, depth + 1) for c in reversed(t[1:]))
    next_x = 0.0
    for i, n in enumerate(nodes):  # leaves, left to right
        if not children[i]:
            n.x, next_x = next_x, next_x + 1.0
    for i in reversed(range(len(nodes))):  # parents after their children
        if children[i]:
            nodes[i].x = (nodes[children[i][0]].x + nodes[children[i][-1]].x) / 2
    return nodes
