"""Load a user's OpenFst ``.fst`` file as a factor over an alphabet.

The file's arc type is converted to log64 (tropical and log weights are both -log reals)
and its labels mapped onto the alphabet's as :mod:`fst_factors.transducers.relabel` does: by
symbol name when it carries symbol tables, else as code points of one-character symbols
or as the alphabet's own labels; a label that does not map is an error naming it.
"""

from __future__ import annotations

from typing import Optional

import pynini

from fst_factors.errors import InputError
from fst_factors.transducers.relabel import to_alphabet
from fst_factors.wfsa import guard
from fst_factors.wfsa.fst_file import check_header, read_fst

_WEIGHT_TYPES = ("standard", "log", "log64")


def load_fst_factor(path: str, alphabet, max_states: Optional[int] = None,
                    labels: str = "auto") -> pynini.Fst:
    """Read ``path`` and return a log64 FST whose labels are the alphabet's labels.

    The file goes through :func:`fst_factors.wfsa.fst_file.read_fst`, which checks the header
    against the file size before OpenFst allocates (a damaged header claiming 10¹⁵ states
    is an :class:`InputError`, not an abort), and the claimed size against the memory
    budget (:mod:`fst_factors.wfsa.guard`) and ``max_states``. Weights must be tropical or log
    (both are −log reals); any other arc type is an :class:`InputError` naming it. Labels
    are mapped by :func:`fst_factors.transducers.relabel.to_alphabet` (``labels`` as there)."""
    h = check_header(path, "OpenFst factor file")
    if h["arc_type"] not in _WEIGHT_TYPES:
        raise InputError(f"arc type {h['arc_type']!r} is not supported; a factor needs "
                         f"tropical or log weights (arc types {', '.join(_WEIGHT_TYPES)})",
                         path=str(path))
    n, m = max(h["num_states"], 0), max(h["num_arcs"], 0)
    with guard.naming(f"{path}: OpenFst factor file"):
        guard.require("reading and relabelling it", 2 * n, 2 * m)  # file, then copy
    raw = read_fst(path, "OpenFst factor file", max_states=max_states)
    return to_alphabet(raw, alphabet, labels=labels, where="OpenFst factor file",
                       path=str(path))
