"""Checkpoint files of every learner's chains (PCFG samplers and estimators, TSG and HMM
samplers).

A checkpoint is strict JSON (``.json``, or the same JSON as a byte array inside a
compressed ``.npz`` archive), written atomically (temporary file, fsync, rename), so an
interruption leaves either the previous checkpoint or the new one. Reading one checks every
field with the validators below; a damaged file is an :class:`~strgm.errors.InputError`
naming the file. :class:`ChainState` is the save/load/rng every state class shares; each
adds its kernel check (:mod:`strgm.grammars.sampler_state`,
:mod:`strgm.grammars.estimator_state`, :mod:`strgm.grammars.tsg.state`,
:mod:`strgm.hmm.state`). Floats are written by ``repr`` (shortest round-trip), so a state
read back equals the state written bit for bit, which is what makes a resumed chain equal
to an uninterrupted one (docs/grammars.md).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from strgm.errors import InputError, WrongKindError, check_kind
from strgm.safe_io import atomic_write_bytes, atomic_write_text, json_float, read_bytes, \
    strict_json

__all__ = ["save_json_state", "load_json_state", "get_field", "count_field", "vector_field",
           "trace_row", "rng_from_state", "check_rng_state", "chain_fingerprint",
           "chain_trace"]


def save_json_state(path, d: dict) -> None:
    """Write ``d`` atomically: strict JSON, or for ``.npz`` the same JSON as a byte array in
    a compressed archive."""
    p = Path(path)
    text = strict_json(d, indent=None)
    if p.suffix == ".npz":
        buf = io.BytesIO()
        np.savez_compressed(buf, state=np.frombuffer(text.encode("utf-8"), dtype=np.uint8))
        atomic_write_bytes(p, buf.getvalue())
    else:
        atomic_write_text(p, text + "\n")


RESUME_ADVICE = "delete it and start again, or resume from an intact copy"


def load_json_state(path, what: str, build, advice: str = RESUME_ADVICE,
                    expect: tuple = ()):
    """``build(d)`` of the JSON object in ``path`` (written by :func:`save_json_state`).
    Any ValueError of the decoding or of ``build`` becomes an InputError naming the file:
    "damaged <what> (...); <advice>". With ``expect`` = (format, what it is in words), a
    strgm file of another format (a model, another command's checkpoint) is named as what
    it is (:class:`~strgm.errors.WrongKindError`) instead of called damaged."""
    p = Path(path)
    data = read_bytes(p, what)
    try:
        if p.suffix == ".npz":
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                data = z["state"].tobytes()
        d = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
        if expect:
            check_kind(p, d, (expect[0],), expect[1])
        return build(d)
    except WrongKindError:
        raise
    except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile, RecursionError,
            OverflowError, TypeError, AttributeError, IndexError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"damaged {what} ({msg}); {advice}", str(p)) from None


def _refuse_constant(name):
    raise InputError(f"non-standard JSON constant {name}")


def get_field(d: dict, key: str, typ):
    """``d[key]``, an InputError unless present and of type ``typ``."""
    if key not in d:
        raise InputError(f"field {key!r} is missing")
    v = d[key]
    if not isinstance(v, typ):
        raise InputError(f"field {key!r} has the wrong type ({type(v).__name__})")
    return v


def count_field(d: dict, key: str) -> int:
    """``d[key]`` as an integer ≥ 0."""
    v = get_field(d, key, int)
    if isinstance(v, bool) or v < 0:
        raise InputError(f"field {key!r} must be an integer ≥ 0, got {v!r}")
    return v


def vector_field(key: str, v, positive: bool = False) -> np.ndarray:
    """A list of finite numbers (> 0 with ``positive``, else ≥ 0) as a float array."""
    if not isinstance(v, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise InputError(f"field {key!r} is not a list of numbers")
    a = np.asarray(v, dtype=float)
    if not np.all(np.isfinite(a)):
        raise InputError(f"field {key!r} holds a non-finite number")
    if np.any(a <= 0 if positive else a < 0):
        raise InputError(f"field {key!r} holds a number {'≤' if positive else '<'} 0")
    return a


def trace_row(r: dict) -> dict:
    """A trace row read back: the strings strict JSON uses for non-finite floats become
    floats again."""
    out = {}
    for k, v in r.items():
        if isinstance(v, str):
            try:
                v = json_float(v)
            except ValueError:
                pass
        out[k] = v
    return out


def check_rng_state(rng_state) -> dict:
    """``rng_state`` unless it is not a PCG64 state (InputError)."""
    try:
        np.random.PCG64().state = rng_state
    except (TypeError, ValueError, KeyError, OverflowError) as e:
        raise InputError(f"field 'rng_state': not a PCG64 state ({e})") from None
    return rng_state


def rng_from_state(rng_state: dict) -> np.random.Generator:
    """A generator continuing exactly from a saved PCG64 state."""
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = rng_state
    return g


def chain_fingerprint(grammar, corpus, extra: str = "") -> str:
    """SHA-1 of the grammar's rules and the corpus (plus ``extra``, text that also shapes
    the chain): a checkpoint records it and is refused by a run it does not belong to."""
    h = hashlib.sha1()
    for r in grammar.rules:
        h.update(f"{r.lhs}>{' '.join(r.rhs)}\n".encode())
    for s in corpus:
        h.update((" ".join(s) + "\n").encode())
    if extra:
        h.update(extra.encode())
    return h.hexdigest()


def chain_trace(d: dict, iteration: int) -> tuple:
    """(trace rows, last acceptance rate) of a sampler state dict: at most ``iteration``
    rows, each a JSON object, and ``last_accept`` a number (NaN before any proposal);
    an InputError naming the field otherwise."""
    trace = get_field(d, "trace", list)
    if len(trace) > iteration or not all(isinstance(r, dict) for r in trace):
        raise InputError(f"field 'trace': expected at most {iteration} rows")
    last = d.get("last_accept", "NaN")
    try:
        last = json_float(last)
    except ValueError:
        raise InputError(f"field 'last_accept': not a number: {last!r}") from None
    return [trace_row(r) for r in trace], last


class ChainState:
    """``rng``, ``save`` and ``load`` of a chain's state, shared by every learner's state
    class (a dataclass with ``rng_state``, ``to_dict`` and ``from_dict``). A subclass
    names its file format (``FORMAT``), what a user calls the file (``WHAT``, e.g.
    "TSG checkpoint") and the kind of run it holds (``HOLDS``), and checks that a state
    fits a kernel (``fits``, raising :class:`InputError`)."""

    FORMAT: str = ""
    WHAT: str = "checkpoint"
    HOLDS: str = ""

    def rng(self) -> np.random.Generator:
        return rng_from_state(self.rng_state)

    def save(self, path) -> None:
        """Write a checkpoint atomically (:func:`save_json_state`: strict JSON; ``.npz``
        for a compressed one)."""
        save_json_state(path, self.to_dict())

    @classmethod
    def load(cls, path, kernel=None):
        """Read a checkpoint written by :meth:`save`; with ``kernel``, also check that it
        belongs to the kernel's data and settings (:meth:`fits`)."""
        state = load_json_state(path, cls.WHAT, cls.from_dict, expect=(cls.FORMAT,
                                                                        cls.HOLDS))
        if kernel is not None:
            try:
                cls.fits(kernel, state)
            except InputError as e:
                raise InputError(f"{cls.WHAT} does not fit this run: {e.detail}",
                                 str(Path(path))) from None
        return state

    @staticmethod
    def fits(kernel, state) -> None:
        """Raise :class:`InputError` when ``state`` is not a state of ``kernel``'s run."""
