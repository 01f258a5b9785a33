"""The message-passing scheduler shared by exact BP, pruned BP and EP (PEP §4.4).

Factors always exchange WFSA messages (``Factor.message_to``). What happens at a
variable is delegated to a *variable side* object:

    side.incoming_to_factor(var, factor) -> acceptor μ_{V→F}
    side.receive(var, factor, μ_{F→V})   -> None (store, approximate, project ...)
    side.belief(var)                     -> Belief
    side.start_iteration(i)              -> None (EP: K and feature schedules)
    side.start_sweep()                   -> None, optional: a new sweep begins
    side.version(var)                    -> int, optional: changes whenever what V sends
                                            may have changed; lets the scheduler skip a
                                            factor message whose inputs are all unchanged

Sweeps visit the nodes in an approximate topological order (``FactorGraph.order``),
alternately forwards and backwards. In a forward sweep a factor updates its messages to
*later* variables only, in a backward sweep to *earlier* ones, so one forward plus one
backward sweep is exact on a tree (each message is computed after all the messages it
depends on). An *iteration* is one forward and one backward sweep.

Convergence: after each iteration, the largest change in the top-5 probabilities of any
tracked belief must be ≤ ``tol``. Tracked are the latent variables where messages are
multiplied, i.e. of degree ≥ 3 (all latent variables if there are none): a degree-1 or
degree-2 variable only relays what its neighbours send (e.g. a word's underlying form
between its concatenation and phonology factors, or a word to predict), so it settles
when they do, and its exact belief is the most expensive one to query.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol

import pynini

from strgm.errors import MessageTooLargeError
from strgm.graph import FactorGraph
from strgm.wfsa import guard
from strgm.wfsa.construct import string_acceptor


class VariableSide(Protocol):
    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst: ...
    def receive(self, var: str, factor: str, message: pynini.Fst) -> None: ...
    def belief(self, var: str): ...
    def start_iteration(self, iteration: int) -> None: ...
    # optional: ``queries_only(var) -> bool``, True when var's belief is only queried
    # (then leaf messages may keep ε-arcs: Factor.message_to_leaf)


@dataclass
class SweepStats:
    iterations: int = 0
    converged: bool = False
    deltas: list = field(default_factory=list)
    seconds: float = 0.0
    max_message_states: int = 0


class Progress:
    """A one-line progress display on stderr (silent when ``enabled`` is False)."""

    def __init__(self, enabled: bool = False, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self.enabled:
            self.stream.write(f"\r[{time.perf_counter() - self.t0:7.1f}s] {msg}\033[K")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def observation_message(graph: FactorGraph, var: str) -> pynini.Fst:
    return string_acceptor(graph.variables[var].observed)


def belief_signature(belief, k: int = 5) -> dict:
    """Top-k strings with probabilities, used to test convergence between iterations."""
    return dict(belief.kbest_labels(k))


def signature_change(old: Optional[dict], new: dict) -> float:
    """Max absolute probability change over the union of two top-k lists."""
    if old is None:
        return float("inf")
    keys = set(old) | set(new)
    return max((abs(old.get(s, 0.0) - new.get(s, 0.0)) for s in keys), default=0.0)


def run_sweeps(graph: FactorGraph, side: VariableSide, max_iters: int = 10,
               tol: float = 1e-4, max_states: int = 200_000,
               progress: Optional[Callable[[str], None]] = None,
               min_iters: int = 1) -> SweepStats:
    """Alternate forward/backward sweeps until beliefs stop changing (≤ ``tol``).

    ``max_states`` bounds every factor-to-variable message; a larger one raises
    :class:`MessageTooLargeError` naming the message and suggesting what to do (the
    advice of the run's :mod:`strgm.wfsa.guard` limits).

    Convergence is judged on the latent variables of degree ≥ 3 (all latent variables if
    there are none). A latent *leaf* outside that set (degree 1: a held-out word's
    surface form, say) sends its factor the empty product, whatever it receives, so the
    message it receives influences nothing else: it is sent once, after the last sweep,
    from the final incoming messages (on English with trigram EP one such message — a
    trigram DFA composed with the phonology transducer and ε-removed — took minutes per
    iteration).
    """
    graph.validate()
    order = graph.order()
    pos = {node: i for i, node in enumerate(order)}
    factor_order = [n for k, n in order if k == "factor"]
    nlabels = graph.alphabet.size
    stats = SweepStats()
    version = getattr(side, "version", None)
    computed_from: dict[tuple[str, str], tuple] = {}
    t0 = time.perf_counter()
    previous: dict[str, dict] = {}
    seen_version: dict[str, int] = {}
    latent = [v for v in graph.latent if graph.degree(v) >= 3] or graph.latent
    leaves = {v for v in graph.latent if graph.degree(v) == 1} - set(latent)

    def send(fname: str, v: str, leaf: bool = False) -> None:
        f = graph.factors[fname]
        what = f"message from factor {fname!r} to variable {v!r}"
        try:
            with guard.naming(what):
                incoming = {u: side.incoming_to_factor(u, fname)
                            for u in f.variables if u != v}
                if leaf and getattr(side, "queries_only", lambda _: False)(v):
                    msg = f.message_to_leaf(v, incoming, nlabels)
                else:
                    msg = f.message_to(v, incoming, nlabels)
        except MessageTooLargeError:
            raise
        except MemoryError:  # numpy's allocation failures (OpenFst's abort: see guard)
            raise MessageTooLargeError(
                f"{what}: out of memory while building it; {guard.current().hint}, or "
                "lower --max-memory so that the size guard stops earlier") from None
        stats.max_message_states = max(stats.max_message_states, msg.num_states())
        guard.check_result(msg, what, max_states, nlabels)
        side.receive(v, fname, msg)

    for it in range(max_iters):
        side.start_iteration(it)
        for direction in (1, -1):
            if hasattr(side, "start_sweep"):
                side.start_sweep()
            seq = factor_order if direction == 1 else factor_order[::-1]
            for j, fname in enumerate(seq):
                if progress is not None and j % 25 == 0:
                    progress(f"iteration {it + 1}/{max_iters} "
                             f"{'forward' if direction == 1 else 'backward'} "
                             f"factor {j + 1}/{len(seq)}")
                f = graph.factors[fname]
                fpos = pos[("factor", fname)]
                targets = [v for v in f.variables
                           if not graph.variables[v].is_observed and v not in leaves
                           and (pos[("var", v)] - fpos) * direction > 0]
                for v in targets:
                    if version is not None:
                        key = tuple(version(u) for u in f.variables if u != v)
                        if computed_from.get((fname, v)) == key:
                            continue  # inputs unchanged since this message was computed
                        computed_from[(fname, v)] = key
                    send(fname, v)
        stats.iterations = it + 1
        delta = 0.0
        for v in latent:
            if version is not None and v in previous and seen_version.get(v) == version(v):
                continue  # no incoming message changed: the belief is the same
            if version is not None:
                seen_version[v] = version(v)
            sig = belief_signature(side.belief(v))
            delta = max(delta, signature_change(previous.get(v), sig))
            previous[v] = sig
        stats.deltas.append(delta)
        if progress is not None:
            progress(f"iteration {it + 1}: max belief change {delta:.2e}")
        if it + 1 >= min_iters and delta <= tol:
            stats.converged = True
            break
    for v in sorted(leaves, key=lambda u: pos[("var", u)]):
        if progress is not None:
            progress(f"final message to leaf {v!r}")
        send(graph.factors_of(v)[0], v, leaf=True)
    stats.seconds = time.perf_counter() - t0
    return stats
