"""Builders of weighted finite-state machines used as factors (pure functions ->
``pynini.Fst`` in the log64 semiring)."""

from fst_factors.transducers.concat import concat_acceptors, concat_context_transducer  # noqa: F401
from fst_factors.transducers.edit import EditParams, edit_transducer  # noqa: F401
from fst_factors.transducers.loading import load_fst_factor  # noqa: F401
from fst_factors.transducers.priors import geometric_unigram_prior  # noqa: F401
from fst_factors.transducers.relabel import to_alphabet  # noqa: F401
from fst_factors.transducers.rewrite import Rule, rule_cascade  # noqa: F401
