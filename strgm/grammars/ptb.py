"""Penn Treebank ``.mrg`` reader and treebank PCFG extraction.

Trees are read from bracketed text (``( (S (NP-SBJ (NNP Pierre) ...) ...) )``); the
outer unlabeled bracket is removed.  :func:`clean_tree` strips function tags and indices
(``NP-SBJ-1`` → ``NP``, ``-NONE-`` and ``-LRB-`` kept as labels), deletes ``-NONE-``
traces and constituents left empty.  :func:`treebank_grammar` counts rules (relative
frequency estimate, Charniak 1996): the result is a :class:`~strgm.grammars.cfg.Grammar`
whose trees are exactly the (cleaned) treebank trees' rules.  Unbalanced brackets, and
brackets nested deeper than :data:`MAX_DEPTH` (the tree functions here and downstream are
recursive, one call per level), raise :class:`~strgm.errors.InputError` naming file and
line.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from strgm.errors import InputError
from strgm.grammars.cfg import Grammar, Rule
from strgm.safe_io import check_input, read_text
from strgm.validate import check_int

__all__ = ["parse_trees", "read_mrg", "read_treebank", "clean_tree", "treebank_grammar",
           "tree_leaves", "relabel_collisions"]

_TOKEN = re.compile(r"\(|\)|[^\s()]+")

#: The deepest bracket nesting a tree may have (Penn Treebank trees stay far below it).
MAX_DEPTH = 300


def parse_trees(text: str, path: str = "<string>") -> list:
    """All top-level bracketed trees in ``text`` as nested tuples (label, children...);
    at most :data:`MAX_DEPTH` brackets deep."""
    trees, stack = [], []
    line = 1
    pos = 0
    open_line = []
    for m in _TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        tok = m.group()
        if tok == "(":
            if len(stack) >= MAX_DEPTH:
                raise InputError(f"tree nested deeper than {MAX_DEPTH} brackets", path, line)
            stack.append([])
            open_line.append(line)
        elif tok == ")":
            if not stack:
                raise InputError("unbalanced ')'", path, line)
            node = stack.pop()
            open_line.pop()
            if not node:
                raise InputError("empty brackets '()'", path, line)
            if isinstance(node[0], tuple):  # unlabeled bracket
                label, kids = "", node
            else:
                label, kids = node[0], node[1:]
            t = (label,) + tuple(kids)
            if stack:
                stack[-1].append(t)
            else:
                trees.append(t)
        else:
            if not stack:
                raise InputError(f"token {tok!r} outside brackets", path, line)
            stack[-1].append(tok)
    if stack:
        raise InputError("unbalanced '(' (bracket opened here is never closed)", path, open_line[0])
    out = []
    for t in trees:
        if t[0] == "" and len(t) == 2 and isinstance(t[1], tuple):
            t = t[1]  # strip the outer unlabeled bracket
        out.append(t)
    return out


def read_mrg(path) -> list:
    """The trees of one ``.mrg`` file (UTF-8, a byte-order mark accepted); a file that is
    missing, a directory, not UTF-8, malformed or without trees is an InputError naming
    it (and the line, where there is one)."""
    trees = parse_trees(read_text(path, "treebank file"), str(path))
    if not trees:
        raise InputError("no trees in treebank file", str(path))
    return trees


def read_treebank(directory, pattern: str = "*.mrg", limit: int | None = None) -> list:
    """Trees of every matching file in sorted order (optionally the first ``limit`` files)."""
    check_input(directory, "treebank directory", directory=True)
    if limit is not None:
        check_int("limit", limit, min=1)
    files = sorted(f for f in Path(directory).glob(pattern) if not f.is_dir())
    if not files:
        raise InputError(f"no files matching {pattern!r}", str(directory))
    out = []
    for f in files[:limit]:
        out.extend(read_mrg(f))
    return out


def _base_label(label: str) -> str:
    if label.startswith("-"):  # -NONE-, -LRB-, -RRB-
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


def clean_tree(t, collapse: bool = True):
    """Strip function tags, remove -NONE- and empty constituents, and (``collapse``)
    collapse a node whose only child has its label (X → X, often left by removing an
    empty element: ``(NP (NP ...) (-NONE- *))``); None if nothing is left. Scoring keeps
    X → X (``collapse=False``), as evalb does."""
    if isinstance(t, str):
        return t
    label = _base_label(t[0])
    if label == "-NONE-":
        return None
    kids = [clean_tree(c, collapse) for c in t[1:]]
    kids = [c for c in kids if c is not None]
    if not kids:
        return None
    if collapse and len(kids) == 1 and not isinstance(kids[0], str) and kids[0][0] == label:
        return kids[0]
    return (label,) + tuple(kids)


def tree_leaves(t) -> tuple:
    if isinstance(t, str):
        return (t,)
    out: tuple = ()
    for c in t[1:]:
        out += tree_leaves(c)
    return out


def relabel_collisions(trees) -> list:
    """Rename nonterminal labels that are also words (PTB's ``(. .)``, ``(, ,)``): label X
    becomes ``X^`` so that the grammar's terminal/nonterminal split stays unambiguous."""
    labels, words = set(), set()

    def scan(t):
        if isinstance(t, str):
            words.add(t)
            return
        labels.add(t[0])
        for c in t[1:]:
            scan(c)
    for t in trees:
        scan(t)
    ren = {}
    for x in labels & words:
        y = x + "^"
        while y in labels or y in words:
            y += "^"
        ren[x] = y

    def go(t):
        if isinstance(t, str):
            return t
        return (ren.get(t[0], t[0]),) + tuple(go(c) for c in t[1:])
    return [go(t) for t in trees]


def treebank_grammar(trees, start: str = "TOP") -> Grammar:
    """Relative-frequency PCFG of (cleaned) trees; ``start --> root`` rules are added so
    that every root category is reachable from one start symbol.  Weights are counts.
    Labels that are also words are renamed first (:func:`relabel_collisions`)."""
    trees = relabel_collisions(trees)
    counts: Counter = Counter()

    def go(t):
        if isinstance(t, str):
            return
        counts[(t[0], tuple(c if isinstance(c, str) else c[0] for c in t[1:]))] += 1
        for c in t[1:]:
            go(c)

    for t in trees:
        counts[(start, (t[0],))] += 1
        go(t)
    rules = [Rule(lhs, rhs, float(c)) for (lhs, rhs), c in counts.items()]
    rules.sort(key=lambda r: r.lhs != start)
    return Grammar(rules, start=start)
