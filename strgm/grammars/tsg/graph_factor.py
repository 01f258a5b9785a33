"""A trained DP-TSG as a factor of the factor graph, through its PCFG transform.

A tree substitution grammar defines a distribution over strings, P_TSG(v) = Σ over TSG
derivations with yield v of Π_e p(e), p(e) the MAP predictive of eq. (1) of Cohn & Blunsom
2010. Table 1 of that paper (:func:`strgm.grammars.tsg.transform.transform`) builds a
finite PCFG G' whose derivations map onto TSG derivations with the probabilities summed
exactly, so P_G'(v) = P_TSG(v) for every string v. The factor F(v) = P_TSG(v) is
therefore the PCFG factor of G' (:func:`strgm.grammars.factor.grammar_factor`): under
EP/PEP a moment oracle on the Bar-Hillel intersection of G' with the cavity, with no
enumeration of strings.

    g.add_grammar("prior", "V", load_model("model.tsg"))    # FactorGraph, EP or PEP

Learning inside the graph is refused: G''s weights are tied (an elementary tree's
internal nodes have weight 1, c → c' shares α_c / (n_c + α_c)), and re-estimating them
rule by rule would leave the TSG family. Train the TSG with its samplers instead
(``strgm tsg train``). Cost: that of the PCFG factor on G', whose size is
O(Σ_{e: n_e > 0} |e| + |CFG rules|) rules.
"""

from __future__ import annotations

from strgm.errors import OptionError
from strgm.factors import register_factor_builder
from strgm.grammars.factor import grammar_factor
from strgm.grammars.tsg.model_file import TSGModel
from strgm.grammars.tsg.transform import transform

__all__ = ["tsg_factor"]


def tsg_factor(model: TSGModel, name: str, var: str, alphabet, *,
               inference: str = "exact", **options):
    """The factor F(v) = P_TSG(v) on ``var`` (module docstring): the PCFG factor of the
    model's Table 1 transform. ``options`` are those of
    :func:`strgm.grammars.factor.grammar_factor` except the learning ones: an
    ``estimator`` other than "fixed", or ``params``/``theta``, is an OptionError. Words
    of the model that are not symbols of ``alphabet`` (e.g. its unknown-word
    signatures) are refused by ``grammar_factor`` with an error naming the rule."""
    if options.get("estimator", "fixed") != "fixed":
        raise OptionError("estimator", options["estimator"],
                          "a TSG factor's weights are tied by its PCFG transform and "
                          "cannot be re-estimated in the graph; use 'fixed' and train "
                          "the TSG with `strgm tsg train`")
    for key in ("params", "theta"):
        if options.get(key) is not None:
            raise OptionError(key, "given", "a TSG factor takes its weights from the "
                                            "model; leave it out")
    grammar = transform(model.state, kernel=model.kernel)
    return grammar_factor(grammar, name, var, alphabet, inference=inference, **options)


register_factor_builder(TSGModel, tsg_factor)  # FactorGraph.add_grammar(…, TSGModel)
