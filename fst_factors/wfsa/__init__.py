"""The WFSA layer: log64 automata helpers (docs/messages.md).

Constructors, total weight with divergence detection, normalisation, k-best strings,
exact sampling, entropy, string probabilities and expected arc counts.
"""

from fst_factors.wfsa.construct import (  # noqa: F401
    empty_acceptor,
    identity_transducer,
    insertion_transducer,
    sigma_star,
    string_acceptor,
    unigram_acceptor,
    weighted_strings,
)
from fst_factors.wfsa.core import (  # noqa: F401
    ARC_TYPE,
    ONE,
    ZERO,
    ArcTable,
    arc_table,
    as_log,
    from_arc_table,
    is_acyclic,
    num_arcs,
    project,
    shortest_distance,
    weight,
    weights_to_array,
)
from fst_factors.wfsa.epsilon import trim  # noqa: F401
from fst_factors.wfsa.operations import compose, intersect  # noqa: F401
from fst_factors.wfsa.expectations import (  # noqa: F401
    ArcPosteriors,
    entropy,
    expected_arc_counts,
    path_entropy,
)
from fst_factors.wfsa.measure import (  # noqa: F401
    check_normalisable,
    log_partition,
    normalise,
    score_strings,
    spectral_margin,
    string_logweight,
)
from fst_factors.wfsa.paths import candidate_strings, kbest, sample  # noqa: F401
