"""A syllable grammar as the prior over underlying forms, learned jointly with them.

    python examples/pcfg_prior_underlying_forms.py [--with-unigram]   (the timing note below)

Data: a paradigm made up here from a 34-segment inventory (24 consonants, 10 vowels; 31
occur in the 5 roots drawn): 5 roots of 5–6 syllables (words of 11–15 segments) with a
bare form, a plural -us and a diminutive -ek, under final devoicing (b d g v z ʒ → p t k
f s ʃ at the end of a word). Two suffixed words are held out.

Measured (a 2-core machine, 3 PEP iterations, which end with a ConvergenceWarning: the
beliefs still move by 0.01–0.08 nats): the grammar prior took 47.5 and 53.9 CPU s in two
runs (held-out exact match 0%, −log p of the true forms 4.80 nats; the script alone 54.7
s of wall time in the second); with
``--with-unigram`` the n-gram (unigram) prior runs first for comparison, 23.2 CPU s
(50%, 5.10 nats), and the whole script took 71.8 CPU s (user + sys of ``time``).
The untrained copy phonology cannot learn the devoicing (only ``strgm train`` does):
the last consonant of R1 and of R3 is [f] in the bare form and [v] before the observed
suffix, and the copy phonology leaves the choice between /…f/ and /…v/ to the prior.
Both priors choose /…f/ for R1 (p = 0.89 and 0.76), so both miss R1's plural; for R3
the unigram prior chooses /…v/ (right) and the syllable grammar /…f/ (0.41 each).
Each grammar message's moments solve the intersection grammar's inside and outside
systems over K×K matrices (K up to a few hundred product states for PEP's feature sets
here), component by component of the grammar's dependency graph
(:mod:`strgm.grammars.scc_solve`): the only recursive component, Word → Piece Word |
Piece, is one K×K linear solve and every other nonterminal one evaluation; most of the
time is EP's own work, as with the unigram prior (under cProfile: 6.3 of 51 s in the
grammar's moments, 36 s in the moments of the WFSA messages). Iterating the whole system to its
fixed point instead (Kleene / Neumann iteration, ``solver="kleene"`` of
:func:`~strgm.grammars.factor_moments.pcfg_moments`) took 251 CPU s for the grammar
prior on a smaller version of this paradigm (4 roots of 4–5 syllables, 27 segments),
against 10.3 s with the component solves.

Model: every morpheme's UR has the syllable grammar of :mod:`strgm.models.grammar_prior`
as its prior (Word → Piece+, Piece → Syl | C, Syl → (Ons) Nuc (Cod), …, the consonant and
vowel classes read off the IPA features). ``FactorGraph.add_grammar`` attaches it; under
PEP the grammar's message is a moment oracle — the Bar-Hillel intersection of the grammar
with each cavity's n-gram automaton — so no string is ever enumerated, whatever the word
length or alphabet size. The rule probabilities are shared by all the morphemes and
re-estimated by VB inside the graph, from the expected rule counts at every morpheme.

Everything goes through the public workflow (:func:`strgm.workflows.infer_paradigm`), as
``strgm infer words.tsv --method pep --prior pcfg`` does.
"""

from __future__ import annotations

import time

import numpy as np

from strgm.datasets.paradigm import Paradigm
from strgm.models.grammar_prior import PCFGPrior
from strgm.workflows import infer_paradigm

CONS = "p t k b d g m n ŋ f v s z ʃ ʒ x h l r j w ts tʃ dʒ".split()
VOWELS = "a e i o u ə ɛ ɔ y ø".split()
DEVOICE = {"b": "p", "d": "t", "g": "k", "v": "f", "z": "s", "ʒ": "ʃ", "dʒ": "tʃ"}


def make_paradigm(seed: int = 3, roots: int = 5) -> Paradigm:
    """``roots`` roots of CV(C) syllables ending in a voiced obstruent, three forms each."""
    rng = np.random.default_rng(seed)
    pairs = []
    for r in range(roots):
        sylls = [[rng.choice(CONS), rng.choice(VOWELS)] for _ in range(rng.integers(5, 7))]
        root = [s for syl in sylls for s in syl] + [rng.choice(list(DEVOICE))]
        bare = root[:-1] + [DEVOICE[root[-1]]]
        pairs += [((f"R{r}",), " ".join(bare)), ((f"R{r}", "PL"), " ".join(root + ["u", "s"])),
                  ((f"R{r}", "DIM"), " ".join(root + ["e", "k"]))]
    return Paradigm.from_pairs(pairs)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--with-unigram", action="store_true",
                    help="run the unigram prior first, for comparison")
    args = ap.parse_args()
    para = make_paradigm()
    lengths = [len(e.surface.split()) for e in para.entries]
    held = ["R1 PL", "R3 DIM"]
    print(f"{len(para.entries)} words over {len(set(' '.join(e.surface for e in para.entries).split()))}"
          f" segments, {min(lengths)}–{max(lengths)} segments long; held out: {held}")
    runs = [("unigram prior", None)] if args.with_unigram else []
    for name, prior in runs + [("syllable grammar prior", PCFGPrior())]:
        t0 = time.process_time()
        run = infer_paradigm(para, "pep", holdout=held, ur_prior=prior, max_iters=3)
        cpu = time.process_time() - t0
        sc = run.scores
        print(f"\n{name}: {cpu:.1f} CPU s, held-out exact match {sc.exact_match:.0%}, "
              f"mean -log p(true form) {sc.mean_neg_logp:.2f} nats")
        for m in ("R1", "R3", "PL", "DIM"):
            top = run.result.belief(run.model.morpheme_vars[m]).kbest(1)[0]
            print(f"  /{top[0]}/ ({top[1]:.2f})  {m}")
        if prior is not None:
            (params,) = prior.learned.values()
            g = params.grammar
            syl = {" ".join(r.rhs): th for r, th in zip(g.rules, params.theta)
                   if r.lhs == "Syl"}
            print(f"  learned Syl rules (VB weights, {params.updates} updates): "
                  + ", ".join(f"{k} {v:.2f}" for k, v in syl.items()))


if __name__ == "__main__":
    main()
