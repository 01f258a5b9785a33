"""The variable side: what a message-passing method does at the variables.

Factors always exchange WFSA messages (:meth:`strgm.factors.Factor.message_to`, PEP §2.2).
What happens where messages meet — store and intersect (exact BP), restrict to k-best
domains (pruned BP), project onto an n-gram family (EP/PEP) — is a *variable side*, and
the scheduler (:func:`strgm.inference.schedule.run_sweeps`) talks to it through this
interface only (docs/messages.md):

=========================================  ====================================================
``incoming_to_factor(var, factor)``        μ_{V→F}, the acceptor factor F receives from V
``receive(var, factor, message)``          store (approximate, project …) a new μ_{F→V}
``belief(var)``                            b_V as a :class:`~strgm.inference.belief.Belief`
``factor_message(factor, var, in, n)``     μ_{F→V} from F's incoming messages (a side may
                                           retry a divergent one, e.g. EP's damping)
``start_iteration(i)`` / ``start_sweep()`` schedule events (EP: K, λ and feature schedules)
``version(var)``                           an int that changes whenever what V sends may
                                           have changed (if ``tracks_versions``: the
                                           scheduler then skips unchanged messages, or
                                           re-delivers them if ``redelivers_unchanged``)
``queries_only(var)``                      True when V's belief is only queried: its last
                                           message may keep ε-arcs
``convergence_state(var)`` /               what the convergence test keeps of V's belief
``convergence_change(old, new)``           after an iteration, and how far it moved
                                           (default: top-5 probabilities; EP: θ_V and
                                           the symmetric KL divergence in nats)
``settings`` / ``diagnostics()``           what the result records
=========================================  ====================================================

A side holds the graph it was made for and never changes it; factors never call back
into a side.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Mapping, Optional

import pynini

from strgm.factors import Factor
from strgm.graph import FactorGraph
from fst_factors.wfsa.construct import string_acceptor


def belief_signature(belief, k: int = 5) -> dict:
    """Top-k strings with probabilities, used to test convergence between iterations."""
    return dict(belief.kbest_labels(k))


def signature_change(old: Optional[dict], new: dict) -> float:
    """Max absolute probability change over the union of two top-k lists."""
    if old is None:
        return float("inf")
    keys = set(old) | set(new)
    return max((abs(old.get(s, 0.0) - new.get(s, 0.0)) for s in keys), default=0.0)


def observation_message(graph: FactorGraph, var: str) -> pynini.Fst:
    """The point mass on an observed variable's string."""
    return string_acceptor(graph.variables[var].observed)


class VariableSide(ABC):
    """Base class of the variable sides (see the module docstring for the hooks)."""

    #: iterations before the convergence test may stop the run
    min_iters: int = 1
    #: BLAS threads while this side runs (None: leave as is)
    blas_threads: Optional[int] = None
    #: True when :meth:`version` is kept: a factor message whose inputs' versions have not
    #: changed since it was computed is then not computed again
    tracks_versions: bool = False
    #: True when such an unchanged message must still be delivered again (``receive``):
    #: EP re-projects every μ_{F→V} against V's current cavity on every sweep, so only
    #: the factor's computation is saved, not the variable's update
    redelivers_unchanged: bool = False

    def __init__(self, graph: FactorGraph):
        self.graph = graph

    @abstractmethod
    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        """μ_{V→F}: what factor ``factor`` receives from variable ``var``."""

    @abstractmethod
    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        """Take a new μ_{F→V}."""

    @abstractmethod
    def belief(self, var: str):
        """b_V ∝ Π_F μ_{F→V} (or its approximation), a Belief."""

    @property
    @abstractmethod
    def settings(self) -> dict:
        """The method's settings, as recorded in the result."""

    def factor_message(self, factor: Factor, var: str, incoming: Mapping[str, pynini.Fst],
                       num_labels: int, leaf: bool = False) -> pynini.Fst:
        """μ_{F→V} computed by the factor's exact rule; for a ``leaf`` whose belief is
        only queried, :meth:`~strgm.factors.Factor.message_to_leaf` (ε-arcs kept)."""
        if leaf and self.queries_only(var):
            return factor.message_to_leaf(var, incoming, num_labels)
        return factor.message_to(var, incoming, num_labels)

    def start_iteration(self, iteration: int) -> None:
        """An iteration (one forward and one backward sweep) begins."""

    def start_sweep(self) -> None:
        """A sweep begins."""

    def version(self, var: str) -> int:
        """Changes whenever what ``var`` sends may have changed (read only when
        :attr:`tracks_versions`)."""
        return 0

    def queries_only(self, var: str) -> bool:
        """True when ``var``'s belief may be any WFSA (ε-arcs included)."""
        return False

    def convergence_state(self, var: str) -> Any:
        """What the convergence test keeps of ``var``'s belief after an iteration
        (default: its top-5 strings with their probabilities)."""
        return belief_signature(self.belief(var))

    def convergence_change(self, old: Any, new: Any) -> float:
        """How far a belief moved between two iterations (``old`` None: the first);
        the run converges when no tracked belief moved more than ``tol``. Default: the
        largest change of a top-5 probability."""
        return signature_change(old, new)

    def diagnostics(self) -> dict:
        """Counters of the run, merged into :attr:`InferenceResult.extra`."""
        return {}
