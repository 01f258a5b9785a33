"""The rule search's UR step (:mod:`strgm.models.rule_search`), compiled: each morpheme in
turn takes the candidate UR with the most training words right under the cascade, the
others fixed.

For morpheme m with candidates c_1 … c_k, the score of c is λ · #{words w ∋ m :
R(u_w[m ← c]) = w} − μ · |c|; m moves to the first candidate of largest score if that
beats its current one's (ties keep the current UR), and the next morpheme sees the move.
:class:`URStep` does this in one compiled call per step: the k candidates' rows of the
words holding m are built, rewritten by the cascade (the kernels of
:mod:`strgm.models.rule_kernels`) and checked against the words. Its reference is
:func:`strgm.models.rule_search.ur_step_reference`, one candidate at a time (also the
search's fallback for a cascade the kernels do not cover). Cost per step: O(Σ_m k_m ×
words holding m × cascade × length).
"""

from __future__ import annotations

import numpy as np

from strgm.compiled import njit
from strgm.models.rule_kernels import _apply_all


@njit(cache=True)
def _step(bank, words, cands, cand_len, n_cands, cur, rows_ptr, rows_idx, gold, gold_m,
          word_cost, ur_cost):  # pragma: no cover - compiled
    """One UR step over morphemes 0..M−1 (``cur``: each one's candidate, updated in
    place): ``words`` (W × morphemes, −1 padded), candidate labels ``cands[m, c]`` of
    length ``cand_len[m, c]``, the words holding m ``rows_idx[rows_ptr[m]:rows_ptr[m +
    1]]``. Whether any UR moved."""
    meta, tables, masks, spreads = bank
    edge = tables.shape[1] - 1
    changed = False
    for m in range(n_cands.shape[0]):
        k = n_cands[m]
        rows = rows_idx[rows_ptr[m]:rows_ptr[m + 1]]
        if k < 2 or rows.shape[0] == 0:
            continue
        width = 0
        for w in rows:
            size = 0
            for t in words[w]:
                if t >= 0:
                    size += cand_len[t].max() if t == m else cand_len[t, cur[t]]
            width = max(width, size)
        mat = np.zeros((k * rows.shape[0], width + 3), dtype=np.int64)
        cells = np.zeros(k * rows.shape[0], dtype=np.int64)
        for c in range(k):
            for q in range(rows.shape[0]):
                r = c * rows.shape[0] + q
                mat[r, 0] = edge
                j = 1
                for t in words[rows[q]]:
                    if t >= 0:
                        u = c if t == m else cur[t]
                        for a in range(cand_len[t, u]):
                            mat[r, j] = cands[t, u, a]
                            j += 1
                mat[r, j] = edge
                cells[r] = j + 1
        out, out_m = _apply_all(meta, tables, masks, spreads, mat, cells)
        scores = np.empty(k)
        for c in range(k):
            right = 0
            for q in range(rows.shape[0]):
                r, g = c * rows.shape[0] + q, rows[q]
                same = out_m[r] == gold_m[g]
                for j in range(out_m[r]):
                    if not same:
                        break
                    same = out[r, j] == gold[g, j]
                right += same
            scores[c] = word_cost * right - ur_cost * cand_len[m, c]
        best = np.argmax(scores)
        if best != cur[m] and scores[best] > scores[cur[m]]:
            cur[m] = best
            changed = True
    return changed


class URStep:
    """The arrays of :func:`_step` for a search's words and candidate URs
    (``cands``: morpheme → [labels, ...], in the step's order)."""

    def __init__(self, words: list, cands: dict, gold: np.ndarray, gold_m: np.ndarray):
        self.morphs = list(cands)
        self.cands = cands
        at = {m: i for i, m in enumerate(self.morphs)}
        self.pos = {m: {c: i for i, c in reversed(list(enumerate(cs)))}
                    for m, cs in cands.items()}
        most = max((len(ms) for ms, _ in words), default=0)
        self.words = np.full((len(words), max(most, 1)), -1, dtype=np.int64)
        for i, (ms, _) in enumerate(words):
            self.words[i, :len(ms)] = [at[m] for m in ms]
        k = max((len(c) for c in cands.values()), default=0)
        size = max((len(u) for c in cands.values() for u in c), default=0)
        self.cand = np.zeros((len(cands), max(k, 1), max(size, 1)), dtype=np.int64)
        self.cand_len = np.zeros((len(cands), max(k, 1)), dtype=np.int64)
        for i, m in enumerate(self.morphs):
            for c, u in enumerate(cands[m]):
                self.cand[i, c, :len(u)] = u
                self.cand_len[i, c] = len(u)
        self.n_cands = np.array([len(cands[m]) for m in self.morphs], dtype=np.int64)
        rows = [[w for w, (ms, _) in enumerate(words) if m in ms] for m in self.morphs]
        self.rows_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=self.rows_ptr[1:])
        self.rows_idx = np.array([w for r in rows for w in r], dtype=np.int64)
        self.gold, self.gold_m = np.ascontiguousarray(gold, dtype=np.int64), gold_m

    def __call__(self, bank, urs: dict, word_cost: float, ur_cost: float) -> bool:
        """One step on ``urs`` (updated in place) under the cascade in ``bank``
        (:class:`strgm.models.rule_kernels.RuleBank`); whether any UR moved."""
        cur = np.array([self.pos[m][urs[m]] for m in self.morphs], dtype=np.int64)
        was = cur.copy()
        changed = _step(bank.arrays(), self.words, self.cand, self.cand_len,
                        self.n_cands, cur, self.rows_ptr, self.rows_idx, self.gold,
                        self.gold_m, float(word_cost), float(ur_cost))
        for i in np.flatnonzero(cur != was):
            urs[self.morphs[i]] = self.cands[self.morphs[i]][cur[i]]
        return bool(changed)

    def covers(self, urs: dict) -> bool:
        """Whether every UR of ``urs`` is one of its morpheme's candidates."""
        return all(urs[m] in self.pos[m] for m in self.morphs)
