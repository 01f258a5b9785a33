"""A grammar restricted to one sentence's words: the rules that can take part in a parse.

A rule can occur in a derivation of a sentence w only if every terminal on its right-hand
side occurs in w and every nonterminal on its right-hand side is *productive* over w's
words (derives some string of them).  :func:`sentence_grammar` keeps exactly those rules:
the productive set is the least fixed point of

    P = { A : some rule A → X₁…X_m has every X_i ∈ P ∪ words(w) },

computed by the usual work-list algorithm (each rule is revisited once per nonterminal on
its right-hand side: O(Σ_r |rhs_r|)).  The partition function, the posterior over trees
and every sampled tree of w are unchanged (the removed rules have zero inside mass on w),
while the chart, whose cost is linear in the number of nonterminals and binary rules,
shrinks; for a grammar of lexicalised fragments (a TSG's transform, Cohn & Blunsom 2010
Table 1) it shrinks by orders of magnitude.
"""

from __future__ import annotations

from collections import defaultdict

from strgm.errors import GrammarError
from strgm.grammars.cfg import Grammar

__all__ = ["sentence_grammar"]


def _productive(grammar: Grammar, words: set) -> set:
    nts = grammar.nt_index
    waiting = []  # per rule: number of right-hand nonterminals not yet known productive
    users = defaultdict(list)
    agenda = []
    productive: set = set()
    for i, r in enumerate(grammar.rules):
        if any(x not in nts and x not in words for x in r.rhs):
            waiting.append(-1)  # a terminal absent from the sentence: never usable
            continue
        need = [x for x in set(r.rhs) if x in nts]
        waiting.append(len(need))
        for x in need:
            users[x].append(i)
        if not need:
            agenda.append(r.lhs)
    while agenda:
        a = agenda.pop()
        if a in productive:
            continue
        productive.add(a)
        for i in users.get(a, ()):
            waiting[i] -= 1
            if waiting[i] == 0:
                agenda.append(grammar.rules[i].lhs)
    return productive


def sentence_grammar(grammar: Grammar, words) -> Grammar | None:
    """The rules of ``grammar`` usable in a parse of the sentence ``words`` (see the module
    docstring), as a new :class:`Grammar` with the same start symbol; None when the start
    symbol derives no string of those words (the sentence has no parse)."""
    words = set(words)
    prod = _productive(grammar, words)
    if grammar.start not in prod:
        return None
    nts = grammar.nt_index
    keep = [r for r in grammar.rules
            if r.lhs in prod and all(x in prod if x in nts else x in words for x in r.rhs)]
    try:
        return Grammar(keep, start=grammar.start,
                       default_pseudocount=grammar.default_pseudocount)
    except GrammarError as e:  # pragma: no cover - the kept rules are a valid subset
        raise GrammarError(f"restricting the grammar to a sentence failed: {e}") from None
