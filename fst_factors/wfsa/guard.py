"""Size guard: bound an automaton operation's result *before* OpenFst builds it.

OpenFst reports an allocation failure with ``std::bad_alloc``, which pynini does not
translate: the process aborts (measured: ``pynini.compose`` under ``ulimit -v`` dies with
SIGABRT, no Python ``MemoryError``), so an address-space limit is no backstop and a
size check *after* an operation comes too late. Every composition, intersection,
ε-removal and n-best search of the inference engines therefore goes through this module,
which predicts an upper bound on the result, converts it to bytes and refuses, with a
:class:`MessageTooLargeError` naming what was being built, when it does not fit in the
memory budget.

Bounds (sound: never below the true size; checked against real compositions by
``tests/fst_factors/test_memory_guard.py``):

* composition A ∘ B (``connect`` or not; OpenFst expands only the accessible part):
  a state is a triple (a, b, f) with f the composition filter's state, f ∈ {0} unless A
  has output ε-arcs *and* B input ε-arcs (then at most 3 values, the match filter), so
  ``|Q| ≤ k·|Q_A|·|Q_B|``. Every arc pairs an arc of A with an arc of B on the shared
  label, or moves one side alone on ε, so
  ``|E| ≤ k·(Σ_l c_A(l)·c_B(l) + ε_A·|Q_B| + |Q_A|·ε_B)``, with c(l) the number of
  arcs on label l (output tape of A, input tape of B) and ε the ε-arc counts. The label
  counts are read from the smaller machine only; the larger one's Σ_l is bounded by its
  arc count times the smaller's largest c(l). A bound that does not fit is replaced by
  the pairs and arcs a dry run reaches (:mod:`fst_factors.wfsa.compose_count`), also sound.
* ε-removal of F (OpenFst's ``RmEpsilon`` works in place): ``|Q| ≤ |Q_F|``; it expands
  only the start and the states with a non-ε incoming arc (the set R), and every new
  arc of such a q is a non-ε arc leaving a state of q's ε-closure C(q), so
  ``|E| ≤ |E_F| + Σ_{q ∈ R} min(Σ_{p ∈ C(q)} n(p), n)`` (n(p): non-ε arcs at p, n their
  total), crudely ``|Q_F|·|E_F|``. When the crude bound does not fit, Σ_{p ∈ C(q)} n(p)
  is bounded by counting ε-*paths* (a DP over the ε-graph's strongly connected
  components, each component's arcs counted once per path into it: never below the
  set sum).
* n shortest paths of F: each state is popped ≤ n times: ≤ ``n·|Q_F| + 1`` states, arcs.

Bytes: ``BYTES_PER_STATE``, ``BYTES_PER_ARC`` and ``COPIES`` (every result is copied
once more while its input is alive) are explained in docs/decisions/memory_guard.md.

Not bounded: determinisation (``shortestpath(..., unique=True)`` on the acyclic, pruned
tropical copy in :func:`fst_factors.wfsa.paths.candidate_strings`, and exact entropy of an
acyclic belief), whose size can be exponential in theory but which only run on k-best
candidates and query-time beliefs; numpy's own allocations raise ``MemoryError``, which
the scheduler turns into :class:`MessageTooLargeError` naming the message.

Budget: ``limits(max_states, max_memory)`` (a context set by
:func:`strgm.inference.infer`) caps the process's resident memory at ``max_memory``
bytes; an operation may run when current RSS + predicted bytes ≤ ``max_memory``. The
default is the current RSS plus half of ``MemAvailable`` (``/proc/meminfo``; fallback
``os.sysconf`` available pages, then 4 GiB). ``max_states`` bounds the states of every
finished message or belief (:func:`check_result`). ``naming(what)`` says what is being
built (innermost wins), so that the error names the variable or factor. Cost per
operation: two counts of states/arcs (a Python loop over states), a ``properties`` call
and the resident memory; label histograms only when the crude bound fails.

A reading of ``/proc/self/statm`` (costlier than many operations it guards) is reused
for ``FRESH_SECONDS``: an operation is admitted when the reading *plus every prediction
admitted since* plus its own fits (predictions bound what those operations can have
allocated); what would be refused on a reused reading is decided on a fresh one.
"""

from __future__ import annotations

import contextlib
import os
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np
import pynini

from fst_factors.errors import MessageTooLargeError
from fst_factors.wfsa.compose_count import reachable_size
from fst_factors.wfsa.core import arc_table
from fst_factors.wfsa.interrupts import native

BYTES_PER_STATE = 160
BYTES_PER_ARC = 48
COPIES = 2
FALLBACK_MEMORY = 4 << 30
#: machines up to this many arcs have their label counts read for a tighter bound
HISTOGRAM_ARCS = 2_000_000
#: a reading of the resident memory is reused this long (module docstring)
FRESH_SECONDS = 0.05


@dataclass(frozen=True)
class Limits:
    """``max_states``: states of a finished message/belief (None: unlimited);
    ``max_memory``: bytes of resident memory the process may reach."""

    max_states: Optional[int]
    max_memory: int
    explicit_memory: bool = False
    hint: str = "use --method pruned or --method ep"


_LIMITS: ContextVar[Optional[Limits]] = ContextVar("strgm_guard_limits", default=None)
_WHAT: ContextVar[tuple] = ContextVar("strgm_guard_what", default=())


def available_memory() -> int:
    """Bytes the kernel says can be allocated without swapping (``MemAvailable``)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2 * FALLBACK_MEMORY


try:
    _PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
except (ValueError, OSError, AttributeError):
    _PAGE_BYTES = 4096


def resident_memory() -> int:
    """Current resident set size of this process in bytes (0 when unknown)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0


class _Reading:
    """The last reading of the resident memory: when (``time.monotonic``), how much,
    and the predicted bytes of the operations admitted on it since."""

    at = -float("inf")
    rss = 0
    admitted = 0.0
    pid = -1


def _admits(need: float, max_memory: int) -> bool:
    """Whether resident memory + ``need`` ≤ ``max_memory`` (module docstring: a recent
    reading plus the predictions admitted on it, else a fresh reading)."""
    now = time.monotonic()
    last = _Reading
    if now - last.at < FRESH_SECONDS and last.pid == os.getpid() and \
            last.rss + last.admitted + need <= max_memory:
        last.admitted += need
        return True
    last.at, last.rss, last.admitted, last.pid = now, resident_memory(), 0.0, os.getpid()
    if last.rss + need <= max_memory:
        last.admitted = need
        return True
    return False


def default_max_memory() -> int:
    """Current RSS plus half of the available memory."""
    return resident_memory() + available_memory() // 2


#: What to suggest when a method's message is too large.
HINTS = {"bp": "use --method pruned or --method ep",
         "pruned": "use a smaller --kbest, or --method ep or --method pep",
         "ep": "use --method pep or a lower --order",
         "pep": "use a larger --lambda"}


def make_limits(max_states: Optional[int] = None, max_memory: Optional[int] = None,
                method: Optional[str] = None) -> Limits:
    hint = HINTS.get(method, HINTS["bp"])
    if max_memory is None:
        return Limits(max_states, default_max_memory(), False, hint)
    return Limits(max_states, int(max_memory), True, hint)


def current() -> Limits:
    lim = _LIMITS.get()
    return lim if lim is not None else make_limits()


@contextlib.contextmanager
def limits(max_states: Optional[int] = None, max_memory: Optional[int] = None,
           use: Optional[Limits] = None, method: Optional[str] = None) -> Iterator[Limits]:
    """Run the body under these limits (or ``use``, limits made earlier); ``method``
    chooses the advice given in errors."""
    lim = use if use is not None else make_limits(max_states, max_memory, method)
    token = _LIMITS.set(lim)
    try:
        yield lim
    finally:
        _LIMITS.reset(token)


@contextlib.contextmanager
def naming(what: str) -> Iterator[None]:
    """Name what the body builds (a message, a belief); errors quote the innermost."""
    token = _WHAT.set(_WHAT.get() + (what,))
    try:
        yield
    finally:
        _WHAT.reset(token)


def _subject(op: str) -> str:
    names = _WHAT.get()
    return f"{names[-1]}: {op}" if names else op


def _gb(x: float) -> str:
    if x >= 1 << 28:
        return f"{x / (1 << 30):.1f} GB"
    return f"{x / (1 << 20):.0f} MB" if x >= 1 << 20 else f"{x / 1024:.0f} KB"


def predicted_bytes(states: float, arcs: float) -> float:
    return COPIES * (BYTES_PER_STATE * float(states) + BYTES_PER_ARC * float(arcs))


def fits(states: float, arcs: float, lim: Optional[Limits] = None) -> bool:
    lim = lim or current()
    return _admits(predicted_bytes(states, arcs), lim.max_memory)


def refuse(op: str, states: float, arcs: float, lim: Optional[Limits] = None) -> None:
    """Raise :class:`MessageTooLargeError` for an operation predicted not to fit."""
    lim = lim or current()
    need = predicted_bytes(states, arcs)
    left = max(lim.max_memory - resident_memory(), 0)
    option = "--max-memory" if lim.explicit_memory else "--max-memory (default: half " \
        "the available memory)"
    raise MessageTooLargeError(
        f"{_subject(op)} could reach {states:,.0f} states and {arcs:,.0f} arcs (about "
        f"{_gb(need)}), more than the {_gb(left)} left of {option} {_gb(lim.max_memory)}"
        f"; {lim.hint}, or raise --max-memory if you have the memory")


def require(op: str, states: float, arcs: float) -> None:
    lim = current()
    if not fits(states, arcs, lim):
        refuse(op, states, arcs, lim)


def check_result(fst: pynini.Fst, what: str, max_states: Optional[int],
                 num_labels: Optional[int] = None) -> pynini.Fst:
    """``fst`` unchanged if it has at most ``max_states`` states and at most
    ``max_states·(num_labels + 1)`` arcs (as many as a deterministic machine of that many
    states could have), else :class:`MessageTooLargeError` naming ``what``. The arc
    cap matters: intersecting nondeterministic messages multiplies their parallel arcs
    while the states stay few (English, exact BP: 1,513 states with 14.5M arcs), and
    every later step on such a message (trimming, normalising, the next composition)
    costs time and memory in proportion to its arcs."""
    if max_states is None:
        return fst
    hint = current().hint
    n = fst.num_states()
    if n > max_states:
        raise MessageTooLargeError(
            f"{what} has {n:,} states (> --max-states {max_states:,}); exact messages "
            f"grow with every intersection on this graph: {hint}, or raise "
            "--max-states if you have the memory")
    if num_labels is not None:
        cap = max_states * (num_labels + 1)
        m = num_arcs(fst)
        if m > cap:
            raise MessageTooLargeError(
                f"{what} has {m:,} arcs (> {cap:,} = --max-states {max_states:,} × "
                f"{num_labels + 1} labels); exact messages grow with every intersection "
                f"on this graph: {hint}, or raise --max-states if you have the memory")
    return fst


# --- sizes and bounds ---------------------------------------------------------------------
def num_arcs(fst: pynini.Fst) -> int:
    na = fst.num_arcs
    return sum(na(s) for s in range(fst.num_states()))


def _has(fst: pynini.Fst, prop) -> bool:
    return bool(fst.properties(prop, True) & prop)


def _label_counts(fst: pynini.Fst, tape: str) -> np.ndarray:
    t = _table(fst)
    labels = t.olabel if tape == "output" else t.ilabel
    return np.bincount(labels) if labels.size else np.zeros(1, dtype=np.int64)


def _table(fst: pynini.Fst):
    return arc_table(fst if fst.arc_type() == "log64" else pynini.arcmap(fst, map_type="to_log64"))


def compose_bound(a: pynini.Fst, b: pynini.Fst) -> tuple[int, int]:
    """Upper bounds (states, arcs) of a ∘ b (see the module docstring)."""
    qa, qb = a.num_states(), b.num_states()
    ea, eb = num_arcs(a), num_arcs(b)
    eps_a = _has(a, pynini.O_EPSILONS)
    eps_b = _has(b, pynini.I_EPSILONS)
    k = 3 if eps_a and eps_b else 1
    states = k * qa * qb
    crude = ea * eb + (ea * qb if eps_a else 0) + (qa * eb if eps_b else 0)
    if fits(states, k * crude) or min(ea, eb) > HISTOGRAM_ARCS:
        return states, k * crude
    if ea <= eb:
        ca = _label_counts(a, "output")
        pairs = eb * int(ca[1:].max(initial=0))
        ea0 = int(ca[0]) if eps_a else 0
        eb0 = eb if eps_b else 0
    else:
        cb = _label_counts(b, "input")
        pairs = ea * int(cb[1:].max(initial=0))
        eb0 = int(cb[0]) if eps_b else 0
        ea0 = ea if eps_a else 0
    if eps_a and eps_b:
        pairs += ea0 * eb0  # the match filter pairs ε with ε
    arcs = k * (pairs + ea0 * qb + qa * eb0)
    return states, min(arcs, k * crude)


def rmepsilon_bound(fst: pynini.Fst) -> tuple[int, int]:
    """Upper bounds (states, arcs) of ``rmepsilon(fst)`` (see the module docstring)."""
    q, e = fst.num_states(), num_arcs(fst)
    if not _has(fst, pynini.EPSILONS):
        return q, e
    if fits(q, q * e) or e > HISTOGRAM_ARCS * 4:
        return q, q * e
    return q, min(q * e, _closure_arc_bound(fst))


def _closure_arc_bound(fst: pynini.Fst) -> int:
    """|E| + Σ_{q ∈ R} min(paths(q), n) (see the module docstring)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    t = _table(fst)
    n = t.num_states
    eps = (t.ilabel == 0) & (t.olabel == 0)
    nonx = np.bincount(t.src[~eps], minlength=n).astype(float)
    g = sp.csr_matrix((np.ones(int(eps.sum())), (t.src[eps], t.dst[eps])), shape=(n, n))
    ncomp, comp = connected_components(g, directed=True, connection="strong")
    # component DAG; value(c) = Σ_{p ∈ c} n(p) + Σ_{c → c'} value(c'), each DAG edge
    # counted with its multiplicity (an upper bound on the reachable set's sum)
    own = np.bincount(comp, weights=nonx, minlength=ncomp)
    cs, cd = comp[t.src[eps]], comp[t.dst[eps]]
    cross = cs != cd
    dag = sp.csr_matrix((np.ones(int(cross.sum())), (cs[cross], cd[cross])),
                        shape=(ncomp, ncomp))
    value = own.copy()
    # iterate value = own + dag @ value to the fixed point (≤ longest DAG path passes)
    for _ in range(ncomp + 1):
        new = own + dag @ value
        if np.array_equal(new, value):
            break
        value = new
        if not np.isfinite(value).all() or value.max() > 1e18:
            value = np.minimum(np.nan_to_num(value, nan=1e18, posinf=1e18), 1e18)
            break
    # R: the start and every target of a non-ε arc
    rel = np.zeros(n, dtype=bool)
    rel[t.dst[~eps]] = True
    if t.start >= 0:
        rel[t.start] = True
    total = float(nonx.sum())
    per_state = np.minimum(value[comp[rel]], total)
    return int(min(float(per_state.sum()) + t.num_arcs, 1e18))


# --- guarded operations -------------------------------------------------------------------
def compose(a: pynini.Fst, b: pynini.Fst, connect: bool = True,
            op: str = "composition") -> pynini.Fst:
    """a ∘ b after the size check. An operand whose arcs are not yet sorted on the
    matched tape is sorted in a copy; a sorted one (checked in one pass over its arcs)
    is used as it is, so that a large transducer is not copied for every message."""
    states, arcs = compose_bound(a, b)
    if not fits(states, arcs):  # the bound may be loose: count what can be reached
        cap = int(current().max_memory // (COPIES * BYTES_PER_ARC))
        states, arcs = reachable_size(_table(a), _table(b), cap) or (states, arcs)
    require(op, states, arcs)
    a2 = a if _has(a, pynini.O_LABEL_SORTED) else pynini.arcsort(a, sort_type="olabel")
    b2 = b if _has(b, pynini.I_LABEL_SORTED) else pynini.arcsort(b, sort_type="ilabel")
    with native():
        return pynini.compose(a2, b2, connect=connect)


def rmepsilon(fst: pynini.Fst, op: str = "ε-removal", delta: float = 1e-12) -> pynini.Fst:
    """``pynini.rmepsilon(fst)`` (a new machine) after the size check."""
    states, arcs = rmepsilon_bound(fst)
    require(op, states, arcs)
    with native():
        return pynini.rmepsilon(fst.copy(), delta=delta)


def shortestpath(fst: pynini.Fst, nshortest: int, unique: bool = False,
                 op: str = "n-best search") -> pynini.Fst:
    """``pynini.shortestpath`` after bounding its result by ``n·|Q| + 1`` states."""
    q = fst.num_states()
    require(op, nshortest * q + 1, nshortest * q + 1)
    with native():
        return pynini.shortestpath(fst, nshortest=nshortest, unique=unique)
