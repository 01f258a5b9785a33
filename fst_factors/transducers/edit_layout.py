"""The context ids of the contextual edit transducer
(:mod:`fst_factors.transducers.contextual_edit`): state (L, O, T, K) ↔ index, and how the
contexts move when a symbol is read or written."""

from __future__ import annotations

import numpy as np

from fst_factors.errors import InputError


def _state_index(dims, L, O, T, K):
    return np.ravel_multi_index((L, O, T, K), dims)


class Layout:
    """The context ids of one (SymbolInfo, ContextSpec): sizes, the special ids and the
    context updates after reading or writing a symbol (vectorised over arrays).

    L: classes, BOS, BND; K/R: classes, EOS, BND (pairs of those for a right window of
    2: K = k1·nK1 + k2); O: classes, BOS; T: tier classes, NONE."""

    def __init__(self, info, spec):
        n = info.n
        if n < 1:
            raise InputError("contextual edit transducer needs at least one segment")
        self.info, self.spec, self.n = info, spec, n
        self.bnd = n + 1 if info.boundary else None
        n_in = int(info.in_class.max()) + 1
        n_r = int(info.right_class.max()) + 1
        n_out = int(info.out_class.max()) + 1
        n_tier = int(info.tier.max()) + 1 if (info.tier >= 0).any() else 0
        has_bnd = int(self.bnd is not None)
        self.nL = n_in + 1 + has_bnd if spec.left_input else 1
        self.nK1 = n_r + 1 + has_bnd if spec.right_input else 1  # one symbol's ids
        self.pair = spec.right_input == 2
        self.nK = self.nK1 * self.nK1 if self.pair else self.nK1
        self.nO = n_out + 1 if spec.left_output else 1
        self.nT = n_tier + 1 if spec.tier and n_tier else 1
        self.BOS_L, self.BND_L, self.EOS_K, self.BND_K = n_in, n_in + 1, n_r, n_r + 1
        self.BOS_O, self.NONE_T = n_out, self.nT - 1
        self.dims = (self.nL, self.nO, self.nT, self.nK)
        self.S = self.nL * self.nO * self.nT * self.nK
        self.labels = np.arange(1, n + 1 + has_bnd)

    def lclass(self, x):
        """L after consuming x."""
        if not self.spec.left_input:
            return np.zeros_like(x)
        return np.where(x == (self.bnd or -1), self.BND_L,
                        self.info.in_class[np.minimum(x, self.n) - 1])

    def kclass(self, x):
        """The K/R id of input symbol x."""
        if not self.spec.right_input:
            return np.zeros_like(x)
        return np.where(x == (self.bnd or -1), self.BND_K,
                        self.info.right_class[np.minimum(x, self.n) - 1])

    def onext(self, O, y):
        """O after writing y (0: nothing written)."""
        if not self.spec.left_output:
            return O
        return np.where(y > 0, self.info.out_class[np.maximum(y, 1) - 1], O)

    def tnext(self, T, y):
        """T after writing y: the tier class of y if y is on the tier and not
        transparent (``SymbolInfo.tier_trigger``)."""
        if self.nT == 1:
            return T
        info = self.info
        trig = info.tier >= 0 if info.tier_trigger is None else info.tier_trigger
        yi = np.maximum(y, 1) - 1
        ty = np.where((y > 0) & trig[np.minimum(yi, self.n - 1)] & (y <= self.n),
                      info.tier[np.minimum(yi, self.n - 1)], -1)
        return np.where(ty >= 0, ty, T)

    def index(self, L, O, T, K):
        return _state_index(self.dims, L, O, T, K)
