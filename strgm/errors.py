"""The one error hierarchy of strgm.

Every error raised on purpose by the library derives from :class:`StrgmError`, so a caller
can catch everything strgm reports with one ``except`` clause. Errors about user input say
*where* (file and line, variable, symbol) so that the user can fix the input.
"""

from __future__ import annotations

from fst_factors.errors import (DivergenceError, FstFactorsError, InputError,  # noqa: F401
                                 MessageTooLargeError, OptionError, UnknownSymbolError)

#: The root of strgm's hierarchy: the base of the OpenFst layer's errors
#: (:mod:`fst_factors.errors`), whose classes ``InputError``, ``OptionError``,
#: ``UnknownSymbolError``, ``DivergenceError`` and ``MessageTooLargeError`` are strgm's
#: own.
StrgmError = FstFactorsError


class GraphError(StrgmError):
    """An ill-formed factor graph (unknown variable, wrong arity, missing prior ...)."""


class InconsistentEvidenceError(StrgmError):
    """Observations that have zero probability under the model."""


class GrammarError(StrgmError):
    """An ill-formed grammar, or a grammar that cannot parse what it must."""


class MissingDependencyError(StrgmError, ImportError):
    """An optional dependency is not installed; the message names what to install, e.g.
    "plotting needs matplotlib: pip install 'strgm[plot]'"."""


class TruncationWarning(UserWarning):
    """Every state of a truncated nonparametric model is in use: the truncation is
    probably too small."""


class ConvergenceWarning(UserWarning):
    """An iterative procedure stopped at its iteration cap before converging."""


class NoProjectionWarning(UserWarning):
    """EP or PEP made no projection: every latent variable's messages were relayed exactly
    (degree ≤ 2, as on a tree), so the result is exact BP's."""


class ObjectiveDecreaseWarning(ConvergenceWarning):
    """An EM iteration lowered the training objective: with an exact E-step EM never
    does, so the approximate E-step (pruning, EP) is hiding what EM needs."""


#: What each strgm file format is, and the option that writes it, for errors that name a
#: file of another kind.
FILE_KINDS = {
    "strgm-hmm-model": ("an HMM model", "hmm train --save"),
    "strgm-hmm-state": ("an HMM checkpoint", "hmm train --checkpoint"),
    "strgm-tsg-model": ("a TSG model", "tsg train --save"),
    "strgm-tsg-state": ("a TSG checkpoint", "tsg train --checkpoint"),
    "strgm-pcfg-estimator-state": ("a PCFG estimator checkpoint", "pcfg train --checkpoint"),
    "strgm-pcfg-sampler-state": ("a PCFG sampler checkpoint", "pcfg train --checkpoint"),
    "strgm-phonology-v1": ("a phonology model", "train --save"),
    "strgm-em-checkpoint-v2": ("a phonology EM checkpoint", "train --checkpoint"),
    "strgm-rules-v1": ("a rule grammar", "rules --save"),
    "strgm-beliefs-v2": ("a saved-beliefs index", "infer --save-beliefs"),
}


def file_kind(d) -> str | None:
    """What the decoded JSON ``d`` of a strgm file is, in words ("a PCFG sampler
    checkpoint (gibbs; written by pcfg train --checkpoint)"), or None when it does not say
    (no ``format`` field naming a strgm format)."""
    fmt = d.get("format") if isinstance(d, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith("strgm-") or len(fmt) > 60 \
            or not fmt.isprintable():
        return None
    noun, how = FILE_KINDS.get(fmt, (f"a strgm {fmt[len('strgm-'):]} file", ""))
    sub = d.get("kind")
    notes = [sub] if isinstance(sub, str) and len(sub) <= 40 and sub.isprintable() else []
    notes += [f"written by strgm {how}"] if how else []
    return noun + (f" ({'; '.join(notes)})" if notes else "")


class WrongKindError(InputError):
    """A strgm file of another kind than the one expected (a model given as a checkpoint,
    an HMM checkpoint given to ``tsg``): names what the file is and what was expected."""

    def __init__(self, path, found: str, expected: str):
        super().__init__(f"{path} is {found}, not {expected}")
        self.path, self.found, self.expected = str(path), found, expected


def check_kind(path, d, formats, expected: str) -> None:
    """Raise :class:`WrongKindError` when the decoded JSON ``d`` of ``path`` says it is a
    strgm file whose format is not among ``formats``."""
    found = file_kind(d)
    if found is not None and d.get("format") not in formats:
        raise WrongKindError(path, found, expected)


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'X'?)`` for the closest of ``choices`` to a misspelt ``name``
    (:func:`difflib.get_close_matches`, or a choice ending in ``:name``), else ``""``."""
    import difflib

    choices = [str(c) for c in choices]
    tail = [c for c in choices if c.rsplit(":", 1)[-1] == name]
    close = tail or difflib.get_close_matches(str(name), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
