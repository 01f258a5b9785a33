"""Beliefs on disk: save an inference result and load it back to query later.

Layout of a saved result (a directory, format ``strgm-beliefs-v1``)::

    beliefs.json        method, settings, iterations, convergence, alphabets, and per
                        variable its file, its alphabet and log Z
    0000_<name>.fst     one binary OpenFst file per variable: the unnormalised belief
    0001_<name>.fst     acceptor (log64 for EP/PEP and BP, as the engine built it), with
    ...                 the alphabet attached as its symbol table

Every belief is stored as the acceptor b̃ it was computed as, with log Z = log Σ_v b̃(v),
so a loaded belief answers the same queries (k-best, probabilities, sampling, entropy)
with the same numbers and without re-running inference. The ``.fst`` files are standard
OpenFst: ``fstprint 0000_M-walk.fst`` lists the arcs with segment names, and
``pynini.Fst.read`` opens them.

``beliefs.json`` is written last, so an interrupted save leaves no loadable directory
rather than a partial one. Cost: one FST write per variable (O(|b̃|)); beliefs not yet
computed are computed first.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Optional

import pynini

from strgm.alphabet import Alphabet
from strgm.errors import InputError
from strgm.inference.belief import Belief

FORMAT = "strgm-beliefs-v1"
INDEX = "beliefs.json"


def _file_name(i: int, name: str) -> str:
    slug = re.sub(r"[^0-9A-Za-z._-]+", "-", name).strip("-.")[:40]
    return f"{i:04d}_{slug}.fst" if slug else f"{i:04d}.fst"


def save_beliefs(result, directory: str | os.PathLike,
                 names: Optional[list[str]] = None) -> Path:
    """Write the beliefs of ``names`` (default: every latent variable) of an
    :class:`~strgm.inference.result.InferenceResult` to ``directory`` (created if
    needed). An earlier save there is superseded: its index is replaced, and belief files
    it listed that this save does not rewrite are no longer read. Returns the index path."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InputError("cannot save beliefs: not a directory", path=str(out))
    out.mkdir(parents=True, exist_ok=True)
    beliefs = result.beliefs(names)
    alphabets: list[Alphabet] = []
    variables = {}
    for i, (name, b) in enumerate(beliefs.items()):
        if b.alphabet not in alphabets:
            alphabets.append(b.alphabet)
        fst = b.fst  # a copy: the result's own belief is not touched
        st = b.alphabet.symbol_table()
        fst.set_input_symbols(st)
        fst.set_output_symbols(st)
        fname = _file_name(i, name)
        fst.write(str(out / fname))
        variables[name] = {"file": fname, "alphabet": alphabets.index(b.alphabet),
                           "log_z": b.log_z}
    index = {"format": FORMAT, "method": result.method, "settings": result.settings,
             "seconds": result.seconds, "iterations": result.iterations,
             "converged": result.converged, "belief_changes": result.deltas,
             "extra": result.extra, "alphabets": [a.to_dict() for a in alphabets],
             "variables": variables}
    tmp = out / (INDEX + ".tmp")
    tmp.write_text(json.dumps(index, ensure_ascii=False, indent=1, default=_jsonable),
                   encoding="utf-8")
    tmp.replace(out / INDEX)
    return out / INDEX


def _jsonable(x):
    """Settings may hold numpy scalars or other small objects: store what JSON can."""
    if hasattr(x, "item"):
        return x.item()
    return repr(x)


def load_beliefs(directory: str | os.PathLike):
    """The :class:`~strgm.inference.result.InferenceResult` saved by :func:`save_beliefs`
    in ``directory``: its beliefs are loaded from the ``.fst`` files (no graph, no engine
    state; ``result.variables`` lists the saved names). Raises :class:`InputError`
    naming the file (and variable) when something is missing or inconsistent."""
    from strgm.inference.result import InferenceResult

    d = Path(directory)
    path = d / INDEX
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no saved beliefs here (missing {INDEX}; save with "
                         "`strgm infer ... --save-beliefs DIR` or result.save(DIR))",
                         path=str(d)) from None
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read saved beliefs: {e}", path=str(path)) from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise InputError(f"not a saved strgm result (expected format {FORMAT})", path=str(path))
    try:
        alphabets = [Alphabet.from_dict(a) for a in index["alphabets"]]
        variables = index["variables"]
        beliefs = {}
        for name, v in variables.items():
            beliefs[name] = _load_one(d, name, v, alphabets)
        return InferenceResult(index["method"], index["settings"], index["seconds"],
                               index["iterations"], index["converged"],
                               index["belief_changes"], extra=index.get("extra", {}),
                               _beliefs=beliefs, _names=list(variables))
    except (KeyError, TypeError, IndexError) as e:
        raise InputError(f"saved beliefs index is incomplete ({type(e).__name__}: {e})",
                         path=str(path)) from None


def _load_one(d: Path, name: str, v: dict, alphabets: list[Alphabet]) -> Belief:
    fpath = d / v["file"]
    alphabet = alphabets[v["alphabet"]]
    where = f"belief of variable {name!r}"
    try:
        fst = pynini.Fst.read(str(fpath))
    except OSError as e:  # pynini's FstIOError (missing file, bad header) is an OSError
        raise InputError(f"cannot read the {where}: {e}", path=str(fpath)) from None
    if fst.num_states() == 0 or fst.start() < 0:
        raise InputError(f"the {where} is an empty automaton", path=str(fpath))
    st = fst.input_symbols()
    if st is not None:
        stored = [st.find(i) for i in range(1, alphabet.size + 1)]
        if stored != list(alphabet.symbols):
            raise InputError(f"the {where} carries a symbol table that differs from the "
                             "saved alphabet (files from different saves mixed?)",
                             path=str(fpath))
    fst.set_input_symbols(None)
    fst.set_output_symbols(None)
    log_z = float(v["log_z"])
    if not math.isfinite(log_z):
        raise InputError(f"the {where} has log Z = {log_z} in the index", path=str(fpath))
    return Belief(name, fst, alphabet, log_z=log_z)
