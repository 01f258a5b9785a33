"""Elementary trees as interned fragments, their counts, P0 and the exact log joint.

**Fragments.** A node v of a training tree, together with its descendants down to (and
including, as bare labels) the nearest substitution sites, is a tree fragment. Fragments are
hash-consed bottom-up: the key of v's fragment is ``(rule(v), k1, k2)`` where k_j is −1 if
child j is a substitution site (a frontier nonterminal), the id of child j's fragment if it
is not, and −2 if there is no child j (a preterminal has none: its rule names the word).
Equal keys mean equal fragments, so the id is a canonical name of the fragment; the
elementary tree (ET) rooted at a site v is v's fragment (Cohn & Blunsom 2010 §2, Figure 1).
Each id is interned once per table (O(1) amortised) with its root label and log P0.

**Base distribution** P0^C (Cohn & Blunsom 2010 §2, footnote 1): for an ET e rooted at c,

    P0(e | c) = Π_{internal nodes i of e} P_CFG(rule_i)
                × Π_{non-root nonterminal nodes j of e} (s_{lab j} if j is a frontier node
                                                         else 1 − s_{lab j}),

computed recursively at interning: log P0(f) = log P_CFG(rule) + Σ_{children j}
[log s_{L_j} if k_j = −1 else log(1 − s_{L_j}) + log P0(k_j)].

**Counts.** n_{e,c} = number of sites whose ET is e, n_{·,c} = Σ_e n_{e,c}. ``ref[f]`` (kept
for the blocked sampler) counts every node whose fragment is f, i.e. Σ_e n_e × (occurrences
of f as a sub-fragment of e): the signed symbols sign(e_i) of Table 1 present in the MAP
grammar are exactly the fragments with ref > 0.

**Log joint** (the CRP/Pólya-urn probability of all derivations, exchangeable, order free):

    log P(derivations | α, s) = Σ_c [ Σ_{e rooted c} (lnΓ(n_e + α_c P0(e)) − lnΓ(α_c P0(e)))
                                      − (lnΓ(n_c + α_c) − lnΓ(α_c)) ].

Derivations determine the trees, so this is also log P(trees, derivations); it is the
"training log-likelihood" of the trace. lnΓ(n + a) − lnΓ(a) is evaluated as
lnΓ(n + a) − lnΓ(1 + a) + log a with log a in log space, exact even when α P0(e)
underflows (whole-tree ETs).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["Fragments", "ETCounts", "log_weight", "log_joint_terms"]


def log_weight(n: int, la: float) -> float:
    """log(n + exp(la)) without overflow or underflow (the numerator of eq. (1))."""
    if n <= 0:
        return la
    if la < -700.0:
        return math.log(n)
    return math.log(n + math.exp(la))


class Fragments:
    """The intern table: ``get(rule, k1, k2)`` → id; per id ``rule``, ``k1``, ``k2``,
    ``lab`` (root label) and ``lp0`` (log P0 of the ET rooted at the fragment);
    ``index[(rule, k1)]`` lists the (k2, id) pairs interned so far (bottom-up matching)."""

    def __init__(self, table, log_s, log1ms):
        self.table = table
        self.log_s = [float(x) for x in log_s]
        self.log1ms = [float(x) for x in log1ms]
        self.rule_lp = table.rule_lp.tolist()
        self.rule_kids = table.rule_kids
        self.rule_lab = table.rule_lab
        self.ids: dict = {}
        self.rule: list = []
        self.k1: list = []
        self.k2: list = []
        self.lab: list = []
        self.lp0: list = []
        self.index: dict = {}

    def get(self, rule: int, k1: int, k2: int) -> int:
        key = (rule, k1, k2)
        f = self.ids.get(key)
        if f is not None:
            return f
        f = self.ids[key] = len(self.rule)
        lp = self.rule_lp[rule]
        kids = self.rule_kids[rule]
        if kids:
            L = kids[0]
            lp += self.log_s[L] if k1 == -1 else self.log1ms[L] + self.lp0[k1]
            if len(kids) == 2:
                L = kids[1]
                lp += self.log_s[L] if k2 == -1 else self.log1ms[L] + self.lp0[k2]
        self.rule.append(rule)
        self.k1.append(k1)
        self.k2.append(k2)
        self.lab.append(self.rule_lab[rule])
        self.lp0.append(lp)
        self.index.setdefault((rule, k1), []).append((k2, f))
        return f

    def bracketed(self, f: int) -> str:
        """The ET rooted at fragment f as ``(S NP (VP (V saw) NP))`` (frontier nodes bare)."""
        t = self.table
        r = self.rule[f]
        if t.rule_word[r] is not None:
            return f"({t.labels[self.lab[f]]} {t.rule_word[r]})"
        parts = [t.labels[self.lab[f]]]
        for L, k in zip(t.rule_kids[r], (self.k1[f], self.k2[f])):
            parts.append(t.labels[L] if k == -1 else self.bracketed(k))
        return "(" + " ".join(parts) + ")"

    def nodes(self, f: int):
        """(rule ids of the internal nodes, labels of the frontier nodes, labels of the
        non-root internal nonterminal nodes) of the ET rooted at f."""
        rules, front, inner = [], [], []
        stack = [f]
        while stack:
            g = stack.pop()
            r = self.rule[g]
            rules.append(r)
            for L, k in zip(self.rule_kids[r], (self.k1[g], self.k2[g])):
                if k == -1:
                    front.append(L)
                else:
                    inner.append(L)
                    stack.append(k)
        return rules, front, inner


class ETCounts:
    """The derivation state of a corpus given its substitution indicators ``site`` (one
    0/1 per node, 1 at every root): the intern table ``frags``, ``below[v]`` (fragment id
    of node v), ``cnt`` (id → n_e), ``ncat`` (n_{·,c} per label) and, with ``with_ref``,
    ``ref`` (id → number of nodes whose fragment it is). Building is O(N) dict operations,
    in a deterministic order (reverse preorder), so equal indicators give equal tables."""

    def __init__(self, table, site, log_s, log1ms, with_ref: bool = False):
        self.table = table
        self.frags = Fragments(table, log_s, log1ms)
        self.site = bytearray(np.asarray(site, dtype=np.uint8).tobytes())
        n = table.n_nodes
        self.below = [0] * n
        self.cnt: dict = {}
        self.ncat = [0] * table.n_labels
        self.ref = {} if with_ref else None
        rule, c1, c2 = table.rule.tolist(), table.c1.tolist(), table.c2.tolist()
        lab = table.lab.tolist()
        get, below, site_, cnt = self.frags.get, self.below, self.site, self.cnt
        ref = self.ref
        for v in range(n - 1, -1, -1):
            a, b = c1[v], c2[v]
            k1 = -2 if a < 0 else (-1 if site_[a] else below[a])
            k2 = -2 if b < 0 else (-1 if site_[b] else below[b])
            f = below[v] = get(rule[v], k1, k2)
            if site_[v]:
                cnt[f] = cnt.get(f, 0) + 1
                self.ncat[lab[v]] += 1
            if ref is not None:
                ref[f] = ref.get(f, 0) + 1

    def ets(self):
        """(ids, counts) of the ETs with n_e > 0, as int arrays sorted by id."""
        items = sorted((f, c) for f, c in self.cnt.items() if c > 0)
        ids = np.array([f for f, _ in items], dtype=np.int64)
        return ids, np.array([c for _, c in items], dtype=float)

    def log_joint(self, alpha) -> float:
        """log P(derivations | α, s) of the module docstring (terms summed in sorted order,
        so the value depends only on the multiset of (n_e, α P0(e)), not on ids)."""
        return float(np.sort(log_joint_terms(self, alpha)).sum())


def log_joint_terms(counts: ETCounts, alpha) -> np.ndarray:
    """The terms of the log joint: one per ET with n_e > 0, one per label with n_c > 0."""
    alpha = np.asarray(alpha, dtype=float)
    ids, n = counts.ets()
    fr = counts.frags
    lab = np.asarray(fr.lab, dtype=np.int64)[ids]
    la = np.log(alpha[lab]) + np.asarray(fr.lp0, dtype=float)[ids]
    a = np.exp(la)
    et_terms = gammaln(n + a) - gammaln(1.0 + a) + la
    nc = np.asarray(counts.ncat, dtype=float)
    used = nc > 0
    cat_terms = -(gammaln(nc[used] + alpha[used]) - gammaln(alpha[used]))
    return np.concatenate([et_terms, cat_terms])
