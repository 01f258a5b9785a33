"""FactorGraph: string-valued variables joined by finite-state factors (networkx below).

Variables are latent or observed (an observation is a label string). Factors are the
types of :mod:`strgm.factors`. The graph is a bipartite ``networkx.Graph`` whose nodes
are ``("var", name)`` and ``("factor", name)``; :meth:`FactorGraph.order` gives the
approximate topological order used by forward/backward sweeps (PEP §4.4).

Building a graph uses ``add_*`` methods on a fresh graph; operations on a finished graph
(:meth:`observe`, :meth:`hide`) return new graphs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import networkx as nx
import pynini

from strgm import display
from fst_factors.alphabet import Alphabet
from strgm.errors import GraphError
from strgm.factors import BinaryFactor, ConcatFactor, Factor, UnaryFactor, factor_builder
from fst_factors.transducers.relabel import to_alphabet


@dataclass(frozen=True)
class Variable:
    """A string variable. ``observed`` is its label string when observed, else None."""

    name: str
    observed: Optional[tuple[int, ...]] = None

    @property
    def is_observed(self) -> bool:
        return self.observed is not None


class FactorGraph:
    """A factor graph over strings on one alphabet.

    >>> import strgm
    >>> import fst_factors.transducers as ff
    >>> g = strgm.FactorGraph(strgm.Alphabet("ab"))
    >>> g.add_variable("M"); g.add_variable("S", observed="ab")
    >>> g.add_unary("prior", "M", ff.geometric_unigram_prior(2))
    >>> g.add_binary("edit", "M", "S", ff.edit_transducer(2))
    >>> sorted(g.variables), g.degree("M")
    (['M', 'S'], 2)
    """

    def __init__(self, alphabet: Alphabet):
        self.alphabet = alphabet
        self.variables: dict[str, Variable] = {}
        self.factors: dict[str, Factor] = {}
        self._g = nx.Graph()

    def __repr__(self) -> str:
        return (f"FactorGraph(variables={len(self.variables)}, latent={len(self.latent)}, "
                f"factors={len(self.factors)}, segments={self.alphabet.num_segments})")

    # --- building ------------------------------------------------------------------
    def add_variable(self, name: str, observed: Optional[str | Sequence[int]] = None) -> None:
        """Add a variable; ``observed`` is a word (segmented with the alphabet) or labels."""
        if name in self.variables:
            raise GraphError(f"variable {name!r} already exists")
        obs = self._encode(name, observed) if observed is not None else None
        self.variables[name] = Variable(name, obs)
        self._g.add_node(("var", name))

    def _encode(self, name: str, value) -> tuple[int, ...]:
        if isinstance(value, str):
            return self.alphabet.encode(value, where=f"observation of variable {name!r}")
        labels = tuple(int(a) for a in value)
        for a in labels:
            if not 1 <= a <= self.alphabet.size:
                raise GraphError(f"variable {name!r}: label {a} outside the alphabet")
        return labels

    def add_factor(self, factor: Factor) -> None:
        """Add a factor built elsewhere (a :class:`~strgm.factors.UnaryFactor`,
        :class:`~strgm.factors.BinaryFactor`, :class:`~strgm.factors.ConcatFactor` …),
        whose machines are already log64 over this graph's alphabet labels, as is; its
        variables must exist."""
        if not isinstance(factor, Factor):
            raise GraphError(f"expected a Factor, got {type(factor).__name__}")
        self._add_factor(factor)

    def _add_factor(self, f: Factor) -> None:
        if f.name in self.factors:
            raise GraphError(f"factor {f.name!r} already exists")
        vs = f.variables
        if len(set(vs)) != len(vs):
            raise GraphError(f"factor {f.name!r} names a variable twice: {vs}")
        for v in vs:
            if v not in self.variables:
                raise GraphError(f"factor {f.name!r} refers to unknown variable {v!r}")
        self.factors[f.name] = f
        self._g.add_node(("factor", f.name))
        for v in vs:
            self._g.add_edge(("factor", f.name), ("var", v))

    def _as_factor_fst(self, name: str, fst: pynini.Fst, labels: str,
                       symbols: Optional[pynini.SymbolTable]) -> pynini.Fst:
        """``fst`` as a log64 machine over this graph's alphabet labels (a copy)."""
        if not isinstance(fst, pynini.Fst):
            raise GraphError(f"factor {name!r}: expected a pynini.Fst, got {type(fst).__name__}")
        return to_alphabet(fst, self.alphabet, labels=labels, symbols=symbols,
                           where=f"factor {name!r}")

    def add_unary(self, name: str, var: str, fst: pynini.Fst, *, labels: str = "auto",
                  symbols: Optional[pynini.SymbolTable] = None) -> None:
        """A weighted acceptor on ``var`` (e.g. a prior). Any ``pynini.Fst``: its weights
        become log64 and its labels the alphabet's, by symbol table (the FST's, or
        ``symbols``), by byte/UTF-8 code point, or as they are
        (:func:`fst_factors.transducers.relabel.to_alphabet`; ``labels`` picks the way)."""
        fst = self._as_factor_fst(name, fst, labels, symbols)
        self._add_factor(UnaryFactor(name, var=var, fst=pynini.arcsort(fst, "ilabel")))

    def add_binary(self, name: str, input_var: str, output_var: str, fst: pynini.Fst, *,
                   labels: str = "auto",
                   symbols: Optional[pynini.SymbolTable] = None) -> None:
        """A weighted transducer from ``input_var`` to ``output_var``; ``fst``,
        ``labels`` and ``symbols`` as in :meth:`add_unary`."""
        fst = self._as_factor_fst(name, fst, labels, symbols)
        self._add_factor(BinaryFactor(name, input_var=input_var, output_var=output_var,
                                      fst=fst))

    def add_concat(self, name: str, parts: Sequence[str], whole: str,
                   boundary: bool = False) -> None:
        """whole = parts[0] · b · parts[1] ··· (b the alphabet's boundary if ``boundary``)."""
        if not parts:
            raise GraphError(f"concatenation factor {name!r} needs at least one part")
        b = None
        if boundary:
            if self.alphabet.boundary_label is None:
                raise GraphError(f"factor {name!r} wants a boundary but the alphabet has none")
            b = self.alphabet.boundary_label
        self._add_factor(ConcatFactor(name, parts=tuple(parts), whole=whole, boundary_label=b))

    def add_grammar(self, name: str, var: str, grammar, *, inference: str = "exact",
                    **options) -> None:
        """A grammar factor F(v) = P_G(v) on ``var``: ``grammar`` is a model whose layer
        registered a factor builder (:func:`strgm.factors.register_factor_builder`) — a
        :class:`strgm.grammars.cfg.Grammar` (a PCFG), or a trained TSG
        (:class:`strgm.grammars.tsg.model_file.TSGModel`, through its PCFG transform,
        :mod:`strgm.grammars.tsg.graph_factor`). Under EP/PEP its message is a moment
        oracle: exact moments on the Bar-Hillel intersection with the cavity
        (``inference="exact"``) or importance-sampled ones (``"sample"``), never an
        enumeration of strings; ``options`` (``estimator="em"|"vb"|"cvb"`` to learn the rule
        probabilities in the graph, ``params`` to share them, ``max_len``, ``n_samples``,
        ``seed``) are described at :func:`strgm.grammars.factor.grammar_factor`."""
        build = factor_builder(grammar)
        if build is None:
            raise GraphError(f"factor {name!r}: expected a grammar (strgm.grammars.Grammar), "
                             f"got {type(grammar).__name__}")
        if var not in self.variables:
            raise GraphError(f"factor {name!r} refers to unknown variable {var!r}")
        self._add_factor(build(grammar, name, var, self.alphabet, inference=inference,
                               **options))

    def add_fst_file(self, name: str, path: str, input_var: str,
                     output_var: Optional[str] = None, labels: str = "auto") -> None:
        """Load an OpenFst file as a factor: unary if ``output_var`` is None; its labels
        are mapped as in :meth:`add_unary`."""
        from fst_factors.transducers.loading import load_fst_factor

        fst = load_fst_factor(path, self.alphabet, labels=labels)
        if output_var is None:
            self.add_unary(name, input_var, pynini.project(fst, "input"), labels="alphabet")
        else:
            self.add_binary(name, input_var, output_var, fst, labels="alphabet")

    # --- derived graphs -------------------------------------------------------------
    def observe(self, values: dict) -> "FactorGraph":
        """A new graph with the given variables observed (name -> word or labels)."""
        g = copy.copy(self)
        g.variables = dict(self.variables)
        for name, value in values.items():
            if name not in self.variables:
                raise GraphError(f"cannot observe unknown variable {name!r}")
            g.variables[name] = Variable(name, self._encode(name, value))
        return g

    def hide(self, names: Iterable[str]) -> "FactorGraph":
        """A new graph in which the named variables are latent."""
        g = copy.copy(self)
        g.variables = dict(self.variables)
        for name in names:
            if name not in self.variables:
                raise GraphError(f"cannot hide unknown variable {name!r}")
            g.variables[name] = Variable(name)
        return g

    # --- queries -------------------------------------------------------------------
    def neighbours(self, node_name: str, kind: str = "var") -> list[str]:
        other = "factor" if kind == "var" else "var"
        return [n for k, n in self._g.neighbors((kind, node_name)) if k == other]

    def factors_of(self, var: str) -> list[str]:
        return self.neighbours(var, "var")

    def degree(self, var: str) -> int:
        return self._g.degree(("var", var))

    @property
    def latent(self) -> list[str]:
        return [v for v, x in self.variables.items() if not x.is_observed]

    def is_acyclic(self) -> bool:
        """True when the (undirected) factor graph is a forest: BP is then exact."""
        return nx.is_forest(self._g)

    def validate(self) -> None:
        """Raise :class:`GraphError` on problems inference cannot recover from."""
        for v, x in self.variables.items():
            if self._g.degree(("var", v)) == 0:
                raise GraphError(f"variable {v!r} is attached to no factor")
        if not self.variables:
            raise GraphError("the factor graph has no variables")

    def _directed(self) -> nx.DiGraph:
        d = nx.DiGraph()
        d.add_nodes_from(self._g.nodes)
        for f in self.factors.values():
            fn = ("factor", f.name)
            if isinstance(f, UnaryFactor):
                d.add_edge(fn, ("var", f.var))
            elif isinstance(f, BinaryFactor):
                d.add_edge(("var", f.input_var), fn)
                d.add_edge(fn, ("var", f.output_var))
            elif isinstance(f, ConcatFactor):
                for p in f.parts:
                    d.add_edge(("var", p), fn)
                d.add_edge(fn, ("var", f.whole))
            else:  # generic factors: first variable generates the rest
                vs = f.variables
                d.add_edge(("var", vs[0]), fn)
                for v in vs[1:]:
                    d.add_edge(fn, ("var", v))
        return d

    def order(self) -> list[tuple[str, str]]:
        """Approximate topological order of all nodes (generative direction).

        Exact when the directed version (prior → variable, input → transducer → output,
        parts → concatenation → whole) is acyclic; otherwise strongly connected components
        are ordered topologically and their members by name.
        """
        d = self._directed()
        cond = nx.condensation(d)
        out = []
        for c in nx.lexicographical_topological_sort(
                cond, key=lambda c: min(cond.nodes[c]["members"])):
            out.extend(sorted(cond.nodes[c]["members"]))
        return out

    def to_dot(self) -> str:
        """Graphviz dot text: ellipses are variables (grey when observed), boxes factors.
        A paradigm's graph (factors of two variables joining a UR to a surface form) is
        grouped by morpheme and word (:func:`_dot_groups`): a cluster per stem with a
        column per word, the affixes in a cluster on top, the stems' clusters in rows,
        so that the picture keeps roughly a page's shape instead of one long strip."""
        groups = _stem_words(self)
        lines = ["graph strgm {", "  node [fontname=Helvetica];"] + ([GRID_STYLE] if groups
                                                                    else [])
        for v, x in self.variables.items():
            label = v
            style = ""
            if x.is_observed:
                label += "\\n" + self.alphabet.join(x.observed).replace('"', '\\"')
                style = ", style=filled, fillcolor=lightgrey"
            lines.append(f'  "v:{v}" [label="{label}", shape=ellipse{style}];')
        free = " [constraint=false]" if groups else ""  # the groups set the ranks
        for f in self.factors.values():
            short = f.name.partition(":")[0] if groups else f"{f.name}\\n({f.kind})"
            lines.append(f'  "f:{f.name}" [label="{short}", shape=box];')
            for v in f.variables:
                lines.append(f'  "f:{f.name}" -- "v:{v}"{free};')
        lines.extend(_dot_groups(self, groups) if groups else ())
        lines.append("}")
        return "\n".join(lines) + "\n"

    # --- notebook display (strgm.display) ---------------------------------------------
    def _repr_svg_(self) -> Optional[str]:
        """The graph laid out by Graphviz (``dot -Tsvg`` on :meth:`to_dot`, with a
        timeout), or None when ``dot`` is not on PATH or fails: the notebook then falls
        back to :meth:`_repr_html_`. The last picture is kept for the same dot text."""
        key = (self.to_dot(), display.has_program("dot"))
        cached = getattr(self, "_svg_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, display.dot_to_svg(key[0]) if key[1] else None)
            self._svg_cache = cached
        return cached[1]

    def _repr_html_(self) -> Optional[str]:
        """A summary table (variables with their observations and degrees, factors with
        their kinds and variables; at most ``display.MAX_ROWS`` rows each), or None when
        :meth:`_repr_svg_` has a picture: notebook front ends prefer HTML to SVG, so
        returning both would hide the picture."""
        if self._repr_svg_() is not None:
            return None
        cap = display.MAX_ROWS
        names = list(self.variables)
        vrows = [(v, display.shown(self.alphabet.join(x.observed)) if x.is_observed
                  else "latent", self.degree(v))
                 for v, x in ((v, self.variables[v]) for v in names[:cap])]
        frows = [(f.name, f.kind, ", ".join(f.variables))
                 for f in list(self.factors.values())[:cap]]
        n_obs = sum(x.is_observed for x in self.variables.values())
        head = display.facts([("variables", len(names)), ("observed", n_obs),
                              ("factors", len(self.factors)),
                              ("a tree (BP exact)", "yes" if self.is_acyclic() else "no"),
                              ("picture", "Graphviz's dot failed on this graph"
                               if display.has_program("dot") else "install Graphviz (the "
                               "dot program: apt/brew/conda install graphviz) to draw it")])
        return display.card(
            "FactorGraph", head,
            display.table(["variable", "observed", "degree"], vrows,
                          more=len(names) - len(vrows), more_what="variables"),
            display.table(["factor", "kind", "variables"], frows,
                          more=len(self.factors) - len(frows), more_what="factors"))


#: rows of a dot grid: at most this many word columns side by side (a page's width)
DOT_COLUMNS = 14
#: the grid's compact style: straight edges, small nodes, ranks close together
GRID_STYLE = ('  graph [splines=line, nodesep=0.08, ranksep=0.25]; node [fontsize=10, '
              'height=0.3, margin="0.04,0.02"]; edge [color=grey50];')


def _stem_words(graph: FactorGraph) -> dict:
    """{stem variable: [(concat factor or None, word UR or None, phonology factor,
    surface variable)]} of a paradigm's graph, or {} when a factor of two variables is
    not a UR–surface pair (then the graph is not grouped)."""
    makes = {f.variables[-1]: f for f in graph.factors.values() if f.kind == "concat"}
    groups: dict = {}
    for f in graph.factors.values():
        if f.kind != "binary":
            continue
        u, s = f.variables[0], f.variables[-1]
        concat = makes.get(u)
        stem = concat.variables[0] if concat is not None else u
        if graph.degree(s) != 1 or stem == s:
            return {}
        groups.setdefault(stem, []).append(
            (concat.name if concat else None, u if concat else None, f.name, s))
    return groups


def _q(kind: str, name: str) -> str:
    return f'"{kind[0]}:{name}"'


def _dot_groups(graph: FactorGraph, groups: dict) -> list:
    """The dot lines that lay out a paradigm's graph as a grid: a cluster per stem (its
    prior and variable on top, then per word a column: concatenation, the word's UR,
    phonology, surface), at most :data:`DOT_COLUMNS` word columns to a row of clusters,
    each row below the last, the other variables (affixes) in a cluster on top.
    Invisible edges give the ranks; the real edges do not constrain them."""
    priors = {f.variables[0]: f.name for f in graph.factors.values() if f.kind == "unary"}
    top = {v: _q("factor", priors[v]) if v in priors else _q("var", v)
           for v in graph.variables}
    invisible, lines, rows = [], [], [[]]
    for stem, words in groups.items():
        if rows[-1] and sum(len(groups[s]) for s in rows[-1]) + len(words) > DOT_COLUMNS:
            rows.append([])
        rows[-1].append(stem)
    placed = {w[i] for ws in groups.values() for w in ws for i in (1, 3)} | set(groups)
    above = [v for v in graph.variables if v not in placed]  # affixes
    lines.append(_cluster("affixes", above, priors, invisible))
    for r, row in enumerate(rows):
        for i, stem in enumerate(row):
            members = []
            for concat, u, phon, s in groups[stem]:
                chain = ([_q("factor", concat), _q("var", u)] if concat else []) + \
                    [_q("factor", phon), _q("var", s)]
                members += chain
                invisible.append(f"{_q('var', stem)} -- {chain[0]} [minlen={1 if concat else 3}]")
                invisible += [f"{a} -- {b}" for a, b in zip(chain, chain[1:])]
            last = [groups[rows[r - 1][min(i, len(rows[r - 1]) - 1)]][0][3]] if r else above
            invisible += [f"{_q('var', v)} -- {top[stem]}" for v in last]
            lines.append(_cluster(stem, [stem], priors, invisible, members))
    lines.append(f'  {{ edge [style=invis]; {"; ".join(invisible)}; }}')
    return lines


def _cluster(label: str, variables: list, priors: dict, invisible: list,
             members=()) -> str:
    """A dot cluster of ``variables`` (each below its prior) and ``members``."""
    nodes = []
    for v in variables:
        nodes += [_q("factor", priors[v]), _q("var", v)] if v in priors else [_q("var", v)]
        if v in priors:
            invisible.append(f"{nodes[-2]} -- {nodes[-1]}")
    nodes += members
    return (f'  subgraph "cluster_{label}" {{ label="{label}"; style=rounded; color=grey60;'
            f' {"; ".join(nodes)}; }}' if nodes else "")
