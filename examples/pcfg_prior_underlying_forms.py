"""A PCFG as the prior over an underlying form in the phonology model.

    python examples/pcfg_prior_underlying_forms.py          (≈ 10 s on an idle machine)

Model: one morpheme with underlying form U over the alphabet {p t k a i u}; its prior is a
tiny CV-syllable PCFG (Word → Syl | Syl Word, Syl → C V | C V C, C → p|t|k, V → a|i|u);
its surface S = "tpaki" is observed through a copy-biased edit transducer T (the phonology
factor), so the phonology message is μ_P(u) = P(S = tpaki | u) = in-projection of T ∘ s.

1. Exact posterior p(u) ∝ P_G(u) μ_P(u): the moments of the order-2 n-gram features via
   the intersection grammar (:func:`strgm.grammars.factor.pcfg_moments`).
2. EP on U by hand (the EP engine consumes factors through WFSA messages; here the
   grammar factor's moments come from the intersection grammar instead): the PCFG factor's
   moments under ENCODE(θ_{U→G}) are projected with the closed form
   (:mod:`strgm.projection.closed_form`), θ_{G→U} = θ̂ − θ_{U→G}, and intersected with the
   phonology message (θ_{P→U} = proj(μ_P ⊙ ENCODE(θ_{G→U})) − θ_{G→U}), until the belief
   θ_U = θ_{G→U} + θ_{P→U} stops changing.
3. Comparison with the model's default prior (geometric length × unigram): under it the
   posterior mode is the surface itself, "tpaki"; under the syllable grammar the
   posterior prefers syllabifiable underlying forms.
4. End-to-end through the scheduler with a length-bounded PCFG factor, whose message
   (exact WFSA of P_G on |u| ≤ L, by enumeration) any engine can consume.
"""

from __future__ import annotations

import time

import numpy as np
import pynini

import strgm.transducers as ff
from strgm.alphabet import Alphabet
from strgm.features import encode, q_moments
from strgm.grammars.cfg import Grammar, Rule
from strgm.grammars.factor import PCFGFactor, exact_message, pcfg_moments
from strgm.projection.closed_form import (closed_form, closed_form_from_expectations,
                                          order_feature_set)
from strgm.wfsa.construct import string_acceptor
from strgm.wfsa.operations import compose, intersect
from strgm.wfsa.measure import log_partition
from strgm.wfsa.paths import kbest

SURFACE = "tpaki"


def cv_grammar() -> Grammar:
    rules = [Rule("Word", ("Syl",), 0.45), Rule("Word", ("Syl", "Word"), 0.55),
             Rule("Syl", ("C", "V"), 0.75), Rule("Syl", ("C", "V", "C"), 0.25)]
    rules += [Rule("C", (c,), 1.0) for c in "ptk"] + [Rule("V", (v,), 1.0) for v in "aiu"]
    return Grammar(rules)


def show(fst, alphabet, k=5, log_z=None):
    z = log_partition(fst) if log_z is None else log_z
    return ", ".join(f"{alphabet.join(s) or 'ε'} {np.exp(lw - z):.3f}" for s, lw in kbest(fst, k))


def main() -> None:
    t0 = time.perf_counter()
    alphabet = Alphabet(list("ptkaiu"))
    n = alphabet.size
    g = cv_grammar()
    T = ff.edit_transducer(n, ff.EditParams(0.9))
    s = string_acceptor(alphabet.encode(SURFACE))
    mu_p = pynini.rmepsilon(pynini.project(compose(T, s), "input"))
    fs = order_feature_set(2, n)  # complete bigram family (EP's default order)
    print(f"grammar: {g}; surface {SURFACE!r}; features: {len(fs)} (order 2)")

    # 1. exact posterior moments
    exact = pcfg_moments(g, alphabet, fs, mu_p)
    print(f"exact: log Σ_u P_G(u) P(s|u) = {exact.log_z:.4f}; E[|u|] = "
          f"{exact.expectations[[fs.index[(a,)] for a in range(1, n + 1)]].sum():.3f}")

    # 2. EP by hand: PCFG factor (moments → closed-form θ) and phonology factor (WFSA)
    th_p, _ = closed_form(mu_p, fs)  # θ_{P→U} with θ_{U→P} = 0
    th_g = th_p * 0.0
    for it in range(8):
        m_g = pcfg_moments(g, alphabet, fs, encode(th_p))  # PCFG ⊙ ENCODE(θ_{U→G})
        th_g = closed_form_from_expectations(fs, m_g.expectations) - th_p
        proj_p, _ = closed_form(mu_p, fs, theta_context=th_g)  # μ_P ⊙ ENCODE(θ_{U→P})
        new_p = proj_p - th_g
        delta = np.abs((new_p - th_p).values).max()
        th_p = new_p
        print(f"  EP iteration {it}: max |Δθ_(P→U)| = {delta:.2e}")
        if delta < 1e-8:
            break
    belief = th_g + th_p
    qm = q_moments(belief, fs)
    err = np.abs(qm.expectations - exact.expectations).max()
    print(f"EP belief vs exact posterior: max |E_q[f] − E_p[f]| = {err:.3f} over {len(fs)} "
          "bigram features")
    print(f"  EP belief (order-2 q_θ):  {show(encode(belief), alphabet, log_z=qm.log_z)}")

    # exact posterior k-best: P_G is finite-state on |u| ≤ 6 (enumeration, chart-scored)
    t = time.perf_counter()
    prior_g = exact_message(g, alphabet, 6)
    post_g = intersect(prior_g, mu_p)
    print(f"  exact posterior, PCFG prior (|u| ≤ 6):  {show(post_g, alphabet)}"
          f"   [{time.perf_counter() - t:.1f} s]")

    # 3. the default prior of the phonology model
    uni = ff.geometric_unigram_prior(n, 5.0)
    print(f"  posterior, geometric×unigram prior:      {show(intersect(uni, mu_p), alphabet)}")

    # 4. end to end through the scheduler, length-bounded PCFG factor as the prior
    from strgm.graph import FactorGraph
    from strgm.inference import infer
    graph = FactorGraph(alphabet)
    graph.add_variable("U")
    graph.add_variable("S", observed=SURFACE)
    graph._add_factor(PCFGFactor("prior:pcfg", var="U", grammar=g, labels=alphabet,
                                 num_labels=n, max_len=6))
    graph.add_binary("phonology", "U", "S", T)
    for method in ("bp", "ep"):
        res = infer(graph, method, max_iters=5)
        top = ", ".join(f"{u or 'ε'} {p:.3f}" for u, p in res.belief("U").kbest(4))
        print(f"  infer({method!r}) with the length-bounded PCFG factor (|u| ≤ 6): {top}")
    print(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
