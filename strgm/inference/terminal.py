"""Which factor-to-variable messages can change the beliefs that decide convergence.

A message μ_{F→V} reaches the rest of the graph only through V's messages to its other
factors G, and from there through G's messages to its other latent variables U. So
μ_{F→V} is *needed* during the sweeps when V is tracked (its belief is compared between
iterations, :mod:`strgm.inference.schedule`) or when some μ_{G→U}, G ∋ V, G ≠ F, U ≠ V
latent, is needed; the needed set is the least fixed point of that rule, found by one
breadth-first pass over the messages backwards along their dependencies.

Every other message to a latent variable is *terminal*: whatever it is, no tracked
belief and no needed message depends on it (a needed message depending on a terminal
μ_{G→U} would make μ_{G→U} needed by the rule above). Recomputing it in every sweep is
wasted work; the scheduler sends it once, after the last sweep, from the final incoming
messages. Examples: the message to a latent leaf (a held-out word's surface, degree 1),
and the concatenation's message to a word's underlying form when the word's surface is
observed (the form's only other factor, the phonology, sends nothing but to that
observed surface) — computed in every forward sweep, it was needed only by the E-step of
EM, which reads it after inference.

Terminal messages may depend on each other (the message to a held-out surface depends on
the one to its underlying form); they are sent in a topological order of those
dependencies. Messages on a cycle of terminal dependencies (possible only on loops of
untracked variables) are counted as needed instead, so that the sweeps iterate them.

Cost: O(Σ_F |F|²·deg) set operations once per run, before the first sweep.
"""

from __future__ import annotations

from collections import deque

import networkx as nx

from strgm.graph import FactorGraph

__all__ = ["terminal_messages"]


def _inputs(graph: FactorGraph, fname: str, v: str) -> list[tuple[str, str]]:
    """The messages μ_{G→U} that μ_{F→V} is computed from (U ∈ F latent, U ≠ V; G ∋ U,
    G ≠ F)."""
    out = []
    for u in graph.factors[fname].variables:
        if u == v or graph.variables[u].is_observed:
            continue
        out.extend((g, u) for g in graph.factors_of(u) if g != fname)
    return out


def _needed(graph: FactorGraph, seeds: set) -> set:
    """The closure of ``seeds`` under "μ_{F→V} needed ⇒ its inputs needed"."""
    needed, todo = set(seeds), deque(seeds)
    while todo:
        for m in _inputs(graph, *todo.popleft()):
            if m not in needed:
                needed.add(m)
                todo.append(m)
    return needed


def terminal_messages(graph: FactorGraph, tracked) -> list[tuple[str, str]]:
    """The terminal messages (factor, variable) of ``graph`` given the ``tracked``
    variables (module docstring), in an order in which each comes after the terminal
    messages it is computed from."""
    tracked = set(tracked)
    every = {(f, v) for v in graph.latent for f in graph.factors_of(v)}
    needed = _needed(graph, {(f, v) for f, v in every if v in tracked})
    while True:
        rest = every - needed
        deps = nx.DiGraph()
        deps.add_nodes_from(rest)
        deps.add_edges_from((m, t) for t in rest for m in _inputs(graph, *t) if m in rest)
        # (no message is computed from itself: μ_{F→V}'s inputs come from factors G ≠ F)
        cyclic = {m for c in nx.strongly_connected_components(deps) if len(c) > 1
                  for m in c}
        if not cyclic:
            return list(nx.lexicographical_topological_sort(deps))
        needed = _needed(graph, needed | cyclic)
