"""The message-passing scheduler shared by exact BP, pruned BP and EP (PEP §4.4).

Factors always exchange WFSA messages; what happens at a variable is delegated to a
*variable side* (:class:`strgm.inference.side.VariableSide`, every hook listed there).

Sweeps visit the nodes in an approximate topological order (``FactorGraph.order``),
alternately forwards and backwards. In a forward sweep a factor updates its messages to
*later* variables only, in a backward sweep to *earlier* ones, so one forward plus one
backward sweep is exact on a tree (each message is computed after all the messages it
depends on). An *iteration* is one forward and one backward sweep.

Convergence: after each iteration, the largest change of any tracked belief must be
≤ ``tol``, in the side's measure (the top-5 probabilities for BP and pruned BP, the
symmetric KL divergence in nats for EP/PEP). Tracked are the latent variables where
messages are multiplied, i.e. of degree ≥ 3 (all latent variables if there are none): a degree-1 or
degree-2 variable only relays what its neighbours send (e.g. a word's underlying form
between its concatenation and phonology factors, or a word to predict), so it settles
when they do, and its exact belief is the most expensive one to query.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import pynini

from strgm.errors import MessageTooLargeError
from strgm.progress import Status, StatusProgress as Progress  # noqa: F401 (re-exported)
from strgm.graph import FactorGraph
from fst_factors.wfsa import guard
from strgm.inference.side import VariableSide
from strgm.inference.terminal import terminal_messages


@dataclass
class SweepStats:
    iterations: int = 0
    converged: bool = False
    deltas: list = field(default_factory=list)
    seconds: float = 0.0
    stop_reason: str = "max_iters"  # "converged" | "max_iters" | "max_seconds"
    max_message_states: int = 0


def run_sweeps(graph: FactorGraph, side: VariableSide, max_iters: int = 10,
               tol: float = 1e-4, max_states: int = 200_000,
               progress: Optional[Callable[[str], None]] = None,
               min_iters: int = 1, max_seconds: Optional[float] = None) -> SweepStats:
    """Alternate forward/backward sweeps until beliefs stop changing (≤ ``tol``), for at
    most ``max_iters`` iterations or, anytime, until ``max_seconds`` have passed at the
    end of an iteration (the run then stops where it stands: ``stop_reason`` says why it
    stopped and ``deltas`` how far the beliefs still moved).

    How far a belief moved is the side's measure
    (:meth:`~strgm.inference.side.VariableSide.convergence_change`): the largest change
    of a top-5 probability by default, the symmetric KL divergence for EP/PEP.

    ``max_states`` bounds every factor-to-variable message; a larger one raises
    :class:`MessageTooLargeError` naming the message and suggesting what to do (the
    advice of the run's :mod:`fst_factors.wfsa.guard` limits).

    Convergence is judged on the latent variables of degree ≥ 3 (all latent variables if
    there are none). A message that can change none of those beliefs
    (:mod:`strgm.inference.terminal`) is *terminal*: it is sent once, after the last
    sweep, from the final incoming messages. The message to a latent *leaf* (degree 1: a
    held-out word's surface form, say) is one: the leaf sends its factor the empty
    product, whatever it receives (on English with trigram EP one such message — a
    trigram DFA composed with the phonology transducer and ε-removed — took minutes per
    iteration). So is the message to a word's underlying form from its concatenation when
    the surface is observed.
    """
    sweeper = _Sweeper(graph, side, max_states, progress)
    t0 = time.perf_counter()
    stats = sweeper.stats
    for it in range(max_iters):
        side.start_iteration(it)
        for direction in (1, -1):
            sweeper.sweep(it, max_iters, direction)
        stats.iterations = it + 1
        delta = sweeper.belief_change()
        stats.deltas.append(delta)
        if progress is not None:
            progress(f"iteration {it + 1}: max belief change {delta:.2e}")
        if it + 1 >= min_iters and delta <= tol:
            stats.converged, stats.stop_reason = True, "converged"
            break
        if max_seconds is not None and time.perf_counter() - t0 >= max_seconds \
                and it + 1 < max_iters:
            stats.stop_reason = "max_seconds"
            break
    sweeper.send_terminal()
    stats.seconds = time.perf_counter() - t0
    if progress is not None:  # the stage is over (a bar closes)
        total = 2 * len(sweeper.factor_order) * max_iters
        progress(Status(f"{stats.stop_reason} after {stats.iterations} iterations", total,
                        total, sweeper.stage(max_iters)))
    return stats


class _Sweeper:
    """The state of one :func:`run_sweeps` call: the visiting order, which message was
    computed from which input versions, and the belief signatures of the last
    iteration."""

    def __init__(self, graph: FactorGraph, side: VariableSide, max_states: int,
                 progress: Optional[Callable[[str], None]]):
        graph.validate()
        self.graph, self.side, self.max_states, self.progress = graph, side, max_states, \
            progress
        order = graph.order()
        self.pos = {node: i for i, node in enumerate(order)}
        self.factor_order = [n for k, n in order if k == "factor"]
        self.nlabels = graph.alphabet.size
        self.stats = SweepStats()
        self.computed_from: dict[tuple[str, str], tuple] = {}
        self.previous: dict[str, dict] = {}
        self.seen_version: dict[str, int] = {}
        self.latent = [v for v in graph.latent if graph.degree(v) >= 3] or graph.latent
        self.terminal = terminal_messages(graph, self.latent)
        self.deferred = set(self.terminal)

    def send(self, fname: str, v: str, leaf: bool = False):
        """μ_{F→V} computed from F's other incoming messages, size-checked, received
        (and returned)."""
        f, side = self.graph.factors[fname], self.side
        what = f"message from factor {fname!r} to variable {v!r}"
        try:
            with guard.naming(what):
                incoming = {u: side.incoming_to_factor(u, fname)
                            for u in f.variables if u != v}
                msg = side.factor_message(f, v, incoming, self.nlabels, leaf)
        except MessageTooLargeError:
            raise
        except MemoryError:  # numpy's allocation failures (OpenFst's abort: see guard)
            raise MessageTooLargeError(
                f"{what}: out of memory while building it; {guard.current().hint}, or "
                "lower --max-memory so that the size guard stops earlier") from None
        self.stats.max_message_states = max(self.stats.max_message_states,
                                            msg.num_states())
        if isinstance(msg, pynini.Fst):  # not a moment oracle (a grammar's EP message)
            guard.check_result(msg, what, self.max_states, self.nlabels)
        side.receive(v, fname, msg)
        return msg

    def sweep(self, it: int, max_iters: int, direction: int) -> None:
        """One forward (+1) or backward (−1) sweep: each factor updates its messages to
        the variables after (before) it, skipping those whose inputs are unchanged."""
        self.side.start_sweep()
        seq = self.factor_order if direction == 1 else self.factor_order[::-1]
        for j, fname in enumerate(seq):
            if self.progress is not None:
                n = len(seq)
                self.progress(Status(f"iteration {it + 1}/{max_iters} "
                                     f"{'forward' if direction == 1 else 'backward'} "
                                     f"factor {j + 1}/{n}",
                                     2 * n * it + (0 if direction == 1 else n) + j,
                                     2 * n * max_iters, self.stage(max_iters)))
            for v in self._targets(fname, direction):
                self._update(fname, v)

    def _update(self, fname: str, v: str) -> None:
        """Send μ_{F→V}, unless F's inputs are unchanged since it was last computed (when
        the side tracks versions): then it is skipped, or the same message is delivered
        again (``redelivers_unchanged``: EP re-projects it against V's current cavity)."""
        side = self.side
        if not side.tracks_versions:
            self.send(fname, v)
            return
        key = tuple(side.version(u) for u in self.graph.factors[fname].variables if u != v)
        done = self.computed_from.get((fname, v))
        if done is not None and done[0] == key:  # inputs unchanged since it was computed
            if side.redelivers_unchanged:
                side.receive(v, fname, done[1])
            return
        msg = self.send(fname, v)
        self.computed_from[(fname, v)] = (key, msg if side.redelivers_unchanged else None)

    @staticmethod
    def stage(max_iters: int) -> str:
        """The name of a run's progress stage (the factor visits of all iterations)."""
        return f"message passing (≤ {max_iters} iterations)"

    def _targets(self, fname: str, direction: int) -> list:
        graph, fpos = self.graph, self.pos[("factor", fname)]
        return [v for v in graph.factors[fname].variables
                if not graph.variables[v].is_observed and (fname, v) not in self.deferred
                and (self.pos[("var", v)] - fpos) * direction > 0]

    def belief_change(self) -> float:
        """The largest change of a tracked belief (the side's measure) since the last
        call (beliefs whose incoming messages did not change are skipped)."""
        delta = 0.0
        for v in self.latent:
            if self.side.tracks_versions:
                ver = self.side.version(v)
                if v in self.previous and self.seen_version.get(v) == ver:
                    continue  # no incoming message changed: the belief is the same
                self.seen_version[v] = ver
            sig = self.side.convergence_state(v)
            delta = max(delta, self.side.convergence_change(self.previous.get(v), sig))
            self.previous[v] = sig
        return delta

    def send_terminal(self) -> None:
        """Each terminal message, once, from the final incoming messages (in an order in
        which it comes after the terminal messages it is computed from). A sweep of its
        own: a side that caches per sweep (pruned BP's domains) starts afresh."""
        if self.terminal:
            self.side.start_sweep()
        n = len(self.terminal)
        for j, (fname, v) in enumerate(self.terminal):
            if self.progress is not None:
                self.progress(f"final message {j + 1}/{n} (to {v!r})")
            self.send(fname, v, leaf=self.graph.degree(v) == 1)
