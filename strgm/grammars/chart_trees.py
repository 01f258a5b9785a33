"""Tree queries of an inside chart: sampling, Viterbi and max-rule decoding.

Mixed into :class:`strgm.grammars.chart.Chart`, whose inside pass (and, for max-rule, the
outside pass) these read; see that module for the chart's layout (scaled vectors per span
width, start and nonterminal).

* :meth:`TreeQueries.sample` — exact top-down sampling from P(t | w, θ) (Goodman 1998;
  Johnson, Griffiths & Goldwater 2007): at a post-closure node X over (s, w) choose "stop"
  (weight p(X, s, w), the pre-closure inside) or a unary X → B (w_u q(B, s, w)); at a
  pre-closure node choose a lexical rule (w_l) or a binary rule and split
  (w_r q(B, s, k) q(C, s+k, w−k)).  Cost O(n · K · R_X) per tree node.
* :meth:`TreeQueries.viterbi` — the max-product version of the inside recursion with back
  pointers; the unary closure becomes a Bellman–Ford relaxation over unary chains.
* :meth:`TreeQueries.maxrule` — the same recursion scoring each anchored rule by its log
  posterior log[o(A,s,w) w_r q(B) q(C) / Z] (Petrov & Klein 2007 style).
"""

from __future__ import annotations

import numpy as np

from strgm.errors import GrammarError
from strgm.grammars.cfg import unbinarise
from strgm.grammars.chart_ops import _log

__all__ = ["TreeQueries"]


def _draw(rng, logits) -> int:
    """Index drawn with probability ∝ exp(logits)."""
    logits = np.asarray(logits, dtype=float).ravel()
    m = logits.max()
    p = np.exp(logits - m)
    c = np.cumsum(p)
    return int(min(np.searchsorted(c, rng.random() * c[-1], side="right"), len(c) - 1))


def _group_argmax(vals, order, group_start, n, axis):
    """Per group of events (sorted by parent, ``group_start``) the max of ``vals`` and the
    first event attaining it."""
    vo = np.take(vals, order, axis=axis)
    gmax = np.maximum.reduceat(vo, group_start, axis=axis)
    rep = np.repeat(gmax, np.diff(np.r_[group_start, n]), axis=axis)
    shape = [1] * vo.ndim
    shape[axis] = n
    idx = np.where(vo == rep, np.arange(n).reshape(shape), n)
    garg = np.minimum.reduceat(idx, group_start, axis=axis)
    return gmax, order[np.minimum(garg, n - 1)]


class TreeQueries:
    """Sampling and decoding over a built chart (module docstring)."""

    def _lexmap(self, b):
        d = {}
        for m, (bb, ss, nts, evs) in self.lexw.items():
            sel = bb == b
            for s, x, e in zip(ss[sel], nts[sel], evs[sel]):
                d[(int(s), m, int(x))] = int(e)
        return d

    def _logs(self, b):
        ql = [None] + [_log(self.in_val[w][b]) + self.in_sc[w][b][:, None]
                       for w in range(1, self.n + 1)]
        pl = [None] + [_log(self.pre_val[w][b]) + self.pre_sc[w][b][:, None]
                       for w in range(1, self.n + 1)]
        return ql, pl

    def sample(self, rng, k: int = 1):
        """Draw k trees per sentence from P(t | w, θ) top-down (Goodman 1998 / JGG07).

        ``rng``: one generator for every sentence, or a sequence of one per sentence (so
        that a sentence's trees do not depend on the others in the chart). Returns a list
        (per sentence) of lists of (user tree, user rule ids in preorder); ``None`` for an
        unparsable sentence.  Cost O(n · K · R_X) per tree node.
        """
        cg = self.cg
        res = []
        rngs = rng if isinstance(rng, (list, tuple)) else [rng] * self.B
        for b in range(self.B):
            rng = rngs[b]
            if not np.isfinite(self.logZ[b]):
                res.append(None)
                continue
            ql, pl = self._logs(b)
            lexmap = self._lexmap(b)
            draws = []
            for _ in range(k):
                rules: list = []
                tree = self._sample_post(cg.start, 0, self.n, ql, pl, lexmap, rng, rules)
                draws.append((unbinarise(cg, tree), rules))
            res.append(draws)
        return res

    _draw = staticmethod(_draw)

    def _sample_post(self, X, s, w, ql, pl, lexmap, rng, rules):
        ops, cg = self.ops, self.cg
        evs = ops.un_by_parent.get(X)
        if evs is not None:
            logits = np.concatenate([[pl[w][s, X]], ops.logwu[evs] + ql[w][s, cg.un_child[evs]]])
            j = _draw(rng, logits)
            if j > 0:
                e = int(evs[j - 1])
                if cg.un_rule[e] >= 0:
                    rules.append(int(cg.un_rule[e]))
                child = self._sample_post(int(cg.un_child[e]), s, w, ql, pl, lexmap, rng, rules)
                return (X, s, s + w, [child])
        return self._sample_pre(X, s, w, ql, pl, lexmap, rng, rules)

    def _sample_pre(self, X, s, w, ql, pl, lexmap, rng, rules):
        ops, cg = self.ops, self.cg
        le = lexmap.get((s, w, X))
        evs = ops.bin_by_parent.get(X) if w > 1 else None
        parts = []
        if le is not None:
            parts.append(np.array([ops.logwl[le]]))
        if evs is not None:
            ks = np.arange(1, w)
            left = np.stack([ql[k][s, cg.bin_left[evs]] for k in ks])
            right = np.stack([ql[w - k][s + k, cg.bin_right[evs]] for k in ks])
            parts.append((left + right + ops.logwb[evs]).ravel())
        j = _draw(rng, np.concatenate(parts))
        if le is not None:
            if j == 0:
                if cg.lex_rule[le] >= 0:
                    rules.append(int(cg.lex_rule[le]))
                return (X, s, s + w, list(cg.lex_rhs[le]))
            j -= 1
        ki, ri = divmod(j, len(evs))
        k, e = ki + 1, int(evs[ri])
        if cg.bin_rule[e] >= 0:
            rules.append(int(cg.bin_rule[e]))
        lt = self._sample_post(int(cg.bin_left[e]), s, k, ql, pl, lexmap, rng, rules)
        rt = self._sample_post(int(cg.bin_right[e]), s + k, w - k, ql, pl, lexmap, rng, rules)
        return (X, s, s + w, [lt, rt])

    def viterbi(self):
        """Most probable tree per sentence: list of (user tree, log P(t, w | θ)) or None."""
        return self._maxdp(maxrule=False)

    def maxrule(self):
        """Max-rule-product parse (Petrov & Klein 2007 style): the tree maximising the sum
        of log posteriors of its anchored rules, Σ log [o(A,s,w) w_r q(B) q(C) / Z].
        Returns list of (user tree, score) or None."""
        self._outside()
        return self._maxdp(maxrule=True)

    def _maxdp(self, maxrule: bool):
        with np.errstate(invalid="ignore", divide="ignore"):
            return self._maxdp_impl(maxrule)

    def _maxdp_impl(self, maxrule: bool):
        """Max-product inside recursion over widths, then the back-trace per sentence."""
        n, B, N, cg = self.n, self.B, self.N, self.cg
        best = [None] * (n + 1)
        bp_pre = [None] * (n + 1)  # (B,S,N) code: >=0 binary (k*Rb + e), -1 none, <=-2 lex
        bp_un = [None] * (n + 1)
        post = None
        if maxrule:
            post = ([None] + [_log(self.out_val[w]) + self.out_sc[w][..., None] for w in range(1, n + 1)],
                    [None] + [_log(self.in_val[w]) + self.in_sc[w][..., None] for w in range(1, n + 1)],
                    np.where(np.isfinite(self.logZ), self.logZ, 0.0))
        for w in range(1, n + 1):
            S = n - w + 1
            bpre = np.full((B, S, N), -np.inf)
            code = np.full((B, S, N), -1, dtype=np.int64)
            self._max_lexical(w, bpre, code, post)
            if w > 1 and len(cg.bin_parent):
                self._max_binary(w, S, best, bpre, code, post)
            bp_pre[w] = code
            best[w], bp_un[w] = self._max_unary(w, bpre, post)
        return [self._backtrace(b, best, bp_pre, bp_un) for b in range(B)]

    def _max_lexical(self, w, bpre, code, post):
        if w not in self.lexw:
            return
        bb, ss, nts, evs = self.lexw[w]
        sc = self.ops.logwl[evs]
        if post is not None:
            ol, _, lzb = post
            sc = ol[w][bb, ss, nts] + sc - lzb[bb]
        bpre[bb, ss, nts] = sc
        code[bb, ss, nts] = -2 - evs

    def _max_binary(self, w, S, best, bpre, code, post):
        """Best binary rule and split per (sentence, start, parent) at width ``w``."""
        B, N, ops, cg = self.B, self.N, self.ops, self.cg
        Rb = len(cg.bin_parent)
        ks = range(1, w)
        Lb = np.stack([best[k][:, :S] for k in ks], axis=2).reshape(B * S, w - 1, N)
        Rbst = np.stack([best[w - k][:, k:k + S] for k in ks], axis=2).reshape(B * S, w - 1, N)
        sc = Lb[:, :, cg.bin_left] + Rbst[:, :, cg.bin_right]
        if post is not None:
            ol, qlog, lzb = post
            Lq = np.stack([qlog[k][:, :S] for k in ks], axis=2).reshape(B * S, w - 1, N)
            Rq = np.stack([qlog[w - k][:, k:k + S] for k in ks], axis=2).reshape(B * S, w - 1, N)
            par = ol[w].reshape(B * S, N)[:, cg.bin_parent] - np.repeat(lzb, S)[:, None]
            sc = sc + Lq[:, :, cg.bin_left] + Rq[:, :, cg.bin_right] + ops.logwb + par[:, None, :]
        else:
            sc = sc + ops.logwb
        kb = sc.argmax(axis=1)
        sb = np.take_along_axis(sc, kb[:, None, :], axis=1)[:, 0, :]
        gmax, ev = _group_argmax(sb, ops.bin_order, ops.bin_group_start, Rb, axis=1)
        kk = np.take_along_axis(kb, ev, axis=1)
        cur = bpre.reshape(B * S, N)[:, ops.bin_group_parent]
        better = (gmax > cur) & np.isfinite(gmax)
        bpre2 = bpre.reshape(B * S, N)
        code2 = code.reshape(B * S, N)
        rowsel, colsel = np.nonzero(better)
        bpre2[rowsel, ops.bin_group_parent[colsel]] = gmax[rowsel, colsel]
        code2[rowsel, ops.bin_group_parent[colsel]] = (kk[rowsel, colsel] + 1) * Rb + ev[rowsel, colsel]

    def _max_unary(self, w, bpre, post):
        """Relax unary chains (Bellman–Ford, at most |unary nodes| + 1 rounds)."""
        ops, cg = self.ops, self.cg
        cur = bpre.copy()
        ucode = np.full(bpre.shape, -1, dtype=np.int64)
        if not len(cg.un_parent):
            return cur, ucode
        extra = ops.logwu
        if post is not None:
            ol, qlog, lzb = post
            extra = (ol[w][:, :, cg.un_parent] + qlog[w][:, :, cg.un_child]
                     - lzb[:, None, None] + ops.logwu)
        par = ops.un_group_parent
        for _ in range(len(ops.un_nodes) + 1):
            cand = cur[:, :, cg.un_child] + extra
            gmax, ev = _group_argmax(cand, ops.un_order, ops.un_group_start,
                                     len(ops.un_order), axis=2)
            old = cur[:, :, par]
            with np.errstate(invalid="ignore"):
                imp = gmax > old + 1e-12 * np.abs(np.where(np.isfinite(old), old, 0)).clip(1)
            imp &= np.isfinite(gmax)
            if not imp.any():
                break
            b_, s_, j_ = np.nonzero(imp)
            cur[b_, s_, par[j_]] = gmax[b_, s_, j_]
            ucode[b_, s_, par[j_]] = ev[b_, s_, j_]
        return cur, ucode

    def _backtrace(self, b, best, bp_pre, bp_un):
        """(user tree, score) of sentence ``b`` from the back pointers, or None."""
        n, cg = self.n, self.cg
        Rb = len(cg.bin_parent)
        v = best[n][b, 0, cg.start]
        if not np.isfinite(v):
            return None

        def post(X, s, w):
            e = bp_un[w][b, s, X]
            if e >= 0:
                return (X, s, s + w, [post(int(cg.un_child[e]), s, w)])
            return pre(X, s, w)

        def pre(X, s, w):
            c = int(bp_pre[w][b, s, X])
            if c <= -2:
                return (X, s, s + w, list(cg.lex_rhs[-2 - c]))
            k, e = divmod(c, Rb)
            return (X, s, s + w, [post(int(cg.bin_left[e]), s, k),
                                  post(int(cg.bin_right[e]), s + k, w - k)])
        return (unbinarise(cg, post(cg.start, 0, n)), float(v))


def tree_of_rules(g, rules) -> tuple:
    """The user tree whose preorder rule indices are ``rules`` (the inverse of
    :func:`strgm.grammars.cfg.tree_rules`); a symbol with rules is expanded by the next rule, any other is a
    word. A sequence that is not one tree's derivation is a :class:`GrammarError`."""
    it = iter(rules)

    def build(label):
        try:
            r = g.rules[next(it)]
        except StopIteration:
            raise GrammarError(f"derivation ends before {label} is expanded") from None
        if r.lhs != label:
            raise GrammarError(f"derivation expands {label} by a rule of {r.lhs}")
        return (label,) + tuple(build(c) if c in g.nt_index else c for c in r.rhs)
    first = g.rules[rules[0]].lhs if len(rules) else g.start
    tree = build(first)
    if next(it, None) is not None:
        raise GrammarError("derivation has rules left after its tree is complete")
    return tree
