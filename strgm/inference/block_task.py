"""One block's round of block-Jacobi message passing, run where a task pool puts it
(:mod:`strgm.inference.blocks`, whose module docstring states the schedule).

A round is a pure function of OpenFst bytes, packed arrays and names: the block's graph is
rebuilt from factor specs, its variable side starts from the messages into its variables
(with the k-best lists and scored strings already known of them, so that no block or
round computes them twice), runs one iteration of the shared scheduler, and returns the
new messages of its own factors with the caches that grew. Strings travel packed as
(flat int32 labels, int64 offsets) arrays.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Optional

import numpy as np
import pynini

from strgm.alphabet import Alphabet
from strgm.errors import StrgmError
from strgm.factors import BinaryFactor, ConcatFactor, UnaryFactor
from strgm.graph import FactorGraph
from strgm.inference.methods import method_named
from strgm.inference.schedule import run_sweeps
from strgm.wfsa import guard
from strgm.wfsa.construct import sigma_star


def pack(strings) -> tuple:
    """Label strings as (flat int32 labels, int64 offsets)."""
    strings = list(strings)
    flat = np.fromiter((a for s in strings for a in s), dtype=np.int32)
    return flat, np.cumsum([0] + [len(s) for s in strings]).astype(np.int64)


def _unpack(flat: np.ndarray, offsets: np.ndarray) -> list:
    labels = flat.tolist()
    return [tuple(labels[a:b]) for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def packed_caches(side, v: str, g: str) -> list:
    """[k-best (packed or None), scored strings (packed), their scores] of μ_{g→v}."""
    kb, scores = side.message_caches(v, g)
    return [None if kb is None else pack(kb), pack(scores),
            np.fromiter(scores.values(), dtype=float, count=len(scores))]


def seed(side, v: str, name: str, kb, scored, values) -> None:
    side.seed_caches(v, name, None if kb is None else _unpack(*kb),
                     dict(zip(_unpack(*scored), values.tolist())))


def run_block(payload: dict, shared: dict, constants: Optional[dict] = None) -> dict:
    """One block's round (module docstring): a pure function of its arguments, so a task
    whose worker dies can run again anywhere with the same result.

    A machine whose bytes the payload leaves out (None: the client expects this process
    to hold it from an earlier round) is taken from this process's cache; when one is
    missing, nothing is computed and ``{"missing": keys}`` is returned, for the client to
    send the bytes."""
    stable = {**shared["fsts"], **(constants or {})}
    recipes = shared.get("recipes") or {}
    missing = [k for k, b in payload["fsts"].items() if b is None and k not in _DECODED]
    if missing:
        return {"missing": missing}

    def read(key):
        if key is None:
            return sigma_star(alphabet.size)
        if key in recipes and key not in stable:
            return _made(key, *recipes[key])
        return _decoded(key, stable[key] if key in stable else payload["fsts"][key])

    alphabet = Alphabet(shared["alphabet"], shared["boundary"])
    g = FactorGraph(alphabet)
    for v, obs in payload["variables"]:
        g.add_variable(v, observed=obs)
    for spec in payload["factors"]:
        g.add_factor(_built(spec, read))
    method, max_states = shared["method"], shared["max_states"]
    with guard.limits(max_states, shared["max_memory"], method=method):
        side = method_named(method).make_side(g, kbest=shared["kbest"],
                                              max_states=max_states, options={})
        for v, name, key, kb, scored, values in payload["warm"]:
            side.receive(v, name, read(key))
            seed(side, v, name, kb, scored, values)
        seeded = {(v, name): (kb is not None, len(values))
                  for v, name, _, kb, _, values in payload["warm"]}
        before = {v: {tuple(s): p for s, p in sig} for v, sig in payload["previous"]}
        if payload["round"]:  # what other blocks sent changed these since last round
            before.update({v: side.convergence_state(v) for v in payload["shared"]})
        stats = run_sweeps(g, side, max_iters=1, tol=0.0, max_states=max_states)
        after = {v: side.convergence_state(v) for v in payload["tracked"]}
        delta = max((side.convergence_change(before.get(v), after[v]) for v in after),
                    default=0.0)
        out = []
        for n, v in payload["send"]:
            if n in side.msgs[v]:
                side.prepare_caches(v, n)
                out.append([n, v, *_kept(side.msgs[v][n])])
        caches = _grown_caches(side, payload, seeded, {(n, v): key for n, v, _, key in out})
    return {"messages": out, "delta": delta, "caches": caches, "worker": _worker(),
            "signatures": [[v, [[list(s), p] for s, p in sig.items()]]
                           for v, sig in after.items()],
            "max_message_states": stats.max_message_states}


#: Machines this process has decoded or made (factors, messages), by key: a later round
#: of the same block, run here, is sent only their keys. Least recently used first out,
#: bounded by the bytes of their encodings.
_DECODED: "OrderedDict[str, tuple]" = OrderedDict()
_DECODED_BYTES = 512 * 2 ** 20
_SIZE = [0]


def _remember(key: str, fst: pynini.Fst, size: int) -> None:
    if key not in _DECODED:
        _SIZE[0] += size
    _DECODED[key] = (fst, size)
    _DECODED.move_to_end(key)
    while _SIZE[0] > _DECODED_BYTES and len(_DECODED) > 1:
        _SIZE[0] -= _DECODED.popitem(last=False)[1][1]


def _decoded(key: str, blob: Optional[bytes]) -> pynini.Fst:
    hit = _DECODED.get(key)
    if hit is None:
        hit = (pynini.Fst.read_from_string(blob), len(blob))
    _remember(key, *hit)
    return hit[0]


def _made(key: str, fn, arrays) -> pynini.Fst:
    """The machine ``fn(arrays)`` of a recipe (made once per process), checked to be the
    client's machine of digest ``key``."""
    hit = _DECODED.get(key)
    if hit is not None:
        _DECODED.move_to_end(key)
        return hit[0]
    fst = fn(arrays)
    blob = fst.write_to_string()
    if hashlib.sha1(blob).hexdigest() != key:
        raise StrgmError(f"the machine made by {getattr(fn, '__name__', fn)} here differs "
                         f"from the client's (digest {key[:12]}); are both running the "
                         "same strgm version?")
    _remember(key, fst, len(blob))
    return fst


def _kept(fst: pynini.Fst) -> tuple:
    """(bytes, key) of a message this block made, which this process keeps by key."""
    blob = fst.write_to_string()
    key = hashlib.sha1(blob).hexdigest()
    _remember(key, fst, len(blob))
    return blob, key


def _worker() -> Optional[str]:
    """The address of the Dask worker running this task (None elsewhere)."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


def _grown_caches(side, payload: dict, seeded: dict, sent: dict) -> list:
    """[original factor, variable, digest of the message, packed caches] for every
    message of the block whose caches grew in its round (k-best computed, more strings
    scored), so that no other block or round computes them again."""
    origin = dict(payload["origin"])
    digest = {(v, name): key for v, name, key, *_ in payload["warm"]}
    out = []
    for v, _ in payload["variables"]:
        for name in getattr(side, "msgs", {}).get(v, {}):
            g = origin.get(name)
            key = sent.get((g, v), digest.get((v, name)))
            if g is None or key is None:
                continue
            kb, scores = side.message_caches(v, name)
            had_kb, had_n = seeded.get((v, name), (False, 0))
            if (kb is not None and not had_kb) or len(scores) > had_n:
                out.append([g, v, key, *packed_caches(side, v, name)])
    return out


def _built(spec: list, read):
    kind, name = spec[0], spec[1]
    if kind == "unary":
        return UnaryFactor(name, var=spec[2], fst=read(spec[3]))
    if kind == "binary":
        return BinaryFactor(name, input_var=spec[2], output_var=spec[3], fst=read(spec[4]))
    return ConcatFactor(name, parts=tuple(spec[2]), whole=spec[3], boundary_label=spec[4])


def nbytes(x) -> int:
    """Bytes of the machines and arrays in ``x`` (what a transfer must carry)."""
    if isinstance(x, (bytes, np.ndarray)):
        return len(x) if isinstance(x, bytes) else x.nbytes
    if isinstance(x, str):
        return len(x.encode("utf-8"))
    if isinstance(x, dict):
        return sum(nbytes(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(nbytes(v) for v in x)
    return 0
