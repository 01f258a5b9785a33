"""Vectorised inside–outside charts: one chart, many queries.

For a batch of B sentences of equal length n and a compiled grammar (:mod:`cfg`) with N
nonterminals and event weights (binary w_r, unary U, lexical w_l) the chart holds, for every
span width w and start s (S_w = n − w + 1 starts):

* pre-inside   p(X, s, w) = Σ_{lexical X→w[s:s+w]} w_l
                          + Σ_{r = X→B C} w_r Σ_{k=1}^{w−1} q(B, s, k) q(C, s+k, w−k)
* inside       q(·, s, w) = U* p(·, s, w),  U* = (I − U)^{-1}        (unary closure)
* outside      o(·, s, w) = U*ᵀ ō(·, s, w) where ō is the outside of a post-closure node:
  ō(S, 0, n) = 1 and ō(B, s, k) += Σ_{r=A→B C} o(A, s, w) w_r q(C, s+k, w−k) (and the
  symmetric right-child term).

Then Z = q(S, 0, n) and the expected counts (Baker 1979; Wang & Blunsom 2013 §2.2) are
E[f_{A→BC}] = Σ o(A,s,w) w_r Σ_k q(B,s,k) q(C,s+k,w−k) / Z,  E[f_{A→B}] = Σ o(A) U_{AB} q(B) / Z,
E[f_{X→lex}] = Σ o(X) w_l / Z; these equal ∂ log Z / ∂ log w (tested by finite differences).

Numerics: each cell stores a vector with max entry 1 and a log scale (max-subtraction), so
products of children need one exp per (start, split) pair, not per nonterminal
(:mod:`strgm.grammars.chart_ops`).  Sampling and decoding over a chart are in
:mod:`strgm.grammars.chart_trees`.

Vectorisation: a Python loop over widths only.  At width w the K = w − 1 left children
(B·S_w, K, N) and right children are stacked from contiguous slices, the rule products
(B·S_w, K, R) are formed by gathering child columns, and scattered to parents with a sparse
matrix.  Cost O(B n³ R / 6) flops for R binary events, memory O(B n² N) for the chart plus
the (B·S, K, R) temporaries, which are chunked to ``max_temp_bytes``; a chart larger than
``max_chart_bytes`` raises :class:`~strgm.errors.MessageTooLargeError` (memory guard).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from strgm.errors import GrammarError, InputError, MessageTooLargeError
from strgm.grammars.cfg import CompiledGrammar
from strgm.grammars.chart_ops import DEFAULT_MAX_CHART_BYTES, DEFAULT_MAX_TEMP_BYTES, \
    _log, _normalise, _Operators, _sadd, _scatter, chart_bytes, chart_limit
from strgm.grammars.chart_trees import TreeQueries

__all__ = ["Chart", "inside", "corpus_inside_outside", "CorpusCounts", "chart_bytes",
           "chart_limit", "batches_by_length", "DEFAULT_MAX_CHART_BYTES"]

class Chart(TreeQueries):
    """Inside chart for a batch of equal-length sentences (built by :func:`inside`).

    Queries: :meth:`log_partition`, :meth:`expected_counts` (here), :meth:`viterbi`,
    :meth:`sample`, :meth:`maxrule` (:mod:`strgm.grammars.chart_trees`).  All leave the
    chart unchanged except for caching the outside pass.
    """

    def __init__(self, cg, sentences, theta, max_chart_bytes, max_temp_bytes):
        self.cg = cg
        self.sentences = [tuple(s) for s in sentences]
        if not self.sentences:
            raise InputError("empty batch")
        n = len(self.sentences[0])
        if n == 0:
            raise GrammarError("cannot parse an empty sentence (no epsilon rules)")
        if any(len(s) != n for s in self.sentences):
            raise InputError("all sentences of a batch must have the same length")
        self.n, self.B, self.N = n, len(self.sentences), cg.n_nts
        need = chart_bytes(self.N, n, self.B)
        if need > max_chart_bytes:
            raise MessageTooLargeError(
                f"chart for {self.B} sentence(s) of length {n} with {self.N} nonterminals needs "
                f"~{need / 2**20:.0f} MiB > max_chart_bytes={max_chart_bytes / 2**20:.0f} MiB")
        self.max_temp_bytes = max_temp_bytes
        self.theta = np.asarray(theta, dtype=float)
        key = self.theta.tobytes()  # reuse the operators of the last θ (one chart per batch)
        hit = cg._cache.get("ops")
        if hit is None or hit[0] != key:
            hit = cg._cache["ops"] = (key, _Operators(cg, self.theta))
        self.ops = hit[1]
        self._lexical()
        self._inside()
        self._outside_done = False

    # -- construction -------------------------------------------------------------------
    def _lexical(self):
        """Per width: (b, s, nt, event) arrays of lexical matches in the batch."""
        per = defaultdict(lambda: ([], [], [], []))
        for b, toks in enumerate(self.sentences):
            for m, (ss, nts, evs) in self.cg.lexical_entries(toks).items():
                lst = per[m]
                lst[0].append(np.full(len(ss), b))
                lst[1].append(ss)
                lst[2].append(nts)
                lst[3].append(evs)
        self.lexw = {m: tuple(np.concatenate(a) for a in v) for m, v in per.items()}

    def _stack(self, vals, scs, w, S, rows_from_left):
        ks = range(1, w)
        if rows_from_left:
            V = np.stack([vals[k][:, :S] for k in ks], axis=2)
            C = np.stack([scs[k][:, :S] for k in ks], axis=2)
        else:
            V = np.stack([vals[w - k][:, k:k + S] for k in ks], axis=2)
            C = np.stack([scs[w - k][:, k:k + S] for k in ks], axis=2)
        return V.reshape(-1, w - 1, self.N), C.reshape(-1, w - 1)

    def _chunks(self, rows, K, R):
        per = max(1, int(self.max_temp_bytes // max(1, 8 * K * max(R, 1) * 3)))
        return [slice(i, min(rows, i + per)) for i in range(0, rows, per)]

    def _rule_inside(self, L, Ls, R, Rs):
        """Σ_k q(B_r, left_k) q(C_r, right_k) per row and binary event, scaled by M (rows)."""
        cg = self.cg
        tot = Ls + Rs
        M = tot.max(axis=1)
        Mf = np.where(np.isfinite(M), M, 0.0)
        with np.errstate(invalid="ignore"):
            f = np.where(np.isfinite(tot), np.exp(tot - Mf[:, None]), 0.0)
        rows, K = f.shape
        out = np.empty((rows, len(cg.bin_parent)))
        for c in self._chunks(rows, K, len(cg.bin_parent)):
            prod = L[c][:, :, cg.bin_left] * R[c][:, :, cg.bin_right]
            out[c] = np.matmul(f[c][:, None, :], prod)[:, 0, :]
        return out, M

    def _inside(self):
        """The inside pass, widths 1..n: lexical, binary (via :meth:`_rule_inside`), then
        the unary closure; per-width products are kept for the outside pass when they fit
        in ``max_temp_bytes``."""
        n, B, N, ops = self.n, self.B, self.N, self.ops
        self.pre_val = [None] * (n + 1)
        self.pre_sc = [None] * (n + 1)
        self.in_val = [None] * (n + 1)
        self.in_sc = [None] * (n + 1)
        self._wcache = {}
        cached = 0
        for w in range(1, n + 1):
            S = n - w + 1
            lex = np.zeros((B, S, N))
            if w in self.lexw:
                bb, ss, nts, evs = self.lexw[w]
                np.add.at(lex, (bb, ss, nts), ops.wl[evs])
            pv, ps = _normalise(lex, np.zeros((B, S)))
            if w > 1 and len(self.cg.bin_parent):
                L, Ls = self._stack(self.in_val, self.in_sc, w, S, True)
                R, Rs = self._stack(self.in_val, self.in_sc, w, S, False)
                ri, M = self._rule_inside(L, Ls, R, Rs)
                size = 8 * (L.size + R.size + ri.size)
                if cached + size <= self.max_temp_bytes:  # reuse in the outside pass
                    self._wcache[w] = (L, Ls, R, Rs, ri, M)
                    cached += size
                bv = _scatter(ri * ops.wb, ops.Pp).reshape(B, S, N)
                bv, bs = _normalise(bv, M.reshape(B, S))
                pv, ps = _sadd(pv, ps, bv, bs)
            self.pre_val[w], self.pre_sc[w] = pv, ps
            self.in_val[w], self.in_sc[w] = _normalise(ops.close_in(pv), ps)
        with np.errstate(divide="ignore"):
            self.logZ = _log(self.in_val[n][:, 0, self.cg.start]) + self.in_sc[n][:, 0]

    # -- queries --------------------------------------------------------------------------
    def log_partition(self) -> np.ndarray:
        """log Z per sentence (−inf: no parse).  O(1) after construction."""
        return self.logZ.copy()

    def _outside(self):
        """DP kernel: the outside pass, widths n..1 (module docstring), accumulating the
        expected event counts (binary, unary, lexical) on the way; one pass per chart."""
        if self._outside_done:
            return
        n, B, N, ops, cg = self.n, self.B, self.N, self.ops, self.cg
        # outside of post-closure nodes, accumulated in log space (one logaddexp per child)
        ot_log = [np.full((B, n - w + 1, N), -np.inf) if w else None for w in range(n + 1)]
        ot_log[n][:, 0, cg.start] = 0.0
        self.out_val = [None] * (n + 1)
        self.out_sc = [None] * (n + 1)
        lz = np.where(np.isfinite(self.logZ), self.logZ, np.inf)  # unparsable -> 0 counts
        cb = np.zeros((B, len(cg.bin_parent)))
        cu = np.zeros((B, len(cg.un_parent)))
        cl = np.zeros((B, len(cg.lex_parent)))
        for w in range(n, 0, -1):
            S = n - w + 1
            mx = ot_log[w].max(axis=-1)
            mxf = np.where(np.isfinite(mx), mx, 0.0)
            ov, osc = _normalise(ops.close_out(np.exp(ot_log[w] - mxf[..., None])),
                                 np.where(np.isfinite(mx), mx, -np.inf))
            self.out_val[w], self.out_sc[w] = ov, osc
            g = osc - lz[:, None]  # (B, S) log scale of o / Z (may be large: o/Z ~ 1/q)
            if len(cg.un_parent):
                gi = np.minimum(g + self.in_sc[w], 700.0)
                egi = np.where(np.isfinite(gi), np.exp(gi), 0.0)
                t = ov[:, :, cg.un_parent] * self.in_val[w][:, :, cg.un_child] * ops.wu
                cu += np.einsum("bse,bs->be", t, egi)
            if w in self.lexw:
                bb, ss, nts, evs = self.lexw[w]
                with np.errstate(invalid="ignore", divide="ignore"):
                    lv = _log(ov[bb, ss, nts]) + g[bb, ss] + ops.logwl[evs]
                np.add.at(cl, (bb, evs), np.where(np.isfinite(lv), np.exp(np.minimum(lv, 700)), 0.0))
            if w == 1 or not len(cg.bin_parent):
                continue
            if w in self._wcache:
                L, Ls, R, Rs, ri, M = self._wcache.pop(w)
            else:
                L, Ls = self._stack(self.in_val, self.in_sc, w, S, True)
                R, Rs = self._stack(self.in_val, self.in_sc, w, S, False)
                ri, M = self._rule_inside(L, Ls, R, Rs)
            po = ov.reshape(-1, N)[:, cg.bin_parent] * ops.wb  # (BS, Rb), scale osc
            gm = np.minimum(g.reshape(-1) + M, 700.0)
            egm = np.where(np.isfinite(gm), np.exp(gm), 0.0)
            cb += ((po * ri) * egm[:, None]).reshape(B, S, -1).sum(axis=1)
            rows, K = Ls.shape
            cL = np.empty((rows, K, N))
            cR = np.empty((rows, K, N))
            for c in self._chunks(rows, K, len(cg.bin_parent)):
                cL[c] = _scatter((po[c][:, None, :] * R[c][:, :, cg.bin_right]).reshape(-1, po.shape[1]),
                                 ops.Pl).reshape(-1, K, N)
                cR[c] = _scatter((po[c][:, None, :] * L[c][:, :, cg.bin_left]).reshape(-1, po.shape[1]),
                                 ops.Pr).reshape(-1, K, N)
            osf = osc.reshape(-1)
            sL = (osf[:, None] + Rs).reshape(B, S, K)
            sR = (osf[:, None] + Ls).reshape(B, S, K)
            cL = cL.reshape(B, S, K, N)
            cR = cR.reshape(B, S, K, N)
            with np.errstate(divide="ignore", invalid="ignore"):
                lL = np.log(cL) + sL[..., None]
                lR = np.log(cR) + sR[..., None]
            for k in range(1, w):
                np.logaddexp(ot_log[k][:, :S], lL[:, :, k - 1], out=ot_log[k][:, :S])
                tgt = ot_log[w - k][:, k:k + S]
                np.logaddexp(tgt, lR[:, :, k - 1], out=tgt)
        self.event_counts = (cb, cu, cl)
        self._outside_done = True

    def expected_counts(self, per_sentence: bool = False) -> np.ndarray:
        """E[f_r | w] for every user rule r: shape (n_rules,) summed, or (B, n_rules).

        Unparsable sentences contribute zero.  Cost: one outside pass, same order as inside.
        """
        self._outside()
        cg = self.cg
        nR = len(cg.grammar.rules)
        out = np.zeros((self.B, nR))
        for cnt, rule in zip(self.event_counts, (cg.bin_rule, cg.un_rule, cg.lex_rule)):
            m = rule >= 0
            if m.any():
                np.add.at(out, (slice(None), rule[m]), cnt[:, m])
        return out if per_sentence else out.sum(axis=0)


def inside(cg: CompiledGrammar, sentences, theta=None, *,
           max_chart_bytes: float | None = None,
           max_temp_bytes: float = DEFAULT_MAX_TEMP_BYTES) -> Chart:
    """Build the inside chart of a batch of equal-length sentences under rule weights θ
    (default: the grammar's normalised probabilities); ``max_chart_bytes`` defaults to
    :func:`chart_limit`."""
    if theta is None:
        theta = cg.grammar.probabilities()
    if max_chart_bytes is None:
        max_chart_bytes = chart_limit(cg)
    return Chart(cg, sentences, theta, max_chart_bytes, max_temp_bytes)


class CorpusCounts:
    """Result of :func:`corpus_inside_outside`: ``logZ`` (per sentence, −inf if no parse),
    ``counts`` (summed expected rule counts), optionally ``per_sentence`` (list of sparse
    (rule indices, values) pairs), and ``unparsable`` (indices)."""

    def __init__(self, logZ, counts, per_sentence=None):
        self.logZ = logZ
        self.counts = counts
        self.per_sentence = per_sentence
        self.unparsable = [int(i) for i in np.flatnonzero(~np.isfinite(logZ))]

    @property
    def loglik(self) -> float:
        """Σ log P(w_i | θ) over parsable sentences."""
        f = np.isfinite(self.logZ)
        return float(self.logZ[f].sum())


def batches_by_length(sentences, batch_size: int = 64, n_nts: int | None = None,
                      max_chart_bytes: float = DEFAULT_MAX_CHART_BYTES):
    """Indices of sentences grouped by length, in batches of at most ``batch_size``; with
    ``n_nts`` (the compiled grammar's nonterminals) also small enough that a batch's chart
    fits in ``max_chart_bytes`` (a lone sentence too long for it still forms a batch, and
    its chart raises :class:`MessageTooLargeError`)."""
    groups = defaultdict(list)
    for i, s in enumerate(sentences):
        groups[len(s)].append(i)
    for n in sorted(groups):
        idx = groups[n]
        size = batch_size
        if n_nts is not None and n > 0:
            size = max(1, min(batch_size, int(max_chart_bytes // chart_bytes(n_nts, n))))
        for j in range(0, len(idx), size):
            yield idx[j:j + size]


def corpus_inside_outside(cg: CompiledGrammar, sentences, theta=None, *, counts: bool = True,
                          per_sentence: bool = False, batch_size: int = 64,
                          **chart_kw) -> CorpusCounts:
    """log P(w_i | θ) for every sentence and the expected rule counts of the corpus.

    Sentences are batched by length.  Unparsable sentences get −inf and are listed in
    ``result.unparsable`` (never an exception).  Cost Σ_i O(n_i³ R).
    """
    sentences = [tuple(s) for s in sentences]
    if theta is None:
        theta = cg.grammar.probabilities()
    logZ = np.full(len(sentences), -np.inf)
    tot = np.zeros(len(cg.grammar.rules))
    per = [None] * len(sentences) if per_sentence else None
    limit = chart_kw.get("max_chart_bytes") or chart_limit(cg)
    for idx in batches_by_length(sentences, batch_size, cg.n_nts, limit):
        if len(sentences[idx[0]]) == 0:
            continue
        ch = inside(cg, [sentences[i] for i in idx], theta, **chart_kw)
        logZ[idx] = ch.logZ
        if counts or per_sentence:
            c = ch.expected_counts(per_sentence=True)
            tot += c.sum(axis=0)
            if per_sentence:
                for j, i in enumerate(idx):
                    nz = np.flatnonzero(c[j])
                    per[i] = (nz, c[j, nz])
    return CorpusCounts(logZ, tot, per)
