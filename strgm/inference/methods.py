"""The registry from method name to variable side (docs/messages.md).

Every method is the same scheduler (:func:`strgm.inference.schedule.run_sweeps`) with a
different :class:`~strgm.inference.side.VariableSide`; a method is registered once, by
name, with a function that validates its options and builds its side:

    make_side(graph, *, kbest, max_states, options) -> VariableSide

``bp``, ``pruned``, ``ep`` and ``pep`` are registered here; :func:`register` adds more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from strgm.errors import OptionError, StrgmError
from strgm.graph import FactorGraph
from strgm.inference.bp import ExactSide, PrunedSide
from strgm.inference.ep import EPSide
from strgm.inference.side import VariableSide


@dataclass(frozen=True)
class Method:
    """A registered inference method: ``name``, a one-line ``summary``, its side
    factory and the default ``tol`` of its convergence test, in the units of its side's
    :meth:`~strgm.inference.side.VariableSide.convergence_change`."""

    name: str
    summary: str
    make_side: Callable[..., VariableSide]
    default_tol: float = 1e-4


METHODS: dict[str, Method] = {}


def register(method: Method) -> None:
    """Make ``method`` available to :func:`strgm.inference.infer` by its name."""
    if method.name in METHODS:
        raise StrgmError(f"inference method {method.name!r} is already registered")
    METHODS[method.name] = method


def method_named(name: str) -> Method:
    """The registered method ``name``; an :class:`OptionError` lists the others."""
    if name not in METHODS:
        raise OptionError("method", name, "must be one of " + ", ".join(METHODS))
    return METHODS[name]


#: EP/PEP's default ``tol``: the symmetric KL divergence (nats) between a belief and its
#: value one iteration earlier (:meth:`strgm.inference.ep.EPSide.convergence_change`).
EP_TOL = 1e-2
#: PEP's, chosen by measurement: one or two iterations fewer at the same accuracy
#: (docs/decisions/ep_relay_and_projection.md).
PEP_TOL = 5e-2


def _no_options(name: str, options: dict) -> None:
    if options:
        raise StrgmError(f"options {sorted(options)} do not apply to method {name!r}")


def _exact(graph: FactorGraph, *, kbest: int, max_states: int, options: dict):
    _no_options("bp", options)
    return ExactSide(graph, max_states=max_states)


def _pruned(graph: FactorGraph, *, kbest: int, max_states: int, options: dict):
    _no_options("pruned", options)
    return PrunedSide(graph, k=kbest, max_states=max_states)


def _ep(method: str):
    def make(graph: FactorGraph, *, kbest: int, max_states: int, options: dict):
        return EPSide(graph, method, **options)
    return make


register(Method("bp", "loopy BP with exact WFSA messages (exact on acyclic graphs)",
                _exact))
register(Method("pruned", "pruned BP: domains are the union of the k-best strings of the "
                "incoming messages (Cotterell, Peng & Eisner 2015)", _pruned))
register(Method("ep", "expectation propagation onto a complete n-gram family (PEP §4)",
                _ep("ep"), default_tol=EP_TOL))
register(Method("pep", "penalized EP: variable-order n-grams chosen by a sparsity "
                "penalty (PEP §6)", _ep("pep"), default_tol=PEP_TOL))
