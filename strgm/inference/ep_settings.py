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
``reproject``          False     re-project every stored μ_{F→V} once per iteration
``on_divergence``      damp      ``damp``: a divergent update is damped; ``skip``: skipped
``activation_levels``  1         PEP-prox: trie levels one step may activate (multi-level
                                 activation, :func:`strgm.projection.prox.prox_step`)
``pass_tol``           0         end a visit's K passes after a pass that moved θ_V by at
                                 most this in every coordinate (0: all K;
                                 :mod:`strgm.inference.ep_passes`)
``fused``              True      PEP-prox block passes: runs of steps on a fixed working set
                                 as one compiled call (:mod:`strgm.projection.fused`; the
                                 same steps as with False, the reference)
=====================  ========  ============================================================

PEP's schedule was chosen by measurement (``benchmarks/results/pep_schedule.md``), not
taken from the paper's λ = 0.01, η = 0.05, K = 20 on 3 iterations:
* λ sets the cost. λ = 0.05 keeps ~50 features per belief against 100–230 at 0.01, and
  every feature costs DFA states in every p̂ and q computation: on 100 synthetic words
  the grid over K ∈ {3, 5, 10, 20} and η ∈ {0.05, 0.1, 0.2} ran in 37–80% of the time
  at λ = 0.05, with the gold cross-entropy within 0.17 nats (lower in 9 of 12 cells).
  But λ = 0.05 (and 0.02–0.03 with K = 10) loses the whole word of a small tree whose
  features must reach length 5 (``tests/ep/test_ep.py``): the active set grows one
  trie level per step, and a strong penalty stops the growth. λ = 0.03 with K = 20 on
  one early iteration finds it.
* η = 0.1: on 200 English words a run with η = 0.2 (K = 5, λ = 0.05, not in the
  table) still moved 0.14 nats of symmetric KL after six iterations, and on the
  synthetic grid η = 0.2 was no more accurate.
* On 200 English words (held-out −log p, CPU s): this schedule 1.42 nats in 40 s;
  λ = 0.01 with K = 20, 1.24 in 102 s; pruned-20 BP 1.84 in 13 s.
* ``block`` (PEP): all K passes on one message, then the next. Side by side against
  round robin (medians of 3, ``benchmarks/results/pep_speed.md``): 200 synthetic words
  with the EM-trained phonology 78.6 against 100.3 CPU s, 200 English words 42.8
  against 69.9; held-out −log p 0.016 and 0.005 nats higher, the synthetic gold
  cross-entropy 0.014 lower.
* ``activation_levels`` and ``pass_tol`` stay off: two levels took 4% and 8% less CPU
  time on 500 synthetic and English words (one iteration fewer, the same accuracy) but
  16% more on 200 English words, and K = 10 with two levels did not converge in 10
  iterations; ``pass_tol`` ≥ 0.01 saved updates but added iterations that cost more
  (docs/architecture.md §3).
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
           "relay": True, "reproject": False, "on_divergence": "damp",
           "activation_levels": 1, "pass_tol": 0.0, "fused": True, "K_unigram": None}


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
    for flag in ("block", "anneal", "unigram_first", "relay", "reproject", "fused"):
        if not isinstance(s[flag], bool):
            raise StrgmError(f"{flag} must be True or False, got {s[flag]!r}")
    lv = s["activation_levels"]
    if isinstance(lv, bool) or not isinstance(lv, int) or not 1 <= lv <= 4:
        raise StrgmError(f"activation_levels must be an integer from 1 to 4, got {lv!r}")
    pt = s["pass_tol"]
    if isinstance(pt, bool) or not isinstance(pt, (int, float)) or not 0 <= pt < float("inf"):
        raise StrgmError(f"pass_tol must be a finite number >= 0, got {pt!r}")
    if s["on_divergence"] not in ("damp", "skip"):
        raise StrgmError(f"on_divergence must be 'damp' or 'skip', got "
                         f"{s['on_divergence']!r}")
    return s
