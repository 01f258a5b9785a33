"""n-gram feature families for EP/PEP (PEP §3, docs/pep.md).

* :mod:`~strgm.features.symbols` — feature strings over labels with BOS/EOS, fixed-order sets
* :mod:`~strgm.features.theta`   — ``FeatureSet`` (canonical, cached DFA) and sparse ``Theta``
* :mod:`~strgm.features.dfa`     — ENCODE(θ): the longest-context DFA, feature accumulation
* :mod:`~strgm.features.moments` — log Z_θ and E_q[f] by linear solves; E_p[f] under any WFSA
"""

from strgm.features.dfa import FeatureDFA, fst_from_arrays  # noqa: F401
from strgm.features.moments import (  # noqa: F401
    Moments,
    encode,
    is_normalisable,
    log_partition_theta,
    p_moments,
    q_moments,
)
from strgm.features.symbols import (  # noqa: F401
    bos,
    check_feature,
    describe,
    eos,
    extensions,
    ngram_contexts,
    ngram_features,
    unigram_features,
)
from strgm.features.theta import LOG_FLOOR, FeatureSet, Theta  # noqa: F401
