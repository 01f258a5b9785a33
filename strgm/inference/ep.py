"""Expectation propagation (EP) and penalized EP (PEP) over n-gram features (PEP §4, §6, §7).

Factors keep exchanging WFSA messages through the shared scheduler
(:func:`strgm.inference.schedule.run_sweeps`); variables hold θ vectors (this module's
:class:`EPSide`):

* θ_V = Σ_F θ_{F→V}                                   (eq. 4, maintained incrementally)
* θ_{V→F} = θ_V − θ_{F→V}, encoded on demand as the DFA ENCODE(θ_{V→F}) handed to the
  factor (the factors' ``message_to`` is reused unchanged);
* on a visit to V, for each new μ_{F→V} (K passes: ``K_early`` = 20 on the first
  ``early_iters`` iterations, then 1):
      p̂_V = μ_{F→V} ⊙ ENCODE(θ_{V→F})                  (eq. 5; one composition, done
                                                        jointly with the expected counts)
      θ_V ≈ argmin D(p̂_V ‖ q_θ) [+ λΩ(θ_{F→V})]        (eq. 2 / 3 / 7)
      θ_{F→V} := θ_V − θ_{V→F}                          (eq. 6)

Projections (``method``, ``projection``):

* ``ep`` / ``gradient`` (default): one gradient step (η) per pass on the complete order-n
  family (``order`` = n), as in the paper's experiments ("Each update to θ_V consisted of
  a single step of (proximal) gradient descent", PEP §7; Figure 3 shows only
  gradient-based EP);
* ``ep`` / ``closed``: the exact closed-form fit on the order-n family
  (:mod:`strgm.projection.closed_form`) on every visit. Exact and fast on trees (one
  pass reproduces BP when the family can represent the messages), but on loopy graphs it
  can move each θ_{F→V} so far that other cavities θ_V − θ_{F'→V} stop being
  normalisable; the repairs (below) then bias beliefs toward short strings, and accuracy
  falls with every iteration. Measured on 50 synthetic words (``benchmarks/ep_repairs.py``,
  5 iterations, mean −log belief(gold UR)): closed EP-2 9.5 nats / 497 repairs, closed
  EP-3 20.7 / 821; gradient EP-2 2.8 / 0, gradient EP-3 2.6 / 0. The cause is the
  division, not the fit: θ_V − θ_{F→V} is defined only where q_V > 0, and an exact fit
  stores zero-probability arcs as LOG_FLOOR (or as "inherit the parent context"), so
  floor minus floor leaves arbitrary mass on strings the divided-out message excludes.
  On a tree that region is never used again; on a loopy graph it is (even with an order
  rich enough to represent every message, closed-form EP then differs from loopy BP).
  Gradient steps never reach the floor;
* ``pep`` / ``prox`` (default): one proximal-gradient step of the tree-structured group
  lasso (λ, η) on the active set (:mod:`strgm.projection.prox`);
* ``pep`` / ``grow``: closed form with greedy growing of contexts (:mod:`strgm.projection.grow`).

Only unigram features are allowed on the first iteration (``unigram_first``, PEP §7). When
θ_V is not (yet) normalisable — at the start θ = 0 — a gradient-type update first sets θ_V
to the closed-form unigram fit of p̂_V. Anytime PEP (``anneal``, PEP §8): λ_i =
λ·``decay``^i on iteration i. Beliefs are ENCODE(θ_V) with the exact log Z_θ.

Deliberate variant — exact relay at variables of degree ≤ 2 (``relay``, default True).
EP approximates a variable's incoming messages only so that their *product* stays small
(PEP §2.3). A latent variable with ≤ 2 neighbours multiplies nothing: its message to one
factor is the other factor's message itself (degree 2), or Σ* (degree 1), exactly as in
BP, and its belief is the exact product of its (≤ 2) WFSA messages. So, as in pruned BP
(:mod:`strgm.inference.bp`), such variables keep WFSA messages (rescaled to total weight
1 when finite) and get no θ. This matters on the phonology model: a word's underlying
form U_w sits between one concatenation and one phonology factor, and the phonology
message μ(u) = P(s_w | u) pins |u| ≈ |s_w|; a low-order n-gram family cannot express a
length window (its length distribution is a mixture of geometrics), so approximating U_w
by a 1–3-gram θ spreads the mass over short strings and the morpheme beliefs collapse
toward ε (measured: gold cross-entropy 25–28 nats vs 6.3 for pruned BP on 100 synthetic
words). Held-out words (degree 1) get the exact message from their phonology factor. θ
messages — and all the approximation — remain at the variables where messages meet
(morphemes with a prior and ≥ 2 words). ``relay=False`` gives textbook EP everywhere.

Messages from θ variables into concatenation and binary factors are made normalisable
(:meth:`EPSide._make_normalisable`): θ_{V→F} includes the prior's projected message, and
when the product of the other θ_{F'→V} still grows with length, a small length penalty is
added (counted in ``repairs``); otherwise a concatenation's ε-closure, which sums the
inserted message against the whole's message, would diverge.
"""

from __future__ import annotations

import copy
import dataclasses
import time
import warnings
from typing import Callable, Optional

import numpy as np
import pynini
from threadpoolctl import threadpool_limits

from strgm.errors import (ConvergenceWarning, DivergenceError, InconsistentEvidenceError,
                          StrgmError)

_NUMERIC = (DivergenceError, InconsistentEvidenceError)
from strgm.features.moments import CompositionCache, p_moments, q_moments
from strgm.features.theta import FeatureSet, Theta
from strgm.factors import ConcatFactor
from strgm.graph import FactorGraph
from strgm.inference.belief import Belief
from strgm.inference.bp import intersect_all, rescale, same_message
from strgm.inference.result import InferenceResult
from strgm.inference.schedule import observation_message, run_sweeps
from strgm.projection.closed_form import closed_form, order_feature_set
from strgm.projection.gradient import gradient_step
from strgm.projection.prox import prox_step, same_theta
from strgm.wfsa import guard
from strgm.wfsa.construct import sigma_star

#: Arcs of message compositions kept by one EP run (about 40 bytes each, plus 16 for the
#: trimming kept with a cyclic one: ~0.3 GB).
_COMPOSITION_ARCS = 5_000_000

_DEFAULTS = {
    "ep": {"order": 2, "projection": "gradient"},
    "pep": {"projection": "prox"},
}
_COMMON = {"lam": 0.01, "anneal": False, "decay": 0.5, "eta": 0.05, "K_early": 20,
           "early_iters": 3, "unigram_first": True, "max_len": None, "steps": 1,
           "relay": True, "reproject": False, "on_divergence": "damp"}
_PROJECTIONS = {"ep": ("closed", "gradient"), "pep": ("prox", "grow")}


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
    if s["projection"] not in _PROJECTIONS[method]:
        raise StrgmError(f"projection {s['projection']!r} is not available for {method!r}; "
                         f"choose from {_PROJECTIONS[method]}")
    if method == "ep" and (not isinstance(s["order"], int) or s["order"] < 1):
        raise StrgmError(f"order must be a positive integer, got {s['order']!r}")
    if s["lam"] < 0 or s["eta"] <= 0 or s["K_early"] < 1 or s["steps"] < 1:
        raise StrgmError("need lam >= 0, eta > 0, K_early >= 1, steps >= 1")
    return s


class EPSide:
    """Variable side of EP/PEP for :func:`run_sweeps` (see module docstring)."""

    def __init__(self, graph: FactorGraph, method: str = "pep", **options):
        self.graph = graph
        self.method = method
        self.s = ep_settings(method, options)
        self.n = graph.alphabet.size
        self.theta_in: dict[str, dict[str, Theta]] = {v: {} for v in graph.variables}
        self.theta_v: dict[str, Theta] = {}
        self.mu: dict[str, dict[str, pynini.Fst]] = {v: {} for v in graph.variables}
        self.pending: dict[str, dict[str, None]] = {v: {} for v in graph.variables}
        self.iteration = 0
        self.K = self.s["K_early"]
        self.lam = self.s["lam"]
        self.updates = 0
        self.repairs = 0
        self.repairs_by_kind: dict[str, int] = {}
        self.skipped = 0
        self.project_seconds = 0.0
        self._empty = FeatureSet([], self.n)
        self._enc_cache: dict[tuple[str, str], tuple[int, pynini.Fst]] = {}
        self._version: dict[str, int] = {}
        self._relay = {v for v, var in graph.variables.items()
                       if self.s["relay"] and not var.is_observed and graph.degree(v) <= 2}
        self._sigma = sigma_star(self.n)
        self.limits = guard.current()  # the budget of the run, kept for later queries
        self._belief_cache: dict[str, tuple[int, Belief]] = {}
        # (θ_V, moments of q_θV) from the last prox step at each variable: the next step
        # (same or another factor's message) starts from the same θ_V
        self._q_last: dict[str, tuple[Theta, object]] = {}
        # μ_{F→V} composed with the feature DFA, re-weighted for every new cavity: K
        # passes compose each message about once (its cover grows with PEP's working
        # sets), and a message re-sent unchanged is not composed again
        self._compositions = CompositionCache(max_arcs=_COMPOSITION_ARCS)

    def queries_only(self, var: str) -> bool:
        """Relayed variables keep exact WFSA messages (no projection onto θ)."""
        return var in self._relay

    def is_relay(self, var: str) -> bool:
        """True for latent variables of degree ≤ 2 (exact WFSA relay, no θ)."""
        return var in self._relay

    def message_version(self, var: str) -> int:
        """Changes whenever what ``var`` sends may have changed.

        Deliberately *not* exposed as the scheduler's ``version`` protocol: EP must refit
        every μ_{F→V} against its current cavity θ_{V→F} whenever the other messages at V
        have moved, so factor messages are re-sent (and re-projected) on every sweep, as
        in PEP §4.4. Measured on 50 synthetic words (EP order 2): with the scheduler
        skipping unchanged messages the gold cross-entropy was 10.6–20.6 nats, without it
        5–6 nats. Relayed variables still cache their outgoing WFSAs by this version."""
        if var not in self._relay and not self.graph.variables[var].is_observed:
            self._visit(var)
        return self._version.get(var, 0)

    # --- schedule hooks ------------------------------------------------------------
    def start_iteration(self, iteration: int) -> None:
        self.iteration = iteration
        self.K = self.s["K_early"] if iteration < self.s["early_iters"] else 1
        if self.s["anneal"]:
            self.lam = self.s["lam"] * self.s["decay"] ** iteration
        else:
            self.lam = self.s["lam"]
        # With ``reproject`` (off by default), every stored μ_{F→V} is re-projected once
        # per iteration against its current
        # cavity θ_{V→F}, even when the scheduler skips recomputing an unchanged μ (the
        # ``version`` protocol): EP's fixed point needs each message refitted after the
        # others at V have moved.
        for v in self.graph.latent:
            if v not in self._relay and self.s["reproject"]:
                for f in self.mu[v]:
                    self.pending[v].setdefault(f, None)

    @property
    def unigram_only(self) -> bool:
        return self.s["unigram_first"] and self.iteration == 0

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        if var in self._relay:
            if not same_message(self.mu[var].get(factor), message):
                self.mu[var][factor] = message
                self._version[var] = self._version.get(var, 0) + 1
            return
        old = self.mu[var].get(factor)
        if old is not None and old is not message:
            self._compositions.discard(old)  # a replaced message is not projected again
        self.mu[var][factor] = message
        self.pending[var][factor] = None

    def _relay_out(self, var: str, factor: str) -> pynini.Fst:
        others = [g for g in self.mu[var] if g != factor]
        if not others:
            return self._sigma
        return rescale(self.mu[var][others[0]])

    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.variables[var].is_observed:
            return observation_message(self.graph, var)
        key = (var, factor)
        if var in self._relay:
            ver = self._version.get(var, 0)
            hit = self._enc_cache.get(key)
            if hit is None or hit[0] != ver:
                hit = (ver, self._relay_out(var, factor))
                self._enc_cache[key] = hit
            return hit[1]
        self._visit(var)
        ver = self._version.get(var, 0)
        hit = self._enc_cache.get(key)
        if hit is not None and hit[0] == ver:
            return hit[1]
        th = self.incoming_theta(var, factor)
        fst = th.features.dfa.encode(th.values)
        fst = pynini.arcsort(fst, sort_type="ilabel")
        self._enc_cache[key] = (ver, fst)
        return fst

    def incoming_theta(self, var: str, factor: str) -> Theta:
        """θ_{V→F}, made normalisable where it enters a concatenation or a transducer."""
        self._visit(var)
        th = self.theta_to_factor(var, factor)
        f = self.graph.factors[factor]
        if th.nnz and isinstance(f, ConcatFactor) and var in f.parts:
            whole = None
            if not self.graph.variables[f.whole].is_observed and f.whole not in self._relay:
                self._visit(f.whole)
                whole = self.theta_to_factor(f.whole, factor)
            th = self._make_normalisable(th, var, factor, whole)
        elif th.nnz and self.s["relay"] and f.kind != "unary":
            th = self._make_normalisable(th, var, factor, None)
        return th

    def belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed:
            return Belief(var, observation_message(self.graph, var), self.graph.alphabet)
        if var in self._relay:
            ver = self._version.get(var, 0)
            hit = self._belief_cache.get(var)
            if hit is None or hit[0] != ver:
                ms = list(self.mu[var].values())
                with guard.limits(use=self.limits):
                    fst = intersect_all(ms, 10 ** 7, f"belief of variable {var!r}") \
                        if ms else self._sigma
                hit = (ver, Belief(var, fst, self.graph.alphabet))
                self._belief_cache[var] = hit
            return hit[1]
        self._visit(var)
        th = self.theta(var)
        try:
            logz = q_moments(th, what=f"belief of variable {var!r}").log_z
        except DivergenceError as e:
            raise DivergenceError(f"EP belief of variable {var!r} is not normalisable "
                                  f"(does it have a proper prior?): {e}") from None
        return Belief(var, th.features.dfa.encode(th.values), self.graph.alphabet,
                      log_z=logz)

    # --- θ bookkeeping ----------------------------------------------------------------
    def theta(self, var: str) -> Theta:
        """θ_V (eq. 4)."""
        return self.theta_v.get(var) or Theta(self._empty)

    def theta_to_factor(self, var: str, factor: str) -> Theta:
        """θ_{V→F} = θ_V − θ_{F→V}."""
        th = self.theta(var)
        old = self.theta_in[var].get(factor)
        return th if old is None else (th - old).restrict(tol=1e-12)

    def _make_normalisable(self, th: Theta, var: str, factor: str,
                           partner: Optional[Theta] = None) -> Theta:
        """θ_{V→F} itself, or — if ENCODE(θ_{V→F}) has infinite total weight — θ_{V→F}
        plus the smallest tried length penalty −δ·|v| that makes it finite.

        EP messages need not be normalisable, but a concatenation factor sums over the
        ε-cycles of the messages it inserts around the identity (ε-removal), and OpenFst
        would never terminate if that sum diverged. Applied to messages from
        concatenation *parts* only, and also required of θ_{V→F} + ``partner`` (the
        whole's message, against which the inserted part is summed); ``repairs`` counts
        how often it was needed."""
        def ok(t: Theta) -> bool:
            try:
                q_moments(t)
                if partner is not None and partner.nnz:
                    q_moments(t + partner)
                return True
            except _NUMERIC:
                return False

        if ok(th):
            return th
        n = self.n
        unig = FeatureSet([(a,) for a in range(1, n + 1)], n)
        delta = 0.05
        for _ in range(40):
            cand = th + Theta(unig, np.full(n, -delta))
            if ok(cand):
                self.count_repair("message_length_penalty")
                return cand
            delta *= 2
        if ok(self.theta(var)):  # last resort: the belief θ_V itself (counted)
            self.count_repair("message_is_belief")
            return self.theta(var)
        raise DivergenceError(f"message from variable {var!r} to factor {factor!r} cannot "
                              "be made normalisable")

    def count_repair(self, kind: str) -> None:
        """Count one repair (``repairs``) and its kind (``repairs_by_kind``):
        ``message_length_penalty`` / ``message_is_belief`` (θ_{V→F} made normalisable,
        :meth:`_make_normalisable`), ``damped_update`` (:meth:`_damped_update`),
        ``damped_concat_parts`` (:class:`_GuardedConcat`). Each biases toward shorter
        strings, so many repairs signal that EP is struggling (e.g. high orders on
        loopy graphs)."""
        self.repairs += 1
        self.repairs_by_kind[kind] = self.repairs_by_kind.get(kind, 0) + 1

    def has_theta(self, var: str) -> bool:
        """True for latent variables that carry θ (not observed, not relayed)."""
        return var not in self._relay and not self.graph.variables[var].is_observed

    def damped_message(self, var: str, factor: str, delta: float) -> pynini.Fst:
        """ENCODE(θ_{V→F} − δ·(unigram counts)): the message damped by exp(−δ·|v|)."""
        base = self.incoming_theta(var, factor)
        unig = FeatureSet([(a,) for a in range(1, self.n + 1)], self.n)
        th = base + Theta(unig, np.full(self.n, -delta))
        return pynini.arcsort(th.features.dfa.encode(th.values), sort_type="ilabel")

    def num_features(self, var: str) -> int:
        return self.theta(var).nnz

    @property
    def approximated(self) -> list[str]:
        """Latent variables that carry θ (all latent ones unless relayed)."""
        return [v for v in self.graph.latent if v not in self._relay]

    def _set(self, var: str, factor: str, new_in: Theta, new_v: Theta) -> None:
        self.theta_in[var][factor] = new_in
        self.theta_v[var] = new_v.restrict(tol=1e-12)
        self._version[var] = self._version.get(var, 0) + 1

    # --- the visit ---------------------------------------------------------------------
    def _visit(self, var: str) -> None:
        pend = list(self.pending[var])
        if not pend:
            return
        self.pending[var] = {}
        t0 = time.perf_counter()
        exact = self.s["projection"] in ("closed", "grow")
        passes = 1 if (exact and len(pend) == 1) else self.K
        cache: dict[str, object] = {}
        for _ in range(passes):
            for f in pend:
                try:
                    self._update(var, f, cache if len(pend) == 1 else None)
                except _NUMERIC as err:
                    if self.s["on_divergence"] == "damp":
                        self._damped_update(var, f, getattr(err, "radius_at_least", None))
                    else:
                        self.skipped += 1
        self.project_seconds += time.perf_counter() - t0

    def _damped_update(self, var: str, factor: str,
                       radius_at_least: Optional[float] = None) -> None:
        """p̂_V = μ_{F→V} ⊙ ENCODE(θ_{V→F}) has infinite mass (a cavity that is not
        normalisable, the classic EP failure): fit θ_V in closed form to the damped
        p̂' = μ_{F→V} ⊙ ENCODE(θ_{V→F} − δ·|v|) with the smallest δ of 0.25, 0.5, 1, …
        that works, then keep the invariant θ_{F→V} := θ_V − θ_{V→F}. If no δ works the
        update is skipped. Both events are counted (``repairs``, ``skipped``).

        Damping multiplies every labelled arc of p̂'s transition matrix A by e^{-δ}, so
        ρ(A_δ) ≥ e^{-δ}·ρ(A) (ε-arcs, undamped, only add). A proven bound ρ(A) ≥ c from
        the failed fit (``radius_at_least``, or from a failed damped try: ρ(A) ≥
        e^{δ}·c_δ) therefore rules out every δ ≤ log c without trying it — the same δ
        is chosen, with fewer divergent forward–backward passes (damped updates took ~40%
        of trigram EP's time on 20 English words)."""
        mu = self.mu[var][factor]
        base = self.theta_to_factor(var, factor)
        n = self.n
        unig = FeatureSet([(a,) for a in range(1, n + 1)], n)
        fam = self._family() if self.s["projection"] in ("closed", "gradient") \
            else order_feature_set(1 if self.unigram_only else 2, n)
        log_radius = np.log(radius_at_least) if radius_at_least else 0.0
        delta = 0.25
        for _ in range(12):
            if delta <= log_radius:  # provably still divergent
                delta *= 2
                continue
            damped = base + Theta(unig, np.full(n, -delta))
            try:
                th, _ = closed_form(mu, fam, damped)
            except _NUMERIC as err:
                c = getattr(err, "radius_at_least", None)
                if c:
                    log_radius = max(log_radius, delta + np.log(c))
                delta *= 2
                continue
            self.count_repair("damped_update")
            self._set(var, factor, (th - base).restrict(tol=1e-12), th)
            return
        self.skipped += 1

    def _family(self) -> FeatureSet:
        order = 1 if self.unigram_only else self.s["order"]
        return order_feature_set(order, self.n)

    def _update(self, var: str, factor: str, cache: Optional[dict]) -> None:
        """Re-approximate μ_{factor→var} (eqs. 5–7)."""
        self.updates += 1
        mu = self.mu[var][factor]
        what = f"EP update of variable {var!r} from factor {factor!r}"
        base = self.theta_to_factor(var, factor)
        base_ctx = base if base.nnz else None
        proj = self.s["projection"]
        if proj == "closed":
            th, _ = closed_form(mu, self._family(), base_ctx, what=what,
                                compositions=self._compositions)
            self._set(var, factor, th - base, th)
            return
        if proj == "grow":
            from strgm.projection.grow import grow

            max_len = 1 if self.unigram_only else self.s["max_len"]
            th = grow(mu, self.n, lam=self.lam, theta_context=base_ctx, max_len=max_len,
                      what=what, compositions=self._compositions)
            self._set(var, factor, (th - base).restrict(tol=1e-12), th)
            return
        cur = self.theta(var)
        last = self._q_last.get(var)
        q_ok = last is not None and same_theta(last[0], cur)  # checked by the last step
        if not q_ok and cur.nnz:
            try:
                q_moments(cur, what=what)
                q_ok = True
            except DivergenceError:
                pass
        if not q_ok:  # θ_V not normalisable yet: start from the closed-form unigram fit
            th, _ = closed_form(mu, order_feature_set(1, self.n), base_ctx, what=what)
            self._set(var, factor, (th - base).restrict(tol=1e-12), th)
            return
        for _ in range(self.s["steps"]):
            if proj == "gradient":
                fam = self._family()
                work = fam.union(base.features).union(cur.features)
                m = cache.get("p") if cache is not None else None
                if m is None or m.features != work:
                    m = p_moments(mu, work, base_ctx, what=what,
                                  compositions=self._compositions)
                    if cache is not None:
                        cache["p"] = m
                last = self._q_last.get(var)
                q = last[1] if (last is not None and last[1].features == work
                                and same_theta(last[0], cur)) else None
                r = gradient_step(cur.align(work), m.expectations, self.s["eta"], q=q,
                                  mask=work.positions_in(fam) >= 0, what=what)
                if r.eta == 0.0:
                    self.skipped += 1
                self._set(var, factor, (r.theta - base).restrict(tol=1e-12), r.theta)
                self._q_last[var] = (r.theta, r.q)
            else:
                max_len = 1 if self.unigram_only else self.s["max_len"]
                old = self.theta_in[var].get(factor) or Theta(self._empty)
                r = prox_step(mu, old, base_ctx, self.lam, self.s["eta"], max_len,
                              p_cache=cache.get("p") if cache is not None else None,
                              what=what, q_cache=self._q_last.get(var),
                              compositions=self._compositions)
                if cache is not None:
                    cache["p"] = r.p
                self._set(var, factor, r.x, r.theta)
                self._q_last[var] = (r.theta, r.q)
            cur = self.theta(var)


@dataclasses.dataclass(frozen=True, eq=False)
class _GuardedConcat(ConcatFactor):
    """A concatenation whose messages to parts survive a divergent ε-closure.

    μ_{F→M_i} sums the inserted messages of the other parts against the whole's message.
    Even when each inserted ENCODE(θ_{M_j→F}) is normalisable, that sum — the spectral
    radius of the product of the inserted DFA with the whole's (cyclic) message — can be
    ≥ 1, and :func:`strgm.wfsa.epsilon.trim` raises :class:`DivergenceError`. Then the
    inserted θ messages are damped by a length penalty exp(−δ·|m_j|), δ = 0.25, 0.5, 1,
    … (at most 12 doublings), which makes the sum finite; each retry is counted in the
    side's ``repairs``. Only used inside :func:`run_ep` (the caller's graph is untouched).
    """

    side: Optional["EPSide"] = None

    def message_to(self, var, incoming, num_labels):
        try:
            return super().message_to(var, incoming, num_labels)
        except DivergenceError:
            if var == self.whole:
                raise
        delta = 0.25
        damp = [p for p in self.parts if p != var and self.side.has_theta(p)]
        for _ in range(12):
            inc = dict(incoming)
            for p in damp:
                inc[p] = self.side.damped_message(p, self.name, delta)
            try:
                out = super().message_to(var, inc, num_labels)
                self.side.count_repair("damped_concat_parts")
                return out
            except DivergenceError:
                delta *= 2
        raise DivergenceError(f"message from factor {self.name!r} to {var!r} diverges even "
                              "with damped part messages")


def _guarded(graph: FactorGraph, side: "EPSide") -> FactorGraph:
    """A shallow copy of ``graph`` whose concatenations are :class:`_GuardedConcat`."""
    g = copy.copy(graph)
    g.factors = {name: (_GuardedConcat(f.name, f.parts, f.whole, f.boundary_label, side)
                        if isinstance(f, ConcatFactor) else f)
                 for name, f in graph.factors.items()}
    return g


def run_ep(graph: FactorGraph, method: str = "pep", max_iters: int = 10, tol: float = 1e-4,
           max_states: int = 200_000, progress: Optional[Callable[[str], None]] = None,
           **options) -> InferenceResult:
    """Run EP (``method="ep"``) or PEP (``"pep"``) and return an :class:`InferenceResult`.

    Options: ``order`` (EP), ``projection`` ("gradient" (default)|"closed" for EP,
    "prox" (default)|"grow" for PEP), ``lam`` (λ, 0.01), ``anneal`` (λ decays by
    ``decay`` per iteration), ``eta`` (0.05), ``K_early`` (20), ``early_iters`` (3), ``unigram_first`` (True), ``max_len``
    (longest PEP feature, unbounded), ``steps`` (gradient steps per pass, 1).
    """
    t0 = time.perf_counter()
    side = EPSide(graph, method, **options)
    # EP solves thousands of small dense systems (q-side DFAs of ~10²
    # states); OpenBLAS's worker threads cost more than they gain there (measured ~4×
    # slower LU at n = 200–300 on a loaded 2-core machine), so BLAS runs single-threaded.
    with threadpool_limits(limits=1, user_api="blas"):
        stats = run_sweeps(_guarded(graph, side), side, max_iters=max_iters, tol=tol,
                           max_states=max_states, progress=progress,
                           min_iters=2 if side.s["unigram_first"] else 1)
    if not stats.converged and not graph.is_acyclic():
        warnings.warn(f"{method} stopped after {stats.iterations} iterations without "
                      f"converging (last belief change {stats.deltas[-1]:.2e} > tol={tol})",
                      ConvergenceWarning, stacklevel=2)
    feats = [side.num_features(v) for v in side.approximated]
    settings = {"max_iters": max_iters, "tol": tol, **side.s}
    extra = {"max_message_states": stats.max_message_states, "updates": side.updates,
             "message_repairs": side.repairs, "skipped_updates": side.skipped,
             "message_repairs_by_kind": dict(side.repairs_by_kind),
             "projection_seconds": side.project_seconds,
             "mean_features_per_belief": float(np.mean(feats)) if feats else 0.0,
             "features_per_belief": dict(zip(side.approximated, feats)),
             "relayed_variables": len(graph.latent) - len(side.approximated)}
    return InferenceResult(method, settings, time.perf_counter() - t0, stats.iterations,
                           stats.converged, stats.deltas, side=side, graph=graph,
                           extra=extra)
