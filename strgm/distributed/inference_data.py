"""Sampler chains as ArviZ ``InferenceData`` (extra ``strgm[arviz]``).

The trace rows that ``--chains K`` writes (``hmm train --json``, ``tsg train`` and
``pcfg train --trace-json``: one row per sweep, with ``chain`` and ``seed``) become an
``InferenceData`` whose ``posterior`` group holds each numeric column as a variable of
dims (chain, draw), the sweeps after burn-in; the burn-in sweeps go to
``warmup_posterior``. ArviZ's summaries, trace and rank plots then apply:

    import json, arviz as az
    from strgm.distributed.inference_data import to_inference_data
    doc = json.load(open("trace.json"))
    idata = to_inference_data(doc["trace"], burn_in=doc["training"]["burn_in"])
    az.summary(idata, var_names=["loglik"]); az.plot_rank(idata, var_names=["loglik"])

Rows without ``chain`` are one chain. Columns that are not numbers in every row (lists,
text, missing values) and the bookkeeping columns ``chain``, ``seed`` and ``iteration``
are left out.
"""

from __future__ import annotations

import warnings

import numpy as np

from strgm.errors import InputError, MissingDependencyError

__all__ = ["to_inference_data", "chain_arrays", "INSTALL"]

INSTALL = "exporting chains to ArviZ needs arviz: pip install 'strgm[arviz]'"
_BOOKKEEPING = ("chain", "seed", "iteration")


def _number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def chain_arrays(rows, keys=None) -> dict:
    """Column -> array (chains, sweeps) of the trace ``rows`` (module docstring); an
    InputError when the chains differ in length or a named key is not numeric."""
    rows = list(rows)
    if not rows:
        raise InputError("no trace rows to export")
    by_chain: dict = {}
    for r in rows:
        by_chain.setdefault(int(r.get("chain", 0)), []).append(r)
    lengths = {c: len(rs) for c, rs in by_chain.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"chains of different lengths: {lengths}")
    numeric = [k for k in rows[0] if k not in _BOOKKEEPING
               and all(_number(r.get(k)) for r in rows)]
    if keys is not None:
        bad = [k for k in keys if k not in numeric]
        if bad:
            raise InputError(f"trace column(s) {bad} are not numbers in every row "
                             f"(numeric columns: {', '.join(numeric)})")
        numeric = list(keys)
    chains = [by_chain[c] for c in sorted(by_chain)]
    return {k: np.array([[float(r[k]) for r in rs] for rs in chains]) for k in numeric}


def _arviz():
    try:
        with warnings.catch_warnings():  # its notice of a coming refactor
            warnings.simplefilter("ignore", FutureWarning)
            import arviz
    except ImportError:
        raise MissingDependencyError(INSTALL) from None
    return arviz


def to_inference_data(rows, burn_in: int = 0, keys=None):
    """``arviz.InferenceData`` of the trace ``rows``: the sweeps after the first
    ``burn_in`` of each chain as ``posterior``, those before as ``warmup_posterior``
    (module docstring); ``keys``: the columns to keep (default every numeric one)."""
    from strgm.validate import check_int

    burn_in = check_int("burn_in", burn_in, min=0)
    arrays = chain_arrays(rows, keys)
    draws = next(iter(arrays.values())).shape[1] if arrays else 0
    if burn_in >= draws:
        raise InputError(f"burn_in {burn_in} leaves none of the {draws} sweeps per chain")
    az = _arviz()
    post = {k: a[:, burn_in:] for k, a in arrays.items()}
    warm = {k: a[:, :burn_in] for k, a in arrays.items()} if burn_in else None
    return az.from_dict(posterior=post, warmup_posterior=warm, save_warmup=bool(burn_in))
