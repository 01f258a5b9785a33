"""One interface for the four projections EP and PEP use at a variable (PEP §4.3, §6).

An EP update of variable V from factor F (PEP eqs. 5–7) hands a projection a
:class:`Target` — μ_{F→V}, the cavity θ_{V→F}, the current θ_V and θ_{F→V} — and gets
back a :class:`Fit`: the new θ_V (≈ argmin D(p̂ ‖ q_θ) [+ λΩ]) and the new θ_{F→V} =
θ_V − θ_{V→F}. The EP engine (:mod:`strgm.inference.ep`) never asks which projection
it holds; it looks one up by name in :data:`PROJECTIONS`:

==========  =====  ===========================================================  ==========
name        PEP?   one fit                                                      module
==========  =====  ===========================================================  ==========
closed      no     exact fit on the order-n family, every visit                 closed_form
gradient    no     ``steps`` gradient steps (η) on the order-n family (§7)      gradient
prox        yes    ``steps`` proximal steps of the tree group lasso (λ, η)      prox
grow        yes    closed form with greedy growing of contexts                  grow
==========  =====  ===========================================================  ==========

A gradient-type fit (gradient, prox) needs a normalisable θ_V to step from; until there
is one (θ = 0 at the start) it returns the closed-form unigram fit of p̂.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Optional

import pynini

from strgm.errors import DivergenceError
from strgm.features.moments import CompositionCache, Moments, p_moments, q_moments
from strgm.features.theta import FeatureSet, Theta
from strgm.projection.closed_form import closed_form, order_feature_set
from strgm.projection.gradient import gradient_step
from strgm.projection.grow import grow
from strgm.projection.fused import fused_steps
from strgm.projection.prox import prox_step, same_theta


@dataclass(frozen=True)
class Schedule:
    """What the current EP iteration allows: λ (annealed or not) and whether only
    unigram features may be used (PEP §7: unigrams on the first iteration)."""

    lam: float
    unigram_only: bool


@dataclass(frozen=True)
class Target:
    """One update of V from F: p̂_V ∝ μ_{F→V} ⊙ ENCODE(θ_{V→F}) (PEP eq. 5)."""

    mu: pynini.Fst  # μ_{F→V}, a WFSA
    cavity: Theta  # θ_{V→F} = θ_V − θ_{F→V}
    current: Theta  # θ_V
    message: Optional[Theta]  # θ_{F→V} (None before F's first message)
    q_last: Optional[tuple]  # (θ, moments of q_θ) of the last step at V, reusable
    what: str  # names the update in error messages


@dataclass(frozen=True)
class Fit:
    """The new θ_V and θ_{F→V} (PEP eq. 6); ``q``: moments of q at ``theta`` when the fit
    computed them (the next step at V reuses them); ``zero_steps``: steps whose step size
    had to fall to 0."""

    theta: Theta
    message: Theta
    q: Optional[Moments] = None
    zero_steps: int = 0


class Projection(ABC):
    """Fits θ_V to p̂_V. ``settings`` are the EP settings
    (:class:`strgm.inference.ep_settings.EPSettings`: ``order``, ``eta``, ``steps``,
    ``max_len`` are read here); ``compositions`` keeps μ's composition with the feature
    DFA."""

    name: ClassVar[str]
    penalised: ClassVar[bool]  # a PEP projection (λΩ) rather than an EP one
    exact: ClassVar[bool]  # repeating the fit with the same inputs changes nothing

    def __init__(self, num_labels: int, settings,
                 compositions: Optional[CompositionCache] = None):
        self.n = num_labels
        self.settings = settings
        self.compositions = compositions

    @abstractmethod
    def fit(self, t: Target, sched: Schedule, cache: Optional[dict] = None) -> Fit:
        """The new θ_V; ``cache`` may keep p̂'s moments across the K passes of a visit
        with a single pending message."""

    def family(self, sched: Schedule) -> FeatureSet:
        """The family a damped closed-form fit uses (:mod:`strgm.inference.ep_repair`)."""
        return order_feature_set(1 if sched.unigram_only else 2, self.n)

    def _max_len(self, sched: Schedule) -> Optional[int]:
        return 1 if sched.unigram_only else self.settings.max_len


class _FixedOrder(Projection):
    """The complete order-n family (``order`` = n; unigrams on the first iteration)."""

    def family(self, sched: Schedule) -> FeatureSet:
        return order_feature_set(1 if sched.unigram_only else self.settings.order,
                                 self.n)


class Closed(_FixedOrder):
    """Exact closed-form fit (:func:`strgm.projection.closed_form.closed_form`)."""

    name, penalised, exact = "closed", False, True

    def fit(self, t, sched, cache=None):
        th, _ = closed_form(t.mu, self.family(sched), t.cavity if t.cavity.nnz else None,
                            what=t.what, compositions=self.compositions)
        return Fit(th, th - t.cavity)


class Grow(Projection):
    """Closed form with greedy growing of contexts (:func:`strgm.projection.grow.grow`)."""

    name, penalised, exact = "grow", True, True

    def fit(self, t, sched, cache=None):
        th = grow(t.mu, self.n, lam=sched.lam,
                  theta_context=t.cavity if t.cavity.nnz else None,
                  max_len=self._max_len(sched), what=t.what, compositions=self.compositions)
        return Fit(th, (th - t.cavity).restrict(tol=1e-12))


class _Stepwise(Projection):
    """``steps`` steps from the current θ_V, or the unigram closed form while θ_V is not
    normalisable."""

    exact = False

    def fit(self, t, sched, cache=None):
        cur, last = t.current, t.q_last
        q_ok = last is not None and same_theta(last[0], cur)  # checked by the last step
        if not q_ok and cur.nnz:
            try:
                q_moments(cur, what=t.what)
                q_ok = True
            except DivergenceError:
                pass
        base_ctx = t.cavity if t.cavity.nnz else None
        if not q_ok:  # θ_V not normalisable yet: start from the closed-form unigram fit
            th, _ = closed_form(t.mu, order_feature_set(1, self.n), base_ctx, what=t.what)
            return Fit(th, (th - t.cavity).restrict(tol=1e-12))
        message, zero = t.message, 0
        for _ in range(self.settings.steps):
            out = self._step(t, cur, message, last, sched, cache)
            zero += out.zero_steps
            message, last = out.message, (out.theta, out.q)
            cur = out.theta.restrict(tol=1e-12)
        return Fit(out.theta, out.message, out.q, zero)

    @abstractmethod
    def _step(self, t: Target, cur: Theta, message: Optional[Theta],
              last: Optional[tuple], sched: Schedule, cache: Optional[dict]) -> Fit:
        """One step from θ_V = ``cur`` (θ_{F→V} = ``message``)."""


class Gradient(_Stepwise, _FixedOrder):
    """One gradient step of E_p̂[log q_θ] (:func:`strgm.projection.gradient.gradient_step`)
    on the order-n family, the step halved while Z_θ = ∞ (PEP §7)."""

    name, penalised = "gradient", False

    def _step(self, t, cur, message, last, sched, cache):
        fam = self.family(sched)
        work = fam.union(t.cavity.features).union(cur.features)
        m = cache.get("p") if cache is not None else None
        if m is None or m.features != work:
            m = p_moments(t.mu, work, t.cavity if t.cavity.nnz else None, what=t.what,
                          compositions=self.compositions)
            if cache is not None:
                cache["p"] = m
        q = last[1] if (last is not None and last[1].features == work
                        and same_theta(last[0], cur)) else None
        r = gradient_step(cur.align(work), m.expectations, self.settings.eta, q=q,
                          mask=work.positions_in(fam) >= 0, what=t.what)
        return Fit(r.theta, (r.theta - t.cavity).restrict(tol=1e-12), r.q,
                   int(r.eta == 0.0))


class Prox(_Stepwise):
    """One proximal-gradient step of the tree-structured group lasso on the active set
    (:func:`strgm.projection.prox.prox_step`, PEP §6.1)."""

    name, penalised = "prox", True

    def _step(self, t, cur, message, last, sched, cache):
        old = message if message is not None else Theta(FeatureSet([], self.n))
        r = prox_step(t.mu, old, t.cavity if t.cavity.nnz else None, sched.lam,
                      self.settings.eta, self._max_len(sched),
                      p_cache=cache.get("p") if cache is not None else None, what=t.what,
                      q_cache=last, compositions=self.compositions)
        if cache is not None:
            cache["p"] = r.p
            cache["step"] = r
        return Fit(r.theta, r.x, r.q)

    def fit_fused(self, t: Target, sched: Schedule, cache: dict,
                  passes: int) -> Optional[tuple[Fit, int]]:
        """Up to ``passes`` passes (one step each) of this block's message in one compiled
        call (:func:`strgm.projection.fused.fused_steps`), continuing from the last
        reference step kept in ``cache``; (the fit after the last pass done, passes
        done), or None when the next pass must be a reference one (:meth:`fit`)."""
        last = cache.get("step")
        if (last is None or t.message is not last.x or "p" not in cache
                or self.settings.steps != 1):
            return None
        out = fused_steps(last, t.message, t.cavity if t.cavity.nnz else None, cache["p"],
                          passes, sched.lam, self.settings.eta, self._max_len(sched))
        if out is None:
            return None
        r, done = out
        cache["step"] = r
        return Fit(r.theta, r.x, r.q), done


#: name → projection class
PROJECTIONS: dict[str, type[Projection]] = {
    cls.name: cls for cls in (Closed, Gradient, Prox, Grow)}
