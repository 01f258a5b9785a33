"""Bayesian PCFGs (a layer of docs/architecture.md §1; imports no strgm.datasets or
strgm.models): grammars and their readers, inside–outside charts, six estimators behind one
driver, and a PCFG factor for the string graphs.

    read_grammar(path) / read_yld(path)        Johnson's grammar and yield formats
    read_treebank(dir), treebank_grammar(ts)   Penn Treebank .mrg files and their grammar
    inside(cg, sentences, θ) -> Chart          log Z, expected counts, sample, viterbi, maxrule
    corpus_inside_outside(cg, corpus, θ)       log P(w_i | θ) and expected rule counts
    fit(method, grammar, corpus, ...)          EM, MAP-EM, VB, CVB (a FitResult)
    GibbsPCFG / CollapsedMH + samplers.run     MCMC (JGG07) with checkpoint and resume
    KERNELS[method] + estimators.run           the estimators as kernels, same driver
    PCFGFactor, pcfg_moments, sampled_moments  a PCFG as a factor on a string variable
    binarize / debinarize, treebank_pcfg       binarised treebank PCFGs, unknown-word signatures
    score_corpus                               labelled brackets, evalb conventions
    sentence_grammar, mer_tree                 a grammar restricted to a sentence; MER decoding
    strgm.grammars.tsg                         DP tree substitution grammars (Cohn & Blunsom 2010)

Every method is a kernel with explicit state (``init`` / ``sample``) run by
:func:`strgm.chains.driver.drive`: trace, atomic checkpoints, byte-identical resume.
"""

from strgm.grammars.cfg import CompiledGrammar, Grammar, Rule, compile_grammar, \
    normalise_per_lhs, tree_rules, tree_to_str, tree_yield
from strgm.grammars.chart import Chart, CorpusCounts, batches_by_length, chart_bytes, \
    chart_limit, corpus_inside_outside, inside
from strgm.chains.driver import drive
from strgm.grammars.estimator_state import EstimatorState
from strgm.grammars.estimators import KERNELS, CVBKernel, EMKernel, FitResult, MAPKernel, \
    VBKernel, cvb, em, fit, map_em, posterior_mean, vb
from strgm.grammars.evaluation import bits_per_token, corpus_logprob, heldout_perplexity, \
    rules_above, segmentation_scores
from strgm.grammars.factor import PCFGFactor, exact_message, pcfg_moments, sampled_moments
from strgm.grammars.johnson_format import format_grammar, parse_grammar, parse_yld, \
    read_grammar, read_yld, write_grammar
from strgm.grammars.ptb import clean_tree, parse_trees, read_mrg, read_treebank, \
    treebank_grammar, tree_leaves
from strgm.grammars.binarize import binarize, debinarize
from strgm.grammars.bracket_score import score_corpus, score_sentence
from strgm.grammars.mer_decode import mer_tree
from strgm.grammars.restrict import sentence_grammar
from strgm.grammars.sampler_state import SamplerState
from strgm.grammars.unknown_words import signature, treebank_pcfg
from strgm.grammars.samplers import CollapsedMH, GibbsPCFG, RunResult, collapsed_log_prob, \
    generate
import strgm.grammars.estimators as estimators  # run() of the estimators
import strgm.grammars.samplers as samplers  # run() of the samplers

__all__ = [
    "Rule", "Grammar", "CompiledGrammar", "compile_grammar", "normalise_per_lhs",
    "tree_rules", "tree_yield", "tree_to_str",
    "read_grammar", "parse_grammar", "write_grammar", "format_grammar", "read_yld",
    "parse_yld",
    "parse_trees", "read_mrg", "read_treebank", "clean_tree", "treebank_grammar",
    "tree_leaves",
    "Chart", "inside", "corpus_inside_outside", "CorpusCounts", "chart_bytes",
    "chart_limit", "batches_by_length",
    "corpus_logprob", "heldout_perplexity", "rules_above", "bits_per_token",
    "segmentation_scores",
    "drive", "fit", "em", "map_em", "vb", "cvb", "FitResult", "posterior_mean",
    "KERNELS", "EMKernel", "MAPKernel", "VBKernel", "CVBKernel", "EstimatorState",
    "GibbsPCFG", "CollapsedMH", "SamplerState", "RunResult", "collapsed_log_prob",
    "generate", "estimators", "samplers",
    "PCFGFactor", "pcfg_moments", "sampled_moments", "exact_message",
    "binarize", "debinarize", "score_corpus", "score_sentence", "mer_tree",
    "sentence_grammar", "signature", "treebank_pcfg",
]
