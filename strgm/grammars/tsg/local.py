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
        parent, c1, c2, rule, lab = t.parent_l, t.c1_l, t.c2_l, t.rule_l, t.lab_l
        site, below, cnt, ncat = counts.site, counts.below, counts.cnt, counts.ncat
        get, lp0 = counts.frags.get, counts.frags.lp0
        alpha = [float(a) for a in alpha]
        la = [math.log(a) for a in alpha]
        choose = self._choose
        for v, u in zip(order, us):
            # the current ET at r is below[r]; only the alternative chain is interned
            was = site[v]
            k, child, p = (below[v] if was else -1), v, parent[v]
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
                    break
                child, p = p, parent[p]
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
