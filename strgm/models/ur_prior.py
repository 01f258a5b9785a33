"""Priors on underlying forms: the acceptor each morpheme's prior factor holds.

Two priors (docs/phonology.md):

* ``unigram`` (the default): geometric length × unigram,
  p(u) = s·(1 − s)^|u|·Π_i q(u_i), s = 1/(1 + mean length), q the add-1 segment
  frequencies of the observed surfaces (:func:`fst_factors.transducers.geometric_unigram_prior`);
* ``hmm:MODEL``: a learned infinite HMM (a ``strgm hmm train`` model file) as a prior over
  strings of the paradigm's segments (:func:`strgm.hmm.string_prior.hmm_string_prior`):
  p(ε) = ``empty``, p(u) = (1 − ``empty``)·p_HMM(u) under the posterior-mean HMM, with the
  HMM's unknown-symbol mass θ_k(<unk>) shared equally among the segments the HMM never
  saw. Morpheme URs carry no boundary symbol, so the prior is over segments only.

:class:`HMMPrior` holds the model, the file's SHA-256 (what a trained phonology records,
:meth:`HMMPrior.record`, and :func:`prior_from_record` checks) and one acceptor per
alphabet (EM rebuilds the graph every iteration). The prior travels as an argument
(``ur_prior``) to every function that builds a graph — EM, the transparent-vowel
screening, the rule family's UR candidates — so all see the same prior.

A saved model is data, never a path to follow (:func:`recorded_prior_file`): its record
names the prior file by ``file``, a plain name looked up only in the model's own
directory, read once, and parsed only if its SHA-256 is the recorded one; its ``path``
(where the file was at training time) is never opened. A model saved before ``file``
was recorded is read by the last part of its ``path``, under the same rules; a record
without a checksum is refused (pass ``--prior``). Errors about a recorded prior name the
model and the file, never what the file contains.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from strgm.errors import InputError, OptionError
from strgm.safe_io import read_bytes

__all__ = ["HMMPrior", "load_hmm_prior", "parse_prior",
           "prior_from_record", "recorded_prior", "recorded_prior_file", "DEFAULT_EMPTY",
           "DEFAULT_MIN_OCCUPANCY"]

#: p(ε) of the HMM prior: an affix's UR may be empty, an HMM string never is.
DEFAULT_EMPTY = 0.05
#: States visited less often per string are dropped (:meth:`strgm.hmm.model.HMM.pruned`).
DEFAULT_MIN_OCCUPANCY = 1e-4

@dataclass(eq=False)
class HMMPrior:
    """A learned HMM as the UR prior (module docstring)."""

    posterior: object
    path: str
    sha256: str
    empty: float = DEFAULT_EMPTY
    min_occupancy: float = DEFAULT_MIN_OCCUPANCY
    _cache: dict = field(default_factory=dict, repr=False)

    def _built(self, symbols: tuple):
        from strgm.hmm.string_prior import hmm_string_prior

        if symbols not in self._cache:
            self._cache[symbols] = hmm_string_prior(self.posterior, symbols, self.empty,
                                                    self.min_occupancy)
        return self._cache[symbols]

    def acceptor(self, alphabet):
        """The log64 acceptor over the labels 1..|segments| of ``alphabet``."""
        return self._built(tuple(alphabet.segment_symbols))[0]

    def unseen(self, alphabet) -> list:
        """The segments of ``alphabet`` that are not in the HMM's vocabulary."""
        vocab = set(self.posterior.vocab)
        return [s for s in alphabet.segment_symbols if s not in vocab]

    def describe(self) -> str:
        return f"hmm:{self.path}"

    def record(self) -> dict:
        """What a saved phonology keeps of this prior (:func:`prior_from_record`)."""
        return {"kind": "hmm", "path": str(Path(self.path).resolve()),
                "file": Path(self.path).name, "sha256": self.sha256, "empty": self.empty,
                "min_occupancy": self.min_occupancy}


def _sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_hmm_prior(path, empty: float = DEFAULT_EMPTY,
                   min_occupancy: float = DEFAULT_MIN_OCCUPANCY) -> HMMPrior:
    """The HMM prior of the model file at ``path``, checked at once: a missing or damaged
    file, or an HMM that is no distribution over strings (Gaussian emissions, no length
    model), is an :class:`InputError` naming the file."""
    from strgm.hmm.model_file import load_model
    from strgm.hmm.string_prior import hmm_string_prior
    from strgm.safe_io import check_input

    check_input(path, "HMM model (--prior hmm:MODEL)")
    posterior = load_model(path).posterior
    try:  # the checks of the prior itself, on a one-symbol alphabet (cheap)
        hmm_string_prior(posterior, list(posterior.vocab[:1]), empty, min_occupancy)
    except InputError as e:
        if e.path is not None:
            raise
        raise InputError(f"HMM model cannot be a UR prior: {e.detail}", path=str(path)) \
            from None
    return HMMPrior(posterior, str(path), _sha256(path), empty, min_occupancy)


def parse_prior(text: str, option: str = "prior") -> tuple:
    """``("unigram", None)``, ``("hmm", path)``, ``("pcfg", None)`` or ``("pcfg", path)``
    for the spelling of ``--prior``; anything else is an :class:`OptionError` naming
    ``option``."""
    if text == "unigram":
        return "unigram", None
    if text == "pcfg":
        return "pcfg", None
    if isinstance(text, str) and text.startswith("pcfg:"):
        path = text[len("pcfg:"):]
        if not path.strip():
            raise OptionError(option, text, "pcfg: needs a grammar file, e.g. pcfg:g.lt")
        return "pcfg", path
    if isinstance(text, str) and text.startswith("hmm:"):
        path = text[len("hmm:"):]
        if not path.strip():
            raise OptionError(option, text, "hmm: needs a model file, e.g. hmm:model.json")
        return "hmm", path
    raise OptionError(option, text, "expected unigram, hmm:MODEL (a `strgm hmm train` "
                                    "model file), pcfg or pcfg:GRAMMAR")


def prior_from_record(record, where: str) -> Optional[HMMPrior]:
    """The prior a saved phonology recorded (:meth:`HMMPrior.record`; None for the unigram
    prior). A model file is data, never a path to follow: its prior file is read only
    beside the model (:func:`recorded_prior_file`) and only with the recorded SHA-256."""
    if record is None or (isinstance(record, dict) and record.get("kind") == "unigram"):
        return None
    if isinstance(record, dict) and record.get("kind") == "pcfg":
        return _pcfg_from_record(record, where)
    if not isinstance(record, dict) or record.get("kind") != "hmm":
        raise InputError("phonology model is damaged: its ur_prior setting is not a prior "
                         "record", path=where)
    f, data = recorded_prior_file(record, where, "hmm", "HMM")
    with _copy_of(data, f.suffix) as copy:
        try:
            prior = load_hmm_prior(copy, record.get("empty", DEFAULT_EMPTY),
                                   record.get("min_occupancy", DEFAULT_MIN_OCCUPANCY))
        except InputError:
            raise _unreadable(f, where, "HMM", "a usable HMM model file") from None
        except (TypeError, ValueError) as e:
            raise InputError(f"phonology model is damaged: its HMM prior record: {e}",
                             path=where) from None
    return HMMPrior(prior.posterior, str(f), prior.sha256, prior.empty, prior.min_occupancy)


def recorded_prior_file(record: dict, where: str, kind: str, label: str) -> tuple:
    """(path, bytes) of the prior file a model's ``record`` names, found in the model's
    directory (the record's ``file``; a record saved before ``file`` existed gives the
    last part of its ``path``) and equal to the recorded SHA-256. A name that is absolute,
    has a directory part or ``..``, leads outside the directory by a link, is missing,
    or has no checksum recorded is an :class:`InputError` naming the model ``where``;
    the error never quotes the file's content."""
    name, digest = record.get("file"), record.get("sha256")
    if name is None and isinstance(record.get("path"), str):
        name = os.path.basename(record["path"])
    if not isinstance(name, str) or not name or not isinstance(digest, str):
        raise InputError(f"the model records no file and checksum for its {label} prior; "
                         f"pass --prior {kind}:FILE", path=where)
    if (os.path.isabs(name) or name in (".", "..") or "/" in name or "\\" in name
            or "\0" in name):
        raise InputError(f"the model names its {label} prior {name!r}: only a file beside "
                         f"the model is read; pass --prior {kind}:FILE", path=where)
    d = Path(where).parent
    f = d / name
    if not f.is_file():
        raise InputError(f"the model was trained with the {label} prior {name}, which is "
                         f"missing beside the model (in {d}); copy it there or pass "
                         f"--prior {kind}:COPY", path=where)
    try:
        inside = f.resolve().parent == d.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside:
        raise InputError(f"the {label} prior {name} beside the model is a link leading "
                         f"outside its directory; refused", path=where)
    data = read_bytes(f, f"{label} prior of the model")
    if hashlib.sha256(data).hexdigest() != digest:
        raise InputError(f"the {label} prior {f} has changed since the model was trained "
                         "(SHA-256 differs); pass --prior to choose one", path=where)
    return f, data


@contextlib.contextmanager
def _copy_of(data: bytes, suffix: str):
    """A private copy of verified bytes, for a loader that reads a path: the file beside
    the model may change after the check, the copy cannot."""
    with tempfile.TemporaryDirectory(prefix="strgm-prior-") as t:
        copy = Path(t) / f"prior{suffix}"
        copy.write_bytes(data)
        yield copy


def _unreadable(f, where: str, label: str, what: str) -> InputError:
    """The error for a recorded prior that does not parse: where, never what it says."""
    return InputError(f"the {label} prior {f} the model was trained with is not {what}; "
                      "pass --prior to choose one", path=where)


def recorded_prior(model_path) -> Optional[dict]:
    """The ``ur_prior`` record in the settings of a phonology saved by ``strgm train
    --save`` (None when it has none: saved before priors were recorded, or with no
    settings)."""
    import json

    from strgm.safe_io import read_text

    try:
        d = json.loads(read_text(model_path, "phonology model"))
    except (ValueError, RecursionError):
        return None  # the model's own loader names the damage
    settings = d.get("settings") if isinstance(d, dict) else None
    return settings.get("ur_prior") if isinstance(settings, dict) else None


def _pcfg_from_record(record: dict, where: str):
    """The grammar prior a saved phonology recorded, with its learned rule weights; a
    grammar file is read as :func:`recorded_prior_file` says."""
    from strgm.models.grammar_prior import load_pcfg_prior, pcfg_prior_from_bytes

    options = {"estimator": record.get("estimator", "vb"), "alpha": record.get("alpha", 1.0),
               "empty": record.get("empty", DEFAULT_EMPTY)}
    f = None
    try:
        if record.get("path") is None and record.get("file") is None:
            prior = load_pcfg_prior(None, **options)
        else:
            f, data = recorded_prior_file(record, where, "pcfg", "grammar")
            try:
                prior = pcfg_prior_from_bytes(data, str(f), **options)
            except InputError:
                raise _unreadable(f, where, "grammar", "a grammar strgm can use") from None
        prior.restore(record.get("theta") or {})
    except (TypeError, ValueError, OptionError) as e:
        if isinstance(e, InputError) and e.path == where:
            raise
        raise InputError(f"phonology model is damaged: its grammar prior record: {e}",
                         path=where) from None
    return prior
