"""HMM model files: thinned posterior samples, vocabulary, settings, and how they were made.

A model file is strict JSON (format ``strgm-hmm-model``, version 1), written atomically:

    {"format", "version", "settings": HMMSettings, "emissions": family and prior,
     "vocab": [symbols…, "<unk>"] (categorical only), "samples": [{"p0", "P", "stop",
     "params"}…], "training": {"iterations", "burn_in", "thin", "seed", …}}

Reading checks every field (shapes agree with L and the vocabulary, probabilities are
finite, nonnegative and sum to 1 within 1e-6) and names the file on failure, and gives an
:class:`HMMModel`: the posterior and the training summary, under their names.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from strgm.errors import InputError
from strgm.chains.codec import get_field, load_json_state, save_json_state
from strgm.hmm.emissions import emissions_from_dict
from strgm.hmm.model import HMM, HMMPosterior
from strgm.hmm.settings import HMMSettings
from strgm.hmm.state import array_field

__all__ = ["HMMModel", "save_model", "load_model", "FORMAT"]

FORMAT = "strgm-hmm-model"


@dataclass(frozen=True, repr=False)
class HMMModel:
    """A loaded HMM model file: ``posterior`` (an :class:`HMMPosterior`: samples,
    vocabulary, settings) and ``training`` (the summary of the run that made it:
    iterations, burn-in, thinning, seed, ...).

    Unpacking it as ``posterior, training = load_model(path)`` still works but is
    deprecated (a :class:`DeprecationWarning`); use the attributes."""

    posterior: HMMPosterior
    training: dict

    @property
    def vocab(self) -> tuple:
        """The posterior's vocabulary."""
        return self.posterior.vocab

    def __iter__(self):
        warnings.warn("unpacking load_model()'s result is deprecated; use its "
                      ".posterior and .training", DeprecationWarning, stacklevel=2)
        return iter((self.posterior, self.training))

    def __repr__(self) -> str:
        post = self.posterior
        em = post.samples[0].emissions
        size = f"symbols={len(post.vocab)}" if em.kind == "categorical" else f"dim={em.D}"
        return (f"HMMModel(states={post.settings.L}, {size}, samples={len(post.samples)}, "
                f"iterations={self.training.get('iterations', '?')})")

    def _repr_html_(self) -> str:
        """Notebook display: the posterior's."""
        return self.posterior._repr_html_()


def save_model(path, posterior: HMMPosterior, training: dict) -> None:
    """Write ``posterior`` (with a ``training`` summary) atomically to ``path``."""
    em = posterior.samples[0].emissions
    samples = [{"p0": h.p0.tolist(), "P": h.P.tolist(),
                "stop": None if h.stop is None else np.asarray(h.stop).tolist(),
                "params": {k: np.asarray(v).tolist() for k, v in h.params.items()}}
               for h in posterior.samples]
    save_json_state(path, {"format": FORMAT, "version": 1,
                           "settings": posterior.settings.to_dict(),
                           "emissions": em.to_dict(), "vocab": list(posterior.vocab),
                           "samples": samples, "training": dict(training)})


def load_model(path) -> HMMModel:
    """The :class:`HMMModel` (posterior and training summary) of a file written by
    :func:`save_model`."""
    return load_json_state(path, "HMM model file", _build,
                           advice="train it again or restore an intact copy",
                           expect=(FORMAT, "an HMM model"))


def _build(d) -> HMMModel:
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise InputError(f"not an HMM model file (expected format {FORMAT!r})")
    settings = HMMSettings.from_dict(get_field(d, "settings", dict))
    em = emissions_from_dict(get_field(d, "emissions", dict))
    vocab = tuple(get_field(d, "vocab", list))
    if not all(isinstance(s, str) for s in vocab):
        raise InputError("field 'vocab' holds a symbol that is not a string")
    if em.kind == "categorical" and len(vocab) != em.V:
        raise InputError(f"field 'vocab' has {len(vocab)} symbols, the emissions {em.V}")
    raw = get_field(d, "samples", list)
    if not raw:
        raise InputError("field 'samples' is empty")
    samples = tuple(_sample(r, i, settings.L, em) for i, r in enumerate(raw))
    return HMMModel(HMMPosterior(samples, vocab, settings), get_field(d, "training", dict))


def _sample(r, i: int, L: int, em) -> HMM:
    where = f"samples[{i}]"
    if not isinstance(r, dict):
        raise InputError(f"{where} is not an object")
    p0 = _prob(r, "p0", (L,), where, rows=False)
    P = _prob(r, "P", (L, L), where, rows=True)
    stop = None if r.get("stop") is None else _arr(r, "stop", (L,), where)
    if stop is not None and np.any(stop > 1):
        raise InputError(f"{where}.stop holds a probability > 1")
    params = get_field(r, "params", dict)
    if em.kind == "categorical":
        params = {"theta": _prob(params, "theta", (L, em.V), where, rows=True)}
    else:
        params = {"mu": _arr(params, "mu", (L, em.D), where, signed=True),
                  "sigma": _arr(params, "sigma", (L, em.D, em.D), where, signed=True)}
    return HMM(p0, P, stop, params, em)


def _arr(d, key, shape, where, signed=False) -> np.ndarray:
    return array_field(d, key, shape=shape, signed=signed, where=where)


def _prob(d, key, shape, where, rows: bool) -> np.ndarray:
    a = _arr(d, key, shape, where)
    total = a.sum(axis=-1)
    if not np.allclose(total, 1.0, atol=1e-6):
        raise InputError(f"{where}.{key} does not sum to 1 "
                         f"({'per row' if rows else 'in all'})")
    return a
