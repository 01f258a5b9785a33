"""Factor types and their WFSA message rules (docs/messages.md; PEP §2.2, §4.2).

A factor computes its outgoing message to one neighbour from the incoming acceptors of
all its *other* neighbours. The rules are exact finite-state operations, shared by exact
BP, pruned BP and EP (which hands factors ENCODE(θ) acceptors):

* Unary  F(V):            μ_{F→V} = F.
* Binary T(U → V):        μ_{F→V} = out-projection of μ_{U→F} ∘ T,
                          μ_{F→U} = in-projection of T ∘ μ_{V→F}.
* Concatenation W = M_1 b M_2 … b M_k:
                          μ_{F→W} = μ_{M_1→F} · b · … · μ_{M_k→F},
                          μ_{F→M_i} = in-projection of T_i ∘ μ_{W→F}
                          (T_i inserts the other incoming messages around Id(Σ*)).
Every message returned is an ε-free, trimmed, arc-sorted log64 acceptor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Mapping, Optional

import pynini

from fst_factors.transducers.concat import (concat_acceptors, concat_context_transducer,
                                      part_message_by_quotient)
from strgm.errors import GraphError
from fst_factors.wfsa import guard
from fst_factors.wfsa.operations import compose
from fst_factors.wfsa.epsilon import trim


def _clean(fst: pynini.Fst, what: str = "message", num_labels: Optional[int] = None
           ) -> pynini.Fst:
    """Trimmed, ε-free, arc-sorted; first checked against the run's ``max_states`` (and
    arc cap, :func:`fst_factors.wfsa.guard.check_result`) so that an oversized message is
    refused before trimming copies it."""
    guard.check_result(fst, what, guard.current().max_states, num_labels)
    return pynini.arcsort(trim(fst, what), sort_type="ilabel")


@dataclass(frozen=True, eq=False)
class Factor(ABC):
    """Base class: ``name`` and the ordered tuple of neighbour ``variables``."""

    name: str

    @property
    @abstractmethod
    def variables(self) -> tuple[str, ...]:
        """The neighbours, in order."""

    @property
    @abstractmethod
    def kind(self) -> str:
        """``unary``, ``binary``, ``concat`` or another factor type's name."""

    @abstractmethod
    def message_to(self, var: str, incoming: Mapping[str, pynini.Fst], num_labels: int
                   ) -> pynini.Fst:
        """μ_{F→var} given μ_{U→F} for every other neighbour U."""

    def message_to_leaf(self, var: str, incoming: Mapping[str, pynini.Fst], num_labels: int
                        ) -> pynini.Fst:
        """μ_{F→var} for a variable whose belief is only queried (k-best, probability,
        sampling), never sent on: the same distribution as :meth:`message_to`, possibly
        with ε-arcs left in (every query works on ε-arcs)."""
        return self.message_to(var, incoming, num_labels)

    def moment_message(self, var: str):
        """EP's message to ``var`` when it is not an automaton but a *moment oracle*: an
        object with ``moments(features, theta, what)`` giving E_p̂[f] and log Z for
        p̂ ∝ μ_{F→var} ⊙ ENCODE(θ) (a grammar factor, whose language is context-free).
        None (the default): the message is the WFSA of :meth:`message_to`."""
        return None

    def summed_inputs(self, var: str) -> tuple[str, ...]:
        """The neighbours whose messages μ_{F→var} sums over in an ε-closure (none
        here). When that sum diverges, damping their messages makes it finite."""
        return ()

    def summed_against(self, var: str) -> Optional[str]:
        """The neighbour whose message ``var``'s message is summed against when F sends
        to the others (None here), so that both must be normalisable together."""
        return None

    def _missing(self, var: str, incoming: Mapping[str, pynini.Fst]) -> None:
        for u in self.variables:
            if u != var and u not in incoming:
                raise GraphError(f"factor {self.name!r}: no incoming message from {u!r}")


@dataclass(frozen=True, eq=False)
class UnaryFactor(Factor):
    """A weighted acceptor scoring one variable (a prior, or any string model)."""

    var: str = ""
    fst: Optional[pynini.Fst] = None

    @property
    def variables(self) -> tuple[str, ...]:
        return (self.var,)

    @property
    def kind(self) -> str:
        return "unary"

    def message_to(self, var, incoming, num_labels):
        if var != self.var:
            raise GraphError(f"factor {self.name!r} is not attached to {var!r}")
        return self.fst


@dataclass(frozen=True, eq=False)
class BinaryFactor(Factor):
    """A weighted transducer T relating ``input_var`` (input tape) to ``output_var``."""

    input_var: str = ""
    output_var: str = ""
    fst: Optional[pynini.Fst] = None

    @property
    def variables(self) -> tuple[str, ...]:
        return (self.input_var, self.output_var)

    @property
    def kind(self) -> str:
        return "binary"

    def _projected(self, var, incoming) -> pynini.Fst:
        """μ_{F→var} with its ε-arcs: the other variable's message composed with the
        transducer, projected onto ``var``'s tape."""
        self._missing(var, incoming)
        if var == self.output_var:
            return pynini.project(compose(incoming[self.input_var], self.fst), "output")
        if var == self.input_var:
            return pynini.project(compose(self.fst, incoming[self.output_var]), "input")
        raise GraphError(f"factor {self.name!r} is not attached to {var!r}")

    def message_to(self, var, incoming, num_labels):
        return _clean(self._projected(var, incoming),
                      f"message from factor {self.name!r} to variable {var!r}", num_labels)

    def message_to_leaf(self, var, incoming, num_labels):
        """As :meth:`message_to` without ε-removal. The message to a held-out word's
        surface composes its UR message with the phonology; deletions become ε-arcs, and
        when the UR message is cyclic (an EP n-gram DFA) ε-removal must close a dense
        ε-graph, which for trigram EP on English costs far more than the belief queries
        on the ε-arcs themselves (docs/messages.md)."""
        return pynini.arcsort(self._projected(var, incoming).connect(), sort_type="ilabel")


@dataclass(frozen=True, eq=False)
class ConcatFactor(Factor):
    """W = M_1 · b · M_2 ··· M_k, b the optional boundary label."""

    parts: tuple[str, ...] = ()
    whole: str = ""
    boundary_label: Optional[int] = None

    @property
    def variables(self) -> tuple[str, ...]:
        return self.parts + (self.whole,)

    @property
    def kind(self) -> str:
        return "concat"

    def summed_inputs(self, var: str) -> tuple[str, ...]:
        """μ_{F→M_i} inserts the other parts' messages around Σ* and sums them against
        the whole's message."""
        return tuple(p for p in self.parts if p != var) if var in self.parts else ()

    def summed_against(self, var: str) -> Optional[str]:
        """A part's message is summed against the whole's."""
        return self.whole if var in self.parts else None

    def message_to(self, var, incoming, num_labels):
        self._missing(var, incoming)
        if var == self.whole:
            return _clean(concat_acceptors([incoming[p] for p in self.parts],
                                           self.boundary_label),
                          f"message from factor {self.name!r} to variable {var!r}",
                          num_labels)
        if var in self.parts:
            i = self.parts.index(var)
            what = f"message from factor {self.name!r} to variable {var!r}"
            ctx = [incoming.get(p) if j != i else None for j, p in enumerate(self.parts)]
            fast = part_message_by_quotient(ctx, i, incoming[self.whole], num_labels,
                                            self.boundary_label, what)
            if fast is not None:
                return guard.check_result(fast, what, guard.current().max_states,
                                          num_labels)
            t = concat_context_transducer(ctx, i, num_labels, self.boundary_label)
            return _clean(pynini.project(compose(t, incoming[self.whole]), "input"),
                          what, num_labels)
        raise GraphError(f"factor {self.name!r} is not attached to {var!r}")


#: Model type -> builder of its factor: ``builder(model, name, var, alphabet, **options)``.
#: Layers above this one define models that become factors (a grammar, in
#: :mod:`strgm.grammars.factor`) and register their builder here when imported, so that
#: :meth:`strgm.graph.FactorGraph.add_grammar` can build them without importing upward.
_BUILDERS: dict = {}


def register_factor_builder(model_type: type, builder) -> None:
    """Make ``builder`` the way to turn instances of ``model_type`` into factors."""
    _BUILDERS[model_type] = builder


def factor_builder(model):
    """The registered builder for ``model``'s type (or a base type), or None."""
    for cls in type(model).__mro__:
        if cls in _BUILDERS:
            return _BUILDERS[cls]
    return None
