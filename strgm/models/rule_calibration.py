"""Calibrated probabilities over the forms the training words cannot decide, under a
learned rule cascade (the rule family of docs/phonology.md).

A held-out word w whose training words leave several forms F(w) = {f_1 … f_K} open
(:mod:`strgm.models.rule_ambiguity`) gets supports s(f) = [f = c] + n(f): the cascade's
own form c counts once, n(f) is the number of supporting pairs of the training words
(:mod:`strgm.models.rule_analogy`). Normalising them, s(f)/S, gives 1 to c whenever no
pair speaks, although nothing in the training words preferred c. Here the supports are
the observations of a Dirichlet–multinomial: θ ~ Dirichlet(α/K, …, α/K) over F(w) (the
forms are exchangeable a priori: that is what "undecided" means), the S = 1 + N
supporters are draws from θ, and q is the posterior predictive

    q(f) = (s(f) + α/K) / (S + α).                                         (1)

q is increasing in s(f), so it ranks F(w) as s does (the prediction, argmax q, is the
one of :func:`strgm.models.rule_analogy.analogy_choice`); only the probabilities move.

The concentration α is learned on the training words by leave-one-out. For a training
word v whose morphemes all occur in other training words, F₋ᵥ(v) is the set of forms of
:func:`strgm.models.rule_ambiguity.heldout_forms` computed from the other training words
(the learned rules and URs fixed; :func:`loo_forms`), and n₋ᵥ(f) its supporting pairs
among the other training words. The cascade's own form for v cannot be had without
searching again without v (the learned URs were fitted to v and spell it). Its stand-in
is what the search does with a morpheme seen in few words: it keeps the surface it saw.
An open UR (one of several in C_m) is *faithful* when it occurs, contiguously, in
another training word of m; the vote's share w(f) is uniform over the forms of the
combinations whose open URs are all faithful (over all of F₋ᵥ(v) when there is none).
So the learned α also measures how often a left-out word does not alternate. Averaging
(1) over the vote's place, v's observed form o has leave-one-out probability

    ℓᵥ(α) = (n₋ᵥ(o) + w(o) + α/K) / (N₋ᵥ + 1 + α),   K = |F₋ᵥ(v)|,       (2)

and α̂ = argmax_α Σᵥ log ℓᵥ(α) + log π(α) over the grid :data:`GRID`, the sum over the
words with K ≥ 2 and o ∈ F₋ᵥ(v) (a word outside its forms is the edit phonology's
business: ε in :mod:`strgm.workflows.family_choice`). π is a log-normal hyperprior on α,
centred on :data:`PRIOR_CONCENTRATION` with scale :data:`PRIOR_SCALE` (both chosen by
leave-one-out on the training words of the textbook problems,
``benchmarks/phonology/rule_calibration.py``); with no such word α̂ is its mode. A large α̂ says
that neither the pairs nor the faithful choice predicted the left-out words: q is then
close to uniform on F(w), which is the honest answer.

Contract: a form of an undecided word never gets more than :data:`MAX_Q`. Where (1) with
α̂ would give more (many pairs, none against), the word's concentration is raised to the
α at which the largest q is exactly MAX_Q (:func:`posterior`). A decided word (K = 1)
keeps q = 1. The q returned (:func:`calibrated_forms`) is the one the family choice
mixes and scores and the one ``strgm rules`` / ``strgm train`` print.

Cost: one batch rewrite of the one-edit URs of every morpheme on its training words
(as :func:`strgm.models.rule_ambiguity.consistent_urs`; leaving v out subtracts its
column), at most MAX_COMBINATIONS rewrites per training word, then O(N²) dictionary
work of the pair counts for each of the N training words that is undecided when left
out, and O(|cases| · |GRID|) for the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import islice, product
from typing import Sequence

import numpy as np

from strgm.models.rule_ambiguity import MAX_COMBINATIONS, heldout_forms, one_edit
from strgm.models.rule_analogy import analogy_support, pair_support
from strgm.models.rule_apply import apply_rules, pack, unpack

#: no form of an undecided word gets more probability than this
MAX_Q = 0.99
#: the concentrations α tried: 2^(k/4), 1/64 … 1024
GRID = tuple(2.0 ** (k / 4) for k in range(-24, 41))
#: the hyperprior's mode (a point of GRID) and its scale in natural-log units of α
#: (module docstring; chosen on the training words of seed 0 of the textbook problems)
PRIOR_CONCENTRATION = 2.0 ** 9.75
PRIOR_SCALE = 2.0


def posterior(support: Sequence[float], alpha: float) -> list:
    """q of equation (1) for the supports of one word's forms (in order), with α raised
    where needed so that no q exceeds :data:`MAX_Q` when there are several forms."""
    k, total = len(support), float(sum(support))
    if k == 1:
        return [1.0]
    top = max(support)
    # (top + a/K) / (total + a) = MAX_Q solved for a
    a = max(float(alpha), (top - MAX_Q * total) / (MAX_Q - 1.0 / k))
    return [(s + a / k) / (total + a) for s in support]


def loo_probability(pairs: Sequence[int], observed: int, vote: Sequence[float],
                    alpha: float) -> float:
    """ℓᵥ(α) of equation (2): ``pairs`` are n₋ᵥ over F₋ᵥ(v), ``observed`` the index
    of v's surface in it, ``vote`` the vote's share w of each form."""
    k = len(pairs)
    return (pairs[observed] + vote[observed] + alpha / k) / (sum(pairs) + 1.0 + alpha)


def log_prior(alpha: float) -> float:
    """log π(α) up to a constant (log-normal, module docstring)."""
    z = (math.log(alpha) - math.log(PRIOR_CONCENTRATION)) / PRIOR_SCALE
    return -0.5 * z * z


def loo_objective(cases: Sequence, alpha: float) -> float:
    """Σᵥ log ℓᵥ(α) + log π(α) over ``cases`` [(pairs, observed index, vote)]."""
    return sum(math.log(loo_probability(p, o, w, alpha)) for p, o, w in cases) \
        + log_prior(alpha)


def fit_concentration(cases: Sequence) -> float:
    """α̂: the point of :data:`GRID` with the highest :func:`loo_objective` (ties to
    the larger α, the less confident)."""
    scores = [loo_objective(cases, a) for a in GRID]
    best = max(scores)
    return max(a for a, s in zip(GRID, scores) if s == best)


def _right_table(words: Sequence, urs: dict, rules: Sequence, m: str, rows: list,
                 n: int) -> tuple:
    """(one-edit URs of m, learned first; bool matrix: candidate k spells training
    word rows[j] right with the other URs fixed)."""
    cands = one_edit(tuple(urs[m]), n)
    mats = [[a for t in words[j][0] for a in (c if t == m else urs[t])]
            for c in cands for j in rows]
    out = unpack(apply_rules(rules, pack(mats, n), n), n)
    right = np.array([out[i] == tuple(words[rows[i % len(rows)]][1])
                      for i in range(len(out))], dtype=np.int64)
    return cands, right.reshape(len(cands), len(rows))


def _inside(u: tuple, x: tuple) -> bool:
    """u is a contiguous piece of x."""
    return any(x[i:i + len(u)] == u for i in range(len(x) - len(u) + 1))


def loo_forms(words: Sequence, urs: dict, rules: Sequence, n: int) -> dict:
    """Training word index i → (F₋ᵢ(wᵢ), the faithful forms of F₋ᵢ): the first is
    :func:`strgm.models.rule_ambiguity.heldout_forms` of word i on the other words
    (``words``: [(morphemes, surface labels)]; label tuples, the learned URs' form
    first), the second the forms of the combinations whose open URs are all faithful
    (module docstring), for every word whose morphemes all occur in another word."""
    rows: dict = {}
    for i, (ms, _) in enumerate(words):
        for m in dict.fromkeys(ms):
            rows.setdefault(m, []).append(i)
    tables = {m: _right_table(words, urs, rules, m, r, n) for m, r in rows.items()}
    out = {}
    for i, (ms, _) in enumerate(words):
        if any(len(rows[m]) < 2 for m in ms):
            continue
        sets = []
        for m in ms:
            cands, right = tables[m]
            r = right.sum(axis=1) - right[:, rows[m].index(i)]
            c = [(u, True) for u, x in zip(cands, r) if x >= r[0]]
            if len(c) > 1:  # an open UR is faithful when another word of m shows it
                c = [(u, any(_inside(u, words[j][1]) for j in rows[m] if j != i))
                     for u, _ in c]
            sets.append(c)
        combos = list(islice(product(*sets), MAX_COMBINATIONS))
        mats = [[a for u, _ in combo for a in u] for combo in combos]
        forms = unpack(apply_rules(rules, pack(mats, n), n), n)
        faithful = [f for f, combo in zip(forms, combos) if all(t for _, t in combo)]
        out[i] = (list(dict.fromkeys(forms)), list(dict.fromkeys(faithful)))
    return out


def loo_cases(train: Sequence, words: Sequence, forms: dict) -> list:
    """[(n₋ᵥ over F₋ᵥ(v), index of v's surface, the vote's share of each form)] for the
    words of ``forms`` (index → (F₋ᵥ, its faithful forms) as segment tuples;
    ``words``: the same training words as [(morphemes, surface segments)], ``train``
    every training word so) with several forms, one of them v's. v is left out of
    ``train`` by identity of its (morphemes, surface) pair, once."""
    cases = []
    for i, (fs, faithful) in forms.items():
        ms, surface = words[i]
        if len(fs) < 2 or tuple(surface) not in fs:
            continue
        j = train.index((ms, tuple(surface)))
        counts = pair_support(train[:j] + train[j + 1:], ms, fs)
        vote = [f in faithful for f in fs] if faithful else [True] * len(fs)
        cases.append(([counts[f] for f in fs], fs.index(tuple(surface)),
                      [v / sum(vote) for v in vote]))
    return cases


@dataclass
class Calibration:
    """The learned concentration ``alpha`` (α̂), the leave-one-out ``cases`` it was
    fitted on, and ``ranked``: held-out key → [(form, q)], best first."""

    alpha: float
    cases: list
    ranked: dict


def calibrated_forms(run) -> Calibration:
    """α̂ from ``run``'s training words and q of equation (1) for its held-out words
    (``run``: a :class:`strgm.models.rule_phonology.RuleRun`); the order of the forms
    is :func:`strgm.models.rule_analogy.analogy_choice`'s."""
    g = run.grammar
    lab = {s: i + 1 for i, s in enumerate(g.symbols)}
    spelt = [e for e in run.train if all(m in g.urs for m in e.morphemes)
             and all(x in lab for x in e.segments)]
    words = [(e.morphemes, tuple(lab[x] for x in e.segments)) for e in spelt]
    held = {e.key: e.morphemes for e in run.held_out
            if all(m in g.urs for m in e.morphemes)}
    seg = (lambda f: tuple(g.symbols[a - 1] for a in f))
    train = [(e.morphemes, tuple(e.segments)) for e in run.train]
    loo = {i: ([seg(f) for f in fs], [seg(f) for f in ok])
           for i, (fs, ok) in loo_forms(words, g.urs, g.rules, len(g.symbols)).items()}
    cases = loo_cases(train, [(e.morphemes, tuple(e.segments)) for e in spelt], loo)
    alpha = fit_concentration(cases)
    forms = heldout_forms(words, g.urs, g.rules, held, len(g.symbols))
    ranked = {}
    for key, fs in forms.items():
        fs = [seg(f) for f in fs]
        s = analogy_support(train, held[key], fs)
        q = posterior([s[f] for f in fs], alpha)
        order = sorted(range(len(fs)), key=lambda i: (-s[fs[i]], i))
        ranked[key] = [("".join(fs[i]), q[i]) for i in order]
    return Calibration(alpha, cases, ranked)
