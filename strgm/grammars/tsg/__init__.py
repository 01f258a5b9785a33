"""Bayesian tree substitution grammars: the DP-TSG of Cohn, Goldwater & Blunsom (2009) with
the P0^C base distribution, trained by the local Gibbs sampler or the blocked
Metropolis–Hastings sampler of Cohn & Blunsom (2010), whose proposal is the MAP TSG
represented as a finite PCFG by the Table 1 transform.

    LocalGibbsTSG(trees, alpha, s, resample_hyper)     one indicator at a time (§2)
    BlockedMHTSG(trees, alpha, s, resample_hyper)      one tree at a time (§3)
    ...(..., process="py", discount=0.5)               the Pitman–Yor TSG (Cohn, Blunsom
                                                       & Goldwater 2010, JMLR), exact
                                                       samplers over derivations and
                                                       seating (pitman_yor.Restaurant)
    kernel.init(seed, init="minimal"|"maximal"), kernel.sample(state) -> TSGState
    TSGState.save(path) / TSGState.load(path, kernel)  atomic strict-JSON checkpoints
    elementary_trees(state, kernel)                    (count, bracketed ET), most frequent first
    FactorGraph.add_grammar(name, var, tsg_model)      P_TSG(v) as a factor (graph_factor)

Both kernels run under :func:`strgm.chains.driver.drive` (trace rows hold
log P(derivations | α, s) after every sweep).
"""

from strgm.grammars.tsg.blocked import BlockedMHTSG, constrained_inside
from strgm.grammars.tsg.corpus import TreeTable
from strgm.grammars.tsg.fragments import ETCounts
from strgm.grammars.tsg.kernel import elementary_trees
from strgm.grammars.tsg.local import LocalGibbsTSG
from strgm.grammars.tsg.pitman_yor import Restaurant
from strgm.grammars.tsg.state import TSGState
from strgm.grammars.tsg.symbols import base_label, primed, signed
from strgm.grammars.tsg.transform import derivation_to_tsg, label_names, transform
from strgm.grammars.tsg.graph_factor import tsg_factor  # registers TSGModel's factor builder

__all__ = ["TreeTable", "ETCounts", "LocalGibbsTSG", "BlockedMHTSG", "TSGState", "Restaurant",
           "constrained_inside", "transform", "derivation_to_tsg", "label_names",
           "base_label", "primed", "signed", "elementary_trees", "tsg_factor"]
