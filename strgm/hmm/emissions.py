"""Emission families of the infinite HMMs, each with its conjugate prior.

* :class:`Categorical` — x ∈ {0..V−1}, θ_k ~ Dirichlet(η·1_V). Posterior
  θ_k | z, x ~ Dirichlet(η + c_k), c_k the symbol counts of state k. O(N + L·V).
* :class:`Gaussian` — x ∈ R^D, (μ_k, Σ_k) ~ NIW(μ0, κ0, ν0, Ψ0) (Gelman et al. 2013,
  §3.6): Σ ~ Inv-Wishart(ν0, Ψ0), μ | Σ ~ N(μ0, Σ/κ0); posterior κn = κ0 + n,
  νn = ν0 + n, μn = (κ0μ0 + n·x̄)/κn, Ψn = Ψ0 + S + κ0·n/κn·(x̄ − μ0)(x̄ − μ0)ᵀ with S
  the scatter about x̄. O(N·D² + L·D³).

Parameters are plain dicts of arrays (``{"theta"}`` or ``{"mu", "sigma"}``), so states
and model files serialise them as lists. Every method returns new arrays.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import invwishart

from strgm.errors import InputError
from strgm.validate import check_float

__all__ = ["Categorical", "Gaussian", "emissions_from_dict", "emitter"]


class Categorical:
    """Categorical emissions over ``V`` symbols with a symmetric Dirichlet(η) prior."""

    kind = "categorical"

    def __init__(self, V: int, eta: float):
        if int(V) < 1:
            raise InputError(f"a categorical emission needs at least one symbol, got {V}")
        self.V = int(V)
        self.eta = check_float("eta", eta, min=0, min_open=True)

    def prior_draw(self, L: int, rng) -> dict:
        return {"theta": _dirichlet_rows(np.full((L, self.V), self.eta), rng)}

    def loglik(self, params: dict, x: np.ndarray) -> np.ndarray:
        """log θ_k(x_t) as an (N, L) array."""
        with np.errstate(divide="ignore"):
            return np.log(params["theta"]).T[x]

    def counts(self, z, x, L: int) -> np.ndarray:
        return np.bincount(z * self.V + x, minlength=L * self.V).reshape(L, self.V)

    def posterior_draw(self, z, x, L: int, rng) -> dict:
        return {"theta": _dirichlet_rows(self.eta + self.counts(z, x, L), rng)}

    def draw_data(self, params: dict, z: np.ndarray, rng) -> np.ndarray:
        c = np.cumsum(params["theta"][z], axis=1)
        u = rng.random(len(z)) * c[:, -1]
        return np.minimum((c <= u[:, None]).sum(axis=1), self.V - 1)

    def mean(self, draws) -> dict:
        return {"theta": np.mean([d["theta"] for d in draws], axis=0)}

    def to_dict(self) -> dict:
        return {"kind": self.kind, "V": self.V, "eta": self.eta}


class Gaussian:
    """Gaussian emissions in R^D with a Normal–inverse-Wishart prior."""

    kind = "gaussian"

    def __init__(self, mu0, kappa0: float, nu0: float, psi0):
        self.mu0 = np.asarray(mu0, dtype=float).reshape(-1)
        self.D = len(self.mu0)
        self.kappa0 = check_float("kappa0", kappa0, min=0, min_open=True)
        self.nu0 = check_float("nu0", nu0, min=self.D - 1, min_open=True)
        self.psi0 = np.asarray(psi0, dtype=float).reshape(self.D, self.D)
        if not np.all(np.linalg.eigvalsh(self.psi0) > 0):
            raise InputError("option psi0: the NIW scale matrix must be positive definite")

    @classmethod
    def from_data(cls, x: np.ndarray) -> "Gaussian":
        """A weak prior centred on the data: μ0 = mean, κ0 = 0.01, ν0 = D + 2,
        Ψ0 = the data covariance (so E[Σ] equals it), plus 1e-6·I for safety."""
        x = np.asarray(x, dtype=float)
        D = x.shape[1]
        cov = np.atleast_2d(np.cov(x, rowvar=False)) if len(x) > 1 else np.eye(D)
        return cls(x.mean(axis=0), 0.01, D + 2.0, cov + 1e-6 * np.eye(D))

    def _draw(self, mu, kappa, nu, psi, rng) -> tuple[np.ndarray, np.ndarray]:
        sigma = np.atleast_2d(invwishart.rvs(df=nu, scale=psi, random_state=rng))
        m = rng.multivariate_normal(mu, sigma / kappa)
        return m, sigma

    def prior_draw(self, L: int, rng) -> dict:
        draws = [self._draw(self.mu0, self.kappa0, self.nu0, self.psi0, rng) for _ in range(L)]
        return {"mu": np.array([d[0] for d in draws]), "sigma": np.array([d[1] for d in draws])}

    def loglik(self, params: dict, x: np.ndarray) -> np.ndarray:
        L = len(params["mu"])
        out = np.empty((len(x), L))
        for k in range(L):
            c = np.linalg.cholesky(params["sigma"][k])
            r = np.linalg.solve(c, (x - params["mu"][k]).T)
            out[:, k] = (-0.5 * (r * r).sum(axis=0) - np.log(np.diag(c)).sum()
                         - 0.5 * self.D * np.log(2 * np.pi))
        return out

    def posterior_draw(self, z, x, L: int, rng) -> dict:
        mus, sigmas = [], []
        for k in range(L):
            xk = x[z == k]
            n = len(xk)
            xbar = xk.mean(axis=0) if n else self.mu0
            scatter = (xk - xbar).T @ (xk - xbar) if n else 0.0
            kn = self.kappa0 + n
            d = (xbar - self.mu0)[:, None]
            psi = self.psi0 + scatter + self.kappa0 * n / kn * (d @ d.T)
            m, s = self._draw((self.kappa0 * self.mu0 + n * xbar) / kn, kn, self.nu0 + n,
                              psi, rng)
            mus.append(m)
            sigmas.append(s)
        return {"mu": np.array(mus), "sigma": np.array(sigmas)}

    def draw_data(self, params: dict, z: np.ndarray, rng) -> np.ndarray:
        chol = np.linalg.cholesky(params["sigma"][z])
        return params["mu"][z] + np.einsum("nij,nj->ni", chol, rng.standard_normal((len(z), self.D)))

    def mean(self, draws) -> dict:
        return {k: np.mean([d[k] for d in draws], axis=0) for k in ("mu", "sigma")}

    def to_dict(self) -> dict:
        return {"kind": self.kind, "mu0": self.mu0.tolist(), "kappa0": self.kappa0,
                "nu0": self.nu0, "psi0": self.psi0.tolist()}


def emitter(emissions, params: dict, x: np.ndarray):
    """The function pos ↦ (n, T, L) emission log-likelihoods of the tokens x[pos] that
    :mod:`strgm.hmm.forward` takes, so the (N, L) matrix is never built whole."""
    def emit(pos: np.ndarray) -> np.ndarray:
        return emissions.loglik(params, x[pos.ravel()]).reshape(*pos.shape, -1)
    return emit


def emissions_from_dict(d: dict):
    """The emission family described by ``to_dict`` output."""
    if not isinstance(d, dict) or d.get("kind") not in ("categorical", "gaussian"):
        raise InputError("unknown emission family (expected 'categorical' or 'gaussian')")
    if d["kind"] == "categorical":
        return Categorical(d["V"], d["eta"])
    return Gaussian(d["mu0"], d["kappa0"], d["nu0"], d["psi0"])


def _dirichlet_rows(a: np.ndarray, rng) -> np.ndarray:
    g = rng.gamma(a)
    s = g.sum(axis=1, keepdims=True)
    # tiny concentrations can underflow every component to 0: fall back to the largest
    tiny = s[:, 0] <= 0
    if np.any(tiny):
        g[tiny, np.argmax(a[tiny], axis=1)] = 1.0
        s = g.sum(axis=1, keepdims=True)
    return g / s
