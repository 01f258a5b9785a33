"""Belief propagation over strings: exact WFSA messages, and the pruned baseline.

Exact BP (PEP §2.2): μ_{V→F} = ⊙_{F'≠F} μ_{F'→V} (WFSA intersection), b_V = ⊙_F μ_{F→V}.
Exact on acyclic factor graphs after one forward and one backward sweep; messages can
grow multiplicatively with each intersection, hence the ``max_states`` guard.

Pruned BP (Cotterell, Peng & Eisner 2015; PEP §5): each latent variable's domain is
D_V = ∪_F k-best(μ_{F→V}) (k = 20), and the messages out of V are restricted to D_V:
μ_{V→F}(d) = Π_{F'≠F} μ_{F'→V}(d) for d ∈ D_V, a finite weighted set. Factor messages stay
full WFSAs; all scoring of D_V under them is one composition per message with a trie.
A variable with a single neighbour keeps its full (unpruned) message as belief.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from strgm.errors import MessageTooLargeError
from strgm.graph import FactorGraph
from strgm.inference.belief import Belief
from strgm.inference.schedule import observation_message
from strgm.wfsa.construct import empty_acceptor, sigma_star, weighted_strings
from strgm.wfsa.core import intersect, trim
from strgm.wfsa.measure import score_strings
from strgm.wfsa.paths import kbest


def intersect_all(fsts: list, max_states: int, what: str) -> pynini.Fst:
    """⊙ of acceptors, smallest first; raises MessageTooLargeError past ``max_states``."""
    fsts = sorted(fsts, key=lambda f: f.num_states())
    out = fsts[0]
    for f in fsts[1:]:
        out = pynini.arcsort(trim(intersect(out, f)), "ilabel")
        if out.num_states() > max_states:
            raise MessageTooLargeError(
                f"{what} has {out.num_states()} states (> max_states={max_states}). "
                "Use --method pruned (or raise max_states if you have the memory).")
    return out


class ExactSide:
    """Variable side of exact BP: stores μ_{F→V} and intersects on demand."""

    def __init__(self, graph: FactorGraph, max_states: int = 200_000):
        self.graph = graph
        self.max_states = max_states
        self.msgs: dict[str, dict[str, pynini.Fst]] = {v: {} for v in graph.variables}
        self._sigma = sigma_star(graph.alphabet.size)

    def start_iteration(self, iteration: int) -> None:
        pass

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        self.msgs[var][factor] = message

    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.variables[var].is_observed:
            return observation_message(self.graph, var)
        others = [m for g, m in self.msgs[var].items() if g != factor]
        if not others:
            return self._sigma
        return intersect_all(others, self.max_states, f"message {var!r} -> {factor!r}")

    def belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed:
            return Belief(var, observation_message(self.graph, var), self.graph.alphabet)
        ms = list(self.msgs[var].values())
        fst = intersect_all(ms, self.max_states, f"belief of {var!r}") if ms else self._sigma
        return Belief(var, fst, self.graph.alphabet)


class PrunedSide:
    """Variable side of pruned BP (see module docstring), with incremental caches."""

    def __init__(self, graph: FactorGraph, k: int = 20):
        self.graph = graph
        self.k = k
        self.msgs: dict[str, dict[str, pynini.Fst]] = {v: {} for v in graph.variables}
        self._kbest: dict[str, dict[str, list]] = {v: {} for v in graph.variables}
        self._scores: dict[str, dict[str, dict]] = {v: {} for v in graph.variables}
        self._sigma = sigma_star(graph.alphabet.size)

    def start_iteration(self, iteration: int) -> None:
        pass

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        self.msgs[var][factor] = message
        self._kbest[var][factor] = [s for s, _ in kbest(message, self.k)]
        self._scores[var][factor] = {}

    def domain(self, var: str) -> list[tuple[int, ...]]:
        """D_V = ∪_F k-best(μ_{F→V}), in a stable order."""
        d: dict = {}
        for f in self.msgs[var]:
            for s in self._kbest[var][f]:
                d[s] = None
        return list(d)

    def scores(self, var: str, dom: list) -> dict[str, np.ndarray]:
        """log μ_{F→V}(d) for every incoming F and d ∈ dom (cached per message)."""
        out = {}
        for f, m in self.msgs[var].items():
            cache = self._scores[var][f]
            missing = [s for s in dom if s not in cache]
            if missing:
                cache.update(zip(missing, score_strings(m, missing)))
            out[f] = np.array([cache[s] for s in dom])
        return out

    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.variables[var].is_observed:
            return observation_message(self.graph, var)
        others = [g for g in self.msgs[var] if g != factor]
        if not others:
            return self._sigma
        dom = self.domain(var)
        sc = self.scores(var, dom)
        total = np.sum([sc[g] for g in others], axis=0)
        keep = [(s, -t) for s, t in zip(dom, total) if t > -np.inf]
        if not keep:
            return empty_acceptor()
        return weighted_strings(keep)

    def belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed:
            return Belief(var, observation_message(self.graph, var), self.graph.alphabet)
        if len(self.msgs[var]) == 1:
            (m,) = self.msgs[var].values()
            return Belief(var, m, self.graph.alphabet)
        if not self.msgs[var]:
            return Belief(var, self._sigma, self.graph.alphabet)
        dom = self.domain(var)
        sc = self.scores(var, dom)
        total = np.sum(list(sc.values()), axis=0)
        keep = [(s, -t) for s, t in zip(dom, total) if t > -np.inf]
        fst = weighted_strings(keep) if keep else empty_acceptor()
        return Belief(var, fst, self.graph.alphabet)
