"""Belief propagation over strings: exact WFSA messages, and the pruned baseline.

Exact BP (PEP §2.2): μ_{V→F} = ⊙_{F'≠F} μ_{F'→V} (WFSA intersection), b_V = ⊙_F μ_{F→V}.
Exact on acyclic factor graphs after one forward and one backward sweep; messages can
grow multiplicatively with each intersection, hence the ``max_states`` guard.

Pruned BP (Cotterell, Peng & Eisner 2015; PEP §5): each latent variable's domain is
D_V = ∪_F k-best(μ_{F→V}) (k = 20), and the messages out of V are restricted to D_V:
μ_{V→F}(d) = Π_{F'≠F} μ_{F'→V}(d) for d ∈ D_V, a finite weighted set. Factor messages stay
full WFSAs; all scoring of D_V under them is one composition per message with a trie.
D_V is fixed when V is first visited in a sweep (as in the Cotterell et al. schedule), so a
variable of degree N costs O(N) compositions per sweep, not O(N²).

Pruning exists to keep *products* of messages tractable, so variables of degree ≤ 2 are
not pruned: a degree-2 variable forwards the other incoming message (rescaled, as exact
BP does: the relay of :class:`ExactSide`), and its belief is the exact intersection of its two messages. This matters for the word
underlying forms of the phonology model, which sit between one concatenation and one
phonology factor: pruning them to 20 strings drops correct URs whenever the (untrained,
copy-biased) phonology ties hundreds of one-edit variants.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError
from strgm.graph import FactorGraph
from strgm.inference.belief import Belief
from strgm.inference.side import VariableSide, observation_message
from fst_factors.wfsa import guard
from fst_factors.wfsa.construct import empty_acceptor, sigma_star, weighted_strings
from fst_factors.wfsa.operations import intersect
from fst_factors.wfsa.epsilon import trim
from fst_factors.wfsa.measure import normalise, score_strings
from fst_factors.wfsa.paths import kbest
from fst_factors.wfsa.core import arc_table
from fst_factors.wfsa.string_scores import COMPILED, LabelledArcs, labelled_arcs


def intersect_all(fsts: list, max_states: int, what: str,
                  num_labels: Optional[int] = None) -> pynini.Fst:
    """⊙ of acceptors, smallest first. Each intersection is bounded before it is built
    (:mod:`fst_factors.wfsa.guard`) and each result checked against ``max_states`` (and
    ``max_states·(num_labels + 1)`` arcs) before it is trimmed: MessageTooLargeError
    naming ``what``."""
    fsts = sorted(fsts, key=lambda f: f.num_states())
    out = fsts[0]
    with guard.naming(what):
        for f in fsts[1:]:
            out = guard.check_result(intersect(out, f), what, max_states, num_labels)
            out = pynini.arcsort(trim(out, what), "ilabel")
    return out


def rescale(fst: pynini.Fst) -> pynini.Fst:
    """fst / Z when Z is finite and positive (messages are defined up to scale; this keeps
    log-weights O(1)); the message unchanged when it is divergent or empty."""
    try:
        out, _ = normalise(fst)
        return out
    except (DivergenceError, ValueError):
        return fst


def same_message(a: Optional[pynini.Fst], b: pynini.Fst) -> bool:
    """True when two messages are identical machines with weights equal to 1e-9."""
    return a is b or (a is not None and a.num_states() == b.num_states()
                      and pynini.equal(a, b, delta=1e-9))


class ExactSide(VariableSide):
    """Variable side of exact BP: stores μ_{F→V}, intersects on demand, and counts the
    changes of V's incoming messages (``version``) so that unchanged messages are not
    recomputed. At a variable of degree ≤ 2 this *is* the relay every method uses: the
    message to one factor is the other factor's message (rescaled), the belief the exact
    product of the two (pruned BP inherits it; EP keeps one for its relayed variables)."""

    tracks_versions = True

    def __init__(self, graph: FactorGraph, max_states: int = 200_000):
        super().__init__(graph)
        self.max_states = max_states
        self.msgs: dict[str, dict[str, pynini.Fst]] = {v: {} for v in graph.variables}
        self._versions = {v: 0 for v in graph.variables}
        self._out_cache: dict[tuple[str, str], tuple[int, pynini.Fst]] = {}
        self._belief_cache: dict[str, tuple[int, Belief]] = {}
        self._sigma = sigma_star(graph.alphabet.size)
        self.limits = guard.current()  # the budget of the run, kept for later queries

    @property
    def settings(self) -> dict:
        return {"max_states": self.max_states}

    def version(self, var: str) -> int:
        return self._versions[var]

    def queries_only(self, var: str) -> bool:
        """Beliefs are intersections of the stored messages: any WFSA will do."""
        return True

    def belief(self, var: str) -> Belief:
        """b_V, cached until one of V's incoming messages changes."""
        hit = self._belief_cache.get(var)
        if hit is not None and hit[0] == self._versions[var]:
            return hit[1]
        with guard.limits(use=self.limits), guard.naming(f"belief of variable {var!r}"):
            b = self._belief(var)
        self._belief_cache[var] = (self._versions[var], b)
        return b

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        self._store(var, factor, message)

    def _store(self, var: str, factor: str, message: pynini.Fst) -> bool:
        if same_message(self.msgs[var].get(factor), message):
            return False
        self.msgs[var][factor] = message
        self._versions[var] += 1
        return True

    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.variables[var].is_observed:
            return observation_message(self.graph, var)
        hit = self._out_cache.get((var, factor))
        if hit is not None and hit[0] == self._versions[var]:
            return hit[1]
        out = self._outgoing(var, factor)
        self._out_cache[(var, factor)] = (self._versions[var], out)
        return out

    def _outgoing(self, var: str, factor: str) -> pynini.Fst:
        others = [m for g, m in self.msgs[var].items() if g != factor]
        if not others:
            return self._sigma
        out = intersect_all(others, self.max_states,
                            f"message from variable {var!r} to factor {factor!r}",
                            self.graph.alphabet.size)
        return rescale(out)

    def _belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed:
            return Belief(var, observation_message(self.graph, var), self.graph.alphabet)
        ms = list(self.msgs[var].values())
        fst = intersect_all(ms, self.max_states, f"belief of variable {var!r}",
                            self.graph.alphabet.size) if ms else self._sigma
        return Belief(var, fst, self.graph.alphabet)


class PrunedSide(ExactSide):
    """Variable side of pruned BP (see module docstring), with incremental caches."""

    def __init__(self, graph: FactorGraph, k: int = 20, max_states: int = 200_000):
        super().__init__(graph, max_states)
        self.k = k
        self._kbest: dict[str, dict[str, list]] = {v: {} for v in graph.variables}
        self._scores: dict[str, dict[str, dict]] = {v: {} for v in graph.variables}
        self._arcs: dict[str, dict[str, object]] = {v: {} for v in graph.variables}
        self._domains: dict[str, tuple[int, list]] = {}
        self._sweep = 0

    @property
    def settings(self) -> dict:
        return {"kbest": self.k}

    def start_sweep(self) -> None:
        self._sweep += 1

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        if self._store(var, factor, message):
            self._kbest[var].pop(factor, None)
            self._scores[var][factor] = {}
            self._arcs[var].pop(factor, None)

    def domain(self, var: str) -> list[tuple[int, ...]]:
        """D_V = ∪_F k-best(μ_{F→V}) (k-best lists cached per message), recomputed at the
        first visit of V in each sweep, or when a message arrives from a new factor."""
        hit = self._domains.get(var)
        if hit is not None and hit[0] == self._sweep and hit[2] == len(self.msgs[var]):
            return hit[1]
        d: dict = {}
        cache = self._kbest[var]
        for f, m in self.msgs[var].items():
            if f not in cache:
                cache[f] = [s for s, _ in kbest(m, self.k, arcs=self._labelled(var, f))]
            for s in cache[f]:
                d[s] = None
        dom = list(d)
        self._domains[var] = (self._sweep, dom, len(self.msgs[var]))
        return dom

    def scores(self, var: str, dom: list) -> dict[str, np.ndarray]:
        """log μ_{F→V}(d) for every incoming F and d ∈ dom (cached per message)."""
        out = {}
        for f, m in self.msgs[var].items():
            cache = self._scores[var][f]
            missing = [s for s in dom if s not in cache]
            if missing:
                cache.update(zip(missing, score_strings(m, missing,
                                                        self._labelled(var, f))))
            out[f] = np.array([cache[s] for s in dom])
        return out

    def _labelled(self, var: str, factor: str) -> Optional[LabelledArcs]:
        """The arcs of the current μ_{F→V} for scoring strings, read once per message
        (right after the factor built it, usually without serialising: :mod:`strgm.
        wfsa.known_tables`); None where the compiled walk does not apply."""
        cache = self._arcs[var]
        if factor not in cache:
            m = self.msgs[var][factor]
            cache[factor] = labelled_arcs(arc_table(m)) \
                if COMPILED and m.num_states() else None
        return cache[factor]

    def _outgoing(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.degree(var) <= 2:  # the exact relay, unpruned
            return super()._outgoing(var, factor)
        others = [g for g in self.msgs[var] if g != factor]
        if not others:
            return self._sigma
        dom = self.domain(var)
        sc = self.scores(var, dom)
        total = np.sum([sc[g] for g in others], axis=0)
        finite = total > -np.inf
        if not finite.any():
            return empty_acceptor()
        # Messages are defined up to scale; normalising keeps log-weights O(1) instead of
        # accumulating the scale of every product (which loses precision after a sweep).
        total = total - np.logaddexp.reduce(total[finite])
        return weighted_strings([(s, -t) for s, t, ok in zip(dom, total, finite) if ok])

    def _belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed or not self.msgs[var] or \
                self.graph.degree(var) <= 2:
            return super()._belief(var)
        dom = self.domain(var)
        sc = self.scores(var, dom)
        total = np.sum(list(sc.values()), axis=0)
        keep = [(s, -t) for s, t in zip(dom, total) if t > -np.inf]
        fst = weighted_strings(keep) if keep else empty_acceptor()
        return Belief(var, fst, self.graph.alphabet)
