"""Block-Jacobi message passing: a factor graph cut into blocks of factors that can run on
different processes (docs/architecture.md §2).

Round r. Block b holds its own factors F_b and the variables V_b they touch. Every other
factor G that touches V_b reaches the block as a unary factor carrying its message
μ_{G→v} at the end of round r − 1 (a prior's message is the prior itself). A factor
whose neighbours but one are observed (a word's phonology factor) is *constant*: its
message is computed in round 0 by its block and travels as a unary factor afterwards.
The block's variable side starts from the latest messages into V_b (a warm start), runs
one iteration of the shared scheduler (:func:`~strgm.inference.schedule.run_sweeps`: a
forward and a backward sweep over the block's factors) and returns the new messages of
F_b. One variable side of the whole graph, here in the client, receives them in block
order; its beliefs and messages are the result.

Stopping. Each block measures, by the method's own convergence test, how far the beliefs
of the tracked variables it holds (latent, degree ≥ 3 in the whole graph; all latent
ones if none) moved during its sweep, against the other blocks' messages of the previous
round; the run stops when the largest of these is ≤ ``tol``, or after ``max_iters``
rounds.

Round 0. Messages of other blocks are not known yet: a variable sees only its own block's
factors and the priors. (A variable that would then be a leaf of its block, but is not
one of the graph, is given Σ*, the empty product, so that it relays rather than waits.)

Equivalence. A block's round is a pure function of OpenFst bytes and names, and the
client merges in block order, so the numbers do not depend on where or in which order
blocks run: :class:`SerialPool` here and a Dask cluster
(:class:`strgm.distributed.cluster.TaskPool`) give identical results. With one block a
round is the scheduler's own iteration, up to the order in which a variable stores its
messages (pruned BP may then break a tie between equally likely k-best strings
otherwise). Block-Jacobi reaches the exact beliefs on a tree
(tested), as loopy BP's fixed points are those of any schedule; on a loopy graph it may
stop at a nearby point. A latent leaf (a held-out word's surface) gets its message in
every round, from the block's state after its sweep.

Cost. A round does the work of one serial iteration, split over the blocks, plus the
transfer of every message into each block (``bytes_sent``, ``bytes_received`` in the
result's ``extra``); the machines of the factors travel once (``pool.scatter``) and the
constant messages once, after round 0. A machine with a *recipe* (a phonology T_θ) is
not sent at all: each process makes it from the arrays of the recipe (θ and the model's
description, a few kilobytes) and checks that its digest is the client's. Methods whose
messages are automata are served (``bp``, ``pruned``); EP's θ messages are not.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

import pynini

from strgm.errors import OptionError
from strgm.factors import BinaryFactor, ConcatFactor, UnaryFactor
from strgm.graph import FactorGraph
from strgm.inference.block_task import nbytes, packed_caches, run_block, seed
from strgm.inference.methods import method_named
from strgm.inference.result import InferenceResult
from strgm.validate import check_float, check_int, check_size
from strgm.wfsa import guard

#: Methods whose messages are automata, which blocks exchange as OpenFst bytes.
BLOCK_METHODS = ("bp", "pruned")


class SerialPool:
    """Runs the blocks of a round here, one after another: the reference every cluster
    must reproduce (the protocol of :class:`strgm.distributed.cluster.TaskPool`)."""

    def scatter(self, value):
        return value

    def map(self, fn: Callable, items: Sequence, *shared, key: str = "strgm",
            workers: Optional[Sequence] = None) -> list:
        return [fn(item, *shared) for item in items]


@dataclass(frozen=True)
class BlockPlan:
    """``blocks[b]``: the names of block b's own factors; ``variables[b]``: the variables
    they touch; ``constant``: the factors with exactly one latent neighbour and no
    other unobserved one (their message never changes)."""

    blocks: tuple
    variables: tuple
    constant: frozenset


def plan_blocks(graph: FactorGraph, blocks: Iterable[Iterable[str]]) -> BlockPlan:
    """Check a partition of the graph's non-unary factors into blocks (unary factors,
    constant, reach every block as they are; listing them is allowed and ignored).
    Unknown, repeated or missing factors, and factor kinds other than binary and
    concatenation, are :class:`OptionError`\\ s naming ``blocks`` and the factor."""
    seen: dict = {}
    out = []
    for b, names in enumerate(blocks):
        own = []
        for n in names:
            f = graph.factors.get(n)
            if f is None:
                raise OptionError("blocks", n, "names no factor of the graph")
            if isinstance(f, UnaryFactor):
                continue
            if not isinstance(f, (BinaryFactor, ConcatFactor)):
                raise OptionError("blocks", n, f"lists a {f.kind} factor; blocks exchange only "
                                               "binary and concatenation factors' messages")
            if n in seen:
                raise OptionError("blocks", n, f"lists a factor in block {seen[n]} and in block {b}")
            seen[n] = b
            own.append(n)
        if own:
            out.append(tuple(own))
    for n, f in graph.factors.items():
        if not isinstance(f, UnaryFactor) and n not in seen:
            raise OptionError("blocks", n, "leaves a factor of the graph out of every block")
    if not out:
        raise OptionError("blocks", "[]", "the graph has no non-unary factor to split")
    variables = tuple(tuple(dict.fromkeys(v for n in own for v in graph.factors[n].variables))
                      for own in out)
    constant = frozenset(n for n, f in graph.factors.items()
                         if sum(not graph.variables[v].is_observed for v in f.variables) == 1)
    return BlockPlan(tuple(out), variables, constant)


class _Encoder:
    """OpenFst bytes of machines, each written once, keyed by their SHA-1 digest."""

    def __init__(self):
        self._by_id: dict = {}

    def remember(self, fst: pynini.Fst, blob: bytes, key: str) -> None:
        """``fst`` was read from ``blob``, whose key is ``key`` (not written again)."""
        self._by_id[id(fst)] = (fst, key, blob)

    def key(self, fst: pynini.Fst, store: dict) -> str:
        hit = self._by_id.get(id(fst))
        if hit is None or hit[0] is not fst:
            blob = fst.write_to_string()
            hit = (fst, hashlib.sha1(blob).hexdigest(), blob)
            self._by_id[id(fst)] = hit
        store[hit[1]] = hit[2]
        return hit[1]


def tracked_variables(graph: FactorGraph) -> list:
    """The variables whose beliefs the convergence test watches (as the scheduler's)."""
    return [v for v in graph.latent if graph.degree(v) >= 3] or graph.latent


def _factor_spec(f, enc: _Encoder, store: dict) -> list:
    if isinstance(f, ConcatFactor):
        return ["concat", f.name, list(f.parts), f.whole, f.boundary_label]
    return ["binary", f.name, f.input_var, f.output_var, enc.key(f.fst, store)]


def _round_payload(graph, plan: BlockPlan, b: int, side, r: int, enc: _Encoder,
                   skip: dict, tracked: set) -> dict:
    """What block ``b`` needs for round ``r`` (module docstring): its factors as specs,
    the messages into its variables as (variable, factor name in the block, key), the
    messages it must send back, and the bytes of every machine not in ``skip``."""
    own = set(plan.blocks[b])
    fsts: dict = {}
    factors, send, names, used = [], [], {}, set(plan.blocks[b])
    for n in plan.blocks[b]:
        f = graph.factors[n]
        latent = [v for v in f.variables if not graph.variables[v].is_observed]
        if n in plan.constant and r > 0 and n in side.msgs[latent[0]]:
            factors.append(["unary", n, latent[0], enc.key(side.msgs[latent[0]][n], fsts)])
        else:
            factors.append(_factor_spec(f, enc, fsts))
            send.extend([n, v] for v in latent)
        for v in latent:
            names[(n, v)] = n
    warm = []
    for v in plan.variables[b]:
        if graph.variables[v].is_observed:
            continue
        outside = [g for g in graph.factors_of(v) if g not in own]
        for g in outside:
            if g in side.msgs[v]:
                name = g if g not in used else f"{g} (to {v})"
                names[(g, v)] = name
                used.add(name)
                factors.append(["unary", name, v, enc.key(side.msgs[v][g], fsts)])
        inside = sum(1 for g in graph.factors_of(v) if g in own or g in side.msgs[v])
        if inside == 1 and len(graph.factors_of(v)) > 1:
            factors.append(["unary", f"(messages of other blocks) {v}", v, None])
        warm.extend([v, names[(g, v)], enc.key(m, fsts), *packed_caches(side, v, g)]
                    for g, m in side.msgs[v].items() if (g, v) in names)
    for k in [k for k in fsts if k in skip]:
        del fsts[k]
    touched = dict.fromkeys(v for spec in factors for v in _spec_variables(spec))
    variables = [[v, None if graph.variables[v].observed is None
                  else list(graph.variables[v].observed)] for v in touched]
    origin = [[name, g] for (g, _), name in names.items()]
    return {"round": r, "variables": variables, "factors": factors, "warm": warm,
            "send": send, "tracked": [v for v in touched if v in tracked], "fsts": fsts,
            "shared": [v for v in touched if v in tracked
                       and any(g not in own and not isinstance(graph.factors[g], UnaryFactor)
                               for g in graph.factors_of(v))],
            "origin": origin}


def _spec_variables(spec: list) -> list:
    kind = spec[0]
    if kind == "unary":
        return [spec[2]]
    if kind == "binary":
        return [spec[2], spec[3]]
    return list(spec[2]) + [spec[3]]


def block_jacobi(graph: FactorGraph, blocks: Iterable[Iterable[str]], method: str = "pruned",
                 *, max_iters: int = 10, tol: Optional[float] = None, kbest: int = 20,
                 max_states: int = 200_000, max_memory=None, pool=None,
                 progress: Optional[Callable[[str], None]] = None,
                 recipes: Sequence = ()) -> InferenceResult:
    """Inference by rounds of blocks (module docstring) on ``pool`` (a
    :class:`SerialPool` by default, or :class:`strgm.distributed.cluster.TaskPool`).

    ``blocks``: the names of each block's factors (:func:`plan_blocks`). The options are
    those of :func:`strgm.inference.infer`, checked the same way; ``max_iters`` counts
    rounds. ``recipes``: (machine, fn, arrays) triples, a factor machine that each
    process makes itself as ``fn(arrays)`` (a phonology T_θ from θ) instead of receiving
    its bytes; ``fn`` must be importable where the blocks run and make the same machine
    (its digest is checked there). The result answers ``belief`` and ``message`` for the
    whole graph."""
    if method not in BLOCK_METHODS:
        method_named(method)
        raise OptionError("method", method, "blocks exchange automata messages: use "
                          + " or ".join(BLOCK_METHODS))
    max_iters = check_int("max_iters", max_iters, min=1)
    tol = check_float("tol", method_named(method).default_tol if tol is None else tol,
                      min=0)
    kbest, max_states = check_int("kbest", kbest, min=1), check_int("max_states",
                                                                     max_states, min=1)
    max_memory = None if max_memory is None else check_size("max_memory", max_memory)
    graph.validate()
    plan = plan_blocks(graph, blocks)
    pool = pool or SerialPool()
    t0 = time.perf_counter()
    with guard.limits(max_states, max_memory, method=method):
        side = method_named(method).make_side(graph, kbest=kbest, max_states=max_states,
                                              options={})
        state = _Rounds(graph, plan, side, pool, {
            "alphabet": list(graph.alphabet.segment_symbols),
            "boundary": graph.alphabet.boundary, "method": method, "kbest": kbest,
            "max_states": max_states, "max_memory": max_memory}, recipes)
        deltas, converged = [], False
        for r in range(max_iters):
            deltas.append(state.round(r))
            if progress is not None:
                progress(f"round {r + 1} ({len(plan.blocks)} blocks): max belief change "
                         f"{deltas[-1]:.2e}")
            if deltas[-1] <= tol:
                converged = True
                break
    settings = {"max_iters": max_iters, "tol": tol, "max_seconds": None, **side.settings,
                "blocks": len(plan.blocks)}
    return InferenceResult(method, settings, time.perf_counter() - t0, len(deltas),
                           converged, deltas, side=side, graph=graph,
                           extra={"stop_reason": "converged" if converged else "max_iters",
                                  **state.counters})


class _Rounds:
    """The client's side of :func:`block_jacobi`: the whole graph's messages (in
    ``side``), the machines scattered once, and the transfer counters."""

    def __init__(self, graph, plan: BlockPlan, side, pool, settings: dict, recipes=()):
        self.graph, self.plan, self.side, self.pool = graph, plan, side, pool
        self.enc = _Encoder()
        made = {self.enc.key(fst, {}): (fn, arrays) for fst, fn, arrays in recipes}
        self.digest: dict = {}  # (factor, variable) -> key of the message held
        self.tracked = set(tracked_variables(graph))
        machines: dict = {}
        for n, f in graph.factors.items():
            if isinstance(f, UnaryFactor):
                if not graph.variables[f.var].is_observed:
                    side.receive(f.var, n, f.fst)
                    self.digest[(n, f.var)] = self.enc.key(f.fst, machines)
            elif isinstance(f, BinaryFactor):
                self.enc.key(f.fst, machines)
        self.skip = set(machines)
        sent = {k: b for k, b in machines.items() if k not in made}
        self.shared = pool.scatter({**settings, "fsts": sent, "recipes": made})
        self.constants = None
        self.signatures = [[] for _ in plan.blocks]  # each block's beliefs after a round
        self.where = [None] * len(plan.blocks)  # the worker each block last ran on
        self.held: list = [set() for _ in plan.blocks]  # machines that worker holds
        self.counters = {"blocks": len(plan.blocks), "max_message_states": 0,
                         "bytes_scattered": sum(map(len, sent.values()))
                         + sum(nbytes(a) for _, a in made.values()),
                         "bytes_sent": 0, "bytes_received": 0, "blocks_resent": 0}

    def round(self, r: int) -> float:
        """Run round ``r`` on the pool, merge the messages in block order; the largest
        belief change the blocks measured."""
        payloads = [_round_payload(self.graph, self.plan, b, self.side, r, self.enc,
                                   self.skip, self.tracked)
                    for b in range(len(self.plan.blocks))]
        for p, sig in zip(payloads, self.signatures):
            p["previous"] = sig
        outs = self._run(payloads, r)
        self.signatures = [out["signatures"] for out in outs]
        for b, out in enumerate(outs):
            for n, v, blob, key in out["messages"]:
                self.counters["bytes_received"] += len(blob)
                fst = pynini.Fst.read_from_string(blob)
                self.side.receive(v, n, fst)
                self.enc.remember(fst, blob, key)
                self.digest[(n, v)] = key
                self.held[b].add(key)  # the block's process keeps it
        for out in outs:
            for g, v, key, *caches in out["caches"]:
                self.counters["bytes_received"] += nbytes(caches)
                if self.digest.get((g, v)) == key:
                    seed(self.side, v, g, *caches)
            self.counters["max_message_states"] = max(self.counters["max_message_states"],
                                                      out["max_message_states"])
        if hasattr(self.side, "start_sweep"):
            self.side.start_sweep()  # pruned BP: domains are recomputed from the new messages
        if r == 0:
            self._scatter_constants()
        return max(out["delta"] for out in outs)

    def _run(self, payloads: list, r: int) -> list:
        """The blocks' rounds on the pool, each preferably where it ran before and sent
        only the machines that process does not hold; a block whose process lacks one
        (it ran elsewhere, or forgot it) runs again with every machine's bytes."""
        lean = [{**p, "fsts": {k: None if k in held else b for k, b in p["fsts"].items()}}
                for p, held in zip(payloads, self.held)]
        self.counters["bytes_sent"] += sum(map(nbytes, lean))
        outs = self.pool.map(run_block, lean, self.shared, self.constants,
                             key=f"strgm-block-round{r}", workers=self.where)
        again = [b for b, out in enumerate(outs) if "missing" in out]
        if again:
            self.counters["blocks_resent"] += len(again)
            self.counters["bytes_sent"] += sum(nbytes(payloads[b]) for b in again)
            redo = self.pool.map(run_block, [payloads[b] for b in again], self.shared,
                                 self.constants, key=f"strgm-block-round{r}-again")
            for b, out in zip(again, redo):
                outs[b] = out
        for b, (p, out) in enumerate(zip(payloads, outs)):
            self.where[b], self.held[b] = out["worker"], set(p["fsts"])
        return outs

    def _scatter_constants(self) -> None:
        """The constant factors' messages, known after round 0, sent once."""
        consts: dict = {}
        for n in self.plan.constant:
            f = self.graph.factors[n]
            if isinstance(f, UnaryFactor):
                continue
            v = next(u for u in f.variables if not self.graph.variables[u].is_observed)
            if n in self.side.msgs[v]:
                self.enc.key(self.side.msgs[v][n], consts)
        self.skip |= set(consts)
        self.counters["bytes_scattered"] += sum(map(len, consts.values()))
        self.constants = self.pool.scatter(consts)
