"""Indicator features of the contextual edit transducer's events
(:mod:`fst_factors.transducers.contextual_edit`; after Cotterell, Peng & Eisner 2014).

An event is one action of one locally normalised decision (insert, continue, copy,
substitute, delete) in a context (L, O, T, K, x). A feature template names a set of
action kinds and a tuple of event attributes; every distinct attribute value tuple that
occurs in some event becomes one indicator column of a sparse events × features matrix.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from fst_factors.transducers.edit_actions import CONT, COPY, DEL, INS, SUB


def feature_templates() -> list:
    """(name, kinds, attribute tuple) of every feature template. Derived attributes:
    ``vy`` voice of y (obstruents), ``ty`` tier class of y (vowels), ``chg`` the feature
    change of a substitution. Markedness templates (``out_*``) fire for copy *and*
    substitution, so they generalise across symbols: e.g. (vy, R) learns regressive
    voicing assimilation and final devoicing, (ty, T) vowel harmony."""
    return [
        ("ins", (INS,), ()), ("ins_y", (INS,), ("y",)), ("ins_yL", (INS,), ("y", "L")),
        ("ins_yK", (INS,), ("y", "K")), ("ins_yLK", (INS,), ("y", "L", "K")),
        ("ins_yO", (INS,), ("y", "O")), ("ins_LK", (INS,), ("L", "K")),
        ("ins_OK", (INS,), ("O", "K")), ("ins_tyT", (INS,), ("ty", "T")),
        ("cont", (CONT,), ()), ("cont_K", (CONT,), ("K",)),
        ("copy", (COPY,), ()), ("copy_x", (COPY,), ("x",)),
        ("sub", (SUB,), ()), ("sub_xy", (SUB,), ("x", "y")), ("sub_xyR", (SUB,), ("x", "y", "K")),
        ("sub_xyL", (SUB,), ("x", "y", "L")), ("sub_xyO", (SUB,), ("x", "y", "O")),
        ("sub_xyT", (SUB,), ("x", "y", "T")), ("sub_chg", (SUB,), ("chg",)),
        ("sub_chgR", (SUB,), ("chg", "K")), ("sub_chgL", (SUB,), ("chg", "L")),
        ("del", (DEL,), ()), ("del_x", (DEL,), ("x",)), ("del_xR", (DEL,), ("x", "K")),
        ("del_xL", (DEL,), ("x", "L")), ("del_xLR", (DEL,), ("x", "L", "K")),
        ("out_vyR", (COPY, SUB), ("vy", "K")), ("out_vyL", (COPY, SUB), ("vy", "L")),
        ("out_vyO", (COPY, SUB), ("vy", "O")), ("out_tyT", (COPY, SUB), ("ty", "T")),
        ("out_tyTx", (COPY, SUB), ("ty", "T", "x")),
    ]


def harmony_feature_templates() -> list:
    """Templates over single vowel features of the output and of the harmony tier
    (``SymbolInfo.tier_features``): ``bky``/``rdy``/``hiy`` back/round/high of an output
    vowel y, ``bkT``/``rdT`` back/round of the tier vowel. The class templates over
    (ty, T) need every pair of (back, round) classes seen in training; these generalise
    across them: back harmony learned after front unrounded stems also applies after
    front rounded ones (Hungarian øː…-nek), and rounding harmony is restricted to high
    suffix vowels by (rdy, rdT, hiy) (Turkish -In)."""
    return [("out_bkT", (COPY, SUB), ("bky", "bkT")),
            ("out_bkTx", (COPY, SUB), ("bky", "bkT", "x")),
            ("out_rdT", (COPY, SUB), ("rdy", "rdT")),
            ("out_rdTh", (COPY, SUB), ("rdy", "rdT", "hiy")),
            ("ins_bkT", (INS,), ("bky", "bkT"))]


def _harmony_attributes(info, y, T, ty, n_tier_ctx: int) -> dict:
    """bky, rdy, hiy of output y and bkT, rdT of tier context T (−1 where undefined:
    y not a vowel, T = NONE). Tier classes are 2·back + round
    (:func:`strgm.models.ipa_features.tier_class`); T = ``n_tier_ctx`` − 1 is NONE."""
    n = info.n
    seg_y = (y >= 1) & (y <= n) & (ty >= 0)
    height = info.height if info.height is not None else np.full(n, -1)
    on_tier = (T < n_tier_ctx - 1) & (n_tier_ctx > 1)
    return {"bky": np.where(seg_y, ty // 2, -1), "rdy": np.where(seg_y, ty % 2, -1),
            "hiy": np.where(seg_y, height[np.clip(y, 1, n) - 1], -1),
            "bkT": np.where(on_tier, T // 2, -1), "rdT": np.where(on_tier, T % 2, -1)}


def indicator_features(attrs: dict, info, bnd, pair_base: Optional[int] = None,
                       n_tier_ctx: int = 1):
    """Sparse indicator features: one column per (template, attribute values) that
    occurs in some event. Events of one-action groups (the boundary) get none. With a
    right window of 2 (``pair_base`` = number of one-symbol K ids), K is a pair id
    k1·pair_base + k2: templates over K use k1, and a copy named ``name + "2"`` uses
    the pair. ``n_tier_ctx``: number of tier context ids T (the last is NONE); with
    ``info.tier_features`` the :func:`harmony_feature_templates` are added."""
    n = info.n
    x, y, kind = attrs["x"], attrs["y"], attrs["kind"]
    seg_y = (y >= 1) & (y <= n)
    vy = np.where(seg_y, info.voice[np.clip(y, 1, n) - 1], -1)
    ty = np.where(seg_y, info.tier[np.clip(y, 1, n) - 1], -1)
    seg_x = (x >= 1) & (x <= n)
    chg = np.where(seg_x & seg_y, info.change[np.clip(x, 1, n) - 1, np.clip(y, 1, n) - 1], -1)
    derived = {**attrs, "vy": vy, "ty": ty, "chg": chg}
    templates = feature_templates()
    if info.tier_features:
        derived.update(_harmony_attributes(info, y, attrs["T"], ty, n_tier_ctx))
        templates = templates + harmony_feature_templates()
    if pair_base is not None:
        derived["K2"] = attrs["K"]  # the pair
        derived["K"] = attrs["K"] // pair_base  # its first class
        templates = templates + [(name + "2", kinds, tuple("K2" if k == "K" else k
                                                          for k in keys))
                                 for name, kinds, keys in templates if "K" in keys]
    live = np.ones(len(x), dtype=bool)
    if bnd is not None:
        live &= x != bnd
    rows, cols, names = [], [], []
    offset = 0
    for name, kinds, keys in templates:
        mask = live & np.isin(kind, kinds)
        for k in keys:
            mask &= derived[k] >= 0
        idx = np.flatnonzero(mask)
        if not len(idx):
            continue
        if keys:
            vals = np.stack([derived[k][idx] for k in keys])
            shape = tuple(int(v.max()) + 1 for v in vals)
            uniq, inv = np.unique(np.ravel_multi_index(tuple(vals), shape),
                                  return_inverse=True)
            values = np.stack(np.unravel_index(uniq, shape), axis=1).tolist()
            names.extend((name,) + tuple(v) for v in values)
        else:
            inv = np.zeros(len(idx), dtype=np.int64)
            names.append((name,))
        rows.append(idx)
        cols.append(offset + inv.ravel())
        offset += int(inv.max()) + 1
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    f = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(x), offset))
    return f, names
