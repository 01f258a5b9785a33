"""Where compiled loops come from: numba's ``njit`` (cached on disk), or — on a platform
without numba — a no-op decorator, under which the same loops run as plain Python
(correct, slow). The compiled kernels of the engine are
:func:`strgm.wfsa.fixed_point._jacobi_steps` and ``_gauss_seidel_steps``, and the
message–DFA product of
:mod:`strgm.features.product`; each keeps a numpy/OpenFst reference that the tests hold
it to."""

from __future__ import annotations

try:
    from numba import njit
    COMPILED = True
except ImportError:  # pragma: no cover - numba is a dependency; kept for odd platforms
    COMPILED = False

    def njit(*_args, **_kwargs):
        return lambda f: f

__all__ = ["COMPILED", "njit"]
