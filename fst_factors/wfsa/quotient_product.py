"""The end vectors of a two-sided quotient when the contexts are cyclic acceptors.

The quotient of W by contexts B_1 … B_r (before) and A_1 … A_s (after)
(:mod:`fst_factors.wfsa.quotient`) needs two vectors over W's states:

    α_w = Σ_p B(p) · W(start →p→ w),        β_w = Σ_a A(a) · W(w →a→ final),

with B = B_1 ⋯ B_r and A = A_1 ⋯ A_s. When the contexts are string lists they are carried
through W list state by list state. When a context is cyclic — EP's messages are n-gram
acceptors ENCODE(θ) (PEP §3.2) — the sums run over infinitely many strings and are path
sums of products instead:

* B and A are chained into one acceptor each, ε-arcs of weight ρ_{B_j}(q) leading from
  each final state q of a piece to the next piece's start;
* X = the forward path sums of P_B = B × W from (start_B, start_W):
  α_w = Σ_{c final in B} X(c, w) ρ_B(c);
* Y = the backward path sums of P_A = A × W seeded at every (start_A, w), with final
  weights ρ_A(c) ρ_W(w): β_w = Y(start_A, w).

The two products are built by :func:`fst_factors.wfsa.pair_product.pair_product` and solved as
one block-diagonal system, (I − M)⁻ᵀ e for X and (I − M)⁻¹ ρ for Y, by the certified
fixed-point solves, else by strongly connected components
(:func:`fst_factors.wfsa.fixed_point.finite_path_sums`). These are the
same sums the composition route computes — its ε-region after projection is exactly P_B
and P_A — without the composition, its conversion to arrays, and a context transducer.
Cost O(|P| + |E_P|) to build, plus the solves.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from fst_factors.wfsa.core import ArcTable
from fst_factors.wfsa.fixed_point import finite_path_sums
from fst_factors.wfsa.measure import arcs_to_csr
from fst_factors.wfsa.pair_product import by_source, pair_product

#: exp(−w) of a product arc must stay well inside float64.
_MAX_EXPONENT = 600.0


def chain(tables: Sequence[ArcTable]) -> ArcTable:
    """The concatenation T_1 ⋯ T_k of ε-free acceptors as one table, joined by ε-arcs
    (label 0) from each final state of T_j, weighted by its final weight, to T_{j+1}'s
    start; arcs listed by source state."""
    offsets = np.cumsum([0] + [t.num_states for t in tables])
    src, dst, lab, wt = [], [], [], []
    for j, t in enumerate(tables):
        src.append(t.src + offsets[j])
        dst.append(t.dst + offsets[j])
        lab.append(t.ilabel)
        wt.append(t.weight)
        if j + 1 < len(tables):
            fin = np.flatnonzero(np.isfinite(t.final))
            src.append(fin + offsets[j])
            dst.append(np.full(len(fin), offsets[j + 1] + tables[j + 1].start))
            lab.append(np.zeros(len(fin), dtype=np.int64))
            wt.append(t.final[fin])
    src, dst, lab, wt = (np.concatenate(x) for x in (src, dst, lab, wt))
    order = np.argsort(src, kind="stable")
    final = np.full(int(offsets[-1]), np.inf)
    final[offsets[-2]:] = tables[-1].final
    return ArcTable(int(offsets[-1]), int(tables[0].start), src[order], dst[order],
                    lab[order], lab[order], wt[order], final)


def ends_by_product(tw: ArcTable, before: Sequence[ArcTable], after: Sequence[ArcTable],
                    what: str = "quotient") -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(α, β) over W's states in probability space (module docstring), or None when a
    product is too large (:data:`fst_factors.wfsa.pair_product.MAX_PAIRS`), an arc weight
    leaves float64's range, or the path sums diverge. Contexts: ε-free acceptors."""
    nw = tw.num_states
    rho_w = np.where(np.isfinite(tw.final), np.exp(-np.where(np.isfinite(tw.final),
                                                             tw.final, 0.0)), 0.0)
    alpha = np.eye(1, nw, tw.start).ravel()
    if not before and not after:
        return alpha, rho_w
    parts, b_chain, a_chain = [], None, None
    runs = by_source(tw, True)  # W's arcs by state and label, for both products
    if before:
        b_chain = chain(before)
        parts.append(pair_product(b_chain, tw, [b_chain.start], [tw.start], runs))
    if after:
        a_chain = chain(after)
        parts.append(pair_product(a_chain, tw, np.full(nw, a_chain.start), np.arange(nw),
                                  runs))
    if any(p is None for p in parts):
        return None
    shift = np.cumsum([0] + [p.num_states for p in parts])
    src = np.concatenate([p.src + s for p, s in zip(parts, shift)])
    wt = np.concatenate([p.weight for p in parts])
    if len(wt) and np.abs(wt).max() > _MAX_EXPONENT:
        return None
    a = arcs_to_csr(src, np.concatenate([p.dst + s for p, s in zip(parts, shift)]),
                    np.exp(-wt), int(shift[-1]))
    rho, e = np.zeros(int(shift[-1])), np.zeros(int(shift[-1]))
    if before:
        e[0] = 1.0
    if after:
        pa = parts[-1]
        f = a_chain.final[pa.c] + tw.final[pa.w]
        if np.any(np.abs(f[np.isfinite(f)]) > _MAX_EXPONENT):
            return None
        rho[shift[-2]:] = np.where(np.isfinite(f), np.exp(-np.where(np.isfinite(f), f, 0.0)),
                                   0.0)
    solved = finite_path_sums(a, rho, e, what)
    if solved is None:
        return None
    y, x = solved
    if before:
        pb = parts[0]
        fb = b_chain.final[pb.c]
        keep = np.isfinite(fb)
        alpha = np.bincount(pb.w[keep], weights=x[: pb.num_states][keep] * np.exp(-fb[keep]),
                            minlength=nw)
    beta = y[shift[-2]: shift[-2] + nw] if after else rho_w
    return alpha, beta
