"""The settings of EP and PEP: defaults, and validation before any work starts.

=====================  ========  ============================================================
option                 default   meaning
=====================  ========  ============================================================
``order``              2 (EP)    n of the complete n-gram family (EP only)
``projection``         gradient  EP: ``gradient`` | ``closed``; PEP: ``prox`` | ``grow``
                       / prox    (:data:`strgm.projection.interface.PROJECTIONS`)
``lam``                0.03 /    λ of the penalty (PEP eq. 3): 0.03 for PEP-prox, 0.01 for
                       0.01      PEP-grow (eq. 8 counts prefixes; not re-tuned) and EP
``anneal``             False     anytime PEP: λ_i = λ·``decay``^i on iteration i (PEP §8)
``decay``              0.5
``eta``                0.1 /     step size η (PEP §7: 0.05); PEP / EP
                       0.05
``steps``              1         gradient steps per pass
``K_early``            20        passes per visit on the first ``early_iters`` iterations,
``early_iters``        2 / 3     then 1 (PEP / EP)
``K_unigram``          None      passes per visit on the unigram-only first iteration
                                 (None: ``K_early``; its result is overwritten by the next
                                 iteration's richer fit)
``block``              True /    block Gauss–Seidel: a visit takes all K passes on one pending
                       False     message before the next (its p̂ moments are reused across
                                 them); else round robin, one pass over all per pass
``unigram_first``      True      unigram features only on the first iteration (PEP §7)
``max_len``            None      longest PEP feature (unbounded)
``relay``              True      exact WFSA relay at latent variables of degree ≤ 2
``on_divergence``      damp      ``damp``: a divergent update is damped; ``skip``: skipped
``fused``              True      PEP-prox block passes: runs of steps on a fixed working set
                                 as one compiled call (:mod:`strgm.projection.fused`; the
                                 same steps as with False, the reference)
=====================  ========  ============================================================

PEP's schedule (λ = 0.03, η = 0.1, K = 20 on two early iterations, block passes) was
chosen by measurement
(``benchmarks/results/pep_schedule.md``, ``benchmarks/results/pep_speed.md``), not taken
from the paper; the reasons and figures are in ``docs/decisions/pep_schedule.md``.
The paper's setting is ``lam=0.01, eta=0.05, K_early=20, early_iters=3``.
"""

from __future__ import annotations

from strgm.errors import StrgmError
from strgm.projection.interface import PROJECTIONS

#: PEP-prox's λ (module docstring); other projections keep the paper's 0.01.
PROX_LAM = 0.03

_DEFAULTS = {
    "ep": {"order": 2, "projection": "gradient"},
    "pep": {"projection": "prox", "eta": 0.1, "early_iters": 2, "block": True},
}
_COMMON = {"lam": 0.01, "anneal": False, "decay": 0.5, "eta": 0.05, "K_early": 20,
           "early_iters": 3, "block": False, "unigram_first": True, "max_len": None, "steps": 1,
           "relay": True, "on_divergence": "damp", "fused": True, "K_unigram": None}


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
    if method == "pep" and options.get("lam") is None and s["projection"] == "prox":
        s["lam"] = PROX_LAM
    allowed = projections_for(method)
    if s["projection"] not in allowed:
        raise StrgmError(f"projection {s['projection']!r} is not available for {method!r}; "
                         f"choose from {allowed}")
    if method == "ep" and (not isinstance(s["order"], int) or s["order"] < 1):
        raise StrgmError(f"order must be a positive integer, got {s['order']!r}")
    ku = s["K_unigram"]
    if ku is not None and (isinstance(ku, bool) or not isinstance(ku, int) or ku < 1):
        raise StrgmError(f"K_unigram must be a positive integer or None, got {ku!r}")
    if s["lam"] < 0 or s["eta"] <= 0 or s["K_early"] < 1 or s["steps"] < 1:
        raise StrgmError("need lam >= 0, eta > 0, K_early >= 1, steps >= 1")
    for flag in ("block", "anneal", "unigram_first", "relay", "fused"):
        if not isinstance(s[flag], bool):
            raise StrgmError(f"{flag} must be True or False, got {s[flag]!r}")
    if s["on_divergence"] not in ("damp", "skip"):
        raise StrgmError(f"on_divergence must be 'damp' or 'skip', got "
                         f"{s['on_divergence']!r}")
    return s
