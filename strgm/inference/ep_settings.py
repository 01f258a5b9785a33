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

from dataclasses import asdict, dataclass, fields
from typing import Optional

from strgm.errors import StrgmError
from strgm.projection.interface import PROJECTIONS

#: PEP-prox's λ (module docstring); other projections keep the paper's 0.01.
PROX_LAM = 0.03

#: PEP's own defaults over the common ones (the fields of :class:`EPSettings`); PEP-prox
#: also gets λ = :data:`PROX_LAM` unless ``lam`` is given.
_PEP = {"projection": "prox", "eta": 0.1, "early_iters": 2, "block": True, "order": None}
_FLAGS = ("block", "anneal", "unigram_first", "relay", "fused")


@dataclass(frozen=True)
class EPSettings:
    """The settings of one EP or PEP run (module docstring), validated when made; each
    default is stated once, here (EP's) or in :data:`_PEP`."""

    method: str = "ep"
    order: Optional[int] = 2
    projection: str = "gradient"
    lam: float = 0.01
    anneal: bool = False
    decay: float = 0.5
    eta: float = 0.05
    steps: int = 1
    K_early: int = 20
    early_iters: int = 3
    K_unigram: Optional[int] = None
    block: bool = False
    unigram_first: bool = True
    max_len: Optional[int] = None
    relay: bool = True
    on_divergence: str = "damp"
    fused: bool = True

    def __post_init__(self):
        allowed = projections_for(self.method)
        if self.projection not in allowed:
            raise StrgmError(f"projection {self.projection!r} is not available for "
                             f"{self.method!r}; choose from {allowed}")
        if self.method == "ep" and (isinstance(self.order, bool)
                                    or not isinstance(self.order, int) or self.order < 1):
            raise StrgmError(f"order must be a positive integer, got {self.order!r}")
        ku = self.K_unigram
        if ku is not None and (isinstance(ku, bool) or not isinstance(ku, int) or ku < 1):
            raise StrgmError(f"K_unigram must be a positive integer or None, got {ku!r}")
        if self.lam < 0 or self.eta <= 0 or self.K_early < 1 or self.steps < 1:
            raise StrgmError("need lam >= 0, eta > 0, K_early >= 1, steps >= 1")
        for flag in _FLAGS:
            if not isinstance(getattr(self, flag), bool):
                raise StrgmError(f"{flag} must be True or False, got "
                                 f"{getattr(self, flag)!r}")
        if self.on_divergence not in ("damp", "skip"):
            raise StrgmError(f"on_divergence must be 'damp' or 'skip', got "
                             f"{self.on_divergence!r}")

    def as_dict(self) -> dict:
        """The settings as JSON-ready keys (``method`` left out: the result has it)."""
        return {k: v for k, v in asdict(self).items() if k != "method"}


def projections_for(method: str) -> tuple[str, ...]:
    """The projections of EP (unpenalised) or PEP (penalised)."""
    return tuple(name for name, cls in PROJECTIONS.items()
                 if cls.penalised == (method == "pep"))


def ep_settings(method: str, options: dict) -> EPSettings:
    """Validated settings: EP's defaults, PEP's over them, then the user's ``options``."""
    if method not in ("ep", "pep"):
        raise StrgmError(f"EP method must be 'ep' or 'pep', got {method!r}")
    names = {f.name for f in fields(EPSettings)} - {"method"}
    unknown = set(options) - names
    if unknown:
        raise StrgmError(f"unknown option(s) {sorted(unknown)} for method {method!r}; "
                         f"valid: {sorted(names)}")
    s = dict(_PEP) if method == "pep" else {}
    s.update({k: v for k, v in options.items() if v is not None or k == "max_len"})
    if method == "pep" and options.get("lam") is None and s["projection"] == "prox":
        s["lam"] = PROX_LAM
    return EPSettings(method=method, **s)
