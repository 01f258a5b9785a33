"""Backoff smoothing of treebank PCFG rule distributions: Collins's λ = c / (c + b u) and
the hierarchical Dirichlet process (Dawson 2015, eqs. 58-61; Teh et al. 2006), over
parent-annotated, horizontally Markovised contexts.

    backoff    contexts, outcomes and backoff chains of the binarised phrasal rules
    hierarchy  the context tree as arrays; the backoff predictive of every candidate rule
    hdp        Chinese-restaurant-franchise Gibbs sampler, α by auxiliary variables
    collins    Collins's λ
    grammar    smoothed_pcfg: the smoothed Grammar
    evaluate   held-out rule probabilities; b chosen on a development split
"""

from strgm.grammars.smoothing.grammar import SMOOTHINGS, smoothed_pcfg

__all__ = ["SMOOTHINGS", "smoothed_pcfg"]
