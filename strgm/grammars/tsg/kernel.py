"""What the two DP-TSG kernels share: options, initial states, hyperparameter steps and
trace rows (numpyro-style kernels, docs/grammars.md: ``state = kernel.init(seed)``,
``state = kernel.sample(state)`` returns a new state, the input unchanged).

Defaults: α_c = 1 and s_c = 0.5 for every label c (overridable by a number or a
{label: value} mapping); with ``resample_hyper=True`` every sweep first slice-samples all
s_c then all α_c from their exact conditional (:mod:`.hyper`), then updates the
derivations. Trace row of a sweep: ``iteration``, ``log_likelihood`` = log P(derivations |
α, s) after the sweep (= log P(trees, derivations); :mod:`.fragments`), ``ets`` (distinct
ETs), ``sites``, ``mean_alpha``, ``mean_s`` and, for the blocked sampler, ``acceptance``.

``process="py"`` makes every label a Pitman–Yor process (:mod:`.pitman_yor`): the
initial state seats the customers one after another by the PYP's seating rule (the
state's RNG), discounts start at ``discount`` (0.5), a hyperparameter step draws s and
slice-samples α_c and d_c given the seating (Beta ``discount_prior`` on d_c), and the
row's ``log_likelihood`` is log P(derivations, seating | α, d, s), with ``mean_discount``
added. ``process="dp"`` (the default) is the DP-TSG above, unchanged.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from strgm.errors import InputError
from strgm.grammars.tsg.corpus import TreeTable
from strgm.grammars.tsg.fragments import ETCounts
from strgm.grammars.tsg.hyper import DEFAULT_ALPHA_PRIOR, resample_hyper
from strgm.grammars.tsg.pitman_yor import DEFAULT_DISCOUNT_PRIOR, Restaurant, \
    resample_py_hyper
from strgm.grammars.tsg.state import PROCESSES, TSGState, check_tsg_state
from strgm.validate import check_choice, check_float, check_int

__all__ = ["TSGKernel", "INITS", "elementary_trees"]

INITS = ("minimal", "maximal")


def _per_label(name: str, value, labels, check) -> np.ndarray:
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(labels))
        if unknown:
            raise InputError(f"option {name}: unknown label {unknown[0]!r}")
        return np.array([check(name, value.get(x, _DEFAULTS[name])) for x in labels])
    v = check(name, value)
    return np.full(len(labels), v)


_DEFAULTS = {"alpha": 1.0, "s": 0.5, "discount": 0.5}


class TSGKernel:
    """Base of :class:`~.local.LocalGibbsTSG` and :class:`~.blocked.BlockedMHTSG`.

    ``trees``: cleaned, binarised trees (or a :class:`~.corpus.TreeTable`); ``alpha`` > 0
    and ``s`` in (0, 1): numbers or {label: value}; ``alpha_prior`` = (shape, scale) of the
    Gamma prior on every α_c; ``process`` "dp" or "py" (Pitman–Yor, with initial
    ``discount`` d_c in [0, 1) and a Beta ``discount_prior`` on it)."""

    kind = "?"
    with_ref = False

    def __init__(self, trees, alpha=1.0, s=0.5, resample_hyper: bool = False,
                 alpha_prior=DEFAULT_ALPHA_PRIOR, process: str = "dp", discount=0.5,
                 discount_prior=DEFAULT_DISCOUNT_PRIOR):
        self.table = trees if isinstance(trees, TreeTable) else TreeTable(trees)
        labels = self.table.labels
        self.alpha0 = _per_label("alpha", alpha, labels,
                                 lambda n, v: check_float(n, v, min=0, min_open=True))
        self.s0 = _per_label("s", s, labels, lambda n, v: check_float(
            n, v, min=0, max=1, min_open=True, max_open=True))
        self.resample_hyper = bool(resample_hyper)
        shape, scale = alpha_prior
        self.alpha_prior = (check_float("alpha_prior shape", shape, min=0, min_open=True),
                            check_float("alpha_prior scale", scale, min=0, min_open=True))
        self.fingerprint = self.table.fingerprint
        self.process = check_choice("process", process, PROCESSES)
        self.d0 = _per_label("discount", discount, labels, lambda n, v: check_float(
            n, v, min=0, max=1, max_open=True))
        self.discount_prior = tuple(check_float("discount_prior", x, min=0, min_open=True)
                                    for x in discount_prior)

    def init(self, seed=0, init: str = "minimal") -> TSGState:
        """Iteration 0: every node a site ("minimal": ETs are the CFG rules) or only the
        roots ("maximal": ETs are whole trees)."""
        seed = check_int("seed", seed, min=0)
        init = check_choice("init", init, INITS)
        t = self.table
        site = np.ones(t.n_nodes, np.uint8) if init == "minimal" else \
            t.is_root.astype(np.uint8)
        rng = np.random.default_rng(seed)
        state = TSGState(self.kind, 0, site, self.alpha0.copy(), self.s0.copy(),
                         rng.bit_generator.state, fingerprint=self.fingerprint,
                         settings={"init": init, "seed": seed})
        if self.process == "py":
            rest = Restaurant(self.counts(state), self.alpha0, self.d0)
            sites = np.flatnonzero(site).tolist()
            rest.seat_seq(sites, [rest.counts.below[v] for v in sites], rng)
            state.process, state.discount = "py", self.d0.copy()
            state.tables, state.rng_state = rest.canonical(), rng.bit_generator.state
        return state

    def check(self, state: TSGState) -> None:
        check_tsg_state(self, state)

    def counts(self, state: TSGState, s=None) -> ETCounts:
        """The ET counts of ``state``'s indicators under ``s`` (default the state's)."""
        s = state.s if s is None else s
        return ETCounts(self.table, state.site, np.log(s), np.log1p(-np.asarray(s)),
                        self.with_ref)

    def log_likelihood(self, state: TSGState) -> float:
        """log P(derivations | α, s) of the state (:meth:`.fragments.ETCounts.log_joint`);
        for a PY chain log P(derivations, seating | α, d, s)
        (:meth:`.pitman_yor.Restaurant.log_joint`)."""
        if self.process == "py":
            return self.restaurant(state).log_joint()
        return self.counts(state).log_joint(state.alpha)

    def restaurant(self, state: TSGState) -> Restaurant:
        """The seating of a PY chain's state over its ET counts."""
        return Restaurant(self.counts(state), state.alpha, state.discount, state.tables)

    def _start(self, state: TSGState):
        """(rng, α, s, counts) for a sweep: hyperparameters resampled first if asked."""
        self.check(state)
        rng = state.rng()
        alpha, s = state.alpha, state.s
        if self.resample_hyper:
            alpha, s = resample_hyper(self.counts(state), alpha, s, rng, self.alpha_prior)
        c = ETCounts(self.table, state.site, np.log(s), np.log1p(-s), self.with_ref)
        return rng, alpha, s, c

    def _start_py(self, state: TSGState):
        """(rng, α, s, counts, restaurant) for a PY sweep: s, α and d resampled first if
        asked (:func:`.pitman_yor.resample_py_hyper`)."""
        self.check(state)
        rng = state.rng()
        alpha, s, d = state.alpha, state.s, state.discount
        if self.resample_hyper:
            alpha, d, s = resample_py_hyper(self.restaurant(state), s, rng, self.alpha_prior,
                                            self.discount_prior)
        c = ETCounts(self.table, state.site, np.log(s), np.log1p(-s), self.with_ref)
        return rng, alpha, s, c, Restaurant(c, alpha, d, state.tables)

    def _finish(self, state, rng, alpha, s, counts, acc=0, prop=0, rest=None) -> TSGState:
        new = copy.copy(state)
        new.iteration = state.iteration + 1
        new.site = np.frombuffer(bytes(counts.site), dtype=np.uint8).copy()
        new.alpha, new.s = np.asarray(alpha, float).copy(), np.asarray(s, float).copy()
        new.rng_state = rng.bit_generator.state
        new.counts = counts
        if self.kind == "tsg-blocked":
            new.accepted, new.proposed = state.accepted + acc, state.proposed + prop
            new.last_accept = acc / prop if prop else float("nan")
        lj = counts.log_joint(alpha) if rest is None else rest.log_joint()
        row = {"iteration": new.iteration, "log_likelihood": lj,
               "ets": sum(1 for v in counts.cnt.values() if v > 0),
               "sites": int(new.site.sum()), "mean_alpha": float(np.mean(alpha)),
               "mean_s": float(np.mean(s))}
        if self.kind == "tsg-blocked":
            row["acceptance"] = new.last_accept
        if rest is not None:
            new.discount, new.tables = np.asarray(rest.d, float), rest.canonical()
            row["mean_discount"] = float(np.mean(rest.d))
        new.trace = state.trace + [row]
        return new

    @staticmethod
    def _choose(la: float, lb: float, u: float) -> bool:
        """True with probability e^la / (e^la + e^lb), using the uniform ``u``."""
        d = lb - la
        if d > 700:
            return False
        return u * (1.0 + math.exp(d)) < 1.0


def elementary_trees(state: TSGState, kernel: TSGKernel | None = None) -> list:
    """(n_e, bracketed ET) for every ET with n_e > 0, most frequent first (ties in string
    order); uses the state's count cache, else ``kernel`` rebuilds the counts."""
    counts = state.counts
    if counts is None:
        if kernel is None:
            raise InputError("elementary_trees of a loaded state needs its kernel")
        counts = kernel.counts(state)
    ids, n = counts.ets()
    out = [(int(c), counts.frags.bracketed(f)) for f, c in zip(ids.tolist(), n.tolist())]
    out.sort(key=lambda x: (-x[0], x[1]))
    return out
