"""The settings of EP and PEP: defaults, and validation before any work starts.

=================  ========  ============================================================
option             default   meaning
=================  ========  ============================================================
``order``          2 (EP)    n of the complete n-gram family (EP only)
``projection``     gradient  EP: ``gradient`` | ``closed``; PEP: ``prox`` | ``grow``
                   / prox    (:data:`strgm.projection.interface.PROJECTIONS`)
``lam``            0.01      λ of the penalty (PEP eq. 3)
``anneal``         False     anytime PEP: λ_i = λ·``decay``^i on iteration i (PEP §8)
``decay``          0.5
``eta``            0.05      step size η (PEP §7)
``steps``          1         gradient steps per pass
``K_early``        20        passes per visit on the first ``early_iters`` iterations,
``early_iters``    3         then 1
``unigram_first``  True      unigram features only on the first iteration (PEP §7)
``max_len``        None      longest PEP feature (unbounded)
``relay``          True      exact WFSA relay at latent variables of degree ≤ 2
``reproject``      False     re-project every stored μ_{F→V} once per iteration
``on_divergence``  damp      ``damp``: a divergent update is damped; ``skip``: skipped
=================  ========  ============================================================
"""

from __future__ import annotations

from strgm.errors import StrgmError
from strgm.projection.interface import PROJECTIONS

_DEFAULTS = {
    "ep": {"order": 2, "projection": "gradient"},
    "pep": {"projection": "prox"},
}
_COMMON = {"lam": 0.01, "anneal": False, "decay": 0.5, "eta": 0.05, "K_early": 20,
           "early_iters": 3, "unigram_first": True, "max_len": None, "steps": 1,
           "relay": True, "reproject": False, "on_divergence": "damp"}


def projections_for(method: str) -> tuple[str, ...]:
    """The projections of EP (unpenalised) or PEP (penalised)."""
    return tuple(name for name, cls in PROJECTIONS.items()
                 if cls.penalised == (method == "pep"))


def ep_settings(method: str, options: dict) -> dict:
    """Validated settings: method defaults, common defaults, then user options."""
    if method not in _DEFAULTS:
        raise StrgmError(f"EP method must be 'ep' or 'pep', got {method!r}")
    s = dict(_COMMON)
    s.update(_DEFAULTS[method])
    if method == "pep":
        s["order"] = None
    unknown = set(options) - set(s)
    if unknown:
        raise StrgmError(f"unknown option(s) {sorted(unknown)} for method {method!r}; "
                         f"valid: {sorted(s)}")
    s.update({k: v for k, v in options.items() if v is not None or k == "max_len"})
    allowed = projections_for(method)
    if s["projection"] not in allowed:
        raise StrgmError(f"projection {s['projection']!r} is not available for {method!r}; "
                         f"choose from {allowed}")
    if method == "ep" and (not isinstance(s["order"], int) or s["order"] < 1):
        raise StrgmError(f"order must be a positive integer, got {s['order']!r}")
    if s["lam"] < 0 or s["eta"] <= 0 or s["K_early"] < 1 or s["steps"] < 1:
        raise StrgmError("need lam >= 0, eta > 0, K_early >= 1, steps >= 1")
    if s["on_divergence"] not in ("damp", "skip"):
        raise StrgmError(f"on_divergence must be 'damp' or 'skip', got "
                         f"{s['on_divergence']!r}")
    return s
