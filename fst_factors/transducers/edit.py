"""Stochastic edit transducer: a conditional distribution p(surface | underlying).

One state. Before each input symbol and at the end, the machine may insert any symbol b
(probability ``p_ins`` each, total P_I = |Σ|·p_ins); otherwise, with probability 1 - P_I,
it consumes the next input symbol a, copying it with probability q(a|a), substituting
b ≠ a with q(b|a) or deleting it with q(ε|a), where Σ_x q(x|a) = 1 ("normalised per input
symbol"); at the end of input it stops with probability 1 - P_I. Summing the geometric
number of insertions in each of the n + 1 slots gives Σ_s p(s | u) =
(1 - P_I)^{n+1} · (1 - P_I)^{-(n+1)} = 1 for every u.

Default (Cotterell et al. 2015 style, favouring copying): per input position, copying has
probability ``p_copy`` and the remaining mass is spread uniformly over the 2|Σ| other edit
actions (|Σ| - 1 substitutions, 1 deletion, |Σ| insertions); so 1 - P_I = p_copy +
|Σ|·rest is exactly the consuming mass and q(x|a) = (consuming arc)/(1 - P_I).

A morpheme boundary label, if given, is always deleted (it never surfaces) and never
inserted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pynini

from fst_factors.errors import InputError
from fst_factors.wfsa.core import new_fst, weight


#: The copy probability of the untrained, copy-biased edit transducer: the one default
#: that every copy-biased start and untrained phonology takes.
P_COPY = 0.99


@dataclass(frozen=True)
class EditParams:
    """Probabilities of the uniform stochastic edit transducer (see module docstring)."""

    p_copy: float = P_COPY

    def probabilities(self, n: int) -> tuple[float, float, float, float]:
        """(copy, each substitution, deletion, each insertion) per input position."""
        if not 0.0 < self.p_copy < 1.0:
            raise InputError(f"p_copy must be in (0, 1), got {self.p_copy}")
        rest = (1.0 - self.p_copy) / (2 * n)
        return self.p_copy, rest, rest, rest


def edit_transducer(num_symbols: int, params: EditParams = EditParams(),
                    boundary_label: Optional[int] = None) -> pynini.Fst:
    """The uniform stochastic edit transducer over labels 1..num_symbols (log64).

    ``num_symbols`` counts segment labels only; ``boundary_label`` (if any) is an extra
    input label mapped to ε with probability 1 - P_I.
    """
    n = num_symbols
    if n < 1:
        raise InputError("edit transducer needs at least one symbol")
    p_copy, p_sub, p_del, p_ins = params.probabilities(n)
    p_consume = 1.0 - n * p_ins
    f = new_fst()
    s = f.add_state()
    f.set_start(s)
    f.set_final(s, weight(-np.log(p_consume)))
    # copy + (n-1) subs + del = 1 - P_I already: the consuming arcs need no rescaling.
    w_copy = weight(-np.log(p_copy))
    w_sub = weight(-np.log(p_sub))
    w_del = weight(-np.log(p_del))
    w_ins = weight(-np.log(p_ins))
    for a in range(1, n + 1):
        f.add_arc(s, pynini.Arc(0, a, w_ins, s))
        f.add_arc(s, pynini.Arc(a, 0, w_del, s))
        for b in range(1, n + 1):
            f.add_arc(s, pynini.Arc(a, b, w_copy if a == b else w_sub, s))
    if boundary_label is not None:
        f.add_arc(s, pynini.Arc(boundary_label, 0, weight(-np.log(p_consume)), s))
    return pynini.arcsort(f, sort_type="ilabel")
