"""Conversions between strgm's grammars and trees and NLTK's (an optional dependency:
``pip install 'strgm[nltk]'``).

* :func:`grammar_to_nltk` gives an ``nltk.PCFG`` with the grammar's rules (same order)
  and their probabilities (weights normalised per left-hand side, or θ given);
* :func:`grammar_from_nltk` gives a :class:`~strgm.grammars.cfg.Grammar` whose rule
  weights are the productions' probabilities (1 for an ``nltk.CFG``'s productions).
  Dirichlet pseudocounts have no place in NLTK and are not carried either way;
* :func:`tree_to_nltk` / :func:`tree_from_nltk` convert strgm's nested-tuple trees
  ``(label, child, ...)`` (leaves are strings) to and from ``nltk.Tree``.

strgm tells nonterminals from terminals by name (a symbol is a nonterminal iff it has
rules); NLTK by type (``Nonterminal`` or string). A grammar in which the two disagree (a
``Nonterminal`` without productions, a terminal string named like a nonterminal) is
refused with a :class:`GrammarError` naming the symbol.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from strgm.errors import GrammarError, InputError, StrgmError
from strgm.grammars.cfg import Grammar, Rule

__all__ = ["grammar_to_nltk", "grammar_from_nltk", "tree_to_nltk", "tree_from_nltk"]


def _nltk():
    """The ``nltk`` module, or a one-line error saying how to install it."""
    try:
        import nltk
    except ImportError:
        raise StrgmError("NLTK is not installed: pip install 'strgm[nltk]'") from None
    return nltk


def grammar_to_nltk(grammar: Grammar, probabilities: Optional[Sequence[float]] = None):
    """An ``nltk.PCFG`` with ``grammar``'s start symbol and rules, in order; rule r has
    probability ``probabilities[r]`` (default: :meth:`Grammar.probabilities`). A
    nonterminal whose rules all have probability 0 is a :class:`GrammarError` (NLTK needs
    each left-hand side's probabilities to sum to 1)."""
    nltk = _nltk()
    theta = grammar.probabilities() if probabilities is None else \
        np.asarray(probabilities, dtype=float)
    if theta.shape != (len(grammar.rules),):
        raise GrammarError(f"expected {len(grammar.rules)} rule probabilities, got shape "
                           f"{theta.shape}")
    totals = np.bincount(grammar.lhs_index, weights=theta, minlength=grammar.n_lhs)
    for a, tot in zip(grammar.nonterminals, totals):
        if not abs(tot - 1.0) <= 1e-6:
            raise GrammarError(f"the rules of {a!r} have total probability {tot:.6g}; "
                               "NLTK needs 1")
    nts = {a: nltk.Nonterminal(a) for a in grammar.nonterminals}
    prods = [nltk.ProbabilisticProduction(nts[r.lhs], [nts.get(x, x) for x in r.rhs],
                                          prob=float(p))
             for r, p in zip(grammar.rules, theta)]
    return nltk.PCFG(nts[grammar.start], prods)


def _symbol(x, where: str) -> str:
    """The name of an NLTK grammar symbol (a ``Nonterminal`` or a terminal string)."""
    name = x.symbol() if hasattr(x, "symbol") else x
    if not isinstance(name, str):
        raise GrammarError(f"{where}: symbol {name!r} is not a string")
    return name


def grammar_from_nltk(grammar, default_pseudocount: float = 1.0) -> Grammar:
    """A :class:`Grammar` with the productions of an ``nltk.PCFG`` (weights: their
    probabilities) or ``nltk.CFG`` (weights 1, so uniform per left-hand side), in order,
    and its start symbol."""
    nltk = _nltk()
    if not isinstance(grammar, nltk.CFG):
        raise InputError(f"expected an nltk.PCFG or nltk.CFG, got {type(grammar).__name__}")
    prods = grammar.productions()
    lhss = {_symbol(p.lhs(), "left-hand side") for p in prods}
    rules = []
    for p in prods:
        lhs = _symbol(p.lhs(), "left-hand side")
        rhs = []
        for x in p.rhs():
            name = _symbol(x, f"production {p}")
            is_nt = isinstance(x, nltk.Nonterminal)
            if is_nt and name not in lhss:
                raise GrammarError(f"nonterminal {name!r} of the NLTK grammar has no "
                                   "productions (strgm would read it as a terminal)")
            if not is_nt and name in lhss:
                raise GrammarError(f"terminal {name!r} has the name of a nonterminal "
                                   "(strgm tells them apart by name)")
            rhs.append(name)
        weight = p.prob() if isinstance(p, nltk.ProbabilisticProduction) else 1.0
        rules.append(Rule(lhs, tuple(rhs), float(weight)))
    return Grammar(rules, start=_symbol(grammar.start(), "start symbol"),
                   default_pseudocount=default_pseudocount)


def tree_to_nltk(tree):
    """The ``nltk.Tree`` of a strgm tree ``(label, child, ...)``; leaves stay strings."""
    nltk = _nltk()

    def go(t):
        if isinstance(t, str):
            return t
        if not isinstance(t, tuple) or not t or not isinstance(t[0], str):
            raise InputError(f"not a tree node (label, child, ...): {t!r}"[:200])
        return nltk.Tree(t[0], [go(c) for c in t[1:]])
    if isinstance(tree, str):
        raise InputError(f"a tree is a tuple (label, child, ...), got the string {tree!r}")
    return go(tree)


def tree_from_nltk(tree) -> tuple:
    """The strgm tree ``(label, child, ...)`` of an ``nltk.Tree`` (a ``Nonterminal``
    label becomes its name); every leaf must be a string."""
    nltk = _nltk()

    def go(t):
        if isinstance(t, nltk.Tree):
            return (_label(t.label()),) + tuple(go(c) for c in t)
        if not isinstance(t, str):
            raise InputError(f"tree leaf {t!r} is not a string"[:200])
        return t
    if not isinstance(tree, nltk.Tree):
        raise InputError(f"expected an nltk.Tree, got {type(tree).__name__}")
    return go(tree)


def _label(label) -> str:
    name = label.symbol() if hasattr(label, "symbol") else label
    if not isinstance(name, str):
        raise InputError(f"tree label {name!r} is not a string")
    return name
