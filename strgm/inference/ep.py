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

Projections (``method``, ``projection``; the interface is
:class:`strgm.projection.interface.Projection`, the settings :mod:`strgm.inference.ep_settings`):

* ``ep`` / ``gradient`` (default): one gradient step (η) per pass on the complete order-n
  family (``order`` = n), as in the paper's experiments ("Each update to θ_V consisted of
  a single step of (proximal) gradient descent", PEP §7; Figure 3 shows only
  gradient-based EP);
* ``ep`` / ``closed``: the exact closed-form fit on the order-n family
  (:mod:`strgm.projection.closed_form`) on every visit. Exact and fast on trees, but on
  loopy graphs it can move θ_{F→V} so far that other cavities θ_V − θ_{F'→V} stop being
  normalisable; the repairs (below) then bias beliefs toward short strings
  (measured: docs/decisions/ep_relay_and_projection.md). The cause is the division: θ_V − θ_{F→V} is defined only where q_V > 0, and an
  exact fit stores zero-probability arcs as LOG_FLOOR, so floor minus floor leaves
  arbitrary mass on strings the divided-out message excludes (on a loopy graph that
  region is used again). Gradient steps never reach the floor;
* ``pep`` / ``prox`` (default): one proximal-gradient step of the tree-structured group
  lasso (λ, η) on the active set (:mod:`strgm.projection.prox`);
* ``pep`` / ``grow``: closed form with greedy growing of contexts (:mod:`strgm.projection.grow`).

Only unigram features are allowed on the first iteration (``unigram_first``, PEP §7). When
θ_V is not (yet) normalisable — at the start θ = 0 — a gradient-type update first sets θ_V
to the closed-form unigram fit of p̂_V. Anytime PEP (``anneal``, PEP §8): λ_i =
λ·``decay``^i on iteration i. Beliefs are ENCODE(θ_V) with the exact log Z_θ.

Deliberate variant — exact relay at variables of degree ≤ 2 (``relay``, default True).
EP approximates incoming messages only so that their *product* stays small (PEP §2.3).
A latent variable with ≤ 2 neighbours multiplies nothing, so, as in pruned BP, it is
handed to an exact-BP side (:class:`strgm.inference.bp.ExactSide`) and gets no θ. On the
phonology model a word's underlying form U_w is one: its phonology message pins
|u| ≈ |s_w|, which a low-order n-gram family cannot express (its length distribution is
a mixture of geometrics); approximating U_w by a 1–3-gram θ collapses the morpheme
beliefs toward ε (measured: docs/decisions/ep_relay_and_projection.md). θ messages remain where messages meet (morphemes with a prior and ≥ 2 words).
``relay=False`` gives textbook EP everywhere.

Messages from θ variables into concatenation and binary factors are made normalisable,
a non-normalisable cavity is damped, and a concatenation's divergent message to a part
is retried with damped part messages (:mod:`strgm.inference.ep_repair`; counted in
``repairs``).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import pynini

from strgm.errors import DivergenceError
from strgm.features.moments import CompositionCache, q_moments
from strgm.features.theta import FeatureSet, Theta
from strgm.graph import FactorGraph
from strgm.inference.belief import Belief
from strgm.inference.bp import ExactSide
from strgm.inference.ep_repair import (NUMERIC, damped_fit, damped_retry, length_penalty,
                                       normalisable_message)
from strgm.inference.ep_passes import run_visit
from strgm.inference.ep_settings import ep_settings
from strgm.inference.side import VariableSide, observation_message
from strgm.projection.interface import PROJECTIONS, Fit, Schedule, Target

#: Arcs of message compositions kept by one EP run (about 40 bytes each, plus 16 for the
#: trimming kept with a cyclic one: ~0.3 GB).
_COMPOSITION_ARCS = 5_000_000


class EPSide(VariableSide):
    """Variable side of EP/PEP for :func:`strgm.inference.schedule.run_sweeps` (see the
    module docstring)."""

    #: EP solves thousands of small dense systems (q-side DFAs of ~10² states);
    #: OpenBLAS's worker threads cost more than they gain there (measured ~4× slower LU
    #: at n = 200–300 on a loaded 2-core machine), so BLAS runs single-threaded.
    blas_threads = 1
    #: A factor message whose inputs did not change is not computed again, but it is
    #: delivered again: EP refits every μ_{F→V} against its current cavity on every
    #: sweep (PEP §4.4; skipping that re-projection is unsafe, docs/pep.md).
    tracks_versions = True
    redelivers_unchanged = True

    def __init__(self, graph: FactorGraph, method: str = "pep", **options):
        super().__init__(graph)
        self.method = method
        self.s = ep_settings(method, options)
        self.min_iters = 2 if self.s.unigram_first else 1
        self.n = graph.alphabet.size
        self.theta_in: dict[str, dict[str, Theta]] = {v: {} for v in graph.variables}
        self.theta_v: dict[str, Theta] = {}
        self.mu: dict[str, dict[str, pynini.Fst]] = {v: {} for v in graph.variables}
        self.pending: dict[str, dict[str, None]] = {v: {} for v in graph.variables}
        self.iteration = 0
        self.K = self.s.K_early
        self.lam = self.s.lam
        self.updates = 0
        self.repairs = 0
        self.repairs_by_kind: dict[str, int] = {}
        self.skipped = 0
        self.project_seconds = 0.0
        self._empty = FeatureSet([], self.n)
        self._enc_cache: dict[tuple[str, str], tuple[int, pynini.Fst]] = {}
        self._version: dict[str, int] = {}
        self._relay = {v for v, var in graph.variables.items()
                       if self.s.relay and not var.is_observed and graph.degree(v) <= 2
                       and not any(graph.factors[f].moment_message(v) is not None
                                   for f in graph.factors_of(v))}
        # degree ≤ 2: exact BP's business (module docstring), unless a grammar is there
        self._relayed = ExactSide(graph, max_states=10 ** 7)
        # (θ_V, moments of q_θV) from the last step at each variable: the next step
        # (same or another factor's message) starts from the same θ_V
        self._q_last: dict[str, tuple[Theta, object]] = {}
        # μ_{F→V} composed with the feature DFA, re-weighted for every new cavity: K
        # passes compose each message about once (its cover grows with PEP's working
        # sets), and a message re-sent unchanged is not composed again
        self._compositions = CompositionCache(max_arcs=_COMPOSITION_ARCS)
        self.projection = PROJECTIONS[self.s.projection](self.n, self.s,
                                                            self._compositions)

    @property
    def settings(self) -> dict:
        return self.s.as_dict()

    def diagnostics(self) -> dict:
        feats = [self.num_features(v) for v in self.approximated]
        return {"updates": self.updates,
                "message_repairs": self.repairs, "skipped_updates": self.skipped,
                "message_repairs_by_kind": dict(self.repairs_by_kind),
                "projection_seconds": self.project_seconds,
                "mean_features_per_belief": float(np.mean(feats)) if feats else 0.0,
                "features_per_belief": dict(zip(self.approximated, feats)),
                "relayed_variables": len(self.graph.latent) - len(self.approximated)}

    def version(self, var: str) -> int:
        """The relay's count of changes, or of θ_V's updates (pending ones made first)."""
        if var in self._relay:
            return self._relayed.version(var)
        if not self.graph.variables[var].is_observed:
            self._visit(var)
        return self._version.get(var, 0)

    def queries_only(self, var: str) -> bool:
        """Relayed variables keep exact WFSA messages (no projection onto θ)."""
        return var in self._relay

    # --- schedule hooks ------------------------------------------------------------
    def start_iteration(self, iteration: int) -> None:
        self.iteration = iteration
        self.K = self.s.K_early if iteration < self.s.early_iters else 1
        if self.unigram_only and self.s.K_unigram:
            self.K = self.s.K_unigram
        self.lam = self.s.lam * (self.s.decay ** iteration if self.s.anneal else 1)
        if iteration > 0:  # factors that learn their parameters from p̂ (grammars)
            for m in {id(m): m for msgs in self.mu.values() for m in msgs.values()
                      if hasattr(m, "end_iteration")}.values():
                m.end_iteration(iteration)

    @property
    def schedule(self) -> Schedule:
        return Schedule(self.lam, self.unigram_only)

    @property
    def unigram_only(self) -> bool:
        return self.s.unigram_first and self.iteration == 0

    def receive(self, var: str, factor: str, message: pynini.Fst) -> None:
        if var in self._relay:
            self._relayed.receive(var, factor, message)
            return
        old = self.mu[var].get(factor)
        if old is not None and old is not message:
            self._compositions.discard(old)  # a replaced message is not projected again
        self.mu[var][factor] = message
        self.pending[var][factor] = None

    def incoming_to_factor(self, var: str, factor: str) -> pynini.Fst:
        if self.graph.variables[var].is_observed:
            return observation_message(self.graph, var)
        if var in self._relay:
            return self._relayed.incoming_to_factor(var, factor)
        self._visit(var)
        ver = self._version.get(var, 0)
        key = (var, factor)
        hit = self._enc_cache.get(key)
        if hit is not None and hit[0] == ver:
            return hit[1]
        th = self.incoming_theta(var, factor)
        fst = pynini.arcsort(th.features.dfa.encode(th.values), sort_type="ilabel")
        self._enc_cache[key] = (ver, fst)
        return fst

    def factor_message(self, factor, var, incoming, num_labels, leaf=False):
        """The factor's exact message, or its moment oracle when it has one (a grammar:
        :meth:`strgm.factors.Factor.moment_message`); a concatenation's message to a part
        whose sum over the inserted θ messages diverges is retried with those messages
        damped (:func:`strgm.inference.ep_repair.damped_retry`)."""
        oracle = factor.moment_message(var)
        if oracle is not None:
            return oracle
        try:
            return super().factor_message(factor, var, incoming, num_labels, leaf)
        except DivergenceError:
            damp = [u for u in factor.summed_inputs(var) if self.has_theta(u)]
            if not damp:
                raise
        out = damped_retry(
            lambda inc: super(EPSide, self).factor_message(factor, var, inc, num_labels,
                                                           leaf),
            incoming, lambda u, delta: self.damped_message(u, factor.name, delta), damp,
            f"message from factor {factor.name!r} to {var!r}")
        self.count_repair("damped_concat_parts")
        return out

    def incoming_theta(self, var: str, factor: str) -> Theta:
        """θ_{V→F}, made normalisable where it enters a concatenation or a transducer."""
        self._visit(var)
        th = self.theta_to_factor(var, factor)
        if not th.nnz:
            return th
        f = self.graph.factors[factor]
        partner = f.summed_against(var)
        if partner is not None:
            whole = None
            if self.has_theta(partner):
                self._visit(partner)
                whole = self.theta_to_factor(partner, factor)
            return self._normalisable(th, var, factor, whole)
        if self.s.relay and f.kind != "unary":
            return self._normalisable(th, var, factor, None)
        return th

    def _normalisable(self, th: Theta, var: str, factor: str,
                      partner: Optional[Theta]) -> Theta:
        out, kind = normalisable_message(th, partner, self.theta(var), self.n,
                                         f"message from variable {var!r} to factor "
                                         f"{factor!r}")
        if kind is not None:
            self.count_repair(kind)
        return out

    def belief(self, var: str) -> Belief:
        if self.graph.variables[var].is_observed:
            return Belief(var, observation_message(self.graph, var), self.graph.alphabet)
        if var in self._relay:
            return self._relayed.belief(var)
        self._visit(var)
        th = self.theta(var)
        try:
            logz = q_moments(th, what=f"belief of variable {var!r}").log_z
        except DivergenceError as e:
            raise DivergenceError(f"EP belief of variable {var!r} is not normalisable "
                                  f"(does it have a proper prior?): {e}") from None
        return Belief(var, th.features.dfa.encode(th.values), self.graph.alphabet,
                      log_z=logz)

    # --- convergence ------------------------------------------------------------------
    def convergence_state(self, var: str):
        """θ_V for a variable that carries θ (else the exact side's top-5 signature)."""
        if not self.has_theta(var):
            return super().convergence_state(var)
        self._visit(var)  # pending messages first, as for a belief
        return self.theta(var)

    def convergence_change(self, old, new) -> float:
        """The symmetric KL divergence (nats) between successive beliefs q_θ and q_θ':

            KL(q‖q') + KL(q'‖q) = (θ − θ')·(E_q[f] − E_q'[f])

        on the union of their features (the log Z terms cancel). Unlike the top-5 test it
        sees every string's probability, and it is what one more iteration could still
        change: a projected message moves θ, not single strings. ∞ when either belief
        is not normalisable yet. Cost: two q-moment solves per tracked variable."""
        if not isinstance(new, Theta):
            return super().convergence_change(old, new)
        if old is None:
            return float("inf")
        fs = old.features.union(new.features)
        a, b = old.align(fs, strict=False), new.align(fs, strict=False)
        try:
            ea, eb = q_moments(a).expectations, q_moments(b).expectations
        except DivergenceError:
            return float("inf")
        return max(0.0, float(np.dot(a.values - b.values, ea - eb)))

    # --- θ bookkeeping ----------------------------------------------------------------
    def theta(self, var: str) -> Theta:
        """θ_V (eq. 4)."""
        return self.theta_v.get(var) or Theta(self._empty)

    def theta_to_factor(self, var: str, factor: str) -> Theta:
        """θ_{V→F} = θ_V − θ_{F→V}."""
        th = self.theta(var)
        old = self.theta_in[var].get(factor)
        return th if old is None else (th - old).restrict(tol=1e-12)

    def count_repair(self, kind: str) -> None:
        """Count one repair (``repairs``) and its kind (``repairs_by_kind``): the kinds
        of :mod:`strgm.inference.ep_repair` and ``damped_update``,
        ``damped_concat_parts``."""
        self.repairs += 1
        self.repairs_by_kind[kind] = self.repairs_by_kind.get(kind, 0) + 1

    def has_theta(self, var: str) -> bool:
        """True for latent variables that carry θ (not observed, not relayed)."""
        return var not in self._relay and not self.graph.variables[var].is_observed

    def damped_message(self, var: str, factor: str, delta: float) -> pynini.Fst:
        """ENCODE(θ_{V→F} − δ·(unigram counts)): the message damped by exp(−δ·|v|)."""
        th = self.incoming_theta(var, factor) + length_penalty(self.n, delta)
        return pynini.arcsort(th.features.dfa.encode(th.values), sort_type="ilabel")

    def num_features(self, var: str) -> int:
        return self.theta(var).nnz

    @property
    def approximated(self) -> list[str]:
        """Latent variables that carry θ (all latent ones unless relayed)."""
        return [v for v in self.graph.latent if v not in self._relay]

    def _set(self, var: str, factor: str, fit: Fit) -> None:
        self.theta_in[var][factor] = fit.message
        self.theta_v[var] = fit.theta.restrict(tol=1e-12)
        self._version[var] = self._version.get(var, 0) + 1
        if fit.q is not None:
            self._q_last[var] = (fit.theta, fit.q)

    # --- the visit ---------------------------------------------------------------------
    def _visit(self, var: str) -> None:
        pend = list(self.pending[var])
        if not pend:
            return
        self.pending[var] = {}
        t0 = time.perf_counter()
        passes = 1 if (self.projection.exact and len(pend) == 1) else self.K
        run_visit(self, var, pend, passes)
        self.project_seconds += time.perf_counter() - t0

    def _target(self, var: str, factor: str) -> Target:
        return Target(self.mu[var][factor], self.theta_to_factor(var, factor),
                      self.theta(var), self.theta_in[var].get(factor),
                      self._q_last.get(var),
                      f"EP update of variable {var!r} from factor {factor!r}")

    def _guarded_update(self, var: str, factor: str, cache: Optional[dict]) -> None:
        try:
            self._update(var, factor, cache)
        except NUMERIC as err:
            if self.s.on_divergence == "damp":
                self._damped_update(var, factor, getattr(err, "radius_at_least", None))
            else:
                self.skipped += 1

    def _update(self, var: str, factor: str, cache: Optional[dict]) -> None:
        """Re-approximate μ_{factor→var} (eqs. 5–7) with the run's projection."""
        self.updates += 1
        fit = self.projection.fit(self._target(var, factor), self.schedule, cache)
        self.skipped += fit.zero_steps
        self._set(var, factor, fit)

    def _damped_update(self, var: str, factor: str,
                       radius_at_least: Optional[float] = None) -> None:
        """p̂_V has infinite mass: fit θ_V to a damped p̂
        (:func:`strgm.inference.ep_repair.damped_fit`) and keep θ_{F→V} := θ_V − θ_{V→F};
        skipped (and counted) when no damping works."""
        base = self.theta_to_factor(var, factor)
        if not isinstance(self.mu[var][factor], pynini.Fst):  # a moment oracle: no damping
            self.skipped += 1
            return
        th = damped_fit(self.mu[var][factor], base, self.projection.family(self.schedule),
                        self.n, radius_at_least)
        if th is None:
            self.skipped += 1
            return
        self.count_repair("damped_update")
        self._set(var, factor, Fit(th, (th - base).restrict(tol=1e-12)))
