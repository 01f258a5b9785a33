"""Fit q_θ to a WFSA (PEP §3.1, §6, §6.1): each projection usable on its own, e.g. to
approximate any WFSA by a (variable-order) n-gram model.

* :mod:`~strgm.projection.closed_form` — exact fit on a complete (fixed-order) family
* :mod:`~strgm.projection.gradient`    — objective, gradient, ascent with step halving
* :mod:`~strgm.projection.prox`        — tree-structured group lasso, exact prox, active set
* :mod:`~strgm.projection.grow`        — closed form with greedy growing of contexts
"""

from strgm.projection.closed_form import (  # noqa: F401
    closed_form,
    closed_form_from_expectations,
    complete_feature_set,
    order_feature_set,
)
from strgm.projection.gradient import (  # noqa: F401
    gradient,
    gradient_ascent,
    gradient_step,
    objective,
    uniform_theta,
)
from strgm.projection.grow import grow  # noqa: F401
from strgm.projection.prox import (  # noqa: F401
    active_set,
    penalty,
    prox_step,
    proximal_projection,
    tree_prox,
)
