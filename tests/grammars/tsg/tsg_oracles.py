"""Brute-force oracles for the DP-TSG tests: every indicator configuration of a tiny
treebank, its exact log joint by a sequential CRP, and total-variation distances."""

from __future__ import annotations

import itertools
import math

import numpy as np

from strgm.grammars.tsg.fragments import ETCounts

TOY = [("S", ("X", ("A", "a"), ("B", "b")), ("C", "c")),
       ("S", ("X", ("A", "a"), ("B", "b")))]


def configs(table):
    """Every 0/1 indicator array of the table (roots fixed to 1)."""
    inner = table.inner
    for bits in itertools.product((0, 1), repeat=len(inner)):
        site = table.is_root.astype(np.uint8)
        site[inner] = bits
        yield site


def ets_of(table, site):
    """(root label, bracketed ET) of a configuration, cut directly from the trees
    (independent of the fragment tables)."""
    from strgm.grammars.tsg.transform import et_strings
    out = []
    for i, tr in enumerate(table.trees):
        sub = [int(x) for x in site[table.starts[i]:table.starts[i + 1]]]
        out.extend((e[1:].split()[0].rstrip(")"), e) for e in et_strings(tr, sub))
    return out


def walk_order(t, order):
    if isinstance(t, str):
        return
    order.append(t)
    for c in t[1:]:
        walk_order(c, order)


def log_p0(et: str, pcfg, s):
    """log P0 of a bracketed ET: parse it and apply the definition directly."""
    toks = et.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def parse():
        nonlocal pos
        if toks[pos] == "(":
            pos += 1
            lab = toks[pos]
            pos += 1
            kids = []
            while toks[pos] != ")":
                kids.append(parse())
            pos += 1
            return (lab,) + tuple(kids)
        pos += 1
        return toks[pos - 1]
    tree = parse()

    def lp(t, root):
        kids = t[1:]
        if len(kids) == 1 and isinstance(kids[0], str) and kids[0] not in s:
            rhs = (kids[0],)
        else:
            rhs = tuple(k if isinstance(k, str) else k[0] for k in kids)
        v = math.log(pcfg[(t[0], rhs)])
        for k in kids:
            if isinstance(k, str) and k in s:
                v += math.log(s[k])
            elif not isinstance(k, str):
                v += math.log(1 - s[k[0]]) + lp(k, False)
        return v
    return lp(tree, True)


def pcfg_of(trees):
    from collections import Counter
    f, tot = Counter(), Counter()

    def go(t):
        if isinstance(t, str):
            return
        rhs = tuple(k if isinstance(k, str) else k[0] for k in t[1:])
        f[(t[0], rhs)] += 1
        tot[t[0]] += 1
        for k in t[1:]:
            go(k)
    for t in trees:
        go(t)
    return {k: v / tot[k[0]] for k, v in f.items()}


def crp_log_joint(table, site, alpha: dict, s: dict):
    """log P(derivations) by drawing the ETs one at a time from the Pólya urn (eq. 1)."""
    pcfg = pcfg_of(table.trees)
    n, nc, total = {}, {}, 0.0
    for c, et in ets_of(table, site):
        p0 = math.exp(log_p0(et, pcfg, s))
        total += math.log((n.get(et, 0) + alpha[c] * p0) / (nc.get(c, 0) + alpha[c]))
        n[et] = n.get(et, 0) + 1
        nc[c] = nc.get(c, 0) + 1
    return total


def exact_posterior(kernel, alpha, s):
    """{indicator bytes: posterior probability} from the vectorised log joint."""
    t = kernel.table
    keys, lj = [], []
    for site in configs(t):
        c = ETCounts(t, site, np.log(s), np.log1p(-np.asarray(s)))
        keys.append(site.tobytes())
        lj.append(c.log_joint(alpha))
    lj = np.array(lj)
    p = np.exp(lj - lj.max())
    p /= p.sum()
    return dict(zip(keys, p))


def tv_distance(post: dict, samples) -> float:
    emp: dict = {}
    for k in samples:
        emp[k] = emp.get(k, 0) + 1
    m = len(samples)
    return 0.5 * sum(abs(post.get(k, 0.0) - emp.get(k, 0) / m) for k in set(post) | set(emp))


#: two trees whose ETs repeat inside a tree ((A a) twice in the first), so the sequential
#: CRP probability differs from the MAP proposal and the MH correction matters
TOY2 = [("S", ("A", "a"), ("S", ("A", "a"), ("B", "b"))),
        ("S", ("A", "a"), ("B", "b"))]


def run_chain(kernel, sweeps, seed=1, init="minimal"):
    """Indicator bytes after each of ``sweeps`` sweeps."""
    st = kernel.init(seed, init)
    out = []
    for _ in range(sweeps):
        st = kernel.sample(st)
        out.append(st.site.tobytes())
    return out, st
