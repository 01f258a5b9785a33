"""Saving and loading a lexicalised grammar (with the treebank PCFG that prunes its
parser) as one ``.npz`` file.

The file holds plain arrays (no pickles): the context tree's parents, the cells' parents
and counts, the estimator's states, and ``meta``, a UTF-8 JSON document with the context
keys, the cells' outcomes, the family sizes, the word map, the tag dictionary, the
settings and the pruning PCFG in Mark Johnson's format.  JSON has no tuples: keys and
tuple outcomes are stored as lists and read back as tuples.  Writing is atomic; a file
that is not such a model raises :class:`~strgm.errors.InputError` naming it.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from strgm.errors import InputError
from strgm.grammars.cfg import Grammar
from strgm.grammars.johnson_format import format_grammar, parse_grammar
from strgm.grammars.lexicalized.model import LexicalizedGrammar
from strgm.grammars.lexicalized.tables import EventTables
from strgm.safe_io import atomic_write_bytes, check_input

__all__ = ["save_lexicalized", "load_lexicalized", "FORMAT"]

#: the ``format`` entry of a saved model's meta
FORMAT = "strgm-lexicalized-grammar/1"
_ARRAYS = ("node_parent", "cell_node", "cell_parent", "leaf_count", "cell_count",
           "node_total", "node_conc")


def _tuples(x):
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def save_lexicalized(g: LexicalizedGrammar, pcfg: Grammar, path) -> None:
    """Write ``g`` and its pruning ``pcfg`` to ``path`` (atomically)."""
    t = g.tables
    meta = {"format": FORMAT, "node_keys": t.node_keys,
            "outcomes": [out for _, out in t.cells], "family_size": t.family_size,
            "known": sorted(g.known), "tagdict": {w: list(ts) for w, ts in g.tagdict.items()},
            "smoothing": g.smoothing, "info": g.info, "pcfg": format_grammar(pcfg)}
    arrays = {"node_parent": t.node_parent, "cell_node": t.cell_node,
              "cell_parent": t.cell_parent, "leaf_count": t.leaf_count,
              "cell_count": g.cell_count, "node_total": g.node_total,
              "node_conc": g.node_conc}
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.frombuffer(json.dumps(meta).encode("utf-8"),
                                                dtype=np.uint8), **arrays)
    atomic_write_bytes(path, buf.getvalue())


def load_lexicalized(path) -> tuple:
    """(LexicalizedGrammar, pruning PCFG) saved by :func:`save_lexicalized`."""
    check_input(path, "lexicalised grammar")
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in ("meta",) + _ARRAYS if k not in z.files]
            if missing:
                raise InputError(f"not a lexicalised grammar: no {missing[0]!r} array",
                                 str(path))
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            arr = {k: z[k] for k in _ARRAYS}
    except (OSError, ValueError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise InputError(f"not a lexicalised grammar ({e})", str(path)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"not a lexicalised grammar of format {FORMAT}", str(path))
    keys = [_tuples(k) for k in meta["node_keys"]]
    cells = list(zip(arr["cell_node"].tolist(), map(_tuples, meta["outcomes"])))
    if len(cells) != len(arr["cell_parent"]) or len(keys) != len(arr["node_parent"]):
        raise InputError("lexicalised grammar: arrays and keys disagree", str(path))
    tables = EventTables(keys, arr["node_parent"], cells, arr["cell_parent"],
                         arr["leaf_count"], meta["family_size"])
    g = LexicalizedGrammar(tables, meta["known"], meta["tagdict"],
                           (arr["cell_count"], arr["node_total"], arr["node_conc"]),
                           meta["smoothing"], meta["info"])
    return g, parse_grammar(meta["pcfg"], str(path))
