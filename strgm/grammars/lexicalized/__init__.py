"""The head-driven lexicalised grammar (Collins 2003, Model 1 without subcategorisation;
Dawson 2015, "Head-driven lexicalized grammar"): every constituent carries a head tag and
a head word; its head child, then its left and right modifiers (each with its own head tag
and word) are generated one at a time, outward from the head, each side ending in STOP.

    heads      the head rules (which child heads a constituent)
    events     the events of a lexicalised tree, with their backoff contexts
    scorer     the generative model's contract (:class:`LexScorer`)
    model      estimates: relative frequencies, Collins's λ, the HDP Gibbs sampler
    parser     the lexicalised chart parser, pruned by the treebank PCFG's posteriors
"""
