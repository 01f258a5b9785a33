"""The MAP DP-TSG as a finite PCFG: the grammar transform of Cohn & Blunsom 2010 §3, Table 1.

Given ET counts n_{e,c} (n_{·,c} = Σ_e n_{e,c}), concentrations α_c and stop
probabilities s_c, the MAP TSG gives an ET e rooted at c the probability of eq. (1),
p(e) = (n_{e,c} + α_c P0(e | c)) / (n_{·,c} + α_c), an infinite rule set. Table 1 splits it
into two finite CFGs:

grammar A   c → sign(e)               n_{e,c} / (n_{·,c} + α_c)    every ET with n_{e,c} ≥ 1
            sign(e_i) → sign(e_i,1) … 1                            every internal node e_i
            c → c'                    α_c / (n_{·,c} + α_c)        every label c
grammar B   c' → t                    P_CFG(c → t)
            c' → a | a'               P_CFG(c → a) · (s_a | 1 − s_a)
            c' → a b | a b' | a' b | a' b'   P_CFG(c → a b) · (s_a | 1 − s_a)(s_b | 1 − s_b)

where sign(e_i) of a frontier node is the label itself. A TSG derivation corresponds to
several transformed derivations (each ET via A, if counted, or via B); their probabilities
sum to Π_e p(e). With ``viterbi=True`` the weight of c → sign(e) is p(e) itself (Table 1,
footnote 3): weights then do not sum to one per left-hand side, so pass
``grammar.weights`` (not the normalised probabilities) to the chart. Symbols are spelled as
in :mod:`.symbols`; if the trees have several root labels a start symbol (``TOP``) rewrites
to each with its relative frequency. Size: O(Σ_{e: n_e>0} |e| + |CFG rules|) rules.
"""

from __future__ import annotations

import numpy as np

from strgm.errors import GrammarError, InputError
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.tsg.fragments import ETCounts
from strgm.grammars.tsg.state import TSGState
from strgm.grammars.tsg.symbols import base_label, frontier, is_primed, is_signed, primed, \
    signed, word_sig

__all__ = ["transform", "label_names", "derivation_to_tsg", "et_strings"]


def label_names(table) -> dict:
    """label → its spelling in the transformed grammar (``X^`` for a label that is also a
    word, see :mod:`.symbols`)."""
    words = {w for w in table.rule_word if w is not None}
    labels = set(table.labels)
    out = {}
    for x in table.labels:
        y = x
        if x in words:
            y = x + "^"
            while y in labels or y in words:
                y += "^"
        out[x] = y
    return out


def _signature(frags, f, names, memo) -> str:
    got = memo.get(f)
    if got is None:
        t = frags.table
        r = frags.rule[f]
        lab = names[t.labels[frags.lab[f]]]
        if t.rule_word[r] is not None:
            got = signed(lab, [word_sig(t.rule_word[r])])
        else:
            got = signed(lab, [frontier(names[t.labels[L]]) if k == -1 else
                               _signature(frags, k, names, memo)
                               for L, k in zip(t.rule_kids[r], (frags.k1[f], frags.k2[f]))])
        memo[f] = got
    return got


def _grammar_a(counts, alpha, names, viterbi, rules, memo) -> None:
    fr, t = counts.frags, counts.table
    ids, n = counts.ets()
    for f, nf in zip(ids.tolist(), n.tolist()):
        c = fr.lab[f]
        den = counts.ncat[c] + alpha[c]
        w = (nf + alpha[c] * np.exp(fr.lp0[f])) / den if viterbi else nf / den
        rules[(names[t.labels[c]], (_signature(fr, f, names, memo),))] = w
        stack = [f]
        while stack:
            g = stack.pop()
            r = fr.rule[g]
            if t.rule_word[r] is not None:
                rhs = (t.rule_word[r],)
            else:
                rhs = []
                for L, k in zip(t.rule_kids[r], (fr.k1[g], fr.k2[g])):
                    rhs.append(names[t.labels[L]] if k == -1 else _signature(fr, k, names, memo))
                    if k != -1:
                        stack.append(k)
            rules[(_signature(fr, g, names, memo), tuple(rhs))] = 1.0
    for c, x in enumerate(t.labels):
        rules[(names[x], (primed(names[x]),))] = alpha[c] / (counts.ncat[c] + alpha[c])


def _grammar_b(counts, names, rules) -> None:
    t = counts.table
    s = np.exp(counts.frags.log_s)
    for r, p in enumerate(np.exp(t.rule_lp).tolist()):
        lhs = primed(names[t.labels[t.rule_lab[r]]])
        if t.rule_word[r] is not None:
            rules[(lhs, (t.rule_word[r],))] = p
            continue
        opts = [[(names[t.labels[L]], s[L]), (primed(names[t.labels[L]]), 1.0 - s[L])]
                for L in t.rule_kids[r]]
        if len(opts) == 1:
            for a, wa in opts[0]:
                rules[(lhs, (a,))] = p * wa
        else:
            for a, wa in opts[0]:
                for b, wb in opts[1]:
                    rules[(lhs, (a, b))] = p * wa * wb


def transform(source, alpha=None, *, kernel=None, viterbi: bool = False,
              start: str = "TOP") -> Grammar:
    """The Table 1 PCFG of the MAP TSG (module docstring). ``source`` is a
    :class:`~.state.TSGState` (with ``kernel``; α and s are the state's) or an
    :class:`~.fragments.ETCounts` (with ``alpha``, one per label; s is the one the counts
    were built with). ``start`` names the added start symbol when the trees have more than
    one root label."""
    if isinstance(source, TSGState):
        if kernel is None:
            raise InputError("transform of a TSGState needs the kernel it belongs to")
        kernel.check(source)
        counts, alpha = kernel.counts(source), source.alpha
    elif isinstance(source, ETCounts):
        counts = source
        if alpha is None:
            raise InputError("transform of ETCounts needs alpha (one value per label)")
    else:
        raise InputError(f"transform expects a TSGState or ETCounts, got {type(source).__name__}")
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (counts.table.n_labels,))
    t = counts.table
    names = label_names(t)
    rules: dict = {}
    roots = np.bincount(t.lab[t.starts[:-1]], minlength=t.n_labels)
    if np.count_nonzero(roots) > 1:
        if start in names.values() or start in set(t.rule_word):
            raise GrammarError(f"start symbol {start!r} is also a label or a word")
        for c in np.flatnonzero(roots).tolist():
            rules[(start, (names[t.labels[c]],))] = roots[c] / t.n_trees
    else:
        start = names[t.labels[int(np.flatnonzero(roots)[0])]]
    _grammar_a(counts, alpha, names, viterbi, rules, {})
    _grammar_b(counts, names, rules)
    lhs = {k[0] for k in rules}
    clash = sorted(w for w in set(t.rule_word) if w is not None and w in lhs)
    if clash:
        raise GrammarError(f"word {clash[0]!r} equals a symbol of the transformed grammar")
    return Grammar([Rule(a, b, float(w)) for (a, b), w in rules.items()], start=start)


def derivation_to_tsg(tree, kernel_or_table):
    """A derivation of the transformed grammar (nested tuples over its symbols, as returned
    by the chart's ``sample()`` / ``viterbi()``) → (treebank tree, substitution indicators
    in preorder (1 at the root), ETs as bracketed strings in preorder of their roots).
    A start symbol rewriting to a root label is skipped."""
    table = getattr(kernel_or_table, "table", kernel_or_table)
    orig = {v: k for k, v in label_names(table).items()}
    sites: list = []

    def node_label(sym):
        lab = orig.get(base_label(sym))
        if lab is None:
            raise GrammarError(f"symbol {sym!r} is not a symbol of this TSG's transform")
        return lab

    def conv(node, site):
        if isinstance(node, str):
            return node
        sym = node[0]
        if not (is_primed(sym) or is_signed(sym)):  # a site c → c' | sign(e)
            if len(node) != 2 or isinstance(node[1], str) or \
                    node_label(node[1][0]) != node_label(sym):
                raise GrammarError(f"site {sym!r} must rewrite to its primed or signed form")
            return conv(node[1], True)
        sites.append(1 if site else 0)
        kids = [c if isinstance(c, str) else conv(c, not (is_primed(c[0]) or is_signed(c[0])))
                for c in node[1:]]
        return (node_label(sym),) + tuple(kids)

    if not isinstance(tree, tuple):
        raise GrammarError("a derivation must be a tuple (symbol, children...)")
    if tree[0] not in orig and len(tree) == 2 and isinstance(tree[1], tuple) and \
            not (is_primed(tree[0]) or is_signed(tree[0])):
        tree = tree[1]  # the added start symbol
    out = conv(tree, True)
    return out, sites, et_strings(out, sites)


def et_strings(tree, sites) -> list:
    """The ETs of ``tree`` cut at the nodes whose preorder indicator is 1, in preorder of
    their roots."""
    out: list = []
    pos = [0]

    def visit(t):
        site = sites[pos[0]]
        pos[0] += 1
        slot = len(out)
        if site:
            out.append(None)
        parts = [t[0]]
        for c in t[1:]:
            if isinstance(c, str):
                parts.append(c)
            else:
                rep, csite = visit(c)
                parts.append(c[0] if csite else rep)
        rep = "(" + " ".join(parts) + ")"
        if site:
            out[slot] = rep
        return rep, site
    visit(tree)
    return out
