"""Parsing with a trained DP-TSG through the grammar transform (Cohn & Blunsom 2010 §3,
"Parsing").

For a sentence w (words already mapped to the training vocabulary, e.g. unknown words to
signatures by the caller):

1. the Table 1 transform of the MAP TSG (:func:`.transform.transform`) is restricted to
   the rules usable on w (:func:`strgm.grammars.restrict.sentence_grammar`, exact);
2. the inside chart of that PCFG gives the proposal q(d) ∝ Π_{e ∈ d} p_MAP(e),
   p_MAP(e) = (n_e + α_c P0(e)) / (n_c + α_c), from which K derivations are drawn
   top-down (each TSG derivation is reached through A and B paths whose probabilities
   add up to p_MAP);
3. an independence Metropolis–Hastings chain over the K draws corrects them to the true
   predictive of the DP-TSG, P(d) = Π_i (n_{e_i} + k_i + α P0(e_i)) / (n_c + k_{c,i} + α)
   (k: the ETs of d drawn before e_i, the caching within the derivation that the MAP
   grammar suppresses): draw d' is accepted with probability
   min{1, P(d') q(d) / (P(d) q(d'))}, the inside normaliser cancelling;
4. decoding: ``mer`` — the tree maximising the expected number of correct anchored CFG
   rules under the chain's samples (:func:`strgm.grammars.mer_decode.mer_tree`), or with
   ``objective="product"`` the product of their marginals (which does not reward extra
   unary brackets, so precision does not fall below recall);
   ``mpd`` — the maximum-probability derivation, Viterbi over the transform with
   footnote 3's weights (c → sign(e) weighted p_MAP(e)).

Trees come back over the binarised treebank labels; the caller debinarises and restores
the words.  Cost per sentence: the restriction O(|G|), one inside pass
O(n³ R_w) over the R_w rules left for w, and O(K n) Python work for the draws.
"""

from __future__ import annotations

import math

import numpy as np

from strgm.errors import GrammarError
from strgm.grammars.cfg import compile_grammar
from strgm.grammars.chart import inside
from strgm.grammars.mer_decode import OBJECTIVES, mer_tree
from strgm.grammars.restrict import sentence_grammar
from strgm.grammars.tsg.blocked import crp_log_prob, map_log_prob
from strgm.grammars.tsg.transform import derivation_to_tsg, transform
from strgm.validate import check_choice, check_int

__all__ = ["TSGParser", "DECODERS"]

DECODERS = ("mer", "mpd")


class TSGParser:
    """A parser for one trained DP-TSG (``kernel`` and its ``state``); see the module
    docstring.  ``samples`` K draws per sentence for MER (default 100)."""

    def __init__(self, kernel, state, samples: int = 100, max_memory=None):
        kernel.check(state)
        self.kernel, self.table = kernel, kernel.table
        self.samples = check_int("samples", samples, min=1)
        self.counts = kernel.counts(state)
        self.alpha = np.asarray(state.alpha, dtype=float)
        self.log_alpha = np.log(self.alpha)
        self.grammar = transform(state, kernel=kernel)
        self._viterbi = None
        self._state = state
        self.max_memory = max_memory
        self.accepted = self.proposed = 0

    @property
    def viterbi_grammar(self):
        """The transform with footnote 3's weights (for MPD), built on first use."""
        if self._viterbi is None:
            self._viterbi = transform(self._state, kernel=self.kernel, viterbi=True)
        return self._viterbi

    def _chart(self, grammar, words):
        g = sentence_grammar(grammar, words)
        if g is None:
            return None, None
        cg = compile_grammar(g)
        if self.max_memory is not None:
            cg.max_chart_bytes = self.max_memory
        return g, inside(cg, [tuple(words)], g.weights)

    def _ets(self, tree, sites) -> list:
        """Fragment ids of the ETs of a treebank tree cut at ``sites`` (preorder 0/1),
        interned in the training counts' table; a rule unseen in training is a
        GrammarError (the transform proposes none)."""
        t, get = self.table, self.counts.frags.get
        out: list = []
        pos = [0]

        def visit(node):
            site = sites[pos[0]]
            pos[0] += 1
            lj = t.label_index[node[0]]
            kids = node[1:]
            if isinstance(kids[0], str):
                key, ks = (lj, "w", kids[0]), (-2, -2)
            else:
                key = (lj,) + tuple(t.label_index[k[0]] for k in kids)
                ks = tuple(-1 if s else f for f, s in (visit(k) for k in kids))
                ks = ks + (-2,) * (2 - len(ks))
            r = t.rule_index.get(key)
            if r is None:
                raise GrammarError(f"derivation uses a rule unseen in training: {key}")
            f = get(r, *ks)
            if site:
                out.append(f)
            return f, site
        visit(tree)
        return out

    def chain(self, draws, rng) -> list:
        """Independence MH over chart draws of the transformed grammar (module docstring,
        step 3): the chain's states as (treebank tree, preorder site indicators)."""
        cur, cur_w, out = None, 0.0, []
        for tree, _ in draws:
            ttree, sites, _ = derivation_to_tsg(tree, self.table)
            ets = self._ets(ttree, sites)
            w = crp_log_prob(self.counts, ets, self.alpha, self.log_alpha) - \
                map_log_prob(self.counts, ets, self.alpha, self.log_alpha)
            if cur is None:
                cur, cur_w = (ttree, tuple(sites)), w
            else:
                self.proposed += 1
                if math.log(rng.random()) < w - cur_w:
                    cur, cur_w = (ttree, tuple(sites)), w
                    self.accepted += 1
            out.append(cur)
        return out

    def parse(self, words, decode: str = "mer", rng=None, objective: str = "product"):
        """The decoded tree of ``words`` (binarised treebank labels, leaves = ``words``), or
        None when the transform derives no tree of them.  ``objective`` of MER: the
        ``product`` of the rules' marginals (default; chosen on a development split, see
        docs/grammars.md) or their ``sum``, the expected number of correct rules
        (:func:`strgm.grammars.mer_decode.mer_tree`)."""
        decode = check_choice("decode", decode, DECODERS)
        objective = check_choice("objective", objective, OBJECTIVES)
        words = tuple(words)
        if decode == "mpd":
            g, ch = self._chart(self.viterbi_grammar, words)
            if g is None:
                return None
            best = ch.viterbi()[0]
            return None if best is None else derivation_to_tsg(best[0], self.table)[0]
        rng = rng if rng is not None else np.random.default_rng(0)
        draws = self.draws(words, rng)
        if not draws:
            return None
        return mer_tree([t for t, _ in self.chain(draws, rng)], objective)

    def draws(self, words, rng, k: int | None = None) -> list:
        """``k`` (default ``samples``) derivations of the transformed grammar drawn from its
        inside chart over ``words`` (the proposal q), as the chart's ``sample`` gives them;
        [] when there is no parse."""
        g, ch = self._chart(self.grammar, tuple(words))
        if g is None or not np.isfinite(ch.log_partition()[0]):
            return []
        return ch.sample(rng, self.samples if k is None else k)[0]

    @property
    def acceptance(self) -> float:
        """Fraction of proposals accepted by the parsing MH chains so far."""
        return self.accepted / self.proposed if self.proposed else float("nan")
