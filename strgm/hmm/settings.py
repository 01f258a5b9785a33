"""Settings of an infinite HMM: which model, the truncation, and every prior.

The three models are settings of one sampler (docs/hmm.md):

* ``"lt"`` — the HDP-HMM with local transitions (Dawson 2015, eqs. 35–39): states have
  locations ℓ_k ∈ R^D and the Gamma-process transition weights are scaled by the
  similarity kernel φ(ℓ, ℓ') = exp(−λ‖ℓ − ℓ'‖²/2), which satisfies eq. 26;
* ``"hdp"`` — the plain HDP-HMM (Teh et al. 2006): φ ≡ 1;
* ``"sticky"`` — the sticky HDP-HMM (Fox et al. 2008, eq. 25 of the seed): φ ≡ 1 and an
  extra mass κ on the self-transition, π_kk' ~ Gamma(αβ_k' + κ·[k = k'], 1).

Weak-limit truncation: β ~ Dirichlet(γ/L, …, γ/L) over L states (Fox et al. 2008), which
tends to Stick(γ) as L → ∞. Hyperpriors are Gamma(shape, rate). Every value is checked
here, so a bad option fails before any data is read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from strgm.errors import InputError
from strgm.validate import check_choice, check_float, check_int

__all__ = ["HMMSettings", "MODELS", "DEFAULT_L"]

MODELS = ("lt", "hdp", "sticky")

#: Default weak-limit truncation. 50 states cover the phoneme inventories and the
#: synthetic benchmarks here with room to spare; the sampler warns when every state is
#: in use, the sign that L is too small.
DEFAULT_L = 50


@dataclass(frozen=True)
class HMMSettings:
    """Model choice, truncation and priors of an infinite HMM.

    ``alpha``/``gamma``/``kappa``/``lam`` are initial values; each is resampled under its
    Gamma(``a_*``, ``b_*``) prior unless ``sample_hypers`` is false. ``eta`` is the
    symmetric Dirichlet parameter of categorical emissions; ``a_end``/``b_end`` the
    Beta prior on each state's probability of ending a sequence (``model_length``:
    with it the HMM is a distribution over strings of every length ≥ 1; without it the
    lengths are given). ``loc_dim`` is D, the dimension of the state locations
    (prior N(0, I)); ``loc_step`` and ``lam_step`` the base random-walk scales of their
    Metropolis–Hastings moves, divided by √(1 + jump counts) so that large data keep
    the moves acceptable (:mod:`strgm.hmm.locations`). ``split_merge`` is the number of
    split–merge proposals per sweep (:mod:`strgm.hmm.split_merge`; hdp and sticky only).
    """

    model: str = "lt"
    L: int = DEFAULT_L
    alpha: float = 1.0
    gamma: float = 1.0
    kappa: float = 0.0
    lam: float = 1.0
    a_alpha: float = 1.0
    b_alpha: float = 0.1
    a_gamma: float = 1.0
    b_gamma: float = 0.1
    a_kappa: float = 1.0
    b_kappa: float = 0.1
    a_lam: float = 1.0
    b_lam: float = 1.0
    eta: float = 0.1
    a_end: float = 1.0
    b_end: float = 1.0
    loc_dim: int = 2
    loc_step: float = 2.0
    lam_step: float = 0.3
    model_length: bool = True
    sample_hypers: bool = True
    split_merge: int = 0

    def __post_init__(self):
        check_choice("model", self.model, MODELS)
        check_int("L", self.L, min=2)
        check_int("loc_dim", self.loc_dim, min=1, max=16)
        for name in ("alpha", "gamma", "eta", "a_end", "b_end", "a_alpha", "b_alpha",
                     "a_gamma", "b_gamma", "a_kappa", "b_kappa", "a_lam", "b_lam",
                     "loc_step", "lam_step"):
            check_float(name, getattr(self, name), min=0, min_open=True)
        check_float("kappa", self.kappa, min=0)
        check_float("lam", self.lam, min=0)
        if self.model == "lt" and self.lam == 0 and self.sample_hypers:
            raise InputError("option lam: the LT model samples λ on a log scale, so its "
                             "initial value must be > 0, got 0")
        check_int("split_merge", self.split_merge, min=0)
        if self.split_merge and self.model == "lt":
            raise InputError("option split_merge: split-merge moves integrate the "
                             "transition rows out, which needs φ ≡ 1 (models hdp and "
                             "sticky), not the LT model")
        if self.model == "sticky" and self.kappa == 0 and not self.sample_hypers:
            raise InputError("option kappa: the sticky model needs kappa > 0 when the "
                             "hyperparameters are not sampled, got 0")

    @property
    def local(self) -> bool:
        """True when the transition weights are scaled by φ (the LT model)."""
        return self.model == "lt"

    @property
    def sticky(self) -> bool:
        return self.model == "sticky"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "HMMSettings":
        """Settings from :meth:`to_dict` output; unknown keys are an InputError."""
        if not isinstance(d, dict):
            raise InputError("HMM settings must be a JSON object")
        known = {f.name for f in fields(cls)}
        extra = sorted(set(d) - known)
        if extra:
            raise InputError(f"unknown HMM setting {extra[0]!r}")
        return cls(**d)
