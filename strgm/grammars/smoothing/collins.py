"""Collins's backoff smoothing of the phrasal rule distributions (Collins 2003 §7.1;
Dawson 2015, "How should we choose λs?").

Along the backoff chain of every full context (finest first, ending in H, uniform over
the top context's outcomes):

    P_u(o) = λ_u p̂_u(o) + (1 − λ_u) P_parent(u)(o),    λ_u = c_u / (c_u + b · u_u),

with p̂_u the relative frequency of o among the c_u rule tokens pooled under context u
(its whole subtree of full contexts) and u_u the number of distinct outcomes among them
(the "diversity"); b > 0 is one constant for all contexts, chosen on held-out data.
This is :func:`~strgm.grammars.smoothing.hierarchy.chain_predictive` with pooled counts
and a_u = b · u_u: the HDP predictive with α approximated by b · u and every observed
token its own table (Dawson 2015, "we might estimate α by w_0 u, as Collins does").
O(cells + pairs × depth).
"""

from __future__ import annotations

import numpy as np

from strgm.grammars.smoothing.hierarchy import Hierarchy, chain_predictive
from strgm.validate import check_float

__all__ = ["collins_predictive", "collins_lambda", "DEFAULT_B"]

#: Default b, chosen on a development split of the WSJ sample by
#: benchmarks/grammars/smoothing.py (docs/decisions/grammar_smoothing_defaults.md).
DEFAULT_B = 2.0


def collins_lambda(c: float, u: float, b: float) -> float:
    """λ = c / (c + b u) for a context seen c times with u distinct outcomes."""
    return c / (c + b * u)


def collins_predictive(h: Hierarchy, b: float = DEFAULT_B) -> np.ndarray:
    """P(outcome | full context) of every candidate pair of ``h`` (module docstring)."""
    b = check_float("collins b", b, min=0, min_open=True)
    pooled, node_total, distinct = h.pooled_counts()
    return chain_predictive(h, pooled, node_total, b * distinct)
