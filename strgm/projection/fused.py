"""The fused proximal block: many PEP steps on one message in one compiled call.

A block visit (:mod:`strgm.inference.ep_passes`) takes K proximal steps on one message
μ_{F→V} while its cavity θ_{V→F} stays fixed, so p̂ = μ ⊙ ENCODE(θ_{V→F}) and its
moments E_p̂[f] do not change between the steps (PEP §6.1, eqs. 5 and 9). What changes is
θ_{F→V}, its active set, the working set W = active ∪ supp(cavity) ∪ supp(θ_{F→V}) and
q's moments. Once a step leaves an active set inside its own W (``closed``; nearly every
step after the first few of a block), the following steps need nothing new from p̂ and
no new structure: they are array operations on W, which
:func:`strgm.projection.fused_kernels.prox_steps_kernel` runs without returning to
Python. A step whose active set leaves W, whose step size cannot keep Z finite, or
whose DFA is too large for a dense solve ends the fused run; the caller then takes the
reference step (:func:`strgm.projection.prox.prox_step`), which grows W (or raises).

Equivalence. The fused steps compute what the reference steps compute on W; where the
reference works on a smaller W' ⊆ W (features of W that are neither active nor in a
support carry θ = 0), q_θ and p̂ are the same distributions and the inactive features'
gradients are zeroed, so only rounding differs. The tests hold the kernels to the
reference to 1e-10 (``tests/projection/test_fused_block.py``).

Cost of a fused step: O(k³ + |C|·(N+1) + |W|) for the q solve on k reachable DFA states
(dense LU), the failure-tree passes and the prox, plus O(N·log |W|) per feature the
first time it becomes a root (its extension rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from strgm.errors import InputError
from strgm.features import codes
from strgm.features.moments import Moments, _q_tables
from strgm.features.q_solves import COMPILED_MAX
from strgm.features.symbols import bos, eos
from strgm.features.theta import FeatureSet, Theta
from strgm.projection import fused_kernels as fk
from strgm.projection.prox import ProxStep, _on, _tree, covers

#: Largest number of DFA states of W handled by the fused block (the q side's dense
#: compiled route; larger DFAs take the reference steps and their sparse solvers).
FUSED_MAX_STATES = COMPILED_MAX
#: Halvings of η one fused step may take while Z = ∞ (prox_step's ``max_halvings``);
#: a step that runs out returns to the reference step, which raises.
MAX_HALVINGS = 30


@dataclass(frozen=True)
class WorkTables:
    """The arrays of a working set W that the kernels read (built once per interned
    set): its DFA (``fail``, ``goto``, ``start``, reachable states and their positions,
    feature placement), its prefix trie (the prox) and its extension tables (the active
    set, :func:`strgm.projection.fused_kernels.active_mask_kernel`, whose rows the kernel
    fills in place on first use: a function of W alone, so sharing them is safe)."""

    dfa: tuple
    tree: tuple
    active: tuple


def work_tables(fs: FeatureSet) -> Optional[WorkTables]:
    """The tables of ``fs``, or None when the fused kernels do not apply (features too
    long for int64 codes, or a DFA above :data:`FUSED_MAX_STATES` states)."""
    memo = fs.__dict__
    if "_fused_tables" not in memo:
        memo["_fused_tables"] = _build_tables(fs)
    return memo["_fused_tables"]


def _build_tables(fs: FeatureSet) -> Optional[WorkTables]:
    c = fs.codes
    if c.dtype == object or len(fs) == 0:
        return None
    dfa = fs.dfa
    if dfa.num_states > FUSED_MAX_STATES:
        return None
    dfa_t = _q_tables(dfa)
    tree = _tree(fs)
    tree_t = (tree.parent.astype(np.int64), tree.feat_node.astype(np.int64))
    return WorkTables(dfa_t, tree_t, _active_tables(fs))


def _active_tables(fs: FeatureSet) -> tuple:
    """The arguments of :func:`strgm.projection.fused_kernels.active_mask_kernel` for W
    but x and max_len: (base_act, root_ok, lengths, ext, suf, bos_ext, bos_suf, bos_idx,
    codes, sorted codes, their order, powers of B). The rows of ext and suf start
    unknown (−4) and are filled by the kernel for the features that become roots."""
    n = fs.num_labels
    b, e = bos(n), eos(n)
    c = np.ascontiguousarray(fs.codes, dtype=np.int64)
    ln = np.ascontiguousarray(fs.lengths, dtype=np.int64)
    order = np.argsort(c, kind="stable").astype(np.int64)
    srt = c[order]
    pw = codes.powers(n, codes.max_int_length(n), np.int64)
    ext = np.full((len(c), n + 1), -4, dtype=np.int64)
    suf = np.full((len(c), n + 1), -4, dtype=np.int64)
    bos_ext = np.empty((1, n + 1), dtype=np.int64)
    bos_suf = np.empty((1, n + 1), dtype=np.int64)
    fk.fill_extension_rows(np.zeros(1, dtype=np.int64), np.array([b], dtype=np.int64),
                           np.ones(1, dtype=np.int64), srt, order, pw, n, bos_ext, bos_suf)
    last = codes.last_labels(c, ln, n)
    base_act = ((ln == 1) & (c >= 1) & (c <= n)) | (c == e)
    root_ok = (last != e) & (c != b)
    hit = int(np.searchsorted(srt, b))
    bos_idx = int(order[hit]) if hit < len(c) and srt[hit] == b else -1
    return (base_act, root_ok, ln, ext, suf, bos_ext[0], bos_suf[0], bos_idx, c, srt,
            order, pw)


def fused_steps(last: ProxStep, x: Theta, cavity: Optional[Theta], p_cache: Moments,
                steps: int, lam: float, eta: float, max_len: Optional[int]
                ) -> Optional[tuple[ProxStep, int]]:
    """Up to ``steps`` proximal steps continuing from the reference step ``last`` (whose
    message is ``x``) on ``last``'s working set; returns (the last step, steps done), or
    None when no step could be fused (the caller takes a reference step)."""
    work = last.theta.features
    tables = work_tables(work)
    if tables is None or last.q is None or not covers(p_cache, work) \
            or last.q.features is not work:
        return None
    try:
        b = np.zeros(len(work)) if cavity is None else cavity.align(work).values
        xw = x.align(work).values
    except InputError:  # the cavity moved outside W: let the reference step grow it
        return None
    ep = _on(p_cache, work)
    out = fk.prox_steps_kernel(
        int(steps), float(eta), float(lam), MAX_HALVINGS, ep, b, xw,
        np.ascontiguousarray(last.q.expectations), *tables.tree, *tables.dfa,
        *tables.active, -1 if max_len is None else int(max_len))
    done, _status, xn, eq, log_z, counts, eta_used = out
    if done == 0:
        return None
    q = Moments(work, float(log_z), eq, counts)
    xt = Theta(work, xn)
    step = ProxStep(xt.restrict(), Theta(work, b + xn), q, float(eta_used), p_cache)
    return step, int(done)
