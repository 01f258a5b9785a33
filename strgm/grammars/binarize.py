"""Binarisation of treebank trees with horizontal Markovisation, and its inverse.

Trees are nested tuples ``(label, child, ...)`` with words (str) as leaves, as read by
:mod:`strgm.grammars.ptb`.  :func:`binarize` rewrites every node with more than two
children into a chain of binary nodes whose new labels carry the marker ``|<`` (no Penn
Treebank label contains ``|``)::

    right factoring (default), horizontal=1:
      (NP DT JJ JJ NN)  ->  (NP DT (NP|<JJ> JJ (NP|<JJ> JJ NN)))
    left factoring, horizontal=1:
      (NP DT JJ JJ NN)  ->  (NP (NP|<JJ> (NP|<JJ> DT JJ) JJ) NN)

An intermediate node is labelled with its parent's (original) label and, between ``|<``
and ``>``, the labels of the ``horizontal`` children nearest to where it starts (right
factoring: its first ``horizontal`` children; left factoring: its last ones), comma
separated; ``horizontal=None`` keeps all of them (no Markovisation: one intermediate
symbol per distinct rule suffix).  Smaller ``horizontal`` means fewer symbols and a
smaller, more general grammar.

Guarantees: every node of the result has one or two children; unary chains and
preterminals are left as they are; a word is always the only child of its node, as in
the Penn Treebank (a tree where a word has siblings, or a label already containing the
marker, is refused with :class:`~strgm.errors.InputError`).  :func:`debinarize` splices
every intermediate node (label containing ``|<``) into its parent, so
``debinarize(binarize(t, ...)) == t`` for every accepted tree ``t``.

Parent annotation (vertical Markovisation of order 2, Klein & Manning 2003 §3):
``binarize(t, parent=True)`` renames every *phrasal* node X whose parent is P to
``X^P`` (P the parent's label before annotation); the root and preterminals (tags over
a word) are left as they are, as in Klein & Manning's parent annotation of phrasal
nodes.  Intermediate labels carry the annotated node label and the *unannotated* sibling
labels, ``X^P|<Y,Z>``::

    (S (NP (DT the) (JJ big) (NN dog)) (VP (VBD barked)))  horizontal=1, parent=True
      -> (S (NP^S (DT the) (NP^S|<JJ> (JJ big) (NN dog))) (VP^S (VBD barked)))

The annotation begins at the first ``^`` followed by a character other than ``^``
(:func:`strip_parent`); a trailing run of ``^`` is the collision marker of
:func:`strgm.grammars.ptb.relabel_collisions` and is kept.  A label with an inner ``^``
is refused when ``parent=True``.  ``debinarize(t, parent=True)`` also strips the
annotation, so ``debinarize(binarize(t, h, f, parent=True), parent=True) == t``.
"""

from __future__ import annotations

from strgm.errors import InputError
from strgm.validate import check_choice, check_int

__all__ = ["MARKER", "PARENT", "binarize", "debinarize", "is_intermediate", "is_preterminal",
           "strip_parent",
           "split_parent"]

#: The marker of intermediate labels: ``PARENT|<X,Y>``.
MARKER = "|<"
#: The marker of parent annotation: ``X^P``.
PARENT = "^"


def is_intermediate(label: str) -> bool:
    """Whether ``label`` names a node introduced by :func:`binarize`."""
    return MARKER in label


def split_parent(label: str) -> tuple:
    """(label without its parent annotation, the parent or None): the annotation starts
    at the first ``^`` followed by a character other than ``^`` (module docstring);
    ``"NP^S"`` -> ``("NP", "S")``, ``".^"`` -> ``(".^", None)``, ``"X^^P^"`` ->
    ``("X^", "P^")``."""
    for i in range(len(label) - 1):
        if label[i] == PARENT and label[i + 1] != PARENT:
            return label[:i], label[i + 1:]
    return label, None


def strip_parent(label: str) -> str:
    """``label`` without its parent annotation (:func:`split_parent`)."""
    return split_parent(label)[0]


def _label(t) -> str:
    return t if isinstance(t, str) else t[0]


def _check_node(t) -> None:
    """Refuse labels with the marker and words that are not their node's only child."""
    if is_intermediate(t[0]):
        raise InputError(f"tree label {t[0]!r} contains {MARKER!r}, the marker of "
                         "binarisation nodes")
    if len(t) > 2 and any(isinstance(c, str) for c in t[1:]):
        w = next(c for c in t[1:] if isinstance(c, str))
        raise InputError(f"word {w!r} under {t[0]!r} has siblings; words must be the only "
                         "child of their (preterminal) node")


def binarize(tree, horizontal: int | None = 2, factor: str = "right", parent: bool = False):
    """The tree with every node of arity > 2 factored into binary intermediate nodes
    (module docstring); ``horizontal`` ≥ 0 sibling labels are kept in intermediate
    labels (None: all), ``factor`` is ``"right"`` or ``"left"``; ``parent``: annotate
    phrasal nodes with their parent's label (``X^P``)."""
    if horizontal is not None:
        check_int("horizontal", horizontal, min=0)
    check_choice("factor", factor, ("right", "left"))
    return _bin(tree, horizontal, factor == "right", "" if parent else None)


def is_preterminal(t) -> bool:
    """Whether ``t`` is a node over one word."""
    return not isinstance(t, str) and len(t) == 2 and isinstance(t[1], str)


def _annotated(t, up: str | None) -> str:
    """The label of node ``t`` under a parent labelled ``up`` ('' at the root, None:
    no annotation)."""
    if up is None:
        return t[0]
    if split_parent(t[0])[1] is not None:
        raise InputError(f"tree label {t[0]!r} contains {PARENT!r} followed by text, the "
                         "marker of parent annotation")
    return t[0] if not up or is_preterminal(t) else f"{t[0]}{PARENT}{up}"


def _bin(t, h, right: bool, up: str | None = None):
    if isinstance(t, str):
        return t
    _check_node(t)
    here = _annotated(t, up)
    down = None if up is None else t[0]
    kids = [_bin(c, h, right, down) for c in t[1:]]
    labels = [_label(c) if up is None else _label(c_) for c, c_ in zip(kids, t[1:])]
    t = (here,) + t[1:]
    if len(kids) <= 2:
        return (t[0],) + tuple(kids)
    if right:
        node = kids[-1]
        for i in range(len(kids) - 2, 0, -1):  # intermediate node over kids[i:]
            seen = labels[i:] if h is None else labels[i:i + h]
            node = (f"{t[0]}{MARKER}{','.join(seen)}>", kids[i], node)
        return (t[0], kids[0], node)
    node = kids[0]
    for j in range(2, len(kids)):  # intermediate node over kids[:j]
        seen = labels[:j] if h is None else labels[max(0, j - h):j]
        node = (f"{t[0]}{MARKER}{','.join(seen)}>", node, kids[j - 1])
    return (t[0], node, kids[-1])


def debinarize(tree, parent: bool = False):
    """The tree with every intermediate node (label containing ``|<``) spliced into its
    parent, recursively; other nodes are kept as they are, except that with ``parent``
    their parent annotation is stripped (:func:`strip_parent`)."""
    if isinstance(tree, str):
        return tree
    label = strip_parent(tree[0]) if parent else tree[0]
    return (label,) + tuple(_splice(tree[1:], parent))


def _splice(kids, parent: bool) -> list:
    out: list = []
    for c in kids:
        if not isinstance(c, str) and is_intermediate(c[0]):
            out.extend(_splice(c[1:], parent))
        else:
            out.append(debinarize(c, parent))
    return out
