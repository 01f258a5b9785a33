"""fst_factors: weighted finite-state machines as factors and messages, on OpenFst
(through pynini), in the log64 semiring.

A leaf library: it imports nothing from strgm, which builds its factor graphs, message
passing and learners on it.

* :mod:`fst_factors.alphabet` — symbol tables over IPA segments (``Alphabet``);
* :mod:`fst_factors.wfsa` — automata as arrays and back, total weight with divergence
  detection, k-best strings, sampling, expected arc counts, ε-removal with certified
  fixed points, quotients of acceptors, and the size and memory guard;
* :mod:`fst_factors.transducers` — builders of factors: edit and contextual-edit
  transducers, concatenation relations, rewrite-rule cascades, priors;
* :mod:`fst_factors.errors` — its errors, the base of strgm's hierarchy.

Example: two strings of weight e^−0.5 each (weights are −log), total weight
log(2·e^−0.5)::

    >>> from fst_factors.wfsa import weighted_strings, log_partition
    >>> round(log_partition(weighted_strings({(1, 2): 0.5, (3,): 0.5})), 6)
    0.193147
"""
