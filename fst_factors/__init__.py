"""Builders of weighted finite-state machines used as factors (pure functions ->
``pynini.Fst`` in the log64 semiring). Never imports ``strgm.inference``."""

from fst_factors.concat import concat_acceptors, concat_context_transducer  # noqa: F401
from fst_factors.edit import EditParams, edit_transducer  # noqa: F401
from fst_factors.loading import load_fst_factor  # noqa: F401
from fst_factors.priors import geometric_unigram_prior  # noqa: F401
from fst_factors.rewrite import Rule, rule_cascade  # noqa: F401
