"""The local Gibbs sampler of the DP-TSG (Cohn et al. 2009; Cohn & Blunsom 2010 §2).

State: a binary substitution indicator x_v for every non-root nonterminal node v (Figure
1). One sweep visits the nodes in a uniformly random order and resamples each x_v from
its conditional given everything else. Let r be v's nearest site ancestor, c = lab(r),
c_v = lab(v), e_m the ET rooted at r with v internal (merged), e_s the one with v a
frontier node and e_v the ET rooted at v. With the counts n of all other ETs (the ETs
containing v removed), eq. (1) applied sequentially gives

    P(x_v = 0) ∝ (n_{e_m} + α_c P0(e_m)) / (n_c + α_c)
    P(x_v = 1) ∝ (n_{e_s} + α_c P0(e_s)) / (n_c + α_c)
                 × (n_{e_v} + [e_v = e_s] + α_{c_v} P0(e_v)) / (n_{c_v} + [c_v = c] + α_{c_v})

(the second ET sees the first's increment). Cost per node O(d) dictionary operations,
d = depth of v below r (the fragment ids of the alternative ET, e_m or e_s, are
recomputed along the path; the current one is known).

**Pitman–Yor** (``process="py"``, :mod:`.pitman_yor`): exact Gibbs on the joint of x_v
and the tables of the customers at r (and at v) given all other customers and their
tables. Those customers leave their tables; with P(e) the PY predictive
(n_e − d K_e + (α + d K_c) P0(e)) / (n_c + α) at the rest,

    P(x_v = 0) ∝ P(e_m)
    P(x_v = 1) ∝ [(n_{e_s} − d_c K_{e_s}) P(e_v | e_s joined a table)
                  + (α_c + d_c K_c) P0(e_s) P(e_v | e_s opened a table)] / (n_c + α_c)

(the seat of e_s summed out: it changes n, K_{e_v}, K_{c_v}, n_{c_v} for e_v only
through whether it opened a table). Then the seats: e_m, or e_s with the new-table odds
tilted by P(e_v | opened) / P(e_v | joined) and then e_v, each at a table drawn from the
seating rule (existing ∝ m_t − d, new ∝ (α + d K_c) P0). O(d + K_e) per node.
"""

from __future__ import annotations

import math

from strgm.grammars.tsg.fragments import log_weight
from strgm.grammars.tsg.kernel import TSGKernel
from strgm.grammars.tsg.state import TSGState

__all__ = ["LocalGibbsTSG"]


class LocalGibbsTSG(TSGKernel):
    """Local Gibbs sampler: ``sample(state)`` is one sweep over every non-root node in a
    random order (see the module docstring), preceded by a hyperparameter step when
    ``resample_hyper``."""

    kind = "tsg-local"

    def sample(self, state: TSGState) -> TSGState:
        if self.process == "py":
            return self._sample_py(state)
        rng, alpha, s, counts = self._start(state)
        t = self.table
        order = t.inner[rng.permutation(len(t.inner))].tolist()
        us = rng.random(len(order)).tolist()
        self._sweep(counts, alpha, order, us)
        return self._finish(state, rng, alpha, s, counts)

    def _sweep(self, counts, alpha, order, us) -> None:
        """DP kernel: one Gibbs update per node of ``order`` (module docstring), in place
        on ``counts`` (indicators, fragment ids and ET counts)."""
        t = self.table
        lab = t.lab_l
        site, below, cnt, ncat = counts.site, counts.below, counts.cnt, counts.ncat
        lp0 = counts.frags.lp0
        alpha = [float(a) for a in alpha]
        la = [math.log(a) for a in alpha]
        choose = self._choose
        for v, u in zip(order, us):
            # the current ET at r is below[r]; only the alternative chain is interned
            was = site[v]
            p, path, alt = _alternative(t, counts, v)
            k = alt[-1]
            ks, km = (below[p], k) if was else (k, below[p])
            c, cv, ev = lab[p], lab[v], below[v]
            if was:
                cnt[ks] -= 1
                cnt[ev] -= 1
                ncat[cv] -= 1
            else:
                cnt[km] -= 1
            ncat[c] -= 1
            den = math.log(ncat[c] + alpha[c])
            lm = log_weight(cnt.get(km, 0), la[c] + lp0[km]) - den
            lsp = log_weight(cnt.get(ks, 0), la[c] + lp0[ks]) - den + \
                log_weight(cnt.get(ev, 0) + (ev == ks), la[cv] + lp0[ev]) - \
                math.log(ncat[cv] + (cv == c) + alpha[cv])
            now = 1 if choose(lsp, lm, u) else 0
            ncat[c] += 1
            if now:
                cnt[ks] = cnt.get(ks, 0) + 1
                cnt[ev] = cnt.get(ev, 0) + 1
                ncat[cv] += 1
            else:
                cnt[km] = cnt.get(km, 0) + 1
            if now != was:
                site[v] = now
                for q, f in zip(path, alt):
                    below[q] = f

    def _sample_py(self, state: TSGState) -> TSGState:
        """One PY sweep over every non-root node in a random order (module docstring)."""
        rng, alpha, s, counts, rest = self._start_py(state)
        t = self.table
        order = t.inner[rng.permutation(len(t.inner))].tolist()
        us = rng.random((len(order), 3)).tolist()
        for v, u in zip(order, us):
            self._update_py(counts, rest, v, u)
        return self._finish(state, rng, alpha, s, counts, rest=rest)

    def _update_py(self, counts, rest, v: int, u) -> None:
        """The PY Gibbs update of x_v and its customers' tables, with uniforms ``u``."""
        site, below, cnt, ncat, lab = counts.site, counts.below, counts.cnt, counts.ncat, \
            self.table.lab_l
        was = site[v]
        p, path, alt = _alternative(self.table, counts, v)
        ks, km = (below[p], alt[-1]) if was else (alt[-1], below[p])
        c, cv, ev = lab[p], lab[v], below[v]
        rest.leave(p)
        if was:
            rest.leave(v)
            cnt[ks] -= 1
            cnt[ev] -= 1
            ncat[cv] -= 1
        else:
            cnt[km] -= 1
        same, samec = int(ev == ks), int(cv == c)
        lj = rest.log_pred(ev, dn=same, dnc=samec)
        ln = rest.log_pred(ev, dn=same, dk=same, dkc=samec, dnc=samec)
        now = 1 if self._choose(rest.log_pair(ks, lj, ln), rest.log_pred(km), u[0]) else 0
        if now:
            rest.join(p, ks, rest.choose(ks, u[1], ln - lj))
            rest.join(v, ev, rest.choose(ev, u[2]))
            cnt[ks] = cnt.get(ks, 0) + 1
            cnt[ev] = cnt.get(ev, 0) + 1
            ncat[cv] += 1
        else:
            rest.join(p, km, rest.choose(km, u[1]))
            cnt[km] = cnt.get(km, 0) + 1
        if now != was:
            site[v] = now
            for q, f in zip(path, alt):
                below[q] = f


def _alternative(t, counts, v: int) -> tuple:
    """(r, path, alt): v's nearest site ancestor r, the nodes from v's parent up to r and
    their fragment ids with x_v flipped (interned; alt[-1] is the flipped ET at r)."""
    parent, c1, c2, rule = t.parent_l, t.c1_l, t.c2_l, t.rule_l
    site, below, get = counts.site, counts.below, counts.frags.get
    k, child, p = (below[v] if site[v] else -1), v, parent[v]
    path, alt = [], []
    while True:
        a = c1[p]
        if a == child:
            b = c2[p]
            k = get(rule[p], k, -2 if b < 0 else (-1 if site[b] else below[b]))
        else:
            k = get(rule[p], -1 if site[a] else below[a], k)
        path.append(p)
        alt.append(k)
        if site[p]:
            return p, path, alt
        child, p = p, parent[p]
