"""The blocked Metropolis–Hastings sampler of the DP-TSG (Cohn & Blunsom 2010 §3).

For each tree t_i, in a random order per sweep:

1. remove its ETs from the counts (n⁻, ref⁻ of :mod:`.fragments`);
2. run the inside algorithm of the Table 1 grammar (:mod:`.transform`) for the MAP TSG of
   n⁻, constrained to t_i's constituents (:func:`constrained_inside`). At a node v labelled
   c with children v_j, writing I(v) for the inside of c, I'(v) for c' and S(f, v) for a
   signed fragment f that matches the subtree at v,

       I'(v)   = P_CFG(rule_v) Π_j [s_{c_j} I(v_j) + (1 − s_{c_j}) I'(v_j)]
       S(f, v) = Π_j (I(v_j) if f's child j is a frontier node else S(f_j, v_j))
       I(v)    = Σ_{f: n⁻_f > 0} n⁻_f S(f, v) / (n⁻_c + α_c) + α_c I'(v) / (n⁻_c + α_c)

   (words contribute 1). The matching fragments are found bottom-up by hashing (the keys
   (rule, k1, k2) of the intern table, k_j ∈ {−1} ∪ fragments matching at v_j), keeping
   those that are sub-fragments of counted ETs (ref⁻ > 0): no ET is ever enumerated.
   Values are rescaled by I(v) at every node (log Z = Σ_v log of the scales);
3. sample a transformed derivation top-down and read off its indicators: the proposal is
   q(d) = Π_{e ∈ d} p(e) / I(root), p(e) = (n⁻_e + α_c P0(e)) / (n⁻_c + α_c) (the MAP TSG);
4. accept d' with probability min{1, P(d' | n⁻) q(d) / (P(d | n⁻) q(d'))}, where P(d | n⁻)
   is the exact sequential CRP probability of d's ETs given the other trees (eq. (1), each ET
   seeing the increments of the earlier ones); add the kept ETs back.

Cost per tree O(Σ_v (1 + |M(v_1)|)·min(|M(v_2)| + 1, |index|)) dictionary operations, M(v)
the fragments matching at v: linear in the tree size when few fragments match.

**Pitman–Yor** (``process="py"``, :mod:`.pitman_yor`). The chain's state is the
derivations and the labelled seating; the move for tree t_i is an independence MH step
on (d, s) = (t_i's derivation, the tables of its customers) given everything else:

1. t_i's customers e_1..e_m (its sites in preorder) leave their tables, last first;
   leaving, each records W(d, s) = Σ_j log P_PY(e_j | rest, e_1..e_{j−1} at their tables)
   (P_PY the predictive (n_e − d K_e + (α + d K_c) P0(e)) / (n_c + α));
2. the proposal d' is drawn from the Table 1 transform of the PY MAP grammar at the
   rest: c → sign(e) weighs n⁻_e − d_c K⁻_e and c → c' weighs α_c + d_c K⁻_c, both over
   n⁻_c + α_c (:func:`constrained_inside` with ``cnt``/``bridge``), so q(d') ∝
   Π_{e ∈ d'} P_PY(e | rest);
3. d''s customers are seated one after another, each at a table drawn from the seating
   rule given its ET (∝ m_t − d_c, new ∝ (α_c + d_c K_c) P0(e)): the proposal of s' is
   q(s' | d') = Π_j w_j(s'_j) / (n_{e_j} − d K_{e_j} + (α + d K_c) P0(e_j)) (counts
   including the earlier new customers), and P(d', s' | rest) / q(s' | d') =
   exp W(d', s'), the same product of sequential predictives along the drawn seats;
4. accept with probability min{1, exp(W(d', s') − W(d, s)) q(d) / q(d')}; a rejection
   removes the new customers and puts the old ones back at their own tables.

This is exact MH for the joint of derivations and seating (the seating-level analogue
of importance-weighting the seats, as in the restricted collapsed draw of Makino et al.
2011), hence exact for the derivations with the seatings summed out. The step is taken
even when d' = d (it then re-seats t_i's customers). ``correction=False`` accepts every
proposal (a negative control).
"""

from __future__ import annotations

import math

from strgm.grammars.tsg.fragments import log_weight
from strgm.grammars.tsg.kernel import TSGKernel
from strgm.grammars.tsg.state import TSGState

__all__ = ["BlockedMHTSG", "constrained_inside", "sample_sites", "remove_tree", "add_tree",
           "tree_ets", "crp_log_prob", "map_log_prob"]


def remove_tree(counts, i: int) -> None:
    """Take tree i's ETs (and fragment references) out of ``counts``."""
    _shift(counts, i, -1)


def add_tree(counts, i: int) -> None:
    """Put tree i's ETs (as given by ``counts.below`` / ``counts.site``) into ``counts``."""
    _shift(counts, i, +1)


def _shift(counts, i, d) -> None:
    t = counts.table
    lo, hi = int(t.starts[i]), int(t.starts[i + 1])
    below, site, cnt, ref, ncat, lab = counts.below, counts.site, counts.cnt, counts.ref, \
        counts.ncat, t.lab_l
    for v in range(lo, hi):
        f = below[v]
        ref[f] = ref.get(f, 0) + d
        if site[v]:
            cnt[f] = cnt.get(f, 0) + d
            ncat[lab[v]] += d


def tree_ets(counts, i: int, site=None) -> list:
    """Fragment ids of tree i's ETs under indicators ``site`` (a list over the tree's
    nodes; default the current ones), interning new fragments. Returns (ids, below)."""
    t = counts.table
    lo, hi = int(t.starts[i]), int(t.starts[i + 1])
    if site is None:
        return [counts.below[v] for v in range(lo, hi) if counts.site[v]], None
    get, rule, c1, c2 = counts.frags.get, t.rule_l, t.c1_l, t.c2_l
    below = [0] * (hi - lo)
    for v in range(hi - 1, lo - 1, -1):
        a, b = c1[v], c2[v]
        k1 = -2 if a < 0 else (-1 if site[a - lo] else below[a - lo])
        k2 = -2 if b < 0 else (-1 if site[b - lo] else below[b - lo])
        below[v - lo] = get(rule[v], k1, k2)
    return [below[j] for j in range(hi - lo) if site[j]], below


def crp_log_prob(counts, ets, alpha, la) -> float:
    """log P(ETs | counts): eq. (1) applied sequentially (each ET sees the earlier ones)."""
    cnt, ncat, lab, lp0 = counts.cnt, counts.ncat, counts.frags.lab, counts.frags.lp0
    inc, incc, tot = {}, {}, 0.0
    for f in ets:
        c = lab[f]
        k, kc = inc.get(f, 0), incc.get(c, 0)
        tot += log_weight(cnt.get(f, 0) + k, la[c] + lp0[f]) - math.log(ncat[c] + kc + alpha[c])
        inc[f], incc[c] = k + 1, kc + 1
    return tot


def map_log_prob(counts, ets, alpha, la) -> float:
    """log Π_e p(e) under the MAP TSG of ``counts`` (no increments): log q(d) + log Z."""
    cnt, ncat, lab, lp0 = counts.cnt, counts.ncat, counts.frags.lab, counts.frags.lp0
    return sum(log_weight(cnt.get(f, 0), la[lab[f]] + lp0[f]) -
               math.log(ncat[lab[f]] + alpha[lab[f]]) for f in ets)


def constrained_inside(counts, i: int, alpha, s, cnt=None, bridge=None):
    """DP kernel: the tree-constrained inside pass of the module docstring over tree i
    (whose ETs must already be removed). Returns (log Z, Ip, M) with, per node j of the
    tree (0 = root), Ip[j] = I'(v)/I(v) and M[j] = [(f, S(f, v)/I(v)), ...]. ``cnt``
    (anything with ``get(f, 0)``) and ``bridge`` (per label) replace the numerators n⁻_f
    and α_c of c → sign(f) and c → c' (the PY MAP grammar); denominators stay n⁻_c + α_c."""
    t, fr = counts.table, counts.frags
    cnt = counts.cnt if cnt is None else cnt
    bridge = alpha if bridge is None else bridge
    lo, hi = int(t.starts[i]), int(t.starts[i + 1])
    rule, c1, c2, lab = t.rule_l, t.c1_l, t.c2_l, t.lab_l
    rule_p, kids = t.rule_p, t.rule_kids
    ids, index, ref, ncat = fr.ids, fr.index, counts.ref, counts.ncat
    n = hi - lo
    Ip, M = [0.0] * n, [None] * n
    logz = 0.0
    for v in range(hi - 1, lo - 1, -1):
        j, r, a, b = v - lo, rule[v], c1[v], c2[v]
        ip = rule_p[r]
        if a < 0:
            f = ids.get((r, -2, -2))
            m = [(f, 1.0)] if f is not None and ref.get(f, 0) > 0 else []
        else:
            ks = kids[r]
            sa = s[ks[0]]
            ip *= sa + (1.0 - sa) * Ip[a - lo]
            opts_a = [(-1, 1.0)] + M[a - lo]
            if b < 0:
                opts_b = {-2: 1.0}
            else:
                sb = s[ks[1]]
                ip *= sb + (1.0 - sb) * Ip[b - lo]
                opts_b = dict(M[b - lo])
                opts_b[-1] = 1.0
            m = []
            for ka, wa in opts_a:
                lst = index.get((r, ka))
                if lst is None:
                    continue
                if len(lst) <= len(opts_b):
                    for kb, f in lst:
                        wb = opts_b.get(kb)
                        if wb is not None and ref.get(f, 0) > 0:
                            m.append((f, wa * wb))
                else:
                    for kb, wb in opts_b.items():
                        f = ids.get((r, ka, kb))
                        if f is not None and ref.get(f, 0) > 0:
                            m.append((f, wa * wb))
        c = lab[v]
        den = ncat[c] + alpha[c]
        z = bridge[c] * ip / den
        for f, w in m:
            k = cnt.get(f, 0)
            if k > 0:
                z += k * w / den
        logz += math.log(z)
        Ip[j] = ip / z
        M[j] = [(f, w / z) for f, w in m]
    return logz, Ip, M


def sample_sites(counts, i: int, alpha, s, Ip, M, rng, cnt=None, bridge=None) -> list:
    """A derivation of tree i drawn top-down from the constrained chart: its indicators
    (a 0/1 list over the tree's nodes, 1 at the root); ``cnt`` and ``bridge`` as in
    :func:`constrained_inside`."""
    t = counts.table
    lo = int(t.starts[i])
    c1, c2, lab, ncat = t.c1_l, t.c2_l, t.lab_l, counts.ncat
    cnt = counts.cnt if cnt is None else cnt
    bridge = alpha if bridge is None else bridge
    fr = counts.frags
    site = [0] * (int(t.starts[i + 1]) - lo)
    stack = [(lo, -1)]  # (node, mode): -1 site, -2 base (c'), f >= 0 signed fragment f
    while stack:
        v, mode = stack.pop()
        j = v - lo
        if mode == -1:
            site[j] = 1
            mode = _choose_site(v, j, bridge, Ip, M, cnt, ncat, lab, rng)
        a, b = c1[v], c2[v]
        if a < 0:
            continue
        if mode == -2:
            for ch in (a, b):
                if ch >= 0:
                    L = lab[ch]
                    sl = s[L]
                    if rng.random() * (sl + (1 - sl) * Ip[ch - lo]) < sl:
                        stack.append((ch, -1))
                    else:
                        stack.append((ch, -2))
        else:
            for ch, k in ((a, fr.k1[mode]), (b, fr.k2[mode])):
                if ch >= 0:
                    stack.append((ch, -1 if k == -1 else k))
    return site


def _choose_site(v, j, alpha, Ip, M, cnt, ncat, lab, rng) -> int:
    """At a site: −2 (c → c', the base distribution) or the id of the counted ET chosen
    (c → sign(e)), with probabilities α_c I'(v) : n_e S(e, v)."""
    c = lab[v]
    ws = [cnt.get(f, 0) * w for f, w in M[j]]
    u = rng.random() * (alpha[c] * Ip[j] + sum(ws))
    acc = alpha[c] * Ip[j]
    if u < acc:
        return -2
    mode = -2
    for (f, _), w in zip(M[j], ws):
        if w > 0:
            acc += w
            mode = f
            if u < acc:
                break
    return mode


class BlockedMHTSG(TSGKernel):
    """Blocked MH sampler: ``sample(state)`` resamples every tree's derivation once, in a
    random order (see the module docstring), after a hyperparameter step when
    ``resample_hyper``. ``correction=False`` accepts every proposal (no MH test: an
    approximate sampler, kept as a negative control)."""

    kind = "tsg-blocked"
    with_ref = True

    def __init__(self, *a, correction: bool = True, **kw):
        super().__init__(*a, **kw)
        self.correction = bool(correction)

    def sample(self, state: TSGState) -> TSGState:
        if self.process == "py":
            return self._sample_py(state)
        rng, alpha, s, counts = self._start(state)
        alpha_l, s_l = [float(x) for x in alpha], [float(x) for x in s]
        la = [math.log(x) for x in alpha_l]
        acc = prop = 0
        for i in rng.permutation(self.table.n_trees).tolist():
            prop += 1
            acc += self._update_tree(counts, i, alpha_l, s_l, la, rng)
        return self._finish(state, rng, alpha, s, counts, acc, prop)

    def _update_tree(self, counts, i, alpha, s, la, rng) -> int:
        t = self.table
        lo, hi = int(t.starts[i]), int(t.starts[i + 1])
        remove_tree(counts, i)
        _, Ip, M = constrained_inside(counts, i, alpha, s)
        new_site = sample_sites(counts, i, alpha, s, Ip, M, rng)
        old_site = list(counts.site[lo:hi])
        ok = new_site == old_site
        if not ok:
            old, _ = tree_ets(counts, i)
            new, new_below = tree_ets(counts, i, new_site)
            ok = True
            if self.correction:
                lr = crp_log_prob(counts, new, alpha, la) - crp_log_prob(counts, old, alpha, la) \
                    - map_log_prob(counts, new, alpha, la) + map_log_prob(counts, old, alpha, la)
                ok = lr >= 0 or rng.random() < math.exp(lr)
            if ok:
                counts.site[lo:hi] = bytes(new_site)
                counts.below[lo:hi] = new_below
        add_tree(counts, i)
        return int(ok)

    def _sample_py(self, state: TSGState) -> TSGState:
        """One PY sweep: every tree's joint (derivation, seating) MH step of the module
        docstring, in a random order."""
        rng, alpha, s, counts, rest = self._start_py(state)
        alpha_l, s_l = [float(x) for x in alpha], [float(x) for x in s]
        acc = prop = 0
        for i in rng.permutation(self.table.n_trees).tolist():
            prop += 1
            acc += self._update_tree_py(counts, rest, i, alpha_l, s_l, rng)
        return self._finish(state, rng, alpha, s, counts, acc, prop, rest)

    def _update_tree_py(self, counts, rest, i, alpha, s, rng) -> int:
        """Steps 1–4 of the module docstring's Pitman–Yor move for tree i."""
        t = self.table
        lo, hi = int(t.starts[i]), int(t.starts[i + 1])
        old_nodes = [v for v in range(lo, hi) if counts.site[v]]
        old = [counts.below[v] for v in old_nodes]
        remove_tree(counts, i)
        w_old, undo = rest.unseat_seq(old_nodes)
        eff, bridge = rest.map_weights()
        _, Ip, M = constrained_inside(counts, i, alpha, s, eff, bridge)
        new_site = sample_sites(counts, i, alpha, s, Ip, M, rng, eff, bridge)
        new, new_below = tree_ets(counts, i, new_site)
        log_q = 0.0 if new == old else \
            sum(rest.log_pred(f) for f in new) - sum(rest.log_pred(f) for f in old)
        new_nodes = [lo + j for j, x in enumerate(new_site) if x]
        lr = rest.seat_seq(new_nodes, new, rng) - w_old - log_q
        ok = not self.correction or lr >= 0 or rng.random() < math.exp(lr)
        if ok:
            counts.site[lo:hi] = bytes(new_site)
            counts.below[lo:hi] = new_below
        else:
            rest.unseat_seq(new_nodes)
            rest.reseat(undo)
        add_tree(counts, i)
        return int(ok)
