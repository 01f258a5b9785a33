"""Context-free grammars: the user's rules and the compiled (binarised) form the charts use.

A user grammar (:class:`Grammar`) holds rules ``A -> X1 ... Xm`` of any arity m >= 1 with a
non-negative weight and an optional Dirichlet pseudocount α_r (Johnson et al. 2007, "Dirichlet
priors for PCFGs").  A symbol is a nonterminal iff it is the left-hand side of some rule;
every other symbol is a terminal.  Empty right-hand sides (ε-rules) are rejected.

The charts never see the user grammar.  :func:`compile_grammar` turns it into *events* of
three kinds, each carrying the index of the user rule whose probability it bears (or -1 for
an event with fixed weight 1 introduced by the transform):

* lexical events ``X -> t1 ... tm`` (all-terminal right-hand side, any length m >= 1): they
  are anchored on a span directly, so the substring grammars of the morphology experiment
  need no extra nonterminals;
* unary events ``A -> B`` between nonterminals: closed per chart cell by the geometric
  series U* = (I - U)^{-1} (exists iff the spectral radius of U is < 1);
* binary events ``A -> B C``.  Longer rules are left-factored with *shared* prefix symbols
  ``@<X1 X2>, @<X1 X2 X3>, ...`` (each with a single expansion of weight 1), and the user
  rule's weight sits on the top event ``A -> @<X1..X(m-1)> Xm``.  Terminals inside mixed or
  long right-hand sides are replaced by fresh preterminals ``'t -> t`` of weight 1.

Every compiled derivation corresponds to exactly one user derivation (the top event names
the rule, prefix symbols and preterminals expand deterministically), so partition functions,
rule posteriors and trees are exact; expected counts of user rules are the expected counts of
their top events.  Compilation is O(Σ_r |rhs_r|).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from strgm import display
from strgm.errors import GrammarError
from strgm.validate import check_float

__all__ = ["Rule", "Grammar", "CompiledGrammar", "compile_grammar", "normalise_per_lhs"]


@dataclass(frozen=True)
class Rule:
    """A rule ``lhs -> rhs`` with weight (≥ 0) and an optional Dirichlet pseudocount."""

    lhs: str
    rhs: tuple
    weight: float = 1.0
    pseudocount: float | None = None

    def __str__(self) -> str:
        return f"{self.lhs} --> {' '.join(self.rhs)}"


def normalise_per_lhs(values: np.ndarray, lhs: np.ndarray, n_lhs: int) -> np.ndarray:
    """θ_r = v_r / Σ_{r': lhs(r') = lhs(r)} v_r' (0 where a left-hand side has total 0)."""
    values = np.asarray(values, dtype=float)
    tot = np.bincount(lhs, weights=values, minlength=n_lhs)
    if not np.all(np.isfinite(tot)) and np.all(np.isfinite(values)):
        # finite weights whose sum overflows: divide each by its parent's largest first
        top = np.zeros(n_lhs)
        np.maximum.at(top, lhs, values)
        values = np.divide(values, top[lhs], out=np.zeros_like(values),
                           where=top[lhs] > 0)
        tot = np.bincount(lhs, weights=values, minlength=n_lhs)
    den = tot[lhs]
    out = np.zeros_like(values)
    ok = den > 0
    out[ok] = values[ok] / den[ok]
    return out


class Grammar:
    """A context-free grammar with rule weights and Dirichlet pseudocounts (immutable).

    ``rules[0].lhs`` is the start symbol unless ``start`` is given.  Arrays:
    ``weights`` (raw weights), ``lhs_index`` (index of each rule's lhs in ``nonterminals``).
    """

    def __init__(self, rules: Iterable[Rule], start: str | None = None,
                 default_pseudocount: float = 1.0):
        self.rules: tuple = tuple(rules)
        if not self.rules:
            raise GrammarError("a grammar needs at least one rule")
        seen: dict = {}
        for i, r in enumerate(self.rules):
            if len(r.rhs) == 0:
                raise GrammarError(f"rule {i} ({r.lhs} --> ) has an empty right-hand side; "
                                   "epsilon rules are not supported")
            if not np.isfinite(r.weight) or r.weight < 0:
                raise GrammarError(f"rule {i} ({r}) has invalid weight {r.weight!r}")
            if r.pseudocount is not None and not (np.isfinite(r.pseudocount)
                                                  and r.pseudocount > 0):
                raise GrammarError(f"rule {i} ({r}) has invalid pseudocount {r.pseudocount!r}")
            key = (r.lhs, tuple(r.rhs))
            if key in seen:
                raise GrammarError(f"rule {i} ({r}) duplicates rule {seen[key]}")
            seen[key] = i
        self.rule_index: dict = seen
        self.start: str = start if start is not None else self.rules[0].lhs
        nts: dict = {}
        for r in self.rules:
            nts.setdefault(r.lhs, len(nts))
        if self.start not in nts:
            raise GrammarError(f"start symbol {self.start!r} has no rules")
        self.nonterminals: tuple = tuple(nts)
        self.nt_index: dict = nts
        terms: dict = {}
        for r in self.rules:
            for x in r.rhs:
                if x not in nts:
                    terms.setdefault(x, len(terms))
        self.terminals: tuple = tuple(terms)
        self.lhs_index = np.array([nts[r.lhs] for r in self.rules], dtype=np.int64)
        self.weights = np.array([r.weight for r in self.rules], dtype=float)
        self.default_pseudocount = check_float("default_pseudocount", default_pseudocount,
                                               min=0, min_open=True)

    # -- derived quantities ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return (f"Grammar({len(self.rules)} rules, {len(self.nonterminals)} nonterminals, "
                f"{len(self.terminals)} terminals, start={self.start!r})")

    @property
    def n_lhs(self) -> int:
        return len(self.nonterminals)

    def probabilities(self) -> np.ndarray:
        """Weights normalised per left-hand side (θ of the PCFG)."""
        return normalise_per_lhs(self.weights, self.lhs_index, self.n_lhs)

    def pseudocounts(self, alpha: float | None = None) -> np.ndarray:
        """α_r: the rule's own pseudocount, else ``alpha``, else the grammar's default
        (``alpha`` must be finite and > 0: a Dirichlet with α ≤ 0 is no distribution)."""
        d = self.default_pseudocount if alpha is None else \
            check_float("alpha", alpha, min=0, min_open=True)
        return np.array([d if r.pseudocount is None else r.pseudocount for r in self.rules])

    def with_weights(self, weights: Sequence[float]) -> "Grammar":
        """A new grammar with the same rules and the given weights."""
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(self.rules),):
            raise GrammarError(f"expected {len(self.rules)} weights, got shape {w.shape}")
        return Grammar([Rule(r.lhs, r.rhs, float(x), r.pseudocount)
                        for r, x in zip(self.rules, w)], start=self.start,
                       default_pseudocount=self.default_pseudocount)

    def with_pseudocounts(self, alpha: Sequence[float] | float) -> "Grammar":
        """A new grammar whose rules carry the given Dirichlet pseudocounts."""
        a = np.broadcast_to(np.asarray(alpha, dtype=float), (len(self.rules),))
        return Grammar([Rule(r.lhs, r.rhs, r.weight, float(x))
                        for r, x in zip(self.rules, a)], start=self.start,
                       default_pseudocount=self.default_pseudocount)

    def is_terminal(self, sym: str) -> bool:
        return sym not in self.nt_index

    def _repr_html_(self, max_lhs: int = 5, max_rules: int = 5) -> str:
        """Notebook display: the counts, then the ``max_rules`` most probable rules (θ of
        :meth:`probabilities`) of the first ``max_lhs`` left-hand sides, start first."""
        theta = self.probabilities()
        lhs = [self.start] + [a for a in self.nonterminals if a != self.start][:max_lhs - 1]
        rows = []
        for a in lhs:
            idx = np.flatnonzero(self.lhs_index == self.nt_index[a])
            top = idx[np.argsort(-theta[idx], kind="stable")[:max_rules]]
            pairs = [(" ".join(self.rules[i].rhs), theta[i]) for i in top]
            rows += display.ranked_rows(pairs, first=(a, "→"))
            if len(idx) > len(top):
                rows.append((a, "→", f"… {len(idx) - len(top)} more rules", "", ""))
        head = display.facts([("start", self.start), ("nonterminals", self.n_lhs),
                              ("terminals", len(self.terminals)), ("rules", len(self.rules))])
        return display.card("Grammar", head, display.table(
            ["lhs", "", "rhs", "θ", ""], rows, more=self.n_lhs - len(lhs),
            more_what="left-hand sides"))


@dataclass
class CompiledGrammar:
    """Events over compiled nonterminals; see the module docstring.

    ``nts``: compiled nonterminal names (user nonterminals first, same order).
    ``bin_parent/left/right/rule``, ``un_parent/child/rule``: int arrays of events.
    ``lex``: dict from terminal tuple to list of (nt, lexical event index);
    ``lex_parent``, ``lex_rule``, ``lex_rhs``: per lexical event.
    """

    grammar: Grammar
    nts: list
    start: int
    bin_parent: np.ndarray
    bin_left: np.ndarray
    bin_right: np.ndarray
    bin_rule: np.ndarray
    un_parent: np.ndarray
    un_child: np.ndarray
    un_rule: np.ndarray
    lex_parent: np.ndarray
    lex_rule: np.ndarray
    lex_rhs: list
    lex: dict
    max_lex_len: int
    _cache: dict = field(default_factory=dict, repr=False)
    #: Memory limit of one chart in bytes (None: the chart module's default); set it with
    #: ``max_memory=`` on the estimators and samplers or ``--max-memory`` on the command line.
    max_chart_bytes: float | None = None

    @property
    def n_nts(self) -> int:
        return len(self.nts)

    def event_weights(self, theta: np.ndarray):
        """Per-event weights (bin, un, lex) from user-rule weights θ (fixed events get 1)."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (len(self.grammar.rules),):
            raise GrammarError(f"expected {len(self.grammar.rules)} rule weights, "
                               f"got shape {theta.shape}")

        def pick(rule):
            w = np.ones(len(rule))
            m = rule >= 0
            w[m] = theta[rule[m]]
            return w
        return pick(self.bin_rule), pick(self.un_rule), pick(self.lex_rule)

    def lexical_entries(self, tokens: tuple):
        """Lexical matches of a sentence: dict width -> (starts, nts, events) int arrays.

        O(n · max_lex_len) dictionary look-ups, cached per distinct token tuple.
        """
        c = self._cache.setdefault("lex", {})
        hit = c.get(tokens)
        if hit is not None:
            return hit
        n = len(tokens)
        per: dict = {}
        for i in range(n):
            for m in range(1, min(self.max_lex_len, n - i) + 1):
                ents = self.lex.get(tokens[i:i + m])
                if ents:
                    lst = per.setdefault(m, ([], [], []))
                    for nt, ev in ents:
                        lst[0].append(i)
                        lst[1].append(nt)
                        lst[2].append(ev)
        out = {m: tuple(np.array(a, dtype=np.int64) for a in v) for m, v in per.items()}
        if len(c) < 200000:
            c[tokens] = out
        return out

    def user_rule_of_event(self, kind: str, ev: int) -> int:
        return int({"bin": self.bin_rule, "un": self.un_rule, "lex": self.lex_rule}[kind][ev])


class _Binariser:
    """Event lists of a compiled grammar under construction: compiled nonterminals, binary
    events (parent, left, right, rule), unary (parent, child, rule) and lexical
    (parent, rhs tuple, rule) events; rule −1 marks an event the compilation introduced."""

    def __init__(self, g: Grammar):
        self.g = g
        self.nts: list = list(g.nonterminals)
        self.idx: dict = dict(g.nt_index)
        self.bins: list = []
        self.uns: list = []
        self.lexs: list = []
        self.made: set = set()

    def nt(self, name: str) -> int:
        if name not in self.idx:
            self.idx[name] = len(self.nts)
            self.nts.append(name)
        return self.idx[name]

    def fresh(self, name: str) -> str:
        while name in self.g.nt_index:  # never collide with a user nonterminal
            name = name[0] + name
        return name

    def sym(self, x: str) -> int:
        """A nonterminal as itself; a terminal through its preterminal 'x → x."""
        if x in self.g.nt_index:
            return self.g.nt_index[x]
        name = self.fresh("'" + x)
        j = self.nt(name)
        if name not in self.made:
            self.made.add(name)
            self.lexs.append((j, (x,), -1))
        return j

    def prefix(self, items: tuple) -> int:
        """Compiled symbol deriving exactly the sequence ``items`` (length >= 2)."""
        name = self.fresh("@<" + " ".join(items) + ">")
        j = self.nt(name)
        if name not in self.made:
            self.made.add(name)
            if len(items) == 2:
                self.bins.append((j, self.sym(items[0]), self.sym(items[1]), -1))
            else:
                self.bins.append((j, self.prefix(items[:-1]), self.sym(items[-1]), -1))
        return j

    def add_rule(self, ri: int, r: Rule) -> None:
        a = self.g.nt_index[r.lhs]
        rhs = tuple(r.rhs)
        if all(x not in self.g.nt_index for x in rhs):
            self.lexs.append((a, rhs, ri))
        elif len(rhs) == 1:
            self.uns.append((a, self.g.nt_index[rhs[0]], ri))
        elif len(rhs) == 2:
            self.bins.append((a, self.sym(rhs[0]), self.sym(rhs[1]), ri))
        else:
            self.bins.append((a, self.prefix(rhs[:-1]), self.sym(rhs[-1]), ri))


def compile_grammar(g: Grammar) -> CompiledGrammar:
    """Binarise, introduce preterminals for embedded terminals, index events (see module)."""
    b = _Binariser(g)
    for ri, r in enumerate(g.rules):
        b.add_rule(ri, r)
    bins, uns, lexs = b.bins, b.uns, b.lexs

    def arr(rows, k):
        return np.array([x[k] for x in rows], dtype=np.int64)

    lex: dict = {}
    for e, (p, rhs, ri) in enumerate(lexs):
        lex.setdefault(rhs, []).append((p, e))
    return CompiledGrammar(
        grammar=g, nts=b.nts, start=g.nt_index[g.start],
        bin_parent=arr(bins, 0), bin_left=arr(bins, 1), bin_right=arr(bins, 2),
        bin_rule=arr(bins, 3),
        un_parent=arr(uns, 0), un_child=arr(uns, 1), un_rule=arr(uns, 2),
        lex_parent=arr(lexs, 0), lex_rule=arr(lexs, 2), lex_rhs=[x[1] for x in lexs],
        lex=lex, max_lex_len=max((len(x[1]) for x in lexs), default=1),
    )


def unbinarise(cg: CompiledGrammar, node) -> object:
    """Map a compiled tree ``(nt, start, end, children)`` / terminal leaf to a user tree.

    User trees are nested tuples ``(label, child, ...)`` with terminal strings as leaves.
    Prefix symbols are spliced into their parent, preterminals ``'t`` become the terminal.
    """
    if isinstance(node, str):
        return node
    label = cg.nts[node[0]]
    kids: list = []
    for c in node[3]:
        if isinstance(c, str):
            kids.append(c)
            continue
        cl = cg.nts[c[0]]
        if cl.startswith("@<") and c[0] >= len(cg.grammar.nonterminals):
            sub = unbinarise(cg, c)
            kids.extend(sub[1:])
        elif cl.startswith("'") and c[0] >= len(cg.grammar.nonterminals):
            kids.append(c[3][0])
        else:
            kids.append(unbinarise(cg, c))
    return (label,) + tuple(kids)


def tree_rules(g: Grammar, tree) -> list:
    """User rule indices of a user tree in preorder (its leftmost derivation)."""
    out: list = []

    def go(t):
        if isinstance(t, str):
            return
        rhs = tuple(c if isinstance(c, str) else c[0] for c in t[1:])
        key = (t[0], rhs)
        if key not in g.rule_index:
            raise GrammarError(f"tree uses a rule not in the grammar: {t[0]} --> {' '.join(rhs)}")
        out.append(g.rule_index[key])
        for c in t[1:]:
            go(c)
    go(tree)
    return out


def tree_yield(tree) -> tuple:
    if isinstance(tree, str):
        return (tree,)
    out: tuple = ()
    for c in tree[1:]:
        out += tree_yield(c)
    return out


def tree_to_str(tree) -> str:
    """Bracketed form ``(S (NP a) b)``."""
    if isinstance(tree, str):
        return tree
    return "(" + " ".join([tree[0]] + [tree_to_str(c) for c in tree[1:]]) + ")"
