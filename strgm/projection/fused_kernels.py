"""Compiled kernels of the fused proximal block (:mod:`strgm.projection.fused`).

Each is the array form of one numpy/Python routine that stays as its reference:

* :func:`strgm.features.q_kernel.q_moments_kernel` (q's moments, used here for every
  step);
* :func:`active_mask_kernel` — :func:`strgm.projection.prox.active_set` as a mask over a
  working set W that must contain it (``closed``; else the caller grows W in Python).
* :func:`prox_steps_kernel` — :func:`strgm.projection.prox.prox_step` repeated on a fixed
  W: g = (E_p̂[f] − E_q[f])·[f active], x ← prox_{ηλΩ}(x + ηg) with η halved while
  Z = ∞, q re-solved at the new θ = cavity + x.

Status codes returned by the kernels: ``OK``; ``DIVERGED`` (Z = ∞, a singular system or a
log weight above the overflow bound: the caller's reference step decides and raises);
``FAILED`` (Z = 0: left to the reference); ``OPEN`` (the next active set leaves W).
"""

from __future__ import annotations

import numpy as np

from strgm.features.q_kernel import q_moments_kernel
from strgm.projection.prox import _prox_scales
from strgm.compiled import njit

OK, DIVERGED, FAILED, OPEN = 0, 1, 2, 3


@njit(cache=True)
def _find(sorted_codes, order, x):  # pragma: no cover - compiled
    """Position of code x in the set (``sorted_codes`` = codes[order]), −1 if absent."""
    lo, hi = 0, sorted_codes.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_codes[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    if lo < sorted_codes.shape[0] and sorted_codes[lo] == x:
        return order[lo]
    return -1


@njit(cache=True)
def fill_extension_rows(rows, roots, root_len, sorted_codes, order, pw, n, ext, suf):
    # pragma: no cover - compiled
    """Fill rows ``rows`` of (ext, suf) for :func:`active_mask_kernel`: for root w
    (``roots[r]``, length ``root_len[r]``) and the j-th next symbol a (labels 1..N, then
    EOS = N+2), the positions in the set of w·a (code w + a·B^|w|; −2 when it does not
    fit in int64) and of w[1:]·a (code (w div B) + a·B^(|w|−1); −3 when that is EOS
    itself), −1 where absent."""
    big = n + 3
    eos = n + 2
    longest = pw.shape[0] - 1
    for r in rows:
        for j in range(n + 1):
            a = j + 1 if j < n else eos
            if root_len[r] < longest:
                ext[r, j] = _find(sorted_codes, order, roots[r] + a * pw[root_len[r]])
            else:
                ext[r, j] = -2
            sc = roots[r] // big + a * pw[root_len[r] - 1]
            suf[r, j] = -3 if sc == eos else _find(sorted_codes, order, sc)


@njit(cache=True)
def active_mask_kernel(x, base_act, root_ok, lengths, ext, suf, bos_ext, bos_suf, bos_idx,
                       codes, sorted_codes, order, pw, max_len):
    # pragma: no cover - compiled
    """(closed, mask over W) of the active set of x (x on W; module docstring of
    :mod:`strgm.projection.prox`). ``ext[i, j]``/``suf[i, j]``: the positions in W of
    w_i·a and w_i[1:]·a for the j-th next symbol a (:func:`fill_extension_rows`; a row
    still −4 is filled here, the first time w_i is a root); ``bos_*`` the same for the
    root BOS; ``max_len`` < 0: unbounded. ``closed`` is False when an extension is
    outside W."""
    nw, m = ext.shape
    n = m - 1
    act = np.zeros(nw, dtype=np.bool_)
    for i in range(nw):
        act[i] = base_act[i] or x[i] != 0.0
    closed = True
    one = np.empty(1, np.int64)
    for r in range(-1, nw):
        if r < 0:
            if max_len >= 0 and 1 >= max_len:
                continue
        elif not (x[r] != 0.0 and root_ok[r] and (max_len < 0 or lengths[r] < max_len)):
            continue
        elif ext[r, 0] == -4:
            one[0] = r
            fill_extension_rows(one, codes, lengths, sorted_codes, order, pw, n, ext, suf)
        for j in range(m):
            s = bos_suf[j] if r < 0 else suf[r, j]
            if s == -3 or (s >= 0 and x[s] != 0.0):
                e = bos_ext[j] if r < 0 else ext[r, j]
                if e < 0:
                    closed = False
                else:
                    act[e] = True
    if bos_idx >= 0:
        act[bos_idx] = False
    return closed, act


@njit(cache=True)
def prox_steps_kernel(steps, eta0, lam, max_halvings, ep, b, x, eq, tree_parent,
                      tree_feat_node, feat_node, feat_col, fail, goto, start, reach, pos,
                      base_act, root_ok, lengths, ext, suf, bos_ext, bos_suf, bos_idx,
                      codes, sorted_codes, order, pw, max_len):
    # pragma: no cover - compiled
    """Up to ``steps`` proximal steps on the fixed working set W (module docstring).
    ``x``, ``b``: θ_{F→V} and the cavity on W; ``eq``: E_q[f] at b + x; ``ep``:
    E_p̂[f]. Returns (steps done, status of the step that stopped the run, x, E_q, log Z,
    counts, η of the last step); every returned quantity is that of the last step
    done."""
    nw = x.shape[0]
    nc, n = goto.shape
    x = x.copy()
    eq = eq.copy()
    log_z = 0.0
    counts = np.zeros((nc, n + 1))
    eta = eta0
    done = 0
    status = OK
    theta = np.empty(nw)
    for _ in range(steps):
        closed, act = active_mask_kernel(x, base_act, root_ok, lengths, ext, suf, bos_ext,
                                         bos_suf, bos_idx, codes, sorted_codes, order, pw,
                                         max_len)
        if not closed:
            status = OPEN
            break
        g = np.zeros(nw)
        for i in range(nw):
            if act[i]:
                g[i] = ep[i] - eq[i]
        eta = eta0
        st = DIVERGED
        for _h in range(max_halvings + 1):
            y = x + eta * g
            xn = _prox_scales(tree_parent, tree_feat_node, y, eta * lam)
            for i in range(nw):
                theta[i] = b[i] + xn[i]
            st, lz, eqn, cn = q_moments_kernel(theta, feat_node, feat_col, fail, goto,
                                               start, reach, pos)
            if st != DIVERGED:
                break
            eta *= 0.5
        if st != OK:
            status = st
            break
        x, eq, log_z, counts = xn, eqn, lz, cn
        done += 1
    return done, status, x, eq, log_z, counts, eta
