"""The training trees of a DP-TSG as flat integer arrays, and their MLE PCFG.

Trees are nested tuples ``(label, child, ...)`` with words as ``str`` leaves, already
cleaned and binarised: every node has one or two children, and a word is only ever the
single child of a preterminal. :class:`TreeTable` checks this (an
:class:`~strgm.errors.InputError` naming the tree index) and flattens the corpus: nodes are
numbered in preorder, tree by tree, so a node's children always have larger numbers than
the node (reverse order is a valid bottom-up order). Per node it keeps the label id, the
CFG rule id, the parent and the (at most two) nonterminal children.

P_CFG is the relative-frequency (maximum-likelihood) PCFG of the training trees,
P_CFG(c → β) = f(c → β) / f(c), the PCFG inside the base distribution P0^C of Cohn &
Blunsom 2010 §2. Building the table is O(total number of nodes).
"""

from __future__ import annotations

import hashlib

import numpy as np

from strgm.errors import InputError

__all__ = ["TreeTable", "RESERVED", "check_label"]

#: characters the grammar transform uses in its symbols; a treebank label holding one of
#: them (or whitespace, or starting with ``@<``) is refused, so that no transformed symbol
#: can equal a label.
RESERVED = "{}[]~\""


def check_label(label, where: str) -> str:
    """``label`` unless it is not a usable nonterminal label (InputError)."""
    if not isinstance(label, str) or not label:
        raise InputError(f"{where}: a node label must be a non-empty string, got {label!r}")
    if any(ch.isspace() or ch in RESERVED for ch in label) or label.startswith("@<"):
        raise InputError(f"{where}: label {label!r} holds whitespace, one of {RESERVED!r} or "
                         "starts with '@<' (reserved by the grammar transform)")
    return label


class TreeTable:
    """The flattened corpus (see the module docstring).

    Node arrays (length N, global preorder): ``lab`` label id, ``rule`` rule id, ``parent``
    (−1 at a root), ``c1``/``c2`` nonterminal children (−1 if none; a preterminal has
    none). ``starts[i]:starts[i+1]`` are the nodes of tree i, ``starts[i]`` its root.
    Rules: ``rule_lab`` (left-hand side label), ``rule_kids`` (child label ids, empty for a
    preterminal rule), ``rule_word`` (word of a preterminal rule, else None), ``rule_lp``
    log P_CFG. ``labels``/``label_index`` the nonterminal labels."""

    def __init__(self, trees):
        trees = list(trees) if trees is not None else []
        if not trees:
            raise InputError("the treebank is empty (no trees to train a TSG on)")
        self.trees = trees
        self.labels: list = []
        self.label_index: dict = {}
        self.rule_index: dict = {}
        self.rule_lab: list = []
        self.rule_kids: list = []
        self.rule_word: list = []
        lab, rule, parent, c1, c2, starts = [], [], [], [], [], []
        for i, t in enumerate(trees):
            starts.append(len(lab))
            self._add(t, -1, i, (lab, rule, parent, c1, c2))
        starts.append(len(lab))
        self.lab = np.array(lab, dtype=np.int64)
        self.rule = np.array(rule, dtype=np.int64)
        self.parent = np.array(parent, dtype=np.int64)
        self.c1 = np.array(c1, dtype=np.int64)
        self.c2 = np.array(c2, dtype=np.int64)
        self.starts = np.array(starts, dtype=np.int64)
        self.n_nodes = len(lab)
        self.n_labels = len(self.labels)
        freq = np.bincount(self.rule, minlength=len(self.rule_lab)).astype(float)
        tot = np.bincount(np.asarray(self.rule_lab), weights=freq, minlength=self.n_labels)
        self.rule_lp = np.log(freq) - np.log(tot[np.asarray(self.rule_lab)])
        self.is_root = np.zeros(self.n_nodes, dtype=bool)
        self.is_root[self.starts[:-1]] = True
        self.inner = np.flatnonzero(~self.is_root)
        self.tree_of = np.repeat(np.arange(len(trees)), np.diff(self.starts))
        self.fingerprint = self._fingerprint()
        #: plain-list copies for the per-node loops of the samplers
        self.rule_l, self.lab_l = self.rule.tolist(), self.lab.tolist()
        self.c1_l, self.c2_l = self.c1.tolist(), self.c2.tolist()
        self.parent_l = self.parent.tolist()
        self.rule_p = np.exp(self.rule_lp).tolist()

    def _label(self, x, where) -> int:
        j = self.label_index.get(x)
        if j is None:
            check_label(x, where)
            j = self.label_index[x] = len(self.labels)
            self.labels.append(x)
        return j

    def _add(self, t, par, i, arrays) -> int:
        """Append node ``t`` (and its subtree, iteratively in preorder); returns its id."""
        lab, rule, parent, c1, c2 = arrays
        stack = [(t, par, None)]
        first = len(lab)
        while stack:
            node, p, slot = stack.pop()
            where = f"tree {i}"
            if not isinstance(node, tuple) or len(node) < 2:
                raise InputError(f"{where}: a node must be a tuple (label, child, ...), "
                                 f"got {node!r:.60}")
            if len(node) > 3:
                raise InputError(f"{where}: node {node[0]!r} has {len(node) - 1} children; "
                                 "the TSG needs binarised trees (1 or 2 children per node)")
            me = len(lab)
            if p >= 0:
                (c1 if slot == 0 else c2)[p] = me
            lj = self._label(node[0], where)
            kids = node[1:]
            if any(isinstance(k, str) for k in kids):
                if len(kids) != 1:
                    raise InputError(f"{where}: node {node[0]!r} mixes words and nodes; a "
                                     "word must be the single child of a preterminal")
                key = (lj, "w", kids[0])
            else:
                key = (lj,) + tuple(self._label(k[0] if isinstance(k, tuple) and k else k,
                                                where) for k in kids)
            r = self.rule_index.get(key)
            if r is None:
                r = self.rule_index[key] = len(self.rule_lab)
                self.rule_lab.append(lj)
                word = key[2] if key[1:2] == ("w",) and len(key) == 3 else None
                self.rule_word.append(word)
                self.rule_kids.append(() if word is not None else key[1:])
            lab.append(lj)
            rule.append(r)
            parent.append(p)
            c1.append(-1)
            c2.append(-1)
            if self.rule_word[r] is None:
                for slot_k in reversed(range(len(kids))):
                    stack.append((kids[slot_k], me, slot_k))
        return first

    def _fingerprint(self) -> str:
        h = hashlib.sha1()
        h.update(np.ascontiguousarray(self.lab).tobytes())
        h.update(np.ascontiguousarray(self.rule).tobytes())
        h.update(np.ascontiguousarray(self.starts).tobytes())
        for j, k in enumerate(self.rule_kids):
            h.update(f"{self.labels[self.rule_lab[j]]}>{k}|{self.rule_word[j]}\n".encode())
        return h.hexdigest()

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def label_of(self, j: int) -> str:
        return self.labels[j]

    def log_pcfg(self, r: int) -> float:
        return float(self.rule_lp[r])
