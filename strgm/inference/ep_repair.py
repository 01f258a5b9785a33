"""Repairs that keep EP's messages finite (PEP §4; docs/pep.md).

EP messages θ need not be normalisable, but three places need finite sums:

* **A message into a concatenation or transducer** (:func:`normalisable_message`).
  A concatenation sums over the ε-cycles of the messages it inserts around the identity
  (ε-removal), and OpenFst never terminates when that sum diverges. θ_{V→F} is used
  as is when ENCODE(θ_{V→F}) has finite mass (and so has θ_{V→F} + the whole's message
  it is summed against); else the smallest tried length penalty −δ·|v|, δ = 0.05·2^j,
  is added; as a last resort the belief θ_V itself is sent.
* **A cavity that is not normalisable** (:func:`damped_fit`), the classic EP failure:
  p̂ = μ_{F→V} ⊙ ENCODE(θ_{V→F}) has infinite mass. θ_V is fitted in closed form to the
  damped p̂' = μ_{F→V} ⊙ ENCODE(θ_{V→F} − δ·|v|), δ = 0.25·2^j.
* **A concatenation's message to a part** (:func:`damped_retry`): even with every
  inserted ENCODE(θ_{M_j→F}) normalisable, the sum against the whole's (cyclic) message
  can diverge; the inserted messages are then damped by exp(−δ·|m_j|), δ = 0.25·2^j.

Each repair biases toward shorter strings, so the EP side counts them by kind (many
repairs signal that EP is struggling, e.g. high orders on loopy graphs).
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError, InconsistentEvidenceError
from strgm.features.moments import q_moments
from strgm.features.theta import FeatureSet, Theta
from strgm.projection.closed_form import closed_form

#: the failures of a fit or a normaliser that a repair can cure
NUMERIC = (DivergenceError, InconsistentEvidenceError)


def length_penalty(num_labels: int, delta: float) -> Theta:
    """−δ on every unigram feature: multiplies q(v) by exp(−δ·|v|)."""
    unigrams = FeatureSet([(a,) for a in range(1, num_labels + 1)], num_labels)
    return Theta(unigrams, np.full(num_labels, -delta))


def normalisable_message(th: Theta, partner: Optional[Theta], belief: Theta,
                         num_labels: int, what: str) -> tuple[Theta, Optional[str]]:
    """θ_{V→F}, or a repaired version, and the kind of repair (None if none was needed).

    ``partner``: the whole's θ message the inserted part is summed against (or None).
    Kinds: ``message_length_penalty`` (θ − δ·|v| with the smallest δ = 0.05·2^j,
    j < 40, that works), ``message_is_belief`` (θ_V itself). Cost: one or two q-side
    linear solves per δ tried (:func:`strgm.features.moments.q_moments`)."""
    def ok(t: Theta) -> bool:
        try:
            q_moments(t)
            if partner is not None and partner.nnz:
                q_moments(t + partner)
            return True
        except NUMERIC:
            return False

    if ok(th):
        return th, None
    delta = 0.05
    for _ in range(40):
        cand = th + length_penalty(num_labels, delta)
        if ok(cand):
            return cand, "message_length_penalty"
        delta *= 2
    if ok(belief):
        return belief, "message_is_belief"
    raise DivergenceError(f"{what} cannot be made normalisable")


def damped_fit(mu: pynini.Fst, cavity: Theta, family: FeatureSet, num_labels: int,
               radius_at_least: Optional[float] = None) -> Optional[Theta]:
    """θ_V fitted in closed form to μ ⊙ ENCODE(cavity − δ·|v|) with the smallest
    δ = 0.25·2^j (j < 12) whose p̂' is finite; None when none is.

    Damping multiplies every labelled arc of p̂'s transition matrix A by e^{-δ}, so
    ρ(A_δ) ≥ e^{-δ}·ρ(A) (ε-arcs, undamped, only add). A proven bound ρ(A) ≥ c from the
    failed fit (``radius_at_least``, or from a failed damped try: ρ(A) ≥ e^{δ}·c_δ)
    therefore rules out every δ ≤ log c without trying it: the same δ is chosen with
    fewer divergent forward–backward passes (damped updates took ~40% of trigram EP's
    time on 20 English words)."""
    log_radius = np.log(radius_at_least) if radius_at_least else 0.0
    delta = 0.25
    for _ in range(12):
        if delta <= log_radius:  # provably still divergent
            delta *= 2
            continue
        try:
            th, _ = closed_form(mu, family, cavity + length_penalty(num_labels, delta))
            return th
        except NUMERIC as err:
            c = getattr(err, "radius_at_least", None)
            if c:
                log_radius = max(log_radius, delta + np.log(c))
            delta *= 2
    return None


def damped_retry(compute: Callable[[dict], pynini.Fst], incoming: dict,
                 damped: Callable[[str, float], pynini.Fst], names: list, what: str
                 ) -> pynini.Fst:
    """``compute(incoming')`` where the messages of ``names`` are replaced by
    ``damped(name, δ)``, with the smallest δ = 0.25·2^j (j < 12) for which it converges."""
    delta = 0.25
    for _ in range(12):
        inc = dict(incoming)
        for name in names:
            inc[name] = damped(name, delta)
        try:
            return compute(inc)
        except DivergenceError:
            delta *= 2
    raise DivergenceError(f"{what} diverges even with damped part messages")
