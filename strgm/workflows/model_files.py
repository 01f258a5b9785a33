"""Trained model files read by what they are: ``load_model(path)``.

Every model strgm saves is strict JSON (or the same JSON in ``.npz``) with a ``format``
field; :func:`load_model` reads that field and hands the file to the reader of its
format, which checks the rest:

    strgm-hmm-model   strgm hmm train --save   -> strgm.hmm.model_file.HMMModel
    strgm-tsg-model   strgm tsg train --save   -> strgm.grammars.tsg.model_file.TSGModel

Any other file is an :class:`~strgm.errors.InputError` naming it and what it is.
"""

from __future__ import annotations

from strgm.errors import InputError

__all__ = ["load_model", "MODEL_FORMATS"]

#: format → (module, reader) of the model files :func:`load_model` reads.
MODEL_FORMATS = {"strgm-hmm-model": ("strgm.hmm.model_file", "load_model"),
                 "strgm-tsg-model": ("strgm.grammars.tsg.model_file", "load_model")}


def load_model(path):
    """The trained model in ``path``, read by the reader of its ``format`` (module
    docstring); the file is decoded twice (once here for the format)."""
    import importlib

    from strgm.errors import file_kind
    from strgm.chains.codec import load_json_state

    d = load_json_state(path, "model file", lambda d: d,
                        advice="train the model again and save it with --save")
    fmt = d.get("format") if isinstance(d, dict) else None
    if fmt not in MODEL_FORMATS:
        what = (file_kind(d) if isinstance(d, dict) else None) or "not a strgm model file"
        raise InputError(f"{what}; load_model reads {', '.join(MODEL_FORMATS)}", str(path))
    module, reader = MODEL_FORMATS[fmt]
    return getattr(importlib.import_module(module), reader)(path)
