"""Head rules: which child heads a Penn Treebank constituent, and the tree's head words.

The table is Collins's (1999, Appendix A; Collins 2003 §3.1, after Magerman 1995): for a
parent label, a direction and a priority list of child labels; for each label of the
list in turn, the children are searched in that direction ("left": first child first,
"right": last child first) and the first child with that label is the head; when no
label of the list occurs, the first child in the direction is.  NP has its own rule
(Collins 1999, A.1): the last child when it is POS; else the first of NN NNP NNPS NNS NX
POS JJR searching from the right; else the first NP from the left; else the first of $
ADJP PRN from the right; else the first CD from the right; else the first of JJ JJS RB
QP from the right; else the last child.  Labels missing from the table (e.g. X, NX, the
root ``TOP``) take the first child from the left.

Left out from Collins: the coordination rule (moving the head left past ``CC``) and the
base-NP relabelling (NPB).  Trees are those of :func:`strgm.grammars.ptb.clean_tree`
(function tags stripped, empty elements removed).  Every function is linear in the
size of the tree.
"""

from __future__ import annotations

from strgm.grammars.binarize import is_preterminal

__all__ = ["HEAD_TABLE", "head_index", "lexicalize", "LexNode"]

#: parent label -> (direction, priority list)  (module docstring)
HEAD_TABLE = {
    "ADJP": ("left", "NNS QP NN $ ADVP JJ VBN VBG ADJP JJR NP JJS DT FW RBR RBS SBAR RB"),
    "ADVP": ("right", "RB RBR RBS FW ADVP TO CD JJR JJ IN NP JJS NN"),
    "CONJP": ("right", "CC RB IN"),
    "FRAG": ("right", ""),
    "INTJ": ("left", ""),
    "LST": ("right", "LS :"),
    "NAC": ("left", "NN NNS NNP NNPS NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP FW"),
    "PP": ("right", "IN TO VBG VBN RP FW"),
    "PRN": ("left", ""),
    "PRT": ("right", "RP"),
    "QP": ("left", "$ IN NNS NN JJ RB DT CD NCD QP JJR JJS"),
    "RRC": ("right", "VP NP ADVP ADJP PP"),
    "S": ("left", "TO IN VP S SBAR ADJP UCP NP"),
    "SBAR": ("left", "WHNP WHPP WHADVP WHADJP IN DT S SQ SINV SBAR FRAG"),
    "SBARQ": ("left", "SQ S SINV SBARQ FRAG"),
    "SINV": ("left", "VBZ VBD VBP VB MD VP S SINV ADJP NP"),
    "SQ": ("left", "VBZ VBD VBP VB MD VP SQ"),
    "UCP": ("right", ""),
    "VP": ("left", "TO VBD VBN MD VBZ VB VBG VBP VP ADJP NN NNS NP"),
    "WHADJP": ("left", "CC WRB JJ ADJP"),
    "WHADVP": ("right", "CC WRB"),
    "WHNP": ("left", "WDT WP WP$ WHADJP WHPP WHNP"),
    "WHPP": ("right", "IN TO FW"),
}

_NP_RULES = (("right", {"NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR"}),
             ("left", {"NP"}), ("right", {"$", "ADJP", "PRN"}), ("right", {"CD"}),
             ("right", {"JJ", "JJS", "RB", "QP"}))


def _search(labels: list, direction: str, wanted) -> int | None:
    order = range(len(labels)) if direction == "left" else range(len(labels) - 1, -1, -1)
    for i in order:
        if labels[i] in wanted:
            return i
    return None


def head_index(parent: str, labels: list) -> int:
    """The index of the head among children labelled ``labels`` (module docstring)."""
    if not labels:
        raise ValueError("a constituent without children has no head")
    if parent == "NP":
        if labels[-1] == "POS":
            return len(labels) - 1
        for direction, wanted in _NP_RULES:
            i = _search(labels, direction, wanted)
            if i is not None:
                return i
        return len(labels) - 1
    direction, priority = HEAD_TABLE.get(parent, ("left", ""))
    for lab in priority.split():
        i = _search(labels, direction, {lab})
        if i is not None:
            return i
    return 0 if direction == "left" else len(labels) - 1


class LexNode(tuple):
    """A lexicalised node: ``(label, tag, word, head, children)`` with ``head`` the index
    of the head child and ``children`` a tuple of LexNodes (both None for a
    preterminal, whose tag is its label and word its word)."""
    __slots__ = ()

    def __new__(cls, label, tag, word, head, children):
        return super().__new__(cls, (label, tag, word, head, children))

    label = property(lambda s: s[0])
    tag = property(lambda s: s[1])
    word = property(lambda s: s[2])
    head = property(lambda s: s[3])
    children = property(lambda s: s[4])


def lexicalize(tree, word_map=None) -> LexNode:
    """The lexicalised form of a cleaned tree: every node's head tag and head word by
    :func:`head_index`, bottom-up; ``word_map(word, position)`` (optional) rewrites the
    words first (e.g. rare words to signatures), ``position`` counting from 0."""
    pos = [0]

    def go(t):
        if is_preterminal(t):
            w = t[1] if word_map is None else word_map(t[1], pos[0])
            pos[0] += 1
            return LexNode(t[0], t[0], w, None, None)
        kids = tuple(go(c) for c in t[1:])
        h = head_index(t[0], [k.label for k in kids])
        return LexNode(t[0], kids[h].tag, kids[h].word, h, kids)
    return go(tree)
